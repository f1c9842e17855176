//! NEARBY: a truly random nearby member of a geo key.
//!
//! The key is the one `GEOADD` writes (a sorted set of geohashes), so every
//! geo command keeps working on it; NEARBY only reads it. `NEARBY.RANDOM`
//! draws uniformly among every member within a radius of a member or of a
//! position (the member itself left out), where the recipe it replaces drew
//! among the `COUNT 10` nearest of a `GEOSEARCH`, and so always one of the
//! nearest nine. Its cost follows the members near the circle: it scans the
//! score ranges of at most 25 geohash cells that cover it, and the map edge's
//! when it reaches longitude 180 or the top latitude (`nearby/core.rs`), and
//! keeps only the members it draws.
//!
//! Replication: none (a read).

#![forbid(unsafe_code)]

pub mod core;
mod errors;

use std::cell::RefCell;

use redis_module::{Context, RedisError, RedisValue};

use self::core::{cover, Point, Reservoir, Rng, Unit};
use crate::common::args::{parse_options, single};
use crate::common::command::{ArgSpec, ArgType, CommandSpec, KeySpec, COUNT, READS_FIRST};
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::context::random_seed;
use crate::common::ffi::key::Key;
use crate::common::reply::{quote, Replied};
use crate::entry;

/// `COUNT`'s largest value.
const MOST_COUNT: i64 = i32::MAX as i64;

const FROMMEMBER: ArgSpec = ArgSpec::tokened(c"member", c"FROMMEMBER", ArgType::String);
const FROMLONLAT: ArgSpec = ArgSpec {
    optional: false,
    ..ArgSpec::block(
        c"fromlonlat",
        c"FROMLONLAT",
        &[
            ArgSpec::required(c"longitude", ArgType::Double),
            ArgSpec::required(c"latitude", ArgType::Double),
        ],
    )
};
const BYRADIUS: ArgSpec = ArgSpec {
    optional: false,
    ..ArgSpec::block(
        c"circle",
        c"BYRADIUS",
        &[
            ArgSpec::required(c"radius", ArgType::Double),
            ArgSpec::one_of(
                c"unit",
                &[
                    ArgSpec::keyword(c"m", c"M"),
                    ArgSpec::keyword(c"km", c"KM"),
                    ArgSpec::keyword(c"ft", c"FT"),
                    ArgSpec::keyword(c"mi", c"MI"),
                ],
            ),
        ],
    )
};
const WITHDIST: ArgSpec = ArgSpec::flag(c"withdist", c"WITHDIST");

thread_local! {
    /// The generator of every draw, seeded from the server's random bytes
    /// at the first draw (commands run on the server's main thread).
    static RNG: RefCell<Option<Rng>> = const { RefCell::new(None) };
}

/// A finite number a client sent.
fn number(arg: &Arg) -> Option<f64> {
    let text = std::str::from_utf8(arg.as_bytes()).ok()?;
    text.trim_ascii().parse::<f64>().ok().filter(|x| x.is_finite())
}

