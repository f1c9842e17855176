//! POOL: a pool of named resources (connections, API keys, licence seats),
//! each free or held by one owner until its lease ends, handed out the one
//! free the longest first, with a first-come-first-served wait.
//!
//! A pool is a key of the module data type `rr-rspool` (see
//! `pool/core.rs` for the rules). A pool left without resources is
//! deleted, as the server deletes an empty set; a missing key is an empty
//! pool, which a client may wait on until resources are added.
//!
//! Waiting (`POOL.ACQUIRE … WAIT ms`, `common/wait/`): the oldest waiter
//! is handed a resource when one is released (inside `POOL.RELEASE`), added
//! (inside `POOL.ADD`), when a lease ends (a timer at that time), or when
//! anything else replaces the key (`RESTORE`, `RENAME`, …).
//!
//! Replication. A write whose outcome follows from the stored state alone
//! goes verbatim: `ADD`, `REMOVE`, an `ACQUIRE` without a lease, a `RELEASE`
//! — when no ended lease was reclaimed. A write that reads the clock (a
//! lease from now, ended leases reclaimed, `RENEW`) and a hand-off to a
//! waiter send their effect: `POOL.APPLY key [FREE resource]… [HOLD resource
//! owner at]…` frees and holds exactly as the primary chose, with absolute
//! lease ends (`at`, 0 for never). As with keys that expire, only the
//! primary reclaims ended leases, and replicates that.

#![forbid(unsafe_code)]

mod core;
mod errors;

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisError, RedisValue};

use self::core::Pool;
use crate::common::args::{groups, nonempty, parse_options, single};
use crate::common::command::{
    internal_only, ArgSpec, ArgType, CommandSpec, Events, KeySpec, EX, LEASE, PX, READS_FIRST,
    UPDATES_FIRST, WAIT,
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
use crate::common::reply::{Item, Replied, Reply};
use crate::common::stats::Stat;
use crate::common::time;
use crate::common::wait::{self, Cause, Event, Offer, Take, TakenFor, WaitStats, Waitable, Waits};
use crate::entry;

/// The encoding versions of a resource pool's stored form this build reads, oldest
/// first; it writes the last (see `Stored for Pool` below).
pub const ENCODINGS: &[i32] = &[1];

pub static RESOURCE_POOL_TYPE: RedisType = RedisType::new(
    "rr-rspool",
    datatype::written::<Pool>(),
    ffi::datatype::methods::<Pool>(),
);

const EVENT_CLASS: c_int = raw::REDISMODULE_NOTIFY_MODULE;

/// The server's clock, in Unix milliseconds.
fn now() -> u64 {
    now_ms().max(0) as u64
}

/// An owner as the commands take it: any bytes but none.
fn owner<'a>(arg: &Arg<'a>) -> Result<&'a [u8], RedisError> {
    nonempty(arg, errors::EMPTY_OWNER.error())
}

/// The absolute end of a lease of `ms` from now (never without one),
/// checked before anything is written.
fn until(lease: Option<i64>) -> Result<u64, RedisError> {
    lease::end_after(now(), lease)
}

/// The pool at `key`, `None` for a missing key.
fn pool_at<'k>(key: &'k mut Key) -> Result<Option<&'k mut Pool>, RedisError> {
    key.typed_value::<Pool>()
}

/// Moves the pool's ended leases back to the free list (see
/// [`lease::reclaim_ended`]; `INFO recipes` counts the ID pools' only).
fn reclaim(ctx: &Context, pool: &mut Pool) -> Vec<Box<[u8]>> {
    lease::reclaim_ended(ctx, None, |freed| {
        pool.reclaim(now(), |name| freed.push(name.into()))
    })
}

