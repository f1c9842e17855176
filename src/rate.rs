//! RATE: rate limiters in one atomic command — GCRA (smooth, the default) or
//! an exact sliding window, several limits checked and consumed at once.
//!
//! A limiter is a string key holding its state: `G` and one GCRA theoretical
//! arrival time per limit (Unix ns, 8 bytes little-endian each), or `W` and
//! the sliding window's entries (Unix ms and a cost, 12 bytes each). The key
//! expires when the limiter is full again, so idle limiters vanish by
//! themselves. The decisions themselves live in [`decide`], without FFI.
//!
//! Replication: effects with absolute times, because a decision depends on
//! the clock. An allowed GCRA action sends `SET key <state> PXAT <full-at>`;
//! an allowed sliding-window action sends `RATE.APPLY key <at> <cost> <keep>`
//! (one entry to append, not the whole window). A refused action changes
//! nothing and sends nothing. `RATE.RESET` goes verbatim.

#![forbid(unsafe_code)]

mod decide;

use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisValue};

use crate::common::command::{ArgSpec, ArgType, CommandSpec, KeySpec, READS_FIRST, UPDATES_FIRST};
use crate::common::config::Setting;
use crate::common::errors;
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::context::now_ms;
use crate::common::ffi::key::Key;
use crate::common::ffi::replicate::{self, Word};
use crate::common::reply::{Replied, Reply, RECORD_FIELDS};
use crate::common::stats::Stat;
use crate::entry;
use decide::{Decision, Entry, Gcra, Limit, MAX_COUNT, MAX_LIMITS, MAX_PERIOD_MS};

const SINCE: &std::ffi::CStr = c"0.2.0";

const GCRA_TAG: u8 = b'G';
const SLIDING_TAG: u8 = b'W';
const TAT_BYTES: usize = 8;
const ENTRY_BYTES: usize = 12;

/// `recipes.rate-sliding-max`: a `SLIDING` window's state holds one entry
/// per millisecond in which actions were allowed, so a limit counts at most
/// `max` of them and at most `period` (in ms). `RATE.LIMIT … SLIDING` needs
/// one of both at most this, so that whatever limits calls give, a window
/// stays about this size.
pub static SLIDING_MAX: Setting = Setting::new(c"rate-sliding-max", 100_000, 1, 10_000_000);

/// `recipes.rate-max-limits`: the most limits a `RATE.LIMIT` may give to a
/// key that holds no limiter yet. A limiter stored under a higher setting
/// keeps being served with its number of limits.
pub static MAX_LIMITS_SETTING: Setting =
    Setting::new(c"rate-max-limits", MAX_LIMITS as i64, 1, MAX_LIMITS as i64);

fn too_many_limits(most: i64) -> RedisError {
    errors::TOO_MANY_LIMITS.with(&[&most])
}

const NOT_A_LIMITER: RedisError = errors::NOT_A_LIMITER.error();

/// A parsed `RATE.LIMIT`/`RATE.PEEK` call.
struct Call {
    limits: [Limit; MAX_LIMITS],
    count: usize,
    cost: i64,
    sliding: bool,
    /// `WITHREFILL`: the reply ends with `refill_after_ms`.
    refill: bool,
}

impl Call {
    fn limits(&self) -> &[Limit] {
        self.limits.get(..self.count).unwrap_or(&[])
    }
}

fn integer(arg: Arg, what: &str, high: i64) -> Result<i64, RedisError> {
    match arg.to_i64() {
        Ok(value @ 1..) if value <= high => Ok(value),
        _ => Err(errors::RATE_RANGE.with(&[&what, &high])),
    }
}

