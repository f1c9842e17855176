//! UQUEUE: a unique circular queue (the book's chapter 30): items in order,
//! none twice; inserting a queued item moves it to the tail, rotating moves
//! the head to the tail and returns it (round-robin over the items).
//!
//! A queue is a key of the module data type `rr-uqueue` (see
//! `uqueue/core.rs`: a circle of nodes with a hash index, every command
//! O(1) but `UQUEUE.ITEMS`). A queue left without items is deleted, as the
//! server deletes an empty list; a missing key is an empty queue.
//!
//! Waiting (`UQUEUE.ROTATE … WAIT ms`, `common/wait/`): on an empty queue
//! the client waits, first come first served; `UQUEUE.INSERT` (or anything
//! that replaces the key: `RESTORE`, `RENAME`, …) makes the waiters rotate,
//! oldest first, as `BLMOVE key key` clients are served by an `RPUSH`.
//!
//! Replication: `INSERT` and `REMOVE` go verbatim: their outcome follows
//! from the stored queue and their arguments alone. A rotation goes as
//! `UQUEUE.ROTATE key` (the head is the same on every replica): verbatim
//! when the call was just that, made for it when the call came with `WAIT`
//! or served a waiter later.
#![forbid(unsafe_code)]

pub mod core;
mod errors;

use std::collections::HashSet;
use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisError, RedisValue};

use self::core::{Queue, MAX_ITEMS};
use crate::common::args::{parse_options, single};
use crate::common::command::{
    ArgSpec, ArgType, CommandSpec, Events, KeySpec, READS_FIRST, UPDATES_FIRST, WAIT,
};
use crate::common::datatype::{self, adopt, Stored, StoredType};
use crate::common::family::FamilySpec;
use crate::common::ffi;
use crate::common::ffi::args::Arg;
use crate::common::ffi::io::{Digest, Reader, Rewrite, Writer};
use crate::common::ffi::key::{Key, Kind};
use crate::common::ffi::replicate::{self, Word};
use crate::common::reply::{self, Replied};
use crate::common::stats::Stat;
use crate::common::wait::{self, Cause, Event, Offer, Take, WaitStats, Waitable, Waits};
use crate::entry;

/// The encoding versions of the stored form this build reads, oldest first;
/// it writes the last (see `Stored for Queue` below).
pub const ENCODINGS: &[i32] = &[1];

pub static UNIQUE_QUEUE_TYPE: RedisType = RedisType::new(
    "rr-uqueue",
    datatype::written::<Queue>(),
    ffi::datatype::methods::<Queue>(),
);

const EVENT_CLASS: c_int = raw::REDISMODULE_NOTIFY_MODULE as c_int;

/// Items per `UQUEUE.INSERT` of an AOF rewrite.
const REWRITE_BATCH: usize = 64;

fn bulk(item: Option<&[u8]>) -> RedisValue {
    item.map_or(RedisValue::Null, |item| {
        RedisValue::StringBuffer(item.to_vec())
    })
}

// ---- commands --------------------------------------------------------------------

/// `UQUEUE.INSERT key item [item …]` → the queue's length, as `RPUSH`. Each
/// item goes to the tail in argument order, a queued one moved there. An
/// item named twice in one call is refused (nothing changes), as the book's
/// `insert` raises `ValueError`.
fn insert<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, items @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if items.is_empty() {
        return Err(RedisError::WrongArity);
    }
    if let Some(twice) = repeated(items) {
        return Err(errors::REPEATED_ITEM.with(&[&reply::quote(twice.as_bytes())]));
    }
    let mut key = Key::write(ctx, *name);
    if let Some(queue) = key.typed_value::<Queue>()? {
        // Only a queue near the bound needs its new items counted (each a
        // hash and a probe).
        if queue.len().saturating_add(items.len()) > MAX_ITEMS {
            let new = items
                .iter()
                .filter(|item| !queue.contains(item.as_bytes()))
                .count();
            if queue.len() + new > MAX_ITEMS {
                return Err(errors::UQUEUE_FULL.with(&[&MAX_ITEMS]));
            }
        }
    } else if items.len() > MAX_ITEMS {
        return Err(errors::UQUEUE_FULL.with(&[&MAX_ITEMS]));
    }
    if key.kind() == Kind::Empty {
        key.set_typed_value(adopt(Queue::default()))?;
    }
    let Some(queue) = key.typed_value::<Queue>()? else {
        return Err(errors::NOT_STORED.error());
    };
    for item in items {
        queue.insert(item.as_bytes());
    }
    let len = queue.len();
    replicate::verbatim(ctx);
    key.written(EVENT_CLASS, c"uqueue.insert");
    // Clients waiting in `UQUEUE.ROTATE … WAIT` rotate now, oldest first.
    wait::serve_waiters::<Rotations>(ctx, name.as_bytes(), key, Cause::Release);
    Ok(RedisValue::Integer(len as i64).into())
}

