//! NEARBY's errors: its own, declared here, and those every command or
//! several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const NO_POSITION: ErrorText = entry(
    "NOPOSITION member '{member}' has no position in the geo key",
    "`NEARBY.RANDOM … FROMMEMBER` naming a member the key lacks, or one a plain `ZADD` scored outside the geohashes (negative, from 2^52 but not an edge)",
);
pub const ONE_CENTRE: ErrorText = entry(
    "ERR exactly one of FROMMEMBER or FROMLONLAT is needed",
    "`NEARBY.RANDOM` with neither or both",
);
pub const NO_RADIUS: ErrorText = entry(
    "ERR BYRADIUS radius M|KM|FT|MI is needed",
    "`NEARBY.RANDOM` without `BYRADIUS`",
);
pub const BAD_RADIUS: ErrorText = entry(
    "ERR radius must be a non-negative number",
    "`NEARBY.RANDOM … BYRADIUS` with a negative or non-numeric radius",
);
pub const BAD_UNIT: ErrorText = entry(
    "ERR unsupported unit provided. please use M, KM, FT, MI",
    "`NEARBY.RANDOM … BYRADIUS radius unit` with another unit (the server's own words)",
);
pub const BAD_POSITION: ErrorText = entry(
    "ERR invalid longitude,latitude pair {longitude},{latitude}",
    "`NEARBY.RANDOM … FROMLONLAT` outside −180…180, −85.05112878…85.05112878 (what `GEOADD` takes)",
);

/// NEARBY's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[
    &NO_POSITION,
    &ONE_CENTRE,
    &NO_RADIUS,
    &BAD_RADIUS,
    &BAD_UNIT,
    &BAD_POSITION,
];