/// `max period [BURST burst] [AND max period [BURST burst]]… [COST cost]
/// [SLIDING] [WITHREFILL]`
fn parse(args: &[Arg]) -> Result<Call, RedisError> {
    let unset = Limit {
        max: 0,
        period_ms: 0,
        burst: 0,
    };
    let mut call = Call {
        limits: [unset; MAX_LIMITS],
        count: 0,
        cost: 0,
        sliding: false,
        refill: false,
    };
    let mut burst_given = [false; MAX_LIMITS];
    let mut rest = args;
    let mut first = true;
    while !rest.is_empty() {
        match rest {
            [max, period, more @ ..] if first => {
                call.push(*max, *period)?;
                rest = more;
                first = false;
            }
            [token, max, period, more @ ..] if token.is("AND") => {
                call.push(*max, *period)?;
                rest = more;
            }
            [token, burst, more @ ..] if token.is("BURST") => {
                let index = call.count.checked_sub(1).ok_or(errors::SYNTAX.error())?;
                let given = burst_given.get_mut(index).ok_or(errors::SYNTAX.error())?;
                if std::mem::replace(given, true) {
                    return Err(errors::SYNTAX.error());
                }
                let limit = call.limits.get_mut(index).ok_or(errors::SYNTAX.error())?;
                limit.burst = integer(*burst, "burst", MAX_COUNT)?;
                rest = more;
            }
            [token, cost, more @ ..] if token.is("COST") && call.cost == 0 => {
                call.cost = integer(*cost, "cost", MAX_COUNT)?;
                rest = more;
            }
            [token, more @ ..] if token.is("SLIDING") && !call.sliding => {
                call.sliding = true;
                rest = more;
            }
            [token, more @ ..] if token.is("WITHREFILL") && !call.refill => {
                call.refill = true;
                rest = more;
            }
            _ => return Err(errors::SYNTAX.error()),
        }
    }
    if call.count == 0 {
        return Err(RedisError::WrongArity);
    }
    call.cost = call.cost.max(1);
    for (limit, burst_given) in call.limits().iter().zip(burst_given) {
        if call.sliding && burst_given {
            return Err(errors::SLIDING_BURST.error());
        }
        let most = if call.sliding { limit.max } else { limit.burst };
        if call.cost > most {
            let limit = if call.sliding { "max" } else { "burst" };
            return Err(errors::COST_TOO_HIGH.with(&[&call.cost, &limit, &most]));
        }
    }
    Ok(call)
}

impl Call {
    fn push(&mut self, max: Arg, period: Arg) -> Result<(), RedisError> {
        let max = integer(max, "max", MAX_COUNT)?;
        let period_ms = integer(period, "period", MAX_PERIOD_MS)?;
        let slot = self
            .limits
            .get_mut(self.count)
            .ok_or_else(|| too_many_limits(MAX_LIMITS as i64))?;
        *slot = Limit {
            max,
            period_ms,
            burst: max,
        };
        self.count += 1;
        Ok(())
    }

    fn gcra(&self) -> Result<[Gcra; MAX_LIMITS], RedisError> {
        let mut gcras = [Gcra::default(); MAX_LIMITS];
        for (slot, limit) in gcras.iter_mut().zip(self.limits()) {
            *slot = Gcra::new(*limit).map_err(|_| errors::EMISSION_TOO_LONG.error())?;
        }
        Ok(gcras)
    }

    /// The longest period: how long a sliding window's entries matter.
    fn keep_ms(&self) -> i64 {
        self.limits()
            .iter()
            .map(|limit| limit.period_ms)
            .max()
            .unwrap_or(1)
    }
}

/// A limiter's stored state, read and checked.
enum State {
    Fresh,
    Gcra([i64; MAX_LIMITS]),
    Sliding(Vec<Entry>),
}

fn read_state(stored: Option<&[u8]>, call: &Call) -> Result<State, RedisError> {
    let Some(stored) = stored else {
        return Ok(State::Fresh);
    };
    match stored.split_first() {
        Some((&GCRA_TAG, tats)) if tats.len() % TAT_BYTES == 0 => {
            let count = tats.len() / TAT_BYTES;
            if call.sliding {
                return Err(errors::GCRA_NOT_SLIDING.error());
            }
            if count != call.count {
                return Err(errors::LIMIT_COUNT_MISMATCH.with(&[&count, &call.count]));
            }
            let mut out = [0; MAX_LIMITS];
            for (slot, bytes) in out.iter_mut().zip(tats.chunks_exact(TAT_BYTES)) {
                *slot = i64::from_le_bytes(bytes.try_into().map_err(|_| NOT_A_LIMITER)?);
            }
            Ok(State::Gcra(out))
        }
        Some((&SLIDING_TAG, entries)) if entries.len() % ENTRY_BYTES == 0 => {
            if !call.sliding {
                return Err(errors::SLIDING_NOT_GCRA.error());
            }
            Ok(State::Sliding(parse_entries(entries)?))
        }
        _ => Err(NOT_A_LIMITER),
    }
}

