//! IDPOOL: cyclic ID allocation from a bounded pool, with leases that expire.
//!
//! A pool is a key of the module data type `rr-idpool`: the IDs 1..=max
//! handed out in turn, each leased until an absolute time of the primary's
//! clock or forever (see `idpool/core.rs` for the rules and `idpool/leases.rs`
//! for the O(log n) structure). It costs memory per live lease, not per ID.
//!
//! Replication. A write whose outcome follows from the stored leases alone
//! goes verbatim: `CREATE`, a `RELEASE` that reclaimed nothing else, a `NEXT`
//! whose lease never ends and that reclaimed nothing. A write that reads the
//! clock (a lease from now, ended leases reclaimed, `RENEW`, `RESIZE`'s check
//! of live leases) sends its effect: `IDPOOL.APPLY key max next [FREE id]…
//! [LEASE id at]…` sets the bounds, frees and leases exactly as the primary
//! chose, with absolute expiry times (`at`, 0 for never), so a replica or an
//! AOF replay whose clock differs still ends in the primary's state. As with
//! keys that expire, only the primary removes ended leases (when a write
//! touches the pool) and replicates the removal.

#![forbid(unsafe_code)]

mod core;
mod errors;
mod leases;

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisError, RedisValue};

use self::core::Pool;
use crate::common::args::{groups, parse_options, single};
use crate::common::command::{
    internal_only, ArgSpec, ArgType, CommandSpec, Events, KeySpec, READS_FIRST, UPDATES_FIRST, WAIT,
};
use crate::common::datatype::{self, adopt, Stored, StoredType};
use crate::common::family::FamilySpec;
use crate::common::ffi;
use crate::common::ffi::args::Arg;
use crate::common::ffi::context::now_ms;
use crate::common::ffi::io::{Digest, Reader, Rewrite, Writer};
use crate::common::ffi::key::{Key, Kind};
use crate::common::ffi::replicate::{self, Word};
use crate::common::lease::{self, NO_END};
use crate::common::reply::{quote, Item, Replied, Reply};
use crate::common::stats::Stat;
use crate::common::time::ttl_ms;
use crate::common::wait::{self, Cause, Event, Offer, Take, TakenFor, WaitStats, Waitable, Waits};
use crate::entry;

/// The encoding versions of an ID pool's stored form this build reads, oldest
/// first; it writes the last (see `Stored for Pool` below).
pub const ENCODINGS: &[i32] = &[1];

pub static ID_POOL_TYPE: RedisType = RedisType::new(
    "rr-idpool",
    datatype::written::<Pool>(),
    ffi::datatype::methods::<Pool>(),
);

const EVENT_CLASS: c_int = raw::REDISMODULE_NOTIFY_MODULE;

/// The server's clock, in Unix milliseconds.
fn now() -> u64 {
    now_ms().max(0) as u64
}

/// A pool size argument: 1..=4294967295.
fn parse_max(arg: Arg) -> Result<u32, RedisError> {
    u32::try_from(arg.to_i64()?)
        .ok()
        .filter(|&max| max >= 1)
        .ok_or(errors::IDPOOL_MAX.error())
}

/// An ID argument of a pool of `1..=max`.
fn parse_id(arg: Arg, max: u32) -> Result<u32, RedisError> {
    u32::try_from(arg.to_i64()?)
        .ok()
        .filter(|id| (1..=max).contains(id))
        .ok_or_else(|| errors::IDPOOL_ID.with(&[&max]))
}

/// A lease length in milliseconds (`TTL ms`, `ms`): a positive integer,
/// refused as `SET … PX` refuses it.
fn parse_ttl(arg: Option<Arg>) -> Result<Option<u64>, RedisError> {
    Ok(ttl_ms(arg, None)?.map(|ms| ms as u64))
}

/// The absolute end of a lease of `ttl` ms from `now` (never without one).
fn expiry(now: u64, ttl: Option<u64>) -> Result<u64, RedisError> {
    let ttl = ttl
        .map(|ttl| i64::try_from(ttl).map_err(|_| errors::INVALID_EXPIRE.error()))
        .transpose()?;
    lease::end_after(now, ttl)
}

