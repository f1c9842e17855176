//! LATCH: a count-down latch that can expire. Workers count it down; others
//! wait until it reaches 0.
//!
//! A latch is a plain string key holding its count (what `SET key 3`
//! makes), whose TTL is the latch's lifetime. A latch that reaches 0 is
//! deleted, so a missing key is an open latch (as a Redisson
//! `RCountDownLatch` that was never set, or has counted down, counts 0 and
//! lets waiters through), and `LATCH.SET` can arm it again.
//!
//! Waiting (`LATCH.WAIT key ms`, `common/wait/`): a waiter is answered 1
//! when the latch opens — counted down to 0 (inside `LATCH.COUNTDOWN`),
//! written to 0 or below by a plain string command (`SET key 0`, `DECR`,
//! `DECRBY`, `INCRBY key -1`, …; seen within 10 ms, as the latch is looked
//! at again that often while clients wait on it, see [`poll_ms`]), deleted,
//! expired or flushed (keyspace events) — and at its
//! deadline from the count then: 1 if the latch is open (however it
//! opened), nil if it is still positive. A key that holds no count (`SET
//! key text`), after a write or at the deadline, answers the waiter
//! `LATCH.WAIT`'s error. Waiting takes nothing, so it works on a replica
//! too: the latch opens there when the primary's write arrives.
//!
//! Replication: verbatim, but for `LATCH.SET … PX|EX`, whose TTL starts at
//! this server's clock: sent as `SET key count PXAT at`.

#![forbid(unsafe_code)]

mod errors;

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisValue};

use crate::common::args::parse_options;
use crate::common::command::{
    ArgSpec, ArgType, CommandSpec, Events, KeySpec, EX, LEASE, PX, READS_FIRST, UPDATES_FIRST,
};
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::context::now_ms;
use crate::common::ffi::key::{Key, Kind};
use crate::common::ffi::replicate::{self, Word};
use crate::common::reply::Replied;
use crate::common::stats::Stat;
use crate::common::time;
use crate::common::wait::{self, Cause, Event, Offer, Waitable, Waits};
use crate::entry;
use errors::ErrorText;

/// A positive integer argument, else `error`.
fn positive(arg: &Arg, error: &ErrorText) -> Result<i64, RedisError> {
    match arg.to_i64()? {
        n if n > 0 => Ok(n),
        _ => Err(error.error()),
    }
}

/// The count a latch key holds: 0 for a missing key (an open latch).
fn count<M>(key: &Key<M>) -> Result<i64, RedisError> {
    Ok(key.integer()?.unwrap_or(0).max(0))
}

/// How often a latch with waiters is looked at, in ms, when `keys` latches
/// have waiters: every 10 ms up to 100 of them, then less often, so that
/// looking costs the server at most about 10,000 reads a second however
/// many latches clients wait on. Watching string writes instead would put a
/// call into the module on every `SET` and `INCR` of the server (+15% of
/// their instructions on Redis 7.0, with no way to unsubscribe there).
fn poll_ms(keys: usize) -> i64 {
    let rounds = keys.div_ceil(POLLED_AT_ONCE).max(1);
    POLL_MS.saturating_mul(i64::try_from(rounds).unwrap_or(i64::MAX))
}

const POLL_MS: i64 = 10;
const POLLED_AT_ONCE: usize = 100;

/// LATCH's waits (see `common/wait/`): a waiter takes nothing, it is
/// answered once the latch is open.
pub struct Latches;

static WAITS: Waits<()> = Waits::new();

impl Waitable for Latches {
    type Request = ();
    type Grant = ();
    const KEYS_WAITED_ON: &'static CStr = c"latches_with_waiters";
    const WRITES: bool = false;