/// A sliding window's entries: in time order, each cost positive.
fn parse_entries(bytes: &[u8]) -> Result<Vec<Entry>, RedisError> {
    let mut entries = Vec::with_capacity(bytes.len() / ENTRY_BYTES);
    for chunk in bytes.chunks_exact(ENTRY_BYTES) {
        let (at, cost) = chunk.split_at(8);
        let at_ms = i64::from_le_bytes(at.try_into().map_err(|_| NOT_A_LIMITER)?);
        let cost = i64::from(u32::from_le_bytes(
            cost.try_into().map_err(|_| NOT_A_LIMITER)?,
        ));
        let ordered = entries.last().is_none_or(|last: &Entry| last.at_ms < at_ms);
        if cost == 0 || !ordered {
            return Err(NOT_A_LIMITER);
        }
        entries.push(Entry { at_ms, cost });
    }
    Ok(entries)
}

fn encode_entries(entries: &[Entry]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(1 + entries.len() * ENTRY_BYTES);
    bytes.push(SLIDING_TAG);
    for entry in entries {
        bytes.extend_from_slice(&entry.at_ms.to_le_bytes());
        // A merged entry never passes the window's max (≤ 2^31 − 1).
        let cost = u32::try_from(entry.cost).unwrap_or(u32::MAX);
        bytes.extend_from_slice(&cost.to_le_bytes());
    }
    bytes
}

/// The decision for `call` on `state` now, and what to store if allowed and
/// `consume` (`RATE.LIMIT`; `RATE.PEEK` consumes nothing).
fn decide_now(
    call: &Call,
    state: State,
    now: i64,
    consume: bool,
) -> Result<(Decision, Option<State>), RedisError> {
    if call.sliding {
        let entries = match state {
            State::Sliding(entries) => entries,
            _ => Vec::new(),
        };
        let decision = decide::sliding(call.limits(), &entries, now, call.cost, consume);
        let after = (!decision.limited && consume).then_some(State::Sliding(entries));
        return Ok((decision, after));
    }
    let gcras = call.gcra()?;
    let count = call.count;
    let mut tats = match state {
        State::Gcra(tats) => tats,
        _ => [0; MAX_LIMITS],
    };
    let limits = gcras.get(..count).unwrap_or(&[]);
    let now_ns = now.saturating_mul(1_000_000);
    let decision = decide::gcra(
        limits,
        tats.get_mut(..count).unwrap_or(&mut []),
        now_ns,
        call.cost,
        consume,
    );
    let after = (!decision.limited && consume).then_some(State::Gcra(tats));
    Ok((decision, after))
}

/// The five fields of `CL.THROTTLE`, and `refill_after_ms` after them when
/// the call asks `WITHREFILL`.
fn reply(decision: &Decision, refill: bool) -> Reply<'static> {
    const NAMES: [&[u8]; 6] = [
        b"limited",
        b"limit",
        b"remaining",
        b"retry_after_ms",
        b"reset_after_ms",
        b"refill_after_ms",
    ];
    let mut values = [0; RECORD_FIELDS];
    values[..6].copy_from_slice(&[
        i64::from(decision.limited),
        decision.limit,
        decision.remaining,
        decision.retry_after_ms,
        decision.reset_after_ms,
        decision.refill_after_ms,
    ]);
    let shown = if refill { 6 } else { 5 };
    Reply::Record(NAMES.get(..shown).unwrap_or(&NAMES), values)
}

