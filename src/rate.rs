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
//!
//! `RATE.FIXED` is the other kind: a fixed-window counter, a plain string
//! integer with a TTL (what `INCR` makes), counted as the Lua scripts of
//! the common libraries count it (rules in [`fixed`]). It goes as
//! `SET key <n> PXAT <ms>` when its TTL moves, else as the command (as
//! `INCRBY`: the outcome follows from the counter; a served waiter's call,
//! outside its command, as `SET key <n> KEEPTTL`).
//! With `WAIT`, a call that would take the counter over its max waits, first
//! come first served (`common/wait/`), until the window expires, the key is
//! deleted or a negative `COST` makes room.

#![forbid(unsafe_code)]

mod core;
mod errors;
mod fixed;

use std::os::raw::c_int;

use std::ffi::CStr;

use redis_module::{raw, Context, RedisError, RedisValue};

use self::core::{Decision, Entry, Gcra, Limit, MAX_COUNT, MAX_LIMITS, MAX_PERIOD_MS};
use crate::common::args::{parse_options, single};
use crate::common::command::{
    internal_only, ArgSpec, ArgType, CommandSpec, Events, KeySpec, READS_FIRST, UPDATES_FIRST, WAIT,
};
use crate::common::config::Setting;
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::context::now_ms;
use crate::common::ffi::key::Key;
use crate::common::ffi::replicate::{self, Word};
use crate::common::reply::{Replied, Reply, RECORD_FIELDS};
use crate::common::stats::Stat;
use crate::common::time;
use crate::common::wait::{self, Cause, Event, Offer, Take, TakenFor, WaitStats, Waitable, Waits};
use crate::entry;
use fixed::{Over, Rule, Ttl};

const SINCE: &std::ffi::CStr = c"0.2.0";

const GCRA_TAG: u8 = b'G';
const SLIDING_TAG: u8 = b'W';
const TAT_BYTES: usize = 8;
const ENTRY_BYTES: usize = 12;

/// A limit counts at most `max` entries and at most `period` (in ms), so
/// whatever limits calls give, a window stays about this size.
pub static SLIDING_MAX: Setting = Setting::new(
    c"rate-sliding-max",
    (100_000, 1, 10_000_000),
    "`RATE.LIMIT … SLIDING` needs each limit's `max` or `period` (ms) at most this. A window stores one 12-byte \
     entry per millisecond with allowed actions, so this bounds its size and each call's work",
);

