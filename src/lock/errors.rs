//! LOCK's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const NUMKEYS_RANGE: ErrorText = entry(
    "ERR numkeys must be between 1 and {most}",
    "`LOCK.MACQUIRE`, `LOCK.MRELEASEIF`, `LOCK.MEXTEND` (`most`: 1024)",
);
pub const NUMKEYS_MISMATCH: ErrorText = entry(
    "ERR numkeys does not match the arguments: numkeys keys, then the token",
    "`LOCK.MACQUIRE`, `LOCK.MEXTEND` (fewer keys than numkeys, or no token after them), `LOCK.MRELEASEIF` \
     (anything but numkeys keys and a token)",
);
pub const MULTI_FENCE: ErrorText = entry(
    "ERR LOCK.MACQUIRE takes no FENCE (its reply is the number of keys): take a fencing token with LOCK.ACQUIRE … FENCE",
    "`LOCK.MACQUIRE … FENCE`",
);

/// LOCK's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&NUMKEYS_RANGE, &NUMKEYS_MISMATCH, &MULTI_FENCE];
