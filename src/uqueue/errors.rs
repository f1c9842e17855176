//! UQUEUE's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const REPEATED_ITEM: ErrorText = entry(
    "ERR item '{item}' given more than once",
    "`UQUEUE.INSERT` naming an item twice (the book's `ValueError`)",
);
pub const UQUEUE_FULL: ErrorText = entry(
    "ERR a unique queue holds at most {most} items",
    "`UQUEUE.INSERT` of new items into a full queue",
);

/// UQUEUE's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&REPEATED_ITEM, &UQUEUE_FULL];