/// A limiter stored under a higher setting keeps being served with its
/// number of limits.
pub static MAX_LIMITS_SETTING: Setting = Setting::new(
    c"rate-max-limits",
    (MAX_LIMITS as i64, 1, MAX_LIMITS as i64),
    "the limits (`… AND max period`) one `RATE.LIMIT` may give a key that holds no limiter yet",
);

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
            [token, max, period, more @ ..] if token.is(&AND) => {
                call.push(*max, *period)?;
                rest = more;
            }
            [token, burst, more @ ..] if token.is(&BURST) => {
                let index = call.count.checked_sub(1).ok_or(errors::SYNTAX.error())?;
                let given = burst_given.get_mut(index).ok_or(errors::SYNTAX.error())?;
                if std::mem::replace(given, true) {
                    return Err(errors::SYNTAX.error());
                }
                let limit = call.limits.get_mut(index).ok_or(errors::SYNTAX.error())?;
                limit.burst = integer(*burst, "burst", MAX_COUNT)?;
                rest = more;
            }
            [token, cost, more @ ..] if token.is(&COST) && call.cost == 0 => {
                call.cost = integer(*cost, "cost", MAX_COUNT)?;
                rest = more;
            }
            [token, more @ ..] if token.is(&SLIDING) && !call.sliding => {
                call.sliding = true;
                rest = more;
            }
            [token, more @ ..] if token.is(&WITHREFILL) && !call.refill => {
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
        let decision = self::core::sliding(call.limits(), &entries, now, call.cost, consume);
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
    let decision = self::core::gcra(
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
            let full_at = self::core::gcra_idle_at_ms(tats);
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
            let at = self::core::newest_at(&entries, now);
            let keep = call.keep_ms();
            apply_sliding(key, entries, at, call.cost, keep)?;
            replicate::effect(
                ctx,
                APPLY.upper_name(),
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
    self::core::record(&mut entries, at, cost, keep);
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
        return Err(internal_only(&APPLY, &[&LIMIT]));
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

/// An integer `least..=most`, else `ERR <what> must be an integer between …`.
fn ranged(arg: Arg, what: &str, least: i64, most: i64) -> Result<i64, RedisError> {
    match arg.to_i64() {
        Ok(value) if (least..=most).contains(&value) => Ok(value),
        _ => Err(errors::FIXED_RANGE.with(&[&what, &least, &most])),
    }
}

/// `period [COST cost] [MAX max [BLOCK ms | EXTEND | BACKOFF]] [RENEW]
/// [WAIT ms]`: the rule, and the wait in ms.
fn parse_fixed(period: Arg, options: &[Arg]) -> Result<(Rule, Option<i64>), RedisError> {
    let period_ms = ranged(period, "period", 0, MAX_PERIOD_MS)?;
    let [cost, max, block, extend, backoff, renew, wait] =
        parse_options(options, &[COST, MAX, BLOCK, EXTEND, BACKOFF, RENEW, WAIT])?;
    let cost = single(cost).map_or(Ok(1), |cost| cost.to_i64())?;
    let max = single(max)
        .map(|max| ranged(max, "max", 0, i64::MAX))
        .transpose()?;
    let over = match (single(block), extend.is_some(), backoff.is_some()) {
        (None, false, false) => Over::Nothing,
        (Some(ms), false, false) => Over::Block(ranged(ms, "BLOCK", 1, MAX_PERIOD_MS)?),
        (None, true, false) => Over::Extend,
        (None, false, true) => Over::Backoff,
        _ => return Err(errors::SYNTAX.error()),
    };
    let wait = wait::parse_wait(single(wait))?;
    if max.is_none() {
        let needs = match over {
            Over::Block(_) => Some("BLOCK"),
            Over::Extend => Some("EXTEND"),
            Over::Backoff => Some("BACKOFF"),
            Over::Nothing => wait.is_some().then_some("WAIT"),
        };
        if let Some(option) = needs {
            return Err(errors::FIXED_NEEDS_MAX.with(&[&option]));
        }
    }
    if period_ms == 0 {
        let needs = match over {
            Over::Extend => Some("EXTEND"),
            Over::Backoff => Some("BACKOFF"),
            _ => renew.is_some().then_some("RENEW"),
        };
        if let Some(option) = needs {
            return Err(errors::FIXED_NEEDS_PERIOD.with(&[&option]));
        }
    }
    if let (Some(max), Some(_)) = (max, wait) {
        // A waiter for more than max could only be served by a counter
        // below zero: refused, as `RATE.LIMIT` refuses such a cost.
        if cost > max {
            return Err(errors::COST_TOO_HIGH.with(&[&cost, &"max", &max]));
        }
    }
    let rule = Rule {
        period_ms,
        cost,
        max,
        over,
        renew: renew.is_some(),
    };
    Ok((rule, wait))
}

/// A counter read from its key: its value (`None`: no key) and expiry.
struct Counter {
    value: Option<i64>,
    expire_at: Option<i64>,
}

fn read_counter(key: &Key) -> Result<Counter, RedisError> {
    Ok(Counter {
        value: key.integer()?,
        expire_at: key.expire_at(),
    })
}

/// What a call decided, checked, before anything is written: the counter
/// after it, its expiry (absolute ms), whether this call moves the TTL, and
/// whether a call that waits must wait.
struct Planned {
    counter: i64,
    expire_at: Option<i64>,
    moves_ttl: bool,
    waits: bool,
}

fn plan(rule: &Rule, counter: &Counter, now: i64) -> Result<Planned, RedisError> {
    let outcome = rule
        .outcome(counter.value, counter.expire_at.is_some())
        .map_err(|_| errors::OVERFLOW.error())?;
    let (expire_at, moves_ttl) = match outcome.ttl {
        Ttl::Keep => (counter.expire_at, false),
        Ttl::Set(ms) => (Some(time::after(now, ms)?), true),
    };
    Ok(Planned {
        counter: outcome.counter,
        expire_at,
        moves_ttl,
        waits: rule.must_wait(&outcome),
    })
}

/// Stores a planned call (`INCRBY`'s `incrby` event, and `expire` when the
/// TTL moves) and replicates it: `SET key <n> PXAT <ms>` when the TTL moves
/// (counted from now); else, the outcome following from the stored counter
/// and the arguments alone, as `INCRBY` the command itself for the caller's
/// own call (`TakenFor::Command`), and `SET key <n> KEEPTTL` for a waiter
/// served outside its command. The reply: `[counter, ttl ms]` (−1 without
/// expiry).
fn store_fixed(
    ctx: &Context,
    key: &mut Key,
    name: Arg,
    planned: &Planned,
    now: i64,
    taken_for: TakenFor,
) -> Result<RedisValue, RedisError> {
    key.store_integer(planned.counter)?;
    match (planned.moves_ttl, planned.expire_at) {
        (true, Some(at)) => {
            key.set_expire_at(Some(at));
            key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"expire");
            replicate::effect(
                ctx,
                c"SET",
                &[
                    Word::Arg(name),
                    Word::Int(planned.counter),
                    Word::Token(c"PXAT"),
                    Word::Int(at),
                ],
            );
        }
        // An ended window was deleted as the key was opened, and that DEL
        // replicated first: a replica and an AOF replay hold this counter.
        _ if taken_for == TakenFor::Command => replicate::verbatim(ctx),
        _ => replicate::effect(
            ctx,
            c"SET",
            &[
                Word::Arg(name),
                Word::Int(planned.counter),
                Word::Token(c"KEEPTTL"),
            ],
        ),
    }
    let ttl = planned
        .expire_at
        .map_or(-1, |at| at.saturating_sub(now).max(0));
    Ok(RedisValue::Array(vec![
        RedisValue::Integer(planned.counter),
        RedisValue::Integer(ttl),
    ]))
}

/// `RATE.FIXED key period [COST cost] [MAX max [BLOCK ms | EXTEND |
/// BACKOFF]] [RENEW] [WAIT ms]` → `[counter, ttl ms]`; nil when a `WAIT`
/// ran out.
fn fixed_window<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, period, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let (rule, wait) = parse_fixed(*period, options)?;
    // A window that ended while clients wait is theirs first (a delete
    // would have scheduled a check already).
    wait::serve_waiters::<FixedWindows>(ctx, name.as_bytes(), (), Cause::Expiry);
    let mut key = Key::write(ctx, *name);
    let counter = read_counter(&key)?;
    let now = now_ms();
    let planned = plan(&rule, &counter, now)?;
    if let Some(wait) = wait {
        // A cost that does not add (a reward, a look at the counter) never
        // waits: it applies at once, ahead of the queue, and serves it below.
        let queued = rule.queues() && wait::waiting_on::<FixedWindows>(ctx, name.as_bytes()) > 0;
        if planned.waits || queued {
            let next = counter.expire_at.map(|at| at.saturating_add(1));
            return Ok(
                wait::park::<FixedWindows>(ctx, name.as_bytes(), key, rule, wait, next).into(),
            );
        }
    }
    let reply = store_fixed(ctx, &mut key, *name, &planned, now, TakenFor::Command)?;
    // A negative cost makes room (for the queue's head first), a moved TTL
    // moves the waiters' timer.
    wait::serve_waiters::<FixedWindows>(ctx, name.as_bytes(), key, Cause::Release);
    Ok(reply.into())
}

/// What a hand-off counted for a waiter: given back if its reply never
/// reaches it, while the window it counted in lasts.
pub struct Counted {
    cost: i64,
    expire_at: Option<i64>,
}

/// `RATE.FIXED … WAIT`'s queues (see `common/wait/`).
pub struct FixedWindows;

static FIXED_WAITS: Waits<Rule> = Waits::new();

impl Waitable for FixedWindows {
    type Request = Rule;
    type Grant = Counted;
    const KEYS_WAITED_ON: &'static CStr = c"rate_windows_with_waiters";

    fn waits() -> &'static Waits<Rule> {
        &FIXED_WAITS
    }

    fn command(_: &Rule) -> &'static CommandSpec {
        &FIXED
    }

    /// The waiter's call, counted as it would have been when it came, if
    /// the counter has room for it now; else looked at again just after the
    /// window ends.
    fn offer(ctx: &Context, name: Arg, rule: &Rule) -> Offer<Counted> {
        let mut key = Key::write(ctx, name);
        let taken = read_counter(&key).and_then(|counter| {
            let now = now_ms();
            let planned = plan(rule, &counter, now)?;
            if planned.waits {
                // A key expires once its time has passed, so look 1 ms after.
                return Ok(Take::Nothing(
                    counter.expire_at.map(|at| at.saturating_add(1)),
                ));
            }
            let reply = store_fixed(ctx, &mut key, name, &planned, now, TakenFor::Waiter)?;
            let counted = Counted {
                cost: rule.cost,
                expire_at: planned.expire_at,
            };
            Ok(Take::Got((reply, counted)))
        });
        Offer::of(taken)
    }

    /// A hand-off whose reply never reached the waiter: its cost leaves the
    /// counter if the window it counted in still lasts. Replicated as `SET
    /// key <n> KEEPTTL`.
    fn revoke(ctx: &Context, name: Arg, counted: &Counted) -> bool {
        let mut key = Key::write(ctx, name);
        let Ok(Some(value)) = key.integer() else {
            return false;
        };
        let Some(back) = value.checked_sub(counted.cost) else {
            return false;
        };
        if key.expire_at() != counted.expire_at || key.store_integer(back).is_err() {
            return false;
        }
        replicate::effect(
            ctx,
            c"SET",
            &[Word::Arg(name), Word::Int(back), Word::Token(c"KEEPTTL")],
        );
        true
    }

    fn count(event: Event) {
        FIXED_WAIT_STATS.count(event);
    }
}