/// Replicates a write as its effect: `POOL.APPLY key [FREE resource]…
/// [HOLD resource owner at]`.
fn replicate_effect(
    ctx: &Context,
    name: Arg,
    freed: &[Box<[u8]>],
    held: Option<(&[u8], &[u8], u64)>,
) {
    let mut words = Vec::with_capacity(1 + 2 * freed.len() + 4);
    words.push(Word::Arg(name));
    for resource in freed {
        words.extend([Word::Token(c"FREE"), Word::Bytes(resource)]);
    }
    if let Some((resource, owner, until)) = held {
        words.extend([
            Word::Token(c"HOLD"),
            Word::Bytes(resource),
            Word::Bytes(owner),
            Word::Int(lease::to_wire(until)),
        ]);
    }
    replicate::effect(ctx, APPLY.upper_name(), &words);
}

/// Hands the resource free the longest to `owner` for `lease` ms (or
/// forever), replicating it: verbatim for the command's own client when the
/// clock played no part, else as its effect. Or nothing free until the first
/// lease ends.
fn take(
    ctx: &Context,
    key: &mut Key,
    owner: &[u8],
    lease: Option<i64>,
    taken_for: TakenFor,
) -> Result<Take<Vec<u8>>, RedisError> {
    let name = key.name();
    let Some(pool) = pool_at(key)? else {
        return Ok(Take::Nothing(None));
    };
    let until = until(lease)?;
    let freed = reclaim(ctx, pool);
    let Some(resource) = pool.take(owner, until).map(<[u8]>::to_vec) else {
        let next = pool.next_end().map(|at| at as i64);
        if !freed.is_empty() {
            replicate_effect(ctx, name, &freed, None);
        }
        return Ok(Take::Nothing(next));
    };
    if taken_for == TakenFor::Command && freed.is_empty() && until == NO_END {
        replicate::verbatim(ctx);
    } else {
        replicate_effect(ctx, name, &freed, Some((&resource, owner, until)));
    }
    key.written(EVENT_CLASS, c"pool.acquire");
    Ok(Take::Got(resource))
}

/// What a waiter asked for.
pub struct Request {
    owner: Vec<u8>,
    lease: Option<i64>,
}

/// What a hand-off gave a waiter: a resource, held by its owner.
pub struct Handed {
    resource: Vec<u8>,
    owner: Vec<u8>,
}

/// POOL's waits (see `common/wait/`).
pub struct Pools;

static WAITS: Waits<Request> = Waits::new();

impl Waitable for Pools {
    type Request = Request;
    type Grant = Handed;
    const KEYS_WAITED_ON: &'static CStr = c"resource_pools_with_waiters";

    fn waits() -> &'static Waits<Request> {
        &WAITS
    }

    fn command(_: &Request) -> &'static CommandSpec {
        &ACQUIRE
    }

    fn offer(ctx: &Context, name: Arg, request: &Request) -> Offer<Handed> {
        let mut key = Key::write(ctx, name);
        let taken = take(
            ctx,
            &mut key,
            &request.owner,
            request.lease,
            TakenFor::Waiter,
        );
        Offer::of(taken.map(|taken| {
            taken.map(|resource| {
                let handed = Handed {
                    resource: resource.clone(),
                    owner: request.owner.clone(),
                };
                (RedisValue::StringBuffer(resource), handed)
            })
        }))
    }

    /// A hand-off whose reply never reached the waiter: the resource is
    /// freed if that owner still holds it, replicated as `POOL.APPLY key
    /// FREE resource`.
    fn revoke(ctx: &Context, name: Arg, handed: &Handed) -> bool {
        let mut key = Key::write(ctx, name);
        let Ok(Some(pool)) = pool_at(&mut key) else {
            return false;
        };
        if !pool.release(&handed.resource, &handed.owner) {
            return false;
        }
        replicate_effect(ctx, name, &[handed.resource.as_slice().into()], None);
        key.written(EVENT_CLASS, c"pool.release");
        true
    }

    fn count(event: Event) {
        WAIT_STATS.count(event);
    }
}

