//! RWLOCK's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const NO_UPGRADE: ErrorText = entry(
    "NOUPGRADE token holds a read lock: release it before asking for WRITE (two readers upgrading would deadlock)",
    "`RWLOCK.ACQUIRE … WRITE` by a token holding `READ`",
);

/// RWLOCK's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&NO_UPGRADE];