pub static FIXED_WAIT_STATS: WaitStats = WaitStats::new(
    (c"rate_waits", "`RATE.FIXED … WAIT`s started"),
    (c"rate_waits_timed_out", "`RATE.FIXED … WAIT`s that ran out"),
    (
        c"rate_handoffs",
        "waiters counted once their counter had room",
    ),
);

const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const PERIOD: ArgSpec = ArgSpec::required(c"period", ArgType::Integer);
/// `COST cost`: how much an action takes (`RATE.LIMIT`, `RATE.PEEK`,
/// `RATE.FIXED`).
const COST: ArgSpec = ArgSpec::option(c"cost", c"COST", ArgType::Integer);
/// One limit of `RATE.LIMIT`: `max period [BURST burst]`.
const LIMIT_MAX: ArgSpec = ArgSpec::required(c"max", ArgType::Integer);
const BURST: ArgSpec = ArgSpec::option(c"burst", c"BURST", ArgType::Integer);
const AND: ArgSpec = ArgSpec::block(c"and", c"AND", &[LIMIT_MAX, PERIOD, BURST]).multiple();
const SLIDING: ArgSpec = ArgSpec::flag(c"sliding", c"SLIDING");
const WITHREFILL: ArgSpec = ArgSpec::flag(c"withrefill", c"WITHREFILL");
const LIMIT_ARGS: &[ArgSpec] = &[
    KEY, LIMIT_MAX, PERIOD, BURST, AND, COST, SLIDING, WITHREFILL,
];
/// `RATE.FIXED`'s options: `MAX max [BLOCK ms | EXTEND | BACKOFF]`,
/// `RENEW`.
const MAX: ArgSpec = ArgSpec::option(c"max", c"MAX", ArgType::Integer);
const BLOCK: ArgSpec = ArgSpec::tokened(c"block", c"BLOCK", ArgType::Integer);
const EXTEND: ArgSpec = ArgSpec::keyword(c"extend", c"EXTEND");
const BACKOFF: ArgSpec = ArgSpec::keyword(c"backoff", c"BACKOFF");
const RENEW: ArgSpec = ArgSpec::flag(c"renew", c"RENEW");
const LIMIT_COMPLEXITY: &std::ffi::CStr =
    c"O(L) for L limits with GCRA; O(L + N) with SLIDING, N the actions recorded in the longest period";