/// `POOL.ADD key resource [resource …]` → how many were new.
fn add<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, resources @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if resources.is_empty() {
        return Err(RedisError::WrongArity);
    }
    let added = {
        let mut key = Key::write(ctx, *name);
        if key.kind() == Kind::Empty {
            key.set_typed_value(adopt(Pool::default()))?;
        }
        let Some(pool) = pool_at(&mut key)? else {
            return Err(errors::NOT_STORED.error());
        };
        let added = resources.iter().filter(|r| pool.add(r.as_bytes())).count();
        if added > 0 {
            // Appended in argument order: the same on every replica.
            replicate::verbatim(ctx);
            key.written(EVENT_CLASS, c"pool.add");
        }
        added
    };
    if added > 0 {
        wait::serve_waiters::<Pools>(ctx, name.as_bytes(), (), Cause::Release);
    }
    Ok(RedisValue::Integer(added as i64).into())
}

/// `POOL.REMOVE key resource [resource …]` → how many were there (free or
/// held). A pool left without resources is deleted.
fn remove<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, resources @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if resources.is_empty() {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::write(ctx, *name);
    let Some(pool) = pool_at(&mut key)? else {
        return Ok(RedisValue::Integer(0).into());
    };
    let removed = resources
        .iter()
        .filter(|r| pool.remove(r.as_bytes()))
        .count();
    let emptied = pool.is_empty();
    if removed > 0 {
        replicate::verbatim(ctx);
        key.written(EVENT_CLASS, c"pool.remove");
        if emptied {
            key.delete();
            key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
        }
    }
    Ok(RedisValue::Integer(removed as i64).into())
}

/// `POOL.ACQUIRE key owner [PX ms | EX s] [WAIT ms]` → the resource, or nil
/// when none is free (after waiting up to `ms` with `WAIT`).
fn acquire<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, owner_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let owner = owner(owner_arg)?;
    let [px, ex, wait] = parse_options(options, &[PX, EX, WAIT])?;
    let lease = time::lease(px, ex)?;
    let wait = wait::parse_wait(single(wait))?;
    // What came free while clients wait belongs to the oldest of them.
    wait::serve_waiters::<Pools>(ctx, name.as_bytes(), (), Cause::Expiry);
    let next = {
        let mut key = Key::write(ctx, *name);
        match take(ctx, &mut key, owner, lease, TakenFor::Command)? {
            Take::Got(resource) => return Ok(RedisValue::StringBuffer(resource).into()),
            Take::Nothing(next) => next,
        }
    };
    let Some(wait) = wait else {
        return Ok(RedisValue::Null.into());
    };
    let request = Request {
        owner: owner.to_vec(),
        lease,
    };
    Ok(wait::park::<Pools>(ctx, name.as_bytes(), (), request, wait, next).into())
}

/// `POOL.RELEASE key resource owner` → 1 when `owner` held it (it is free
/// now, or handed to the oldest waiter), else 0.
fn release<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, resource, owner_arg] = args else {
        return Err(RedisError::WrongArity);
    };
    let owner = owner(owner_arg)?;
    let released = {
        let mut key = Key::write(ctx, *name);
        let Some(pool) = pool_at(&mut key)? else {
            return Ok(RedisValue::Integer(0).into());
        };
        let mut freed = reclaim(ctx, pool);
        let reclaimed = !freed.is_empty();
        let released = pool.release(resource.as_bytes(), owner);
        if released {
            freed.push(resource.as_bytes().into());
        }
        if reclaimed {
            // The clock freed other leases too: send all that was freed.
            replicate_effect(ctx, *name, &freed, None);
        } else if released {
            replicate::verbatim(ctx);
        }
        if released {
            key.written(EVENT_CLASS, c"pool.release");
        }
        (released, reclaimed)
    };
    let (released, reclaimed) = released;
    if released || reclaimed {
        wait::serve_waiters::<Pools>(ctx, name.as_bytes(), (), Cause::Release);
    }
    Ok(RedisValue::Integer(i64::from(released)).into())
}

