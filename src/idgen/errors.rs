//! IDGEN's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const EXHAUSTED: ErrorText = entry(
    "EXHAUSTED taking {count} more ID(s) after {last} would pass 9223372036854775807",
    "`IDGEN.NEXT`, `IDGEN.ASSIGN` (a new name)",
);
pub const NEGATIVE_FLOOR: ErrorText = entry(
    "ERR floor must be a non-negative integer",
    "`IDGEN.RESERVE`",
);
pub const SAME_INDEX_KEYS: ErrorText = entry(
    "ERR the counter, index and REVERSE keys must differ",
    "`IDGEN.ASSIGN` naming one key twice",
);

/// IDGEN's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&EXHAUSTED, &NEGATIVE_FLOOR, &SAME_INDEX_KEYS];
