//! QUEUE: bounded pushes onto plain lists (the book's fixed-length and
//! faded queues, chapter 27).
//!
//! `QUEUE.RPUSH key maxlen REFUSE|EVICT item [item …]` pushes at the tail as
//! `RPUSH` does, `QUEUE.LPUSH` at the head as `LPUSH` does, and the list
//! never ends longer than `maxlen`:
//!
//! - `REFUSE` writes only the items that fit (the first ones given) and
//!   answers how many it wrote; a full list (or one longer than `maxlen`)
//!   takes none.
//! - `EVICT` makes room: the oldest items fall out, those at the other end
//!   (the head for `RPUSH`, the tail for `LPUSH`), then, when more items are
//!   given than `maxlen`, the first ones given. It answers `[kept, [evicted
//!   …]]`, the evicted items oldest first (the order in which a consumer at
//!   the other end would have popped them). The list ends exactly as after
//!   `RPUSH` + `LTRIM key -maxlen -1` (`LPUSH` + `LTRIM key 0 maxlen-1`), but
//!   no item is written to be thrown away, and the caller learns what went.
//!
//! The key stays a plain list (`LRANGE`, `LPOP`, `BLPOP`, `LLEN` work on it).
//! Its items are pushed and popped through the module list API, never
//! `ctx.call`: a push onto an empty key creates the list as `RPUSH` does
//! (the server's `dbAdd`, which signals the key as ready), so clients blocked
//! in `BLPOP` on it are served when the command ends. The list is never
//! emptied on the way (kept items are pushed before old ones are popped), so
//! it keeps its TTL.
//!
//! Events: `rpush` or `lpush` (the list class) when items were written, then
//! `ltrim` when items that were in the list fell out, as the book's `RPUSH` +
//! `LTRIM` fire. Replication: verbatim (the outcome follows from the list and
//! the arguments); a call that writes nothing replicates nothing.

#![forbid(unsafe_code)]

mod errors;

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisValue};

use crate::common::args::is_option;
use crate::common::command::{ArgSpec, ArgType, CommandSpec, Events, KeySpec, UPDATES_FIRST};
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::key::{End, Key};
use crate::common::ffi::replicate;
use crate::common::ffi::reply::direct;
use crate::common::reply::Replied;
use crate::entry;

mod core;

use self::core::{Mode, Plan};

/// `QUEUE.RPUSH key maxlen REFUSE|EVICT item [item …]`.
fn rpush<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    push(ctx, args, End::Tail)
}

/// `QUEUE.LPUSH key maxlen REFUSE|EVICT item [item …]`.
fn lpush<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    push(ctx, args, End::Head)
}

fn push<'a>(ctx: &'a Context, args: &'a [Arg<'a>], end: End) -> Replied<'a> {
    let [_, name, maxlen, mode, items @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if items.is_empty() {
        return Err(RedisError::WrongArity);
    }
    let maxlen = match maxlen.to_i64()? {
        n if n > 0 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => return Err(errors::QUEUE_MAXLEN.error()),
    };
    let mode = match mode.as_bytes() {
        m if is_option(m, &REFUSE) => Mode::Refuse,
        m if is_option(m, &EVICT) => Mode::Evict,
        _ => return Err(errors::SYNTAX.error()),
    };
    let mut key = Key::write(ctx, *name);
    let len = key.list_len()?.unwrap_or(0);
    let plan = Plan::new(mode, maxlen, len, items.len());
    if plan.kept() == 0 {
        // REFUSE with no room: nothing written, announced or replicated.
        return Ok(RedisValue::Integer(0).into());
    }
    for item in &items[plan.pushed.clone()] {
        key.list_push(end, *item)?;
    }
    let kept = i64::try_from(plan.kept()).unwrap_or(i64::MAX);
    let list = raw::REDISMODULE_NOTIFY_LIST as c_int;
    if mode == Mode::Evict {
        // `[kept, [evicted …]]`, sent as the items are read: the list's own
        // oldest first, then the items given that never fitted, in the order
        // given. Nothing can fail from here on.
        direct::array(ctx, 2);
        direct::integer(ctx, kept);
        direct::array(ctx, plan.evicted());
        let other = end.other();
        for _ in 0..plan.popped {
            // The list holds `len` + kept items, more than `popped`, so
            // there is always an item; a nil keeps the array's length if not.
            if !key.list_pop_reply(other) {
                direct::null(ctx);
            }
        }
        for item in &items[plan.dropped.clone()] {
            direct::arg(ctx, *item);
        }
    }
    key.written(
        list,
        match end {
            End::Tail => c"rpush",
            End::Head => c"lpush",
        },
    );
    if plan.popped > 0 {
        key.notify(list, c"ltrim");
    }
    drop(key);
    replicate::verbatim(ctx);
    Ok(match mode {
        Mode::Refuse => RedisValue::Integer(kept),
        Mode::Evict => RedisValue::NoReply,
    }
    .into())
}