/// The pool at `key`; a missing one is an error naming the key, so that a
/// mistyped name is never taken for a full pool.
fn existing<'k>(key: &'k mut Key) -> Result<&'k mut Pool, RedisError> {
    let name = key.name();
    key.typed_value::<Pool>()?.ok_or_else(|| missing(name))
}

/// No pool at `name`: an error naming the key.
fn missing(name: Arg) -> RedisError {
    errors::NO_POOL.with(&[&quote(name.as_bytes())])
}

/// Counts a command's change of a pool's stored leases (`before`: the count
/// when it started) in `INFO recipes`.
fn count_leases(before: u64, pool: &Pool) {
    LEASES.add(pool.stored() as i64 - before as i64);
}

/// The most IDs freed by one replicated `IDPOOL.APPLY`.
const FREED_PER_APPLY: usize = 256;

/// Removes the pool's ended leases (see [`lease::reclaim_ended`]).
fn reclaim(ctx: &Context, pool: &mut Pool, now: u64) -> Vec<u32> {
    lease::reclaim_ended(ctx, Some(&LEASES_RECLAIMED), |freed| {
        pool.reclaim(now, |id| freed.push(id))
    })
}

/// Replicates a write as its effect: `IDPOOL.APPLY key max next [FREE id]…
/// [LEASE id at]` — the pool's bounds, the IDs freed (released, or reclaimed
/// because their lease ended) and the lease set, with its absolute end.
fn replicate_effect(
    ctx: &Context,
    name: Arg,
    pool: &Pool,
    freed: &[u32],
    lease: Option<(u32, u64)>,
) {
    let bounds = [
        Word::Arg(name),
        Word::Int(i64::from(pool.max())),
        Word::Int(i64::from(pool.next())),
    ];
    let mut chunks = freed.chunks(FREED_PER_APPLY).peekable();
    loop {
        let chunk = chunks.next().unwrap_or_default();
        let last = chunks.peek().is_none();
        let lease = lease.filter(|_| last);
        let frees = chunk
            .iter()
            .flat_map(|&id| [Word::Token(c"FREE"), Word::Int(i64::from(id))]);
        let leased = lease.into_iter().flat_map(|(id, expiry)| {
            [
                Word::Token(c"LEASE"),
                Word::Int(i64::from(id)),
                Word::Int(lease::to_wire(expiry)),
            ]
        });
        let mut words = Vec::with_capacity(bounds.len() + 2 * chunk.len() + 3);
        words.extend(bounds.into_iter().chain(frees).chain(leased));
        replicate::effect(ctx, APPLY.upper_name(), &words);
        if last {
            break;
        }
    }
}

/// `IDPOOL.CREATE key max [TTL ms]` → `OK`.
fn create<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, max, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let max = parse_max(*max)?;
    let [ttl] = parse_options(options, &[TTL])?;
    let ttl = parse_ttl(single(ttl))?;
    let mut key = Key::write(ctx, *name);
    if key.kind() != Kind::Empty {
        return Err(errors::KEY_EXISTS.error());
    }
    key.set_typed_value(adopt(Pool::new(max, ttl)))?;
    // Deterministic: the key was empty here, so it is on every replica.
    replicate::verbatim(ctx);
    key.written(EVENT_CLASS, c"idpool.create");
    Ok(RedisValue::SimpleStringStatic("OK").into())
}

