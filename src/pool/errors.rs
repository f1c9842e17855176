//! POOL's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const EMPTY_OWNER: ErrorText = entry("ERR owner must not be empty", "`POOL.*`");

/// POOL's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&EMPTY_OWNER];