/// Up to this many items, a repeated one is looked for by comparing every
/// pair (at most 120 comparisons of a few bytes), cheaper than hashing each.
const PAIRWISE: usize = 16;

/// The first item of `items` that repeats one before it, if any.
fn repeated<'a>(items: &'a [Arg<'a>]) -> Option<&'a Arg<'a>> {
    if items.len() <= PAIRWISE {
        return items.iter().enumerate().find_map(|(j, item)| {
            items[..j]
                .iter()
                .any(|earlier| earlier.as_bytes() == item.as_bytes())
                .then_some(item)
        });
    }
    let mut seen = HashSet::with_capacity(items.len());
    items.iter().find(|item| !seen.insert(item.as_bytes()))
}

/// `UQUEUE.REMOVE key item` → 1 when it was queued, else 0. A queue left
/// without items is deleted.
fn remove<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, item] = args else {
        return Err(RedisError::WrongArity);
    };
    let mut key = Key::write(ctx, *name);
    let Some(queue) = key.typed_value::<Queue>()? else {
        return Ok(RedisValue::Integer(0).into());
    };
    if !queue.remove(item.as_bytes()) {
        return Ok(RedisValue::Integer(0).into());
    }
    let emptied = queue.is_empty();
    replicate::verbatim(ctx);
    key.written(EVENT_CLASS, c"uqueue.remove");
    if emptied {
        key.delete();
        key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
    }
    Ok(RedisValue::Integer(1).into())
}

/// Moves the head of the queue at `key` to its tail: the item, or `None`
/// for an empty queue. Replicated as `UQUEUE.ROTATE key`: the running
/// command itself when it is exactly that (`verbatim`), else made for it
/// (a waiter served later, or a call that came with `WAIT`).
fn rotate_at(ctx: &Context, key: &mut Key, verbatim: bool) -> Result<Option<Vec<u8>>, RedisError> {
    let name = key.name();
    let Some(queue) = key.typed_value::<Queue>()? else {
        return Ok(None);
    };
    let Some(item) = queue.rotate().map(<[u8]>::to_vec) else {
        return Ok(None);
    };
    if verbatim {
        // The same two words, without `RedisModule_Replicate`'s command
        // lookup (about 3,300 instructions, 40% of the call on Redis 7.0).
        replicate::verbatim(ctx);
    } else {
        replicate::effect(ctx, ROTATE.upper_name(), &[Word::Arg(name)]);
    }
    key.written(EVENT_CLASS, c"uqueue.rotate");
    Ok(Some(item))
}

/// `UQUEUE.ROTATE key [WAIT ms]` → the head, now moved to the tail; nil
/// when the queue is empty (after waiting up to `ms` with `WAIT`, first come
/// first served, for an `UQUEUE.INSERT`).
fn rotate<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [wait] = parse_options(options, &[WAIT])?;
    let wait = wait::parse_wait(single(wait))?;
    // Items that came while clients wait go round to the oldest of them first.
    wait::serve_waiters::<Rotations>(ctx, name.as_bytes(), (), Cause::Expiry);
    {
        let mut key = Key::write(ctx, *name);
        if let Some(item) = rotate_at(ctx, &mut key, options.is_empty())? {
            return Ok(RedisValue::StringBuffer(item).into());
        }
    }
    let Some(wait) = wait else {
        return Ok(RedisValue::Null.into());
    };
    Ok(wait::park::<Rotations>(ctx, name.as_bytes(), (), (), wait, None).into())
}

/// UQUEUE's waits (see `common/wait/`): a client in `UQUEUE.ROTATE … WAIT`
/// rotates the queue when its turn comes and an item is there.
pub struct Rotations;

static WAITS: Waits<()> = Waits::new();

impl Waitable for Rotations {
    type Request = ();
    type Grant = ();
    const KEYS_WAITED_ON: &'static CStr = c"unique_queues_with_waiters";