pub static ALLOWED: Stat = Stat::counter(c"rate_allowed", "`RATE.LIMIT` calls allowed");
pub static LIMITED: Stat = Stat::counter(c"rate_limited", "`RATE.LIMIT` calls refused");

pub static FAMILY: FamilySpec = FamilySpec {
    about: "rate limiters in one atomic command",
    replaces:
        "fixed windows of `MULTI`/`INCR`/`EXPIRE`, GCRA Lua scripts, redis-cell's `CL.THROTTLE`",
    commands: COMMANDS,
    stats: &[
        &ALLOWED,
        &LIMITED,
        &FIXED_WAIT_STATS.started,
        &FIXED_WAIT_STATS.timed_out,
        &FIXED_WAIT_STATS.handoffs,
    ],
    waiting: Some(wait::watcher::<FixedWindows>()),
    settings: &[&SLIDING_MAX, &MAX_LIMITS_SETTING],
    errors: errors::OWN,
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    FIXED,
    LIMIT,
    CommandSpec {
        entry: entry!(c"rate.peek", peek, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: -4,
        summary: c"Returns the decision RATE.LIMIT would make now, consuming nothing",
        complexity: LIMIT_COMPLEXITY,
        since: SINCE,
        reply: "The same fields as `RATE.LIMIT` (an array of five integers, six with \
                `WITHREFILL`; a map under RESP3), consuming nothing: `limited` and \
                `retry_after_ms` as `RATE.LIMIT` would decide now, but `remaining`, \
                `reset_after_ms` and `refill_after_ms` describe the limiter as it stands, \
                without this action (a fresh limiter of 5: `0 5 5 -1 0`).",
        events: None,
        args: LIMIT_ARGS,
    },
    CommandSpec {
        entry: entry!(c"rate.reset", reset, WRITE_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: 2,
        summary: c"Forgets a rate limiter: its next action starts from a full limit",
        complexity: c"O(1)",
        since: SINCE,
        reply: "`1` when a limiter was forgotten (its key deleted); `0` when the key does not \
                exist.",
        events: Some(Events {
            fires: "`del`",
            replica: None,
        }),
        args: &[KEY],
    },
    APPLY,
];

const FIXED: CommandSpec = CommandSpec {
    entry: entry!(c"rate.fixed", fixed_window, WRITE_KEY),
    flags: c"write deny-oom fast blocking",
    acl_categories: c"write fast blocking",
    arity: -3,
    summary: c"Counts calls in a fixed window: a plain string counter with a TTL (as INCR and PEXPIRE make it); with WAIT, a call over the max waits for room",
    complexity: c"O(1), plus O(N) over the N clients waiting on this counter when room frees",
    since: c"0.7.0",
    reply: "An array of two integers: the counter after this call and the key's TTL in ms \
            (`-1` without expiry); a call over `MAX` without `WAIT` still counts and gets \
            this reply. With `WAIT`, a call that would take the counter over `max` gets \
            the same array once it has waited and been counted, or nil when `ms` runs out \
            (at once inside `MULTI` or a script).",
    events: Some(Events {
        fires: "`incrby` (as `INCRBY`), then `expire` when the TTL is set (as `PEXPIRE`)",
        replica: Some("`set`, then `expire`, when the TTL is set; else `incrby`"),
    }),
    args: &[
        KEY,
        PERIOD,
        COST,
        MAX,
        ArgSpec::one_of(c"over", &[BLOCK, EXTEND, BACKOFF]).optional(),
        RENEW,
        WAIT,
    ],
};

const LIMIT: CommandSpec = CommandSpec {
    entry: entry!(c"rate.limit", limit, WRITE_KEY),
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -4,
    summary: c"Allows or refuses an action against one or more rate limits at once, consuming only if allowed",
    complexity: LIMIT_COMPLEXITY,
    since: SINCE,
    reply: "An array of five integers, as redis-cell's `CL.THROTTLE` (six with \
            `WITHREFILL`): `limited` (`0` allowed and consumed, `1` refused, nothing \
            consumed), `limit` (the deciding limit's `burst`; its `max` with `SLIDING`), \
            `remaining` (actions of cost 1 it still allows, after this one when allowed), \
            `retry_after_ms` (`-1` when allowed), `reset_after_ms` (until the deciding \
            limit is full again) and, with `WITHREFILL`, `refill_after_ms` (until it \
            frees its next action, `0` when full). The deciding limit: when refused, the \
            refusing one that frees last; when allowed, the one with the fewest actions \
            left. Under RESP3, a map of those names to the values.",
    events: Some(Events {
        fires: "allowed: `set`, `expire`",
        replica: None,
    }),
    args: LIMIT_ARGS,
};

const APPLY: CommandSpec = CommandSpec {
    entry: entry!(c"rate.apply", apply, WRITE_KEY),
    flags: c"write",
    acl_categories: c"write",
    arity: 5,
    summary:
        c"Internal: applies a primary's allowed sliding-window action on replicas and AOF load",
    complexity: c"O(N) for N actions recorded in the window",
    since: SINCE,
    reply: "Simple string reply `OK`: the primary's allowed sliding-window action was \
            recorded. Internal: only the replication stream and an AOF load send it.",
    events: None,
    args: &[
        KEY,
        ArgSpec::required(c"at", ArgType::Integer),
        ArgSpec::required(c"cost", ArgType::Integer),
        ArgSpec::required(c"keep", ArgType::Integer),
    ],
};