/// Leases the next free ID to a caller of `IDPOOL.NEXT` asking `ttl` (the
/// pool's default without), replicating it: verbatim for the command's own
/// client when the clock played no part, else as its effect. The ID and its
/// lease's end, or nothing: the pool is full until its first lease ends.
fn lease_next(
    ctx: &Context,
    key: &mut Key,
    ttl: Option<u64>,
    taken_for: TakenFor,
) -> Result<Take<(u32, u64)>, RedisError> {
    let name = key.name();
    let pool = existing(key)?;
    let now = now();
    let expiry = expiry(now, ttl.or(pool.default_ttl()))?;
    let before = pool.stored();
    let freed = reclaim(ctx, pool, now);
    let taken = pool.take(expiry);
    count_leases(before, pool);
    let next = pool.next_end().map(|at| at as i64);
    if taken.is_none() && freed.is_empty() {
        // Full: nothing stored changed.
        return Ok(Take::Nothing(next));
    }
    if taken_for == TakenFor::Command && expiry == NO_END && freed.is_empty() {
        // No clock involved: the ID follows from the stored leases alone.
        replicate::verbatim(ctx);
    } else {
        replicate_effect(ctx, name, pool, &freed, taken.map(|id| (id, expiry)));
    }
    let Some(id) = taken else {
        return Ok(Take::Nothing(next));
    };
    key.written(EVENT_CLASS, c"idpool.next");
    Ok(Take::Got((id, expiry)))
}

/// What a client waiting in `IDPOOL.NEXT … WAIT` asked for.
pub struct Request {
    ttl: Option<u64>,
}

/// What a hand-off gave a waiter: an ID, leased until `expiry`.
pub struct Handed {
    id: u32,
    expiry: u64,
}

/// IDPOOL's waits (see `common/wait/`).
pub struct IdPools;

static WAITS: Waits<Request> = Waits::new();

impl Waitable for IdPools {
    type Request = Request;
    type Grant = Handed;
    const KEYS_WAITED_ON: &'static CStr = c"idpools_with_waiters";

    fn waits() -> &'static Waits<Request> {
        &WAITS
    }

    fn command(_: &Request) -> &'static CommandSpec {
        &NEXT
    }

    /// A freed ID goes to the waiter, as the lease it asked for; a pool
    /// deleted meanwhile answers as `IDPOOL.NEXT` would now.
    fn offer(ctx: &Context, name: Arg, request: &Request) -> Offer<Handed> {
        let mut key = Key::write(ctx, name);
        let taken = lease_next(ctx, &mut key, request.ttl, TakenFor::Waiter);
        Offer::of(taken.map(|taken| {
            taken.map(|(id, expiry)| (RedisValue::Integer(i64::from(id)), Handed { id, expiry }))
        }))
    }

    /// A hand-off whose reply never reached the waiter: the ID is freed if
    /// that lease still holds it, replicated as `IDPOOL.APPLY … FREE id`.
    fn revoke(ctx: &Context, name: Arg, handed: &Handed) -> bool {
        let mut key = Key::write(ctx, name);
        let Ok(pool) = existing(&mut key) else {
            return false;
        };
        if pool.lease(handed.id) != Some(handed.expiry) {
            return false;
        }
        let before = pool.stored();
        pool.release(handed.id);
        count_leases(before, pool);
        replicate_effect(ctx, name, pool, &[handed.id], None);
        key.written(EVENT_CLASS, c"idpool.release");
        true
    }

    fn count(event: Event) {
        WAIT_STATS.count(event);
    }
}

/// `IDPOOL.NEXT key [TTL ms] [WAIT ms]` → the ID leased, or nil when all
/// are leased (after waiting up to `ms` with `WAIT`).
fn next<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [ttl, wait] = parse_options(options, &[TTL, WAIT])?;
    let ttl = parse_ttl(single(ttl))?;
    let wait = wait::parse_wait(single(wait))?;
    // An ID freed while clients wait belongs to the oldest of them.
    wait::serve_waiters::<IdPools>(ctx, name.as_bytes(), (), Cause::Expiry);
    let next = {
        let mut key = Key::write(ctx, *name);
        match lease_next(ctx, &mut key, ttl, TakenFor::Command)? {
            Take::Got((id, _)) => return Ok(RedisValue::Integer(i64::from(id)).into()),
            Take::Nothing(next) => next,
        }
    };
    let Some(wait) = wait else {
        return Ok(RedisValue::Null.into());
    };
    Ok(wait::park::<IdPools>(ctx, name.as_bytes(), (), Request { ttl }, wait, next).into())
}