    fn waits() -> &'static Waits<()> {
        &WAITS
    }

    fn command(_: &()) -> &'static CommandSpec {
        &ROTATE
    }

    /// Rotates for the waiter, replicated as `UQUEUE.ROTATE key`.
    fn offer(ctx: &Context, name: Arg, _request: &()) -> Offer<()> {
        let mut key = Key::write(ctx, name);
        let taken = rotate_at(ctx, &mut key, false).map(|rotated| match rotated {
            Some(item) => Take::Got((RedisValue::StringBuffer(item), ())),
            None => Take::Nothing(None),
        });
        Offer::of(taken)
    }

    /// A rotation takes nothing out of the queue (the item stays queued, at
    /// the tail): nothing to give back when its reply never arrives.
    fn revoke(_ctx: &Context, _name: Arg, _grant: &()) -> bool {
        false
    }

    fn count(event: Event) {
        WAIT_STATS.count(event);
    }
}

/// `UQUEUE.FRONT key` → the head (the item `ROTATE` moves next), or nil.
fn front<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    Ok(bulk(key.value::<Queue>()?.and_then(Queue::front)).into())
}

/// `UQUEUE.REAR key` → the tail (inserted or rotated last), or nil.
fn rear<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    Ok(bulk(key.value::<Queue>()?.and_then(Queue::rear)).into())
}

/// `UQUEUE.LEN key` → the number of items (0 for a missing key).
fn len<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let len = key.value::<Queue>()?.map_or(0, Queue::len);
    Ok(RedisValue::Integer(len as i64).into())
}

/// `UQUEUE.ITEMS key` → every item, head first (empty for a missing key).
fn items<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let Some(queue) = key.value::<Queue>()? else {
        return Ok(RedisValue::Array(Vec::new()).into());
    };
    let items = queue
        .iter()
        .map(|item| RedisValue::StringBuffer(item.to_vec()))
        .collect();
    Ok(RedisValue::Array(items).into())
}

// ---- the stored form ---------------------------------------------------------------

impl Stored for Queue {
    const ENCODINGS: &'static [i32] = ENCODINGS;
    const WHAT: &'static str = "unique queue";
    fn data_type() -> &'static RedisType {
        &UNIQUE_QUEUE_TYPE
    }

    /// Stored form (version 1): the number of items, then each item, head
    /// first.
    fn save(&self, out: &mut Writer) {
        out.unsigned(self.len() as u64);
        for item in self.iter() {
            out.bytes(item);
        }
    }

    /// Refuses an empty queue and an item stored twice; O(N) expected.
    fn load(input: &mut Reader, _encoding: i32) -> Result<Queue, &'static str> {
        let count = input.unsigned()?;
        if count == 0 {
            return Err("no items");
        }
        // Grown as read: a hostile count cannot make us reserve memory.
        let mut items = Vec::new();
        for _ in 0..count {
            items.push(input.bytes()?.into_boxed_slice());
        }
        Queue::from_items(items)
    }

    /// `UQUEUE.INSERT key item…` of up to 64 items at a time, head first.
    fn rewrite(&self, out: &mut Rewrite) {
        let mut batch: Vec<Word> = Vec::with_capacity(REWRITE_BATCH);
        for item in self.iter() {
            batch.push(Word::Bytes(item));
            if batch.len() == REWRITE_BATCH {
                out.emit(INSERT.upper_name(), &batch);
                batch.clear();
            }
        }
        if !batch.is_empty() {
            out.emit(INSERT.upper_name(), &batch);
        }
    }

    /// The items, head first.
    fn digest(&self, out: &mut Digest) {
        for item in self.iter() {
            out.bytes(item);
        }
        out.end_sequence();
    }

    fn memory(&self) -> usize {
        Queue::memory(self)
    }

    fn allocations(&self) -> usize {
        Queue::allocations(self)
    }

    fn count(&self, sign: i64) {
        UNIQUE_QUEUES.add(sign);
    }
}

// ---- registration ------------------------------------------------------------------

const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const ITEM: ArgSpec = ArgSpec::required(c"item", ArgType::String);
const SINCE: &CStr = c"0.6.0";

