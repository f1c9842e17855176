//! AUTOCOMPLETE's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const EMPTY_CONTENT: ErrorText = entry(
    "ERR content must not be empty",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET`",
);
pub const CONTENT_TOO_LONG: ErrorText = entry(
    "ERR content must be at most {most} characters",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET` (`most`: `recipes.autocomplete-max-chars`)",
);
pub const NOT_UTF8: ErrorText = entry(
    "ERR content and prefix must be valid UTF-8",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET`, `AUTOCOMPLETE.HINT`",
);
/// `ZINCRBY`'s text.
pub const NOT_A_FLOAT: ErrorText = entry(
    "ERR value is not a valid float",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET` (a weight or increment that is not a number)",
);
pub const WEIGHT_NOT_FINITE: ErrorText = entry(
    "ERR weight must be a finite number",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET` (`inf`, `nan`)",
);
pub const WEIGHT_OVERFLOW: ErrorText = entry(
    "ERR resulting weight is not a finite number",
    "`AUTOCOMPLETE.FEED` (the sum overflows)",
);
pub const AUTOCOMPLETE_FULL: ErrorText = entry(
    "ERR an autocomplete key holds at most {most} entries",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET` of a new entry",
);

/// AUTOCOMPLETE's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[
    &EMPTY_CONTENT,
    &CONTENT_TOO_LONG,
    &NOT_UTF8,
    &NOT_A_FLOAT,
    &WEIGHT_NOT_FINITE,
    &WEIGHT_OVERFLOW,
    &AUTOCOMPLETE_FULL,
];