    fn waits() -> &'static Waits<()> {
        &WAITS
    }

    fn command(_: &()) -> &'static CommandSpec {
        &WAIT_COMMAND
    }

    fn offer(ctx: &Context, name: Arg, _request: &()) -> Offer<()> {
        match count(&Key::read(ctx, name)) {
            Ok(0) => Offer::Granted(RedisValue::Integer(1), ()),
            // A plain string command (`SET key 0`, `DECR`, …) may open it
            // without a word to the module: look again soon.
            Ok(_) => Offer::Busy(Some(now_ms().saturating_add(poll_ms(WAITS.keys())))),
            Err(error) => Offer::Refused(error),
        }
    }

    /// Nothing was taken: nothing to give back.
    fn revoke(_ctx: &Context, _name: Arg, _grant: &()) -> bool {
        false
    }

    fn count(event: Event) {
        match event {
            Event::Parked => WAITS_STARTED.incr(),
            Event::TimedOut => WAITS_TIMED_OUT.incr(),
            Event::Served(_) => {}
        }
    }
}

/// `LATCH.SET key count [PX ms | EX s]` → 1 when created, 0 when the latch
/// exists (nothing changes).
fn set<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, count_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let count = positive(count_arg, &errors::LATCH_COUNT)?;
    let [px, ex] = parse_options(options, &[PX, EX])?;
    let lease = time::lease(px, ex)?;
    let mut key = Key::write(ctx, *name);
    if key.kind() != Kind::Empty {
        // A latch, or an error for a key that is not one.
        key.integer()?;
        return Ok(RedisValue::Integer(0).into());
    }
    let digits = itoa::Buffer::new().format(count).as_bytes().to_vec();
    match lease.map(time::from_now).transpose()? {
        None => {
            key.set_value(&digits, None)?;
            replicate::verbatim(ctx);
        }
        Some(at) => {
            key.set_value(&digits, Some(at))?;
            replicate::effect(
                ctx,
                c"SET",
                &[
                    Word::Arg(*name),
                    Word::Bytes(&digits),
                    Word::Token(c"PXAT"),
                    Word::Int(at),
                ],
            );
        }
    }
    Ok(RedisValue::Integer(1).into())
}

/// `LATCH.COUNTDOWN key [n]` → the count after taking `n` (default 1) off,
/// never below 0. At 0 the latch is deleted and every waiter answered.
fn countdown<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let (name, by) = match args {
        [_, name] => (name, 1),
        [_, name, by] => (name, positive(by, &errors::LATCH_DECREMENT)?),
        _ => return Err(RedisError::WrongArity),
    };
    let left = {
        let mut key = Key::write(ctx, *name);
        let Some(current) = key.integer()? else {
            return Ok(RedisValue::Integer(0).into());
        };
        let left = current.saturating_sub(by).max(0);
        if left == 0 {
            key.delete();
            key.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
        } else {
            // In place: the latch keeps its TTL.
            key.set_string(itoa::Buffer::new().format(left).as_bytes())?;
            key.written(raw::REDISMODULE_NOTIFY_STRING as c_int, c"decrby");
        }
        // The count follows from the stored one alone.
        replicate::verbatim(ctx);
        left
    };
    if left == 0 {
        wait::serve_waiters::<Latches>(ctx, name.as_bytes(), (), Cause::Release);
    }
    Ok(RedisValue::Integer(left).into())
}

/// `LATCH.WAIT key ms` → 1 once the latch is open (at once if it is), nil
/// when `ms` runs out.
fn wait<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, ms] = args else {
        return Err(RedisError::WrongArity);
    };
    let invalid = || errors::LATCH_TIMEOUT.error();
    let ms = match ms.to_i64()? {
        ms if ms > 0 && time::from_now(ms).is_ok() => ms,
        _ => return Err(invalid()),
    };
    let key = Key::read(ctx, *name);
    if count(&key)? == 0 {
        return Ok(RedisValue::Integer(1).into());
    }
    // Looked at again soon: a plain string command may open it.
    let again = now_ms().saturating_add(poll_ms(WAITS.keys() + 1));
    Ok(wait::park::<Latches>(ctx, name.as_bytes(), key, (), ms, Some(again)).into())
}