/// Unique queues stored (copies included).
pub static UNIQUE_QUEUES: Stat = Stat::gauge(
    c"unique_queues",
    "unique queues (`rr-uqueue`) stored (copies included)",
);
pub static WAIT_STATS: WaitStats = WaitStats::new(
    (c"unique_queue_waits", "`UQUEUE.ROTATE … WAIT`s started"),
    (
        c"unique_queue_waits_timed_out",
        "`UQUEUE.ROTATE … WAIT`s that ran out",
    ),
    (c"unique_queue_handoffs", "waiters served by a rotation"),
);

pub static FAMILY: FamilySpec = FamilySpec {
    about: "unique circular queues (round-robin)",
    replaces:
        "the book's list and set kept in step by `MULTI`, `LMOVE` rotation polled while empty",
    commands: COMMANDS,
    stats: &[
        &UNIQUE_QUEUES,
        &WAIT_STATS.started,
        &WAIT_STATS.timed_out,
        &WAIT_STATS.handoffs,
    ],
    waiting: Some(wait::watcher::<Rotations>()),
    settings: &[],
    errors: errors::OWN,
    stored: &[StoredType {
        data_type: &UNIQUE_QUEUE_TYPE,
        encodings: ENCODINGS,
    }],
};

pub const COMMANDS: &[CommandSpec] = &[
    INSERT,
    CommandSpec {
        entry: entry!(c"uqueue.remove", remove, WRITE_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: 3,
        summary: c"Removes an item from a unique queue; 1 when it was queued",
        complexity: c"O(1)",
        since: SINCE,
        reply: "`1` when `item` was queued and is now removed; `0` when it was not.",
        events: Some(Events {
            fires: "`uqueue.remove`, `del` when the queue empties",
            replica: None,
        }),
        args: &[KEY, ITEM],
    },
    ROTATE,
    CommandSpec {
        entry: entry!(c"uqueue.front", front, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 2,
        summary: c"The head of a unique queue, or nil",
        complexity: c"O(1)",
        since: SINCE,
        reply: "Bulk string reply: the head (the item `UQUEUE.ROTATE` moves next); nil when \
                the queue is empty or missing.",
        events: None,
        args: &[KEY],
    },
    CommandSpec {
        entry: entry!(c"uqueue.rear", rear, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 2,
        summary: c"The tail of a unique queue, or nil",
        complexity: c"O(1)",
        since: SINCE,
        reply: "Bulk string reply: the tail (the item inserted or rotated last); nil when the \
                queue is empty or missing.",
        events: None,
        args: &[KEY],
    },
    CommandSpec {
        entry: entry!(c"uqueue.len", len, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 2,
        summary: c"The number of items in a unique queue",
        complexity: c"O(1)",
        since: SINCE,
        reply: "Integer reply: the number of items; `0` for a missing key.",
        events: None,
        args: &[KEY],
    },
    CommandSpec {
        entry: entry!(c"uqueue.items", items, READ_KEY),
        flags: c"readonly",
        acl_categories: c"read slow",
        arity: 2,
        summary: c"Every item of a unique queue, head first",
        complexity: c"O(N) for N items",
        since: SINCE,
        reply: "An array of every item, head first; an empty array for a missing key.",
        events: None,
        args: &[KEY],
    },
];

const INSERT: CommandSpec = CommandSpec {
    entry: entry!(c"uqueue.insert", insert, WRITE_KEY),
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -3,
    summary: c"Appends items to a unique queue, moving queued ones to the tail; returns the length",
    complexity: c"O(K) for K items given",
    since: SINCE,
    reply: "Integer reply: the queue's length after the items went to the tail (a queued \
            item moved there).",
    events: Some(Events {
        fires: "`uqueue.insert`",
        replica: None,
    }),
    args: &[KEY, ITEM.multiple()],
};

const ROTATE: CommandSpec = CommandSpec {
    entry: entry!(c"uqueue.rotate", rotate, WRITE_KEY),
    flags: c"write blocking",
    acl_categories: c"write slow blocking",
    arity: -2,
    summary: c"Moves the head of a unique queue to its tail and returns it (with a first-come-first-served wait); nil when empty",
    complexity: c"O(1)",
    since: SINCE,
    reply: "Bulk string reply: the head, now moved to the tail; nil when the queue is \
            empty or missing, after waiting up to `WAIT` ms for an item, first come first \
            served (at once inside `MULTI` or a script).",
    events: Some(Events {
        fires: "`uqueue.rotate`",
        replica: None,
    }),
    args: &[KEY, WAIT],
};
