//! QUEUE's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const QUEUE_MAXLEN: ErrorText = entry(
    "ERR maxlen must be a positive integer",
    "`QUEUE.RPUSH`, `QUEUE.LPUSH` (`maxlen` below 1; nothing is written)",
);

/// QUEUE's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&QUEUE_MAXLEN];