/// Stores an allowed action and replicates its effect.
fn store(
    ctx: &Context,
    key: &mut Key,
    name: Arg,
    call: &Call,
    state: State,
    now: i64,
) -> Result<(), RedisError> {
    match state {
        State::Gcra(tats) => {
            let tats = tats.get(..call.count).unwrap_or(&[]);
            let mut bytes = [0u8; 1 + MAX_LIMITS * TAT_BYTES];
            bytes[0] = GCRA_TAG;
            for (slot, tat) in bytes[1..].chunks_exact_mut(TAT_BYTES).zip(tats) {
                slot.copy_from_slice(&tat.to_le_bytes());
            }
            let value = bytes.get(..1 + tats.len() * TAT_BYTES).unwrap_or(&[]);
            let full_at = decide::gcra_idle_at_ms(tats);
            key.set_value(value, Some(full_at))?;
            // The state holds absolute times: SET … PXAT is the same on
            // every replica whatever its clock.
            replicate::effect(
                ctx,
                c"SET",
                &[
                    Word::Arg(name),
                    Word::Bytes(value),
                    Word::Token(c"PXAT"),
                    Word::Int(full_at),
                ],
            );
        }
        State::Sliding(entries) => {
            let at = decide::newest_at(&entries, now);
            let keep = call.keep_ms();
            apply_sliding(key, entries, at, call.cost, keep)?;
            replicate::effect(
                ctx,
                c"RATE.APPLY",
                &[
                    Word::Arg(name),
                    Word::Int(at),
                    Word::Int(call.cost),
                    Word::Int(keep),
                ],
            );
        }
        State::Fresh => {}
    }
    Ok(())
}

/// Records `cost` actions at `at` in a sliding window and expires the key
/// when no window of `keep` ms sees them any more.
fn apply_sliding(
    key: &mut Key,
    mut entries: Vec<Entry>,
    at: i64,
    cost: i64,
    keep: i64,
) -> Result<(), RedisError> {
    decide::record(&mut entries, at, cost, keep);
    key.set_value(&encode_entries(&entries), Some(at.saturating_add(keep)))
}

/// `RATE.LIMIT key max period [BURST burst] [AND max period [BURST burst]]…
/// [COST cost] [SLIDING] [WITHREFILL]` → the decision.
fn limit<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    decide_command(ctx, args, true)
}

/// `RATE.PEEK key …` (as `RATE.LIMIT`) → whether `RATE.LIMIT` would allow
/// the action now, with the limits as they stand (nothing consumed).
fn peek<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    decide_command(ctx, args, false)
}

/// Both commands: the decision now; `consume` stores and replicates an
/// allowed action (`RATE.LIMIT`), else the key is only read.
fn decide_command<'a>(ctx: &Context, args: &'a [Arg<'a>], consume: bool) -> Replied<'a> {
    let [_, name, rest @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let call = parse(rest)?;
    if !consume {
        let state = read_state(Key::read(ctx, *name).string()?, &call)?;
        let (decision, _) = decide_now(&call, state, now_ms(), false)?;
        return Ok(reply(&decision, call.refill));
    }
    let mut key = Key::write(ctx, *name);
    let state = read_state(key.string()?, &call)?;
    check_caps(ctx, &call, &state)?;
    let now = now_ms();
    let (decision, after) = decide_now(&call, state, now, true)?;
    match after {
        Some(state) => {
            store(ctx, &mut key, *name, &call, state, now)?;
            ALLOWED.incr();
        }
        None => LIMITED.incr(),
    }
    Ok(reply(&decision, call.refill))
}

/// The settings' caps on what a `RATE.LIMIT` may store: a new limiter's
/// number of limits, and a `SLIDING` window's size (checked on every call,
/// since each may add entries). `RATE.PEEK` reads any stored limiter.
fn check_caps(ctx: &Context, call: &Call, state: &State) -> Result<(), RedisError> {
    let most = MAX_LIMITS_SETTING.cap(ctx);
    if matches!(state, State::Fresh) && call.count as i64 > most {
        return Err(too_many_limits(most));
    }
    if call.sliding {
        // One entry per millisecond with actions: either bound keeps the
        // state small.
        let most = SLIDING_MAX.cap(ctx);
        if call
            .limits()
            .iter()
            .any(|limit| limit.max > most && limit.period_ms > most)
        {
            return Err(errors::SLIDING_MAX.with(&[&most]));
        }
    }
    Ok(())
}

/// `RATE.RESET key` → 1 when a limiter was forgotten, 0 when there was none.
fn reset<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let mut key = Key::write(ctx, *name);
    match key.string()? {
        None => return Ok(RedisValue::Integer(0).into()),
        Some([GCRA_TAG | SLIDING_TAG, ..]) => {}
        Some(_) => return Err(NOT_A_LIMITER),
    }
    key.delete();
    key.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
    // Deleting follows from the key's contents alone.
    replicate::verbatim(ctx);
    Ok(RedisValue::Integer(1).into())
}

/// `RATE.APPLY key at cost keep` → `OK`: a primary's allowed sliding-window
/// action, applied as made. Only the replication stream and AOF loading may
/// send it.
fn apply<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, at, cost, keep] = args else {
        return Err(RedisError::WrongArity);
    };
    if replicate::deciding(ctx) {
        return Err(errors::INTERNAL_ONLY.with(&[&"RATE.APPLY", &"RATE.LIMIT"]));
    }
    let at = at.to_i64()?;
    let cost = integer(*cost, "cost", MAX_COUNT)?;
    let keep = integer(*keep, "keep", MAX_PERIOD_MS)?;
    let mut key = Key::write(ctx, *name);
    let entries = match key.string()? {
        None => Vec::new(),
        Some([SLIDING_TAG, entries @ ..]) if entries.len() % ENTRY_BYTES == 0 => {
            parse_entries(entries)?
        }
        Some(_) => return Err(NOT_A_LIMITER),
    };
    apply_sliding(&mut key, entries, at, cost, keep)?;
    replicate::verbatim(ctx);
    Ok(RedisValue::SimpleStringStatic("OK").into())
}