/// `LATCH.COUNT key` → the count (0 for a missing key: an open latch).
fn count_of<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    Ok(RedisValue::Integer(count(&Key::read(ctx, *name))?).into())
}

const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const SINCE: &CStr = c"0.5.0";

pub static WAITS_STARTED: Stat = Stat::counter(c"latch_waits", "`LATCH.WAIT`s that blocked");
pub static WAITS_TIMED_OUT: Stat =
    Stat::counter(c"latch_waits_timed_out", "`LATCH.WAIT`s that ran out (nil)");

pub static FAMILY: FamilySpec = FamilySpec {
    about: "count-down latches that can expire",
    replaces: "Redisson's `RCountDownLatch`, a counter polled until 0",
    commands: COMMANDS,
    stats: &[&WAITS_STARTED, &WAITS_TIMED_OUT],
    waiting: Some(wait::watcher::<Latches>()),
    settings: &[],
    errors: errors::OWN,
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        entry: entry!(c"latch.set", set, WRITE_KEY),
        flags: c"write deny-oom fast",
        acl_categories: c"write fast",
        arity: -3,
        summary: c"Creates a count-down latch with a count (and a lifetime) unless it exists; returns 1 when created",
        complexity: c"O(1)",
        since: SINCE,
        reply: "`1` when the latch was armed at `count`; `0` when the key exists (nothing \
                changes, TTL included).",
        events: Some(Events {
            fires: "`set`, then `expire` with `EX`/`PX`",
            replica: None,
        }),
        args: &[
            KEY,
            ArgSpec::required(c"count", ArgType::Integer),
            ArgSpec::one_of(c"lifetime", LEASE).optional(),
        ],
    },
    CommandSpec {
        entry: entry!(c"latch.countdown", countdown, WRITE_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: -2,
        summary: c"Counts a latch down (never below 0) and returns the count; at 0 the latch opens and its waiters are answered",
        complexity: c"O(1), plus O(W) over the W clients waiting when it opens",
        since: SINCE,
        reply: "Integer reply: the count left after taking `n` (default 1) off, never below \
                `0` (at `0` the key is deleted and its waiters answered); `0` for a missing \
                key.",
        events: Some(Events {
            fires: "`decrby`, or `del` when the latch opens",
            replica: None,
        }),
        args: &[
            KEY,
            ArgSpec {
                optional: true,
                ..ArgSpec::required(c"decrement", ArgType::Integer)
            },
        ],
    },
    WAIT_COMMAND,
    CommandSpec {
        entry: entry!(c"latch.count", count_of, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 2,
        summary: c"Returns a latch's count (0 when missing: an open latch)",
        complexity: c"O(1)",
        since: SINCE,
        reply: "Integer reply: the count; `0` for a missing key (an open latch), or a count \
                at or below 0.",
        events: None,
        args: &[KEY],
    },
];

const WAIT_COMMAND: CommandSpec = CommandSpec {
    entry: entry!(c"latch.wait", wait, READ_KEY),
    flags: c"readonly blocking",
    acl_categories: c"read slow blocking",
    arity: 3,
    summary: c"Waits until a latch is open (count 0 or missing); returns 1, or nil when the time runs out",
    complexity: c"O(1)",
    since: SINCE,
    reply: "`1` once the latch is open (count `0` or less, or the key missing), at once \
            when it already is; nil when the count is still positive after `milliseconds` \
            (at once inside `MULTI` or a script).",
    events: None,
    args: &[KEY, ArgSpec::required(c"milliseconds", ArgType::Integer)],
};

#[cfg(test)]
mod tests {
    use super::poll_ms;

    #[test]
    fn latches_are_looked_at_every_10_ms_up_to_100_then_less_often() {
        assert_eq!(poll_ms(0), 10);
        assert_eq!(poll_ms(1), 10);
        assert_eq!(poll_ms(100), 10);
        assert_eq!(poll_ms(101), 20);
        assert_eq!(poll_ms(1_000), 100);
        assert!(poll_ms(usize::MAX) > 1_000_000_000);
    }
}