/// `POOL.RENEW key resource owner PX ms | EX s` → 1 when `owner` holds it
/// (its lease now ends `ms` from now), else 0.
fn renew<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, resource, owner_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let owner = owner(owner_arg)?;
    let [px, ex] = parse_options(options, &[PX, EX])?;
    let lease = time::lease(px, ex)?.ok_or(errors::SYNTAX.error())?;
    let mut key = Key::write(ctx, *name);
    let Some(pool) = pool_at(&mut key)? else {
        return Ok(RedisValue::Integer(0).into());
    };
    let until = until(Some(lease))?;
    let freed = reclaim(ctx, pool);
    let renewed = pool.renew(resource.as_bytes(), owner, until);
    if renewed || !freed.is_empty() {
        let held = renewed.then_some((resource.as_bytes(), owner, until));
        replicate_effect(ctx, *name, &freed, held);
    }
    if renewed {
        key.written(EVENT_CLASS, c"pool.renew");
    }
    Ok(RedisValue::Integer(i64::from(renewed)).into())
}

/// `POOL.INFO key` → map of `size`, `free`, `held` (live leases) and
/// `waiting` (clients waiting now); a missing key is an empty pool.
fn info<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let (size, held) = match key.value::<Pool>()? {
        Some(pool) => (pool.size(), pool.held(now())),
        None => (0, 0),
    };
    let waiting = wait::waiting_on::<Pools>(ctx, name.as_bytes());
    Ok(Reply::Map(vec![
        (b"size", Item::Int(size as i64)),
        (b"free", Item::Int((size - held) as i64)),
        (b"held", Item::Int(held as i64)),
        (b"waiting", Item::Int(waiting as i64)),
    ]))
}

/// `POOL.HOLDERS key` → for each held resource, in name order: the resource,
/// its owner and its lease end (Unix ms, -1 for never), as an array.
fn holders<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let Some(pool) = key.value::<Pool>()? else {
        return Ok(RedisValue::Array(Vec::new()).into());
    };
    let now = now();
    let rows = pool
        .holders()
        .filter(|&(_, _, until)| until >= now)
        .map(|(resource, owner, until)| {
            let until = lease::to_reply(until);
            RedisValue::Array(vec![
                RedisValue::StringBuffer(resource.to_vec()),
                RedisValue::StringBuffer(owner.to_vec()),
                RedisValue::Integer(until),
            ])
        })
        .collect();
    Ok(RedisValue::Array(rows).into())
}

/// `POOL.STATUS key resource` → `free`, `held` (by a live lease), or nil
/// when the pool lacks it. A resource whose lease ended is free, as
/// `POOL.ACQUIRE` would find it; nothing is reclaimed (a read).
fn status<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, resource] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let held = match key.value::<Pool>()? {
        Some(pool) => pool.is_held(resource.as_bytes(), now()),
        None => None,
    };
    Ok(match held {
        Some(true) => RedisValue::SimpleStringStatic("held"),
        Some(false) => RedisValue::SimpleStringStatic("free"),
        None => RedisValue::Null,
    }
    .into())
}

/// One change of a `POOL.APPLY`.
enum Change<'a> {
    Free(&'a [u8]),
    Hold(&'a [u8], &'a [u8], u64),
}

