//! LATCH's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const LATCH_COUNT: ErrorText = entry(
    "ERR count must be a positive integer",
    "`LATCH.SET` (`count` below 1)",
);
pub const LATCH_DECREMENT: ErrorText = entry(
    "ERR decrement must be a positive integer",
    "`LATCH.COUNTDOWN` (`n` below 1)",
);
pub const LATCH_TIMEOUT: ErrorText = entry(
    "ERR invalid timeout in '{command}' command",
    "`LATCH.WAIT` (`ms` below 1, or past the largest time)",
);

/// LATCH's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&LATCH_COUNT, &LATCH_DECREMENT, &LATCH_TIMEOUT];
