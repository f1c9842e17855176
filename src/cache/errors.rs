//! CACHE's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const INVALID_JSON: ErrorText = entry(
    "BADJSON invalid JSON: {message}",
    "`CACHE.SETJSON` (`message`: serde_json's)",
);
pub const NOT_JSON: ErrorText = entry(
    "ERR the value is not JSON",
    "`CACHE.GETJSON` (a string not written as JSON)",
);
pub const NOT_A_JSON_OBJECT: ErrorText = entry(
    "ERR the value is not a JSON object",
    "`CACHE.GETJSON … FIELD`",
);

/// CACHE's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&INVALID_JSON, &NOT_JSON, &NOT_A_JSON_OBJECT];