// Popping the evicted items one by one moves the rest of the list's first
// listpack node once per item, where the book's LTRIM cuts once: the module
// API deletes one item at a time, and cutting through `RedisModule_Call`
// (12% fewer instructions at 10 items on Redis 7.0, 2.8% on Valkey) would
// put a command call on this path.
const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const SINCE: &CStr = c"0.6.0";
const REFUSE: ArgSpec = ArgSpec::keyword(c"refuse", c"REFUSE");
const EVICT: ArgSpec = ArgSpec::keyword(c"evict", c"EVICT");
const ARGS: &[ArgSpec] = &[
    ArgSpec::key(c"key", 0),
    ArgSpec::required(c"maxlen", ArgType::Integer),
    ArgSpec::one_of(c"mode", &[REFUSE, EVICT]),
    ArgSpec::required(c"item", ArgType::String).multiple(),
];
const COMPLEXITY: &CStr = c"O(N + E) for the N items given and the E items evicted";

pub static FAMILY: FamilySpec = FamilySpec {
    about: "bounded pushes onto plain lists",
    replaces: "the book's `RPUSH` then `LTRIM` fixed-length and faded queues, which write items only to throw them away",
    commands: COMMANDS,
    stats: &[],
    waiting: None,
    settings: &[],
    errors: errors::OWN,
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        entry: entry!(c"queue.rpush", rpush, WRITE_KEY),
        flags: c"write deny-oom fast",
        acl_categories: c"write list fast",
        arity: -5,
        summary: c"Appends items to a list of at most maxlen items: REFUSE writes those that fit and returns how many; EVICT drops the oldest and returns [kept, [evicted]]",
        complexity: COMPLEXITY,
        since: SINCE,
        reply: "With `REFUSE`, an integer: how many items were written at the tail (the first \
                given that fit in `maxlen`; `0` when the list is full). With `EVICT`, an \
                array `[kept, [evicted …]]`: how many of the items given the list kept (the \
                last `maxlen` given), then an array of the items that fell out in the order \
                they went, the list's own oldest first (from the head), then the items given \
                that never fitted, in the order given (an empty array when none fell out).",
        events: Some(Events {
            fires: "`rpush` when items were written, then `ltrim` when items that were in the \
                    list fell out",
            replica: None,
        }),
        args: ARGS,
    },
    CommandSpec {
        entry: entry!(c"queue.lpush", lpush, WRITE_KEY),
        flags: c"write deny-oom fast",
        acl_categories: c"write list fast",
        arity: -5,
        summary: c"Prepends items to a list of at most maxlen items: REFUSE writes those that fit and returns how many; EVICT drops the oldest (at the tail) and returns [kept, [evicted]]",
        complexity: COMPLEXITY,
        since: SINCE,
        reply: "With `REFUSE`, an integer: how many items were written at the head (the first \
                given that fit in `maxlen`; `0` when the list is full). With `EVICT`, an \
                array `[kept, [evicted …]]`: how many of the items given the list kept (the \
                last `maxlen` given), then an array of the items that fell out in the order \
                they went, the list's own oldest first (from the tail), then the items given \
                that never fitted, in the order given (an empty array when none fell out).",
        events: Some(Events {
            fires: "`lpush` when items were written, then `ltrim` when items that were in the \
                    list fell out",
            replica: None,
        }),
        args: ARGS,
    },
];