/// `POOL.APPLY key [FREE resource]… [HOLD resource owner at]…` → `OK`: a
/// primary's decision, applied in order as made (`at`: absolute Unix ms, 0
/// for never). Only the replication stream and AOF loading may send it.
fn apply<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, changes @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if replicate::deciding(ctx) {
        return Err(internal_only(&APPLY, &[&ACQUIRE, &RELEASE, &RENEW]));
    }
    let mut parsed = Vec::new();
    for group in groups(changes, &[FREE, HOLD])? {
        parsed.push(match group {
            (0, [resource]) => Change::Free(resource.as_bytes()),
            (_, [resource, owner_arg, at]) => Change::Hold(
                resource.as_bytes(),
                owner(owner_arg)?,
                lease::from_wire(at.to_i64()?)?,
            ),
            _ => return Err(errors::SYNTAX.error()),
        });
    }
    let mut key = Key::write(ctx, *name);
    if key.kind() == Kind::Empty && !parsed.is_empty() {
        key.set_typed_value(adopt(Pool::default()))?;
    }
    let Some(pool) = pool_at(&mut key)? else {
        return Ok(RedisValue::SimpleStringStatic("OK").into());
    };
    for change in parsed {
        match change {
            Change::Free(resource) => {
                pool.free(resource);
            }
            Change::Hold(resource, owner, until) => pool.hold(resource, owner, until),
        }
    }
    let emptied = pool.is_empty();
    replicate::verbatim(ctx);
    key.written(EVENT_CLASS, c"pool.apply");
    if emptied {
        // As `POOL.REMOVE` leaves it: a pool with no resource is no key (and
        // none would load back).
        key.delete();
        key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
    }
    Ok(RedisValue::SimpleStringStatic("OK").into())
}

// ---- the data type ---------------------------------------------------------

impl Stored for Pool {
    const ENCODINGS: &'static [i32] = ENCODINGS;
    fn data_type() -> &'static RedisType {
        &RESOURCE_POOL_TYPE
    }
    const WHAT: &'static str = "resource pool";

    /// Stored form (version 1): the free count and each free resource, the
    /// one free the longest first; then the held count and each held
    /// resource with its owner and lease end (`u64::MAX`: never), in name
    /// order.
    fn save(&self, out: &mut Writer) {
        out.unsigned(self.free_list().count() as u64);
        for resource in self.free_list() {
            out.bytes(resource);
        }
        out.unsigned(self.holders().count() as u64);
        for (resource, owner, until) in self.holders() {
            out.bytes(resource);
            out.bytes(owner);
            out.unsigned(until);
        }
    }

    /// Version 1 is the only stored form so far.
    fn load(input: &mut Reader, _encoding: i32) -> Result<Pool, &'static str> {
        // Grown as read: a hostile count cannot make us reserve memory.
        let mut free = Vec::new();
        for _ in 0..input.unsigned()? {
            free.push(input.bytes()?);
        }
        let mut held = Vec::new();
        for _ in 0..input.unsigned()? {
            held.push((input.bytes()?, input.bytes()?, input.unsigned()?));
        }
        Pool::restore(free, held)
    }

    /// The commands that rebuild a pool: `POOL.APPLY` holding each held
    /// resource, then `POOL.ADD` of the free ones in their order.
    fn rewrite(&self, out: &mut Rewrite) {
        for (resource, owner, until) in self.holders() {
            out.emit(
                APPLY.upper_name(),
                &[
                    Word::Token(c"HOLD"),
                    Word::Bytes(resource),
                    Word::Bytes(owner),
                    Word::Int(lease::to_wire(until)),
                ],
            );
        }
        for resource in self.free_list() {
            out.emit(ADD.upper_name(), &[Word::Bytes(resource)]);
        }
    }

    /// `DEBUG DIGEST-VALUE`: the free resources in order, then each holder.
    /// A primary and its replicas store the same state (only the primary
    /// reclaims ended leases, and replicates that), so their digests agree.
    fn digest(&self, out: &mut Digest) {
        for resource in self.free_list() {
            out.bytes(resource);
        }
        out.end_sequence();
        for (resource, owner, until) in self.holders() {
            out.bytes(resource);
            out.bytes(owner);
            out.integer(lease::to_wire(until));
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
        RESOURCE_POOLS.add(sign);
    }
}

// ---- registration --------------------------------------------------------

