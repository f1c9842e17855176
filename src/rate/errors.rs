//! RATE's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const RATE_RANGE: ErrorText = entry(
    "ERR {what} must be an integer between 1 and {most}",
    "`RATE.LIMIT`, `RATE.PEEK` (`what`: max, period, burst or cost)",
);
pub const COST_TOO_HIGH: ErrorText = entry(
    "TOOCOSTLY cost {cost} exceeds the {limit} of {most}: such an action can never be allowed",
    "`RATE.LIMIT`, `RATE.PEEK` (`limit`: burst, or max for `SLIDING`), `RATE.FIXED … WAIT` (`limit`: max)",
);
pub const FIXED_RANGE: ErrorText = entry(
    "ERR {what} must be an integer between {least} and {most}",
    "`RATE.FIXED` (`what`: period, max or BLOCK)",
);
pub const FIXED_NEEDS_MAX: ErrorText = entry(
    "ERR {option} needs MAX",
    "`RATE.FIXED` (`option`: BLOCK, EXTEND, BACKOFF or WAIT)",
);
pub const FIXED_NEEDS_PERIOD: ErrorText = entry(
    "ERR {option} sets the TTL to the period: give a period above 0",
    "`RATE.FIXED` (`option`: RENEW, EXTEND or BACKOFF)",
);
pub const EMISSION_TOO_LONG: ErrorText = entry(
    "ERR burst × period / max must be at most 100 years",
    "`RATE.LIMIT`, `RATE.PEEK`",
);
pub const SLIDING_BURST: ErrorText = entry(
    "ERR BURST applies to GCRA limits; a SLIDING window allows max at once",
    "`RATE.LIMIT`, `RATE.PEEK`",
);
pub const SLIDING_MAX: ErrorText = entry(
    "ERR a SLIDING window's max must be at most {most} when its period is over {most} ms",
    "`RATE.LIMIT` (`most`: `recipes.rate-sliding-max`)",
);
pub const TOO_MANY_LIMITS: ErrorText = entry(
    "ERR too many limits in one call (at most {most})",
    "`RATE.LIMIT` (16, or `recipes.rate-max-limits` for a new limiter), `RATE.PEEK` (16)",
);
pub const NOT_A_LIMITER: ErrorText = entry(
    "MISMATCH the key holds a string that is not a rate limiter",
    "`RATE.LIMIT`, `RATE.PEEK`, `RATE.RESET`",
);
pub const LIMIT_COUNT_MISMATCH: ErrorText = entry(
    "MISMATCH the key holds a limiter of {held} limit(s); this call gives {given} (RATE.RESET it first)",
    "`RATE.LIMIT`, `RATE.PEEK`",
);
pub const GCRA_NOT_SLIDING: ErrorText = entry(
    "MISMATCH the key holds a GCRA limiter, not a SLIDING window (RATE.RESET it first)",
    "`RATE.LIMIT`, `RATE.PEEK` … `SLIDING`",
);
pub const SLIDING_NOT_GCRA: ErrorText = entry(
    "MISMATCH the key holds a SLIDING window, not a GCRA limiter (RATE.RESET it first)",
    "`RATE.LIMIT`, `RATE.PEEK` without `SLIDING`",
);

/// RATE's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[
    &RATE_RANGE,
    &COST_TOO_HIGH,
    &FIXED_RANGE,
    &FIXED_NEEDS_MAX,
    &FIXED_NEEDS_PERIOD,
    &EMISSION_TOO_LONG,
    &SLIDING_BURST,
    &SLIDING_MAX,
    &TOO_MANY_LIMITS,
    &NOT_A_LIMITER,
    &LIMIT_COUNT_MISMATCH,
    &GCRA_NOT_SLIDING,
    &SLIDING_NOT_GCRA,
];