/// `IDPOOL.RELEASE key id` → 1 when the ID was leased and is now free.
fn release<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, id] = args else {
        return Err(RedisError::WrongArity);
    };
    let mut key = Key::write(ctx, *name);
    let pool = existing(&mut key)?;
    let id = parse_id(*id, pool.max())?;
    let before = pool.stored();
    let mut freed = reclaim(ctx, pool, now());
    let reclaimed = !freed.is_empty();
    let released = pool.release(id);
    count_leases(before, pool);
    if released {
        freed.push(id);
    }
    if reclaimed {
        // The clock freed other leases too: send all that was freed.
        replicate_effect(ctx, *name, pool, &freed, None);
    } else if released {
        replicate::verbatim(ctx);
    }
    if released {
        key.written(EVENT_CLASS, c"idpool.release");
    }
    if released || reclaimed {
        wait::serve_waiters::<IdPools>(ctx, name.as_bytes(), key, Cause::Release);
    }
    Ok(RedisValue::Integer(i64::from(released)).into())
}

/// `IDPOOL.RENEW key id ms` → 1 when the ID is leased and its lease now ends
/// `ms` from now.
fn renew<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, id, ms] = args else {
        return Err(RedisError::WrongArity);
    };
    let ttl = parse_ttl(Some(*ms))?;
    let mut key = Key::write(ctx, *name);
    let pool = existing(&mut key)?;
    let id = parse_id(*id, pool.max())?;
    let now = now();
    let expiry = expiry(now, ttl)?;
    let before = pool.stored();
    let freed = reclaim(ctx, pool, now);
    let renewed = pool.renew(id, expiry);
    count_leases(before, pool);
    if renewed || !freed.is_empty() {
        replicate_effect(ctx, *name, pool, &freed, renewed.then_some((id, expiry)));
    }
    if !renewed {
        return Ok(RedisValue::Integer(0).into());
    }
    key.written(EVENT_CLASS, c"idpool.renew");
    Ok(RedisValue::Integer(1).into())
}

/// `IDPOOL.RESIZE key max` → `OK`.
fn resize<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, max] = args else {
        return Err(RedisError::WrongArity);
    };
    let max = parse_max(*max)?;
    let mut key = Key::write(ctx, *name);
    let pool = existing(&mut key)?;
    let now = now();
    if let Err(leased) = pool.can_resize(now, max) {
        return Err(errors::CANNOT_SHRINK.with(&[&max, &leased]));
    }
    let before = pool.stored();
    let freed = reclaim(ctx, pool, now);
    pool.apply(max, pool.next(), &[], &[]);
    count_leases(before, pool);
    replicate_effect(ctx, *name, pool, &freed, None);
    key.written(EVENT_CLASS, c"idpool.resize");
    // A larger pool has IDs for the clients waiting.
    wait::serve_waiters::<IdPools>(ctx, name.as_bytes(), key, Cause::Release);
    Ok(RedisValue::SimpleStringStatic("OK").into())
}

/// `IDPOOL.INFO key` → map of `max`, `leased` (live leases), `next`,
/// `default_ttl` (nil when leases never end unless asked).
fn info<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let pool = key.value::<Pool>()?.ok_or_else(|| missing(*name))?;
    let default_ttl = match pool.default_ttl() {
        Some(ttl) => Item::Int(ttl as i64),
        None => Item::Null,
    };
    Ok(Reply::Map(vec![
        (b"max", Item::Int(i64::from(pool.max()))),
        (b"leased", Item::Int(pool.live(now()) as i64)),
        (b"next", Item::Int(i64::from(pool.next()))),
        (b"default_ttl", default_ttl),
    ]))
}