const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const RESOURCE: ArgSpec = ArgSpec::required(c"resource", ArgType::String);
const OWNER: ArgSpec = ArgSpec::required(c"owner", ArgType::String);
/// The changes of a `POOL.APPLY`, in the order [`apply`] reads them: `FREE
/// resource`, `HOLD resource owner at`.
const FREE: ArgSpec = ArgSpec::option(c"free", c"FREE", ArgType::String).multiple();
const HOLD: ArgSpec = ArgSpec::block(
    c"hold",
    c"HOLD",
    &[RESOURCE, OWNER, ArgSpec::required(c"at", ArgType::Integer)],
)
.multiple();
const SINCE: &CStr = c"0.3.0";

/// Resource pools stored (copies included).
pub static RESOURCE_POOLS: Stat =
    Stat::gauge(c"resource_pools", "resource pools stored (copies included)");
pub static WAIT_STATS: WaitStats = WaitStats::new(
    (c"resource_waits", "`POOL.ACQUIRE … WAIT`s started"),
    (
        c"resource_waits_timed_out",
        "`POOL.ACQUIRE … WAIT`s that ran out",
    ),
    (c"resource_handoffs", "resources handed to a waiter"),
);

pub static FAMILY: FamilySpec = FamilySpec {
    about: "resource pools with owners, leases and a fair wait",
    replaces:
        "the book's two sets moved by WATCH/SRANDMEMBER/MULTI/SMOVE/EXEC, a `BLMOVE` free list",
    commands: COMMANDS,
    stats: &[
        &RESOURCE_POOLS,
        &WAIT_STATS.started,
        &WAIT_STATS.timed_out,
        &WAIT_STATS.handoffs,
    ],
    waiting: Some(wait::watcher::<Pools>()),
    settings: &[],
    errors: errors::OWN,
    stored: &[StoredType {
        data_type: &RESOURCE_POOL_TYPE,
        encodings: ENCODINGS,
    }],
};