const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const LIMIT_ARGS: &[ArgSpec] = &[
    KEY,
    ArgSpec::required(c"max", ArgType::Integer),
    ArgSpec::required(c"period", ArgType::Integer),
    ArgSpec::option(c"burst", c"BURST", ArgType::Integer),
    ArgSpec::block(
        c"and",
        c"AND",
        &[
            ArgSpec::required(c"max", ArgType::Integer),
            ArgSpec::required(c"period", ArgType::Integer),
            ArgSpec::option(c"burst", c"BURST", ArgType::Integer),
        ],
    )
    .multiple(),
    ArgSpec::option(c"cost", c"COST", ArgType::Integer),
    ArgSpec::flag(c"sliding", c"SLIDING"),
    ArgSpec::flag(c"withrefill", c"WITHREFILL"),
];
const LIMIT_COMPLEXITY: &std::ffi::CStr =
    c"O(L) for L limits with GCRA; O(L + N) with SLIDING, N the actions recorded in the longest period";

pub static ALLOWED: Stat = Stat::counter(c"rate_allowed");
pub static LIMITED: Stat = Stat::counter(c"rate_limited");

pub static FAMILY: FamilySpec = FamilySpec {
    commands: COMMANDS,
    stats: &[&ALLOWED, &LIMITED],
    waiting: None,
    settings: &[&SLIDING_MAX, &MAX_LIMITS_SETTING],
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: c"rate.limit",
        entry: entry!(limit, WRITE_KEY),
        flags: c"write deny-oom fast",
        acl_categories: c"write fast",
        arity: -4,
        summary: c"Allows or refuses an action against one or more rate limits at once, consuming only if allowed",
        complexity: LIMIT_COMPLEXITY,
        since: SINCE,
        args: LIMIT_ARGS,
    },
    CommandSpec {
        name: c"rate.peek",
        entry: entry!(peek, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: -4,
        summary: c"Returns the decision RATE.LIMIT would make now, consuming nothing",
        complexity: LIMIT_COMPLEXITY,
        since: SINCE,
        args: LIMIT_ARGS,
    },
    CommandSpec {
        name: c"rate.reset",
        entry: entry!(reset, WRITE_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: 2,
        summary: c"Forgets a rate limiter: its next action starts from a full limit",
        complexity: c"O(1)",
        since: SINCE,
        args: &[KEY],
    },
    CommandSpec {
        name: c"rate.apply",
        entry: entry!(apply, WRITE_KEY),
        flags: c"write",
        acl_categories: c"write",
        arity: 5,
        summary: c"Internal: applies a primary's allowed sliding-window action on replicas and AOF load",
        complexity: c"O(N) for N actions recorded in the window",
        since: SINCE,
        args: &[
            KEY,
            ArgSpec::required(c"at", ArgType::Integer),
            ArgSpec::required(c"cost", ArgType::Integer),
            ArgSpec::required(c"keep", ArgType::Integer),
        ],
    },
];