/// `IDPOOL.APPLY key max next [FREE id]… [LEASE id at]…` → `OK`: a primary's
/// decision, applied as made (`at`: absolute Unix ms, 0 for never). Only the
/// replication stream and AOF loading may send it.
fn apply<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, max, next, changes @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if replicate::deciding(ctx) {
        return Err(internal_only(&APPLY, &[&NEXT, &RENEW, &RESIZE]));
    }
    let max = parse_max(*max)?;
    let next = parse_id(*next, max)?;
    let (mut freed, mut leases) = (Vec::new(), Vec::new());
    for group in groups(changes, &[FREE, LEASE])? {
        match group {
            (0, [id]) => freed.push(parse_id(*id, max)?),
            (_, [id, at]) => leases.push((parse_id(*id, max)?, lease::from_wire(at.to_i64()?)?)),
            _ => return Err(errors::SYNTAX.error()),
        }
    }
    let mut key = Key::write(ctx, *name);
    let pool = existing(&mut key)?;
    let before = pool.stored();
    pool.apply(max, next, &freed, &leases);
    count_leases(before, pool);
    replicate::verbatim(ctx);
    key.written(EVENT_CLASS, c"idpool.apply");
    Ok(RedisValue::SimpleStringStatic("OK").into())
}

// ---- the data type ---------------------------------------------------------

impl Stored for Pool {
    const ENCODINGS: &'static [i32] = ENCODINGS;
    fn data_type() -> &'static RedisType {
        &ID_POOL_TYPE
    }
    const WHAT: &'static str = "ID pool";

    /// Stored form (version 1): max, next, default TTL (0: none), lease
    /// count, then each lease's ID and expiry (`u64::MAX`: never) in
    /// increasing ID order.
    fn save(&self, out: &mut Writer) {
        out.unsigned(u64::from(self.max()));
        out.unsigned(u64::from(self.next()));
        out.unsigned(self.default_ttl().unwrap_or(0));
        out.unsigned(self.stored());
        for (id, expiry) in self.leases() {
            out.unsigned(u64::from(id));
            out.unsigned(expiry);
        }
    }

    /// Version 1 is the only stored form so far.
    fn load(input: &mut Reader, _encoding: i32) -> Result<Pool, &'static str> {
        let max = input.unsigned()?;
        let next = input.unsigned()?;
        let default_ttl = input.unsigned()?;
        let count = input.unsigned()?;
        if count > max {
            return Err("more leases than IDs");
        }
        // Grown as read: a hostile count cannot make us reserve memory.
        let mut leases = Vec::new();
        for _ in 0..count {
            leases.push((input.unsigned()?, input.unsigned()?));
        }
        Pool::restore(max, next, default_ttl, leases)
    }

    /// The commands that rebuild a pool: `IDPOOL.CREATE`, then `IDPOOL.APPLY`
    /// for the bounds and for each stored lease.
    fn rewrite(&self, out: &mut Rewrite) {
        let (max, next) = (
            Word::Int(i64::from(self.max())),
            Word::Int(i64::from(self.next())),
        );
        match self.default_ttl() {
            Some(ttl) => out.emit(
                CREATE.upper_name(),
                &[max, Word::Token(c"TTL"), Word::Int(ttl as i64)],
            ),
            None => out.emit(CREATE.upper_name(), &[max]),
        }
        out.emit(APPLY.upper_name(), &[max, next]);
        for (id, expiry) in self.leases() {
            out.emit(
                APPLY.upper_name(),
                &[
                    max,
                    next,
                    Word::Token(c"LEASE"),
                    Word::Int(i64::from(id)),
                    Word::Int(lease::to_wire(expiry)),
                ],
            );
        }
    }

    /// `DEBUG DIGEST-VALUE`: the bounds and every stored lease. A primary and
    /// its replicas store the same leases (only the primary reclaims ended
    /// ones, and replicates that), so their digests agree, whatever their
    /// clocks.
    fn digest(&self, out: &mut Digest) {
        out.integer(i64::from(self.max()));
        out.integer(i64::from(self.next()));
        out.integer(self.default_ttl().unwrap_or(0) as i64);
        out.end_sequence();
        for (id, expiry) in self.leases() {
            out.integer(i64::from(id));
            out.integer(lease::to_wire(expiry));
            out.end_sequence();
        }
    }

    fn memory(&self) -> usize {
        Pool::memory(self)
    }

    fn allocations(&self) -> usize {
        Pool::allocations(self)
    }

    fn count(&self, sign: i64) {
        ID_POOLS.add(sign);
        LEASES.add(sign * self.stored() as i64);
    }
}