/// `NEARBY.RANDOM key FROMMEMBER member | FROMLONLAT longitude latitude
/// BYRADIUS radius M|KM|FT|MI [COUNT count] [WITHDIST]`.
fn random<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [member, lonlat, circle, count, with_dist] =
        parse_options(options, &[FROMMEMBER, FROMLONLAT, BYRADIUS, COUNT, WITHDIST])?;
    let Some([radius, unit]) = circle else {
        return Err(errors::NO_RADIUS.error());
    };
    let radius = number(radius)
        .filter(|r| *r >= 0.0)
        .ok_or(errors::BAD_RADIUS.error())?;
    let unit = Unit::parse(unit.as_bytes()).ok_or(errors::BAD_UNIT.error())?;
    let radius_m = radius * unit.metres();
    let count = match single(count) {
        None => None,
        Some(count) => match count.to_i64()? {
            count @ 1..=MOST_COUNT => Some(count as usize),
            _ => return Err(errors::COUNT_RANGE.with(&[&MOST_COUNT])),
        },
    };
    let key = Key::read(ctx, *name);
    let (centre, itself) = match (single(member), lonlat) {
        (Some(member), None) => {
            let Some(score) = key.zset_score(member)? else {
                if !key.is_zset()? {
                    return Ok(empty(count));
                }
                return Err(errors::NO_POSITION.with(&[&quote(member.as_bytes())]));
            };
            let centre = Point::from_score(score)
                .ok_or_else(|| errors::NO_POSITION.with(&[&quote(member.as_bytes())]))?;
            (centre, Some(member.as_bytes()))
        }
        (None, Some([lon, lat])) => {
            let centre = number(lon)
                .zip(number(lat))
                .and_then(|(lon, lat)| Point::checked(lon, lat))
                .ok_or_else(|| {
                    errors::BAD_POSITION.with(&[&quote(lon.as_bytes()), &quote(lat.as_bytes())])
                })?;
            if !key.is_zset()? {
                return Ok(empty(count));
            }
            (centre, None)
        }
        _ => return Err(errors::ONE_CENTRE.error()),
    };
    let drawn = RNG.with(|cell| {
        let mut cell = cell.borrow_mut();
        let rng = cell.get_or_insert_with(|| Rng::from_seed(random_seed()));
        let mut reservoir = Reservoir::new(count.unwrap_or(1));
        for (start, end) in cover(centre, radius_m) {
            key.zset_range(start, end, |found, score| {
                let Some(point) = Point::from_score(score) else {
                    return;
                };
                let distance = centre.distance(point);
                if distance > radius_m || itself == Some(found.as_bytes()) {
                    return;
                }
                reservoir.offer(rng, || (found.as_bytes().to_vec(), distance));
            })?;
        }
        Ok::<_, RedisError>(reservoir.into_items(rng))
    })?;
    let item = |(found, distance): (Vec<u8>, f64)| {
        if with_dist.is_none() {
            return RedisValue::StringBuffer(found);
        }
        let distance = format!("{:.4}", distance / unit.metres());
        RedisValue::Array(vec![
            RedisValue::StringBuffer(found),
            RedisValue::StringBuffer(distance.into_bytes()),
        ])
    };
    Ok(match count {
        Some(_) => RedisValue::Array(drawn.into_iter().map(item).collect()),
        None => drawn.into_iter().next().map_or(RedisValue::Null, item),
    }
    .into())
}

/// The answer when nobody is near: nil, or an empty array with `COUNT`.
fn empty<'a>(count: Option<usize>) -> crate::common::reply::Reply<'a> {
    match count {
        Some(_) => RedisValue::Array(Vec::new()),
        None => RedisValue::Null,
    }
    .into()
}

const READ_KEY: &[KeySpec] = &[READS_FIRST];

pub static FAMILY: FamilySpec = FamilySpec {
    about: "a truly random nearby member of a geo key",
    replaces: "`GEOSEARCH … COUNT 10` and a client-side pick of one of the nine nearest",
    commands: COMMANDS,
    stats: &[],
    waiting: None,
    settings: &[],
    errors: errors::OWN,
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    entry: entry!(c"nearby.random", random, READ_KEY),
    flags: c"readonly",
    acl_categories: c"read geo",
    arity: -5,
    summary: c"Returns members of a geo key drawn uniformly from every member within a radius of a member or a position",
    complexity: c"O(M + log(N)) where M is the number of members in the cells that cover the circle (at most about 8 times those inside it, where members are spread evenly) and N the key's size",
    since: c"0.8.0",
    reply: "Without `COUNT`: a bulk string, a member within the radius drawn uniformly at random (the \
            `FROMMEMBER` member itself left out), or nil when there is none (a missing key included); \
            `WITHDIST`: an array of the member and its distance in the radius's unit (4 decimals, as \
            `GEOSEARCH`), or nil. With `COUNT count`: an array of up to `count` distinct such members \
            (each `[member, distance]` with `WITHDIST`), every subset equally likely and in random order; \
            an empty array when there is none.",
    events: None,
    args: &[
        ArgSpec::key(c"key", 0),
        ArgSpec::one_of(c"from", &[FROMMEMBER, FROMLONLAT]),
        BYRADIUS,
        COUNT,
        WITHDIST,
    ],
}];
