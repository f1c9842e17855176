//! IDPOOL's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const IDPOOL_MAX: ErrorText = entry(
    "ERR max must be between 1 and 4294967295",
    "`IDPOOL.CREATE`, `IDPOOL.RESIZE`",
);
pub const IDPOOL_ID: ErrorText = entry(
    "ERR id must be between 1 and {max}",
    "`IDPOOL.RELEASE`, `IDPOOL.RENEW`",
);
pub const NO_POOL: ErrorText = entry(
    "NOPOOL no ID pool at key '{key}'",
    "`IDPOOL.*` but `CREATE`",
);
pub const KEY_EXISTS: ErrorText = entry(
    "BUSYKEY Target key name already exists.",
    "`IDPOOL.CREATE` on an existing key",
);
pub const CANNOT_SHRINK: ErrorText = entry(
    "NOSHRINK cannot shrink the pool to {max}: ID {id} is leased",
    "`IDPOOL.RESIZE`",
);

/// IDPOOL's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[
    &IDPOOL_MAX,
    &IDPOOL_ID,
    &NO_POOL,
    &KEY_EXISTS,
    &CANNOT_SHRINK,
];