// ---- registration --------------------------------------------------------

const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const TTL: ArgSpec = ArgSpec::option(c"ttl", c"TTL", ArgType::Integer);
/// The changes of an `IDPOOL.APPLY`, in the order [`apply`] reads them:
/// `FREE id`, `LEASE id at`.
const FREE: ArgSpec = ArgSpec::option(c"free", c"FREE", ArgType::Integer).multiple();
const LEASE: ArgSpec = ArgSpec::block(
    c"lease",
    c"LEASE",
    &[
        ArgSpec::required(c"id", ArgType::Integer),
        ArgSpec::required(c"at", ArgType::Integer),
    ],
)
.multiple();
const SINCE: &CStr = c"0.2.0";

/// ID pools stored (copies included).
pub static ID_POOLS: Stat = Stat::gauge(c"idpools", "ID pools stored (copies included)");
/// Leases stored in them (an ended lease counts until a write reclaims it).
pub static LEASES: Stat = Stat::gauge(
    c"idpool_leases",
    "the leases of the ID pools stored (an ended one until a write reclaims it)",
);
pub static LEASES_RECLAIMED: Stat = Stat::counter(
    c"idpool_leases_reclaimed",
    "ended leases removed by the primary",
);
pub static WAIT_STATS: WaitStats = WaitStats::new(
    (c"idpool_waits", "`IDPOOL.NEXT … WAIT`s started"),
    (
        c"idpool_waits_timed_out",
        "`IDPOOL.NEXT … WAIT`s that ran out",
    ),
    (c"idpool_handoffs", "IDs handed to a waiter"),
);

pub static FAMILY: FamilySpec = FamilySpec {
    about: "cyclic ID pools with expiring leases",
    replaces: "a sorted set of every ID scored by lease expiry, read-then-remove allocation",
    commands: COMMANDS,
    stats: &[
        &ID_POOLS,
        &LEASES,
        &LEASES_RECLAIMED,
        &WAIT_STATS.started,
        &WAIT_STATS.timed_out,
        &WAIT_STATS.handoffs,
    ],
    waiting: Some(wait::watcher::<IdPools>()),
    settings: &[],
    errors: errors::OWN,
    stored: &[StoredType {
        data_type: &ID_POOL_TYPE,
        encodings: ENCODINGS,
    }],
};