pub const COMMANDS: &[CommandSpec] = &[
    ADD,
    CommandSpec {
        entry: entry!(c"pool.remove", remove, WRITE_KEY),
        flags: c"write",
        acl_categories: c"write",
        arity: -3,
        summary: c"Removes resources, free or held, from a pool; returns how many were there",
        complexity: c"O(N log M) for N resources given and M in the pool",
        since: SINCE,
        reply: "Integer reply: the number of the named resources that were in the pool (free \
                or held), now removed; `0` for a missing key.",
        events: Some(Events {
            fires: "`pool.remove`, `del` when the pool empties",
            replica: None,
        }),
        args: &[KEY, RESOURCE.multiple()],
    },
    ACQUIRE,
    RELEASE,
    RENEW,
    CommandSpec {
        entry: entry!(c"pool.info", info, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 2,
        summary: c"Returns a pool's size, free and held counts, and how many clients wait",
        complexity: c"O(E) for E ended leases not yet reclaimed",
        since: SINCE,
        reply: "Integers `size` (resources), `free`, `held` (live leases) and `waiting` \
                (clients waiting now): a flat array of names and values under RESP2, a map \
                under RESP3; a missing key is an empty pool (`size`, `free`, `held` `0`).",
        events: None,
        args: &[KEY],
    },
    CommandSpec {
        entry: entry!(c"pool.holders", holders, READ_KEY),
        flags: c"readonly",
        acl_categories: c"read slow",
        arity: 2,
        summary: c"Lists the held resources with their owners and lease ends",
        complexity: c"O(M) for M resources in the pool",
        since: SINCE,
        reply: "An array with one entry per resource held by a live lease, by resource name: \
                a three-item array of the resource, its owner and its lease end (Unix ms, \
                `-1` for never); an empty array when none is held or the key is missing.",
        events: None,
        args: &[KEY],
    },
    CommandSpec {
        entry: entry!(c"pool.status", status, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 3,
        summary: c"Tells whether a pool's resource is free or held; nil when the pool lacks it",
        complexity: c"O(log M) for M resources in the pool",
        since: c"0.6.0",
        reply: "Simple string reply: `held` when `resource` has a live lease, `free` when not \
                (an ended lease is free); nil when the pool lacks `resource` (or the key is \
                missing).",
        events: None,
        args: &[KEY, RESOURCE],
    },
    APPLY,
];

const ADD: CommandSpec = CommandSpec {
    entry: entry!(c"pool.add", add, WRITE_KEY),
    flags: c"write deny-oom",
    acl_categories: c"write",
    arity: -3,
    summary: c"Adds free resources to a pool (created if missing); returns how many were new",
    complexity:
        c"O(N log M) for N resources given and M in the pool, plus O(W) over W clients waiting",
    since: SINCE,
    reply: "Integer reply: the number of resources that were new, added free (those \
            already in the pool, or named again, are not counted).",
    events: Some(Events {
        fires: "`pool.add`",
        replica: None,
    }),
    args: &[KEY, RESOURCE.multiple()],
};

const ACQUIRE: CommandSpec = CommandSpec {
    entry: entry!(c"pool.acquire", acquire, WRITE_KEY),
    flags: c"write deny-oom blocking",
    acl_categories: c"write slow blocking",
    arity: -3,
    summary: c"Hands the resource free the longest to an owner (with a lease and a first-come-first-served wait); nil when none is free",
    complexity: c"O(log M) for M resources in the pool, plus O(log M) per ended lease reclaimed",
    since: SINCE,
    reply: "Bulk string reply: the resource now held by `owner` (the one free the \
            longest); nil when none is free after waiting up to `WAIT` ms in the key's \
            first-come-first-served queue (at once inside `MULTI` or a script).",
    events: Some(Events {
        fires: "`pool.acquire`",
        replica: Some("`pool.acquire` (sent as the command), or `pool.apply` (a lease end, ended \
             leases reclaimed)"),
    }),
    args: &[
        KEY,
        OWNER,
        ArgSpec::one_of(c"lease", LEASE).optional(),
        WAIT,
    ],
};

const RELEASE: CommandSpec = CommandSpec {
    entry: entry!(c"pool.release", release, WRITE_KEY),
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 4,
    summary: c"Frees a resource only if the owner holds it; the oldest waiter gets it next",
    complexity: c"O(log M) for M resources in the pool, plus O(W) over W clients waiting",
    since: SINCE,
    reply: "`1` when `owner` held `resource` by a live lease, now freed (or handed to the \
            oldest waiter); `0` when it did not (another owner, an ended lease, no such \
            resource or pool).",
    events: Some(Events {
        fires: "`pool.release`",
        replica: Some(
            "`pool.release` (sent as the command), or `pool.apply` when ended leases went \
             too",
        ),
    }),
    args: &[KEY, RESOURCE, OWNER],
};

const RENEW: CommandSpec = CommandSpec {
    entry: entry!(c"pool.renew", renew, WRITE_KEY),
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 6,
    summary:
        c"Makes a held resource's lease end the given time from now, only if the owner holds it",
    complexity: c"O(log M) for M resources in the pool",
    since: SINCE,
    reply: "`1` when `owner` holds `resource` by a live lease, which now ends the given \
            time from now; `0` otherwise (nothing renewed).",
    events: Some(Events {
        fires: "`pool.renew`",
        replica: Some("`pool.apply`"),
    }),
    args: &[KEY, RESOURCE, OWNER, ArgSpec::one_of(c"lease", LEASE)],
};

const APPLY: CommandSpec = CommandSpec {
    entry: entry!(c"pool.apply", apply, WRITE_KEY),
    flags: c"write",
    acl_categories: c"write",
    arity: -2,
    summary: c"Internal: applies a primary's pool decision (frees and absolute leases) on replicas and AOF load",
    complexity: c"O(N log M) for N changes and M resources in the pool",
    since: SINCE,
    reply: "Simple string reply `OK`: the primary's decision (resources freed and held) \
            was applied. Internal: only the replication stream and an AOF load send it.",
    events: None,
    args: &[KEY, FREE, HOLD],
};