pub const COMMANDS: &[CommandSpec] = &[
    CREATE,
    NEXT,
    CommandSpec {
        entry: entry!(c"idpool.release", release, WRITE_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: 3,
        summary: c"Frees a leased ID; 1 when it was leased, 0 otherwise",
        complexity: c"O(log N) where N is the number of leases",
        since: SINCE,
        reply: "`1` when `id` had a live lease, now ended (the ID free, or handed to the \
                oldest waiter); `0` when it was not leased (never, released, or its lease \
                ended).",
        events: Some(Events {
            fires: "`idpool.release`",
            replica: Some("`idpool.release` (sent as the command), or `idpool.apply` when ended leases \
                 went too"),
        }),
        args: &[KEY, ArgSpec::required(c"id", ArgType::Integer)],
    },
    RENEW,
    CommandSpec {
        entry: entry!(c"idpool.info", info, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 2,
        summary: c"Returns a pool's max, live lease count, next search start and default lease length",
        complexity: c"O(log N) where N is the number of leases, plus O(log N) per ended lease not yet reclaimed",
        since: SINCE,
        reply: "The pool's `max`, `leased` (live leases), `next` (where the next search for a \
                free ID starts) and `default_ttl` (ms, or nil when leases never end unless \
                asked), integers: a flat array of names and values under RESP2, a map under \
                RESP3.",
        events: None,
        args: &[KEY],
    },
    RESIZE,
    APPLY,
];

const CREATE: CommandSpec = CommandSpec {
    entry: entry!(c"idpool.create", create, WRITE_KEY),
    flags: c"write deny-oom",
    acl_categories: c"write",
    arity: -3,
    summary: c"Creates a pool of the IDs 1..max, optionally with a default lease length in ms",
    complexity: c"O(1)",
    since: SINCE,
    reply: "Simple string reply `OK`: the empty pool of `1..max` was created.",
    events: Some(Events {
        fires: "`idpool.create`",
        replica: None,
    }),
    args: &[KEY, ArgSpec::required(c"max", ArgType::Integer), TTL],
};

const NEXT: CommandSpec = CommandSpec {
    entry: entry!(c"idpool.next", next, WRITE_KEY),
    flags: c"write deny-oom fast blocking",
    acl_categories: c"write fast blocking",
    arity: -2,
    summary: c"Leases the first free ID after the last one handed out (cyclic), optionally waiting first-come-first-served; nil when all are leased",
    complexity: c"O(log N) where N is the number of leases, plus O(log N) per ended lease reclaimed",
    since: SINCE,
    reply: "Integer reply: the ID now leased (the first free one at or after the pool's \
            `next`, wrapping to 1); nil when every ID is leased after waiting up to \
            `WAIT` ms in the key's first-come-first-served queue (at once inside `MULTI` \
            or a script).",
    events: Some(Events {
        fires: "`idpool.next`",
        replica: Some("`idpool.next` (sent as the command), or `idpool.apply` (a lease end, ended \
             leases reclaimed)"),
    }),
    args: &[
        KEY,
        TTL,
        WAIT,
    ],
};

const RENEW: CommandSpec = CommandSpec {
    entry: entry!(c"idpool.renew", renew, WRITE_KEY),
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 4,
    summary: c"Makes a live lease end ms from now; 1 when the ID is leased, 0 otherwise",
    complexity: c"O(log N) where N is the number of leases",
    since: SINCE,
    reply: "`1` when `id` has a live lease, which now ends `ms` from now; `0` when it is \
            not leased (an ended lease is not revived).",
    events: Some(Events {
        fires: "`idpool.renew`",
        replica: Some("`idpool.apply`"),
    }),
    args: &[
        KEY,
        ArgSpec::required(c"id", ArgType::Integer),
        ArgSpec::required(c"ms", ArgType::Integer),
    ],
};

const RESIZE: CommandSpec = CommandSpec {
    entry: entry!(c"idpool.resize", resize, WRITE_KEY),
    flags: c"write",
    acl_categories: c"write",
    arity: 3,
    summary: c"Grows a pool, or shrinks it when no live lease lies above the new max",
    complexity: c"O(log N) where N is the number of leases",
    since: SINCE,
    reply: "Simple string reply `OK`: the pool now holds the IDs `1..max`.",
    events: Some(Events {
        fires: "`idpool.resize`",
        replica: Some("`idpool.apply`"),
    }),
    args: &[KEY, ArgSpec::required(c"max", ArgType::Integer)],
};

const APPLY: CommandSpec = CommandSpec {
    entry: entry!(c"idpool.apply", apply, WRITE_KEY),
    flags: c"write",
    acl_categories: c"write",
    arity: -4,
    summary: c"Internal: applies a primary's pool decision (bounds and absolute leases) on replicas and AOF load",
    complexity: c"O((F + L) log N) for F IDs freed and L leases given",
    since: SINCE,
    reply: "Simple string reply `OK`: the primary's decision (`max`, `next`, IDs freed \
            and leased) was applied. Internal: only the replication stream and an AOF \
            load send it.",
    events: None,
    args: &[
        KEY,
        ArgSpec::required(c"max", ArgType::Integer),
        ArgSpec::required(c"next", ArgType::Integer),
        FREE,
        LEASE,
    ],
};
