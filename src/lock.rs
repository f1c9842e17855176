//! LOCK: owner-token locks with a lease, a first-come-first-served wait,
//! extension and fencing tokens.
//!
//! A lock is a plain string key whose value is the holder's token and whose
//! TTL is the lease — what `SET key token NX PX ms` makes — so it works with
//! existing clients (redis-py's `Lock`, Valkey's `DELIFEQ`). A fencing token
//! is a counter key (what `INCR` makes) incremented on every acquisition.
//!
//! Waiting: a client that `LOCK.ACQUIRE … WAIT ms` finds the lock held is
//! parked in that lock's queue (`common/wait/`, first come, first served).
//! The lock may come free by `LOCK.RELEASEIF` (served at once, inside the
//! release), by anything else deleting, renaming or moving it (keyspace
//! events), or by its TTL running out (a timer at the expiry time, so the
//! hand-off does not wait for the server's expire cycle); the oldest waiter
//! then gets it as the acquisition it asked for.
//!
//! Several keys at once (`LOCK.MACQUIRE`, `LOCK.MRELEASEIF`, `LOCK.MEXTEND`,
//! what `redlock`'s scripts do): all or nothing. A client waiting for several
//! keys queues on one that is busy; offered that key, it takes every key if
//! all are free, else moves to the queue of the key still busy, in its place
//! by arrival (docs/src/waiting.md says what that rule guarantees).

#![forbid(unsafe_code)]

mod errors;

use std::collections::HashSet;
use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisResult, RedisValue};

use crate::common::args::{parse_options, single, token};
use crate::common::command::{
    ArgSpec, ArgType, BeginSearch, CommandSpec, Events, FindKeys, KeySpec, ADD, EX, FENCE, LEASE,
    NX, PX, UPDATED, UPDATES_FIRST, WAIT,
};
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::key::{Key, Kind, OpenKeys};
use crate::common::ffi::replicate::{self, Word};
use crate::common::ffi::strings::OwnedString;
use crate::common::reply::{Replied, Reply};
use crate::common::stats::Stat;
use crate::common::time::{self, ttl_ms};
use crate::common::wait::{self, Cause, Event, Offer, Take, Waitable, Waits};
use crate::entry;

/// The most keys one call of `LOCK.MACQUIRE`, `LOCK.MRELEASEIF` or
/// `LOCK.MEXTEND` names.
pub const MOST_KEYS: usize = 1024;

/// What a grant must do; a waiter carries it until its turn.
pub struct Request {
    token: Vec<u8>,
    /// The lease in milliseconds, counted from the grant; `None` = no TTL.
    lease: Option<i64>,
    fence: Option<Vec<u8>>,
    /// A `LOCK.MACQUIRE`: every key it takes (the queue's key among them).
    all: Option<AllKeys>,
}

/// The keys of a `LOCK.MACQUIRE` waiter.
pub struct AllKeys {
    /// Each key once.
    names: Vec<Vec<u8>>,
    /// `NX`: only free keys are taken (else the token's own too).
    nx: bool,
    /// The reply of the grant: numkeys as given.
    reply: i64,
}

/// What a hand-off gave a waiter: its token, until its lease's end, on the
/// queue's key or, for a `LOCK.MACQUIRE`, on the keys in `taken` (those it
/// found free: a key its token held already keeps the lease the grant gave).
pub struct Handed {
    token: Vec<u8>,
    expire_at: Option<i64>,
    taken: Option<Vec<Vec<u8>>>,
}

/// LOCK's waits (see `common/wait/`).
pub struct Locks;

static WAITS: Waits<Request> = Waits::new();

impl Waitable for Locks {
    type Request = Request;
    type Grant = Handed;
    const KEYS_WAITED_ON: &'static CStr = c"locks_with_waiters";

    fn waits() -> &'static Waits<Request> {
        &WAITS
    }

    fn command(request: &Request) -> &'static CommandSpec {
        match request.all {
            Some(_) => &MACQUIRE,
            None => &ACQUIRE,
        }
    }

    /// A free lock goes to the waiter, as the acquisition it asked for; a
    /// held one is looked at again just after its lease ends.
    fn offer(ctx: &Context, name: Arg, request: &Request) -> Offer<Handed> {
        if let Some(all) = &request.all {
            return offer_all(ctx, name, request, all);
        }
        let mut lock = Key::write(ctx, name);
        if lock.kind() != Kind::Empty {
            // A key expires once its time has passed, so look 1 ms after.
            return Offer::Busy(lock.expire_at().map(|at| at.saturating_add(1)));
        }
        let fence_name = request
            .fence
            .as_ref()
            .map(|f| OwnedString::from_bytes(ctx, f));
        let mut fence = fence_name.as_ref().map(|f| Key::write(ctx, f.as_arg()));
        let granted = lease_end(request.lease).and_then(|expire_at| {
            let reply = grant(
                ctx,
                &mut lock,
                fence.as_mut(),
                &request.token,
                expire_at,
                Holder::Nobody,
            )?;
            let handed = Handed {
                token: request.token.clone(),
                expire_at,
                taken: None,
            };
            Ok(Take::Got((reply, handed)))
        });
        Offer::of(granted)
    }

    /// A hand-off whose reply never reached the waiter: the lock is released
    /// if that grant still holds it (the fencing token it took stays used:
    /// fences only rise). Replicated as `DEL key`. A `LOCK.MACQUIRE` grant
    /// gives back each key it took free and still holds; the queues of those
    /// but `name` are served here.
    fn revoke(ctx: &Context, name: Arg, handed: &Handed) -> bool {
        let Some(taken) = &handed.taken else {
            return revoke_one(ctx, name, handed);
        };
        let mut freed = Vec::new();
        for other in taken {
            let other = OwnedString::from_bytes(ctx, other);
            if revoke_one(ctx, other.as_arg(), handed) {
                freed.push(other);
            }
        }
        for other in &freed {
            if other.as_bytes() != name.as_bytes() {
                wait::serve_waiters::<Locks>(ctx, other.as_bytes(), (), Cause::Release);
            }
        }
        !freed.is_empty()
    }

    fn count(event: Event) {
        match event {
            Event::Parked => WAITS_STARTED.incr(),
            Event::TimedOut => WAITS_TIMED_OUT.incr(),
            Event::Served(Cause::Release) => HANDOFFS_RELEASE.incr(),
            Event::Served(Cause::Delete) => HANDOFFS_DELETE.incr(),
            Event::Served(Cause::Expiry) => HANDOFFS_EXPIRY.incr(),
        }
    }
}

/// Deletes `name` if the grant `handed` still holds it (its token, its
/// lease's end). Replicated as `DEL key`.
fn revoke_one(ctx: &Context, name: Arg, handed: &Handed) -> bool {
    let mut lock = Key::write(ctx, name);
    let held = matches!(lock.string(), Ok(Some(token)) if token == handed.token.as_slice())
        && lock.expire_at() == handed.expire_at;
    if held {
        lock.delete();
        lock.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
        replicate::effect(ctx, c"DEL", &[Word::Arg(name)]);
    }
    held
}

/// Offers a `LOCK.MACQUIRE` waiter its keys (`name`, its queue's key, among
/// them): all of them if every one is free (or its token's, without `NX`);
/// else it waits on `name` while `name` is busy, or moves to the first key
/// that is.
fn offer_all(ctx: &Context, name: Arg, request: &Request, all: &AllKeys) -> Offer<Handed> {
    let names: Vec<OwnedString> = all
        .names
        .iter()
        .map(|other| OwnedString::from_bytes(ctx, other))
        .collect();
    let mut locks: Vec<Key> = names
        .iter()
        .map(|other| Key::write(ctx, other.as_arg()))
        .collect();
    let holders: Vec<Holder> = locks
        .iter()
        .map(|lock| match lock.kind() {
            Kind::Empty => Holder::Nobody,
            Kind::String
                if !all.nx
                    && matches!(lock.string(), Ok(Some(held)) if held == request.token.as_slice()) =>
            {
                Holder::Caller
            }
            // Held by another token, or not a lock at all: busy until it goes.
            _ => Holder::Other,
        })
        .collect();
    let busy = |lock: &Key| lock.expire_at().map(|at| at.saturating_add(1));
    let mut first_busy = None;
    for (lock, holder) in locks.iter().zip(&holders) {
        if *holder != Holder::Other {
            continue;
        }
        if lock.name().as_bytes() == name.as_bytes() {
            return Offer::Busy(busy(lock));
        }
        first_busy = first_busy.or(Some(lock));
    }
    if let Some(lock) = first_busy {
        return Offer::Elsewhere(lock.name().as_bytes().to_vec(), busy(lock));
    }
    let granted = lease_end(request.lease).and_then(|expire_at| {
        let mut taken = Vec::new();
        for (lock, holder) in locks.iter_mut().zip(holders) {
            grant(ctx, lock, None, &request.token, expire_at, holder)?;
            if holder == Holder::Nobody {
                taken.push(lock.name().as_bytes().to_vec());
            }
        }
        let handed = Handed {
            token: request.token.clone(),
            expire_at,
            taken: Some(taken),
        };
        Ok(Take::Got((RedisValue::Integer(all.reply), handed)))
    });
    Offer::of(granted)
}

/// `LOCK.ACQUIRE key token [PX ms | EX s] [WAIT ms] [FENCE fencekey] [NX]`
/// (`NX`: only a free lock is taken; its holder asking again is refused, as
/// `SET … NX` refuses it).
fn acquire<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, token_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let [px, ex, wait, fence, nx] = parse_options(options, &[PX, EX, WAIT, FENCE, NX])?;
    let lease = time::lease(px, ex)?;
    let wait = wait::parse_wait(single(wait))?;
    let fence = single(fence);
    if fence.is_some_and(|fence| fence.as_bytes() == name.as_bytes()) {
        return Err(errors::FENCE_KEY.error());
    }

    // A lock that came free while clients wait belongs to the oldest of them
    // (it freed by expiry: a delete would have scheduled a check already).
    wait::serve_waiters::<Locks>(ctx, name.as_bytes(), (), Cause::Expiry);

    let mut lock = Key::write(ctx, *name);
    let mut fence_key = fence.map(|fence| Key::write(ctx, fence));
    let holder = match lock.string()? {
        None => Holder::Nobody,
        Some(held) if held == token && nx.is_none() => Holder::Caller,
        Some(_) => Holder::Other,
    };
    // Checked whatever the outcome, so a bad FENCE key is always an error.
    if let Some(fence_key) = &fence_key {
        fence_key.integer()?;
    }
    match holder {
        Holder::Nobody | Holder::Caller => grant(
            ctx,
            &mut lock,
            fence_key.as_mut(),
            token,
            lease_end(lease)?,
            holder,
        )
        .map(Reply::from),
        Holder::Other => {
            let Some(wait) = wait else {
                return Ok(RedisValue::Null.into());
            };
            let request = Request {
                token: token.to_vec(),
                lease,
                fence: fence.map(|fence| fence.as_bytes().to_vec()),
                all: None,
            };
            let next = lock.expire_at().map(|at| at.saturating_add(1));
            Ok(
                wait::park::<Locks>(ctx, name.as_bytes(), (fence_key, lock), request, wait, next)
                    .into(),
            )
        }
    }
}

/// Who holds the lock a client asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holder {
    Nobody,
    /// The asking token itself (a retry after a lost reply).
    Caller,
    Other,
}

/// The end of a lease of `ms` from now (none without a lease). A lease ends
/// at a time of this server's clock: replicated as its effect, with that
/// absolute time.
fn lease_end(lease: Option<i64>) -> Result<Option<i64>, RedisError> {
    lease.map(time::from_now).transpose()
}

/// Makes `token` the holder until `expire_at` and, with a fence key, the
/// next fencing token (`Holder::Caller`, the holder re-acquiring, keeps its
/// token).
/// Everything is checked before anything is written. Replicated as
/// `SET key token [PXAT t]` and `SET fencekey n KEEPTTL`.
fn grant(
    ctx: &Context,
    lock: &mut Key,
    fence: Option<&mut Key>,
    token: &[u8],
    expire_at: Option<i64>,
    holder: Holder,
) -> RedisResult {
    let fencing = match &fence {
        None => None,
        Some(fence) => match (holder, fence.integer()?) {
            (Holder::Caller, Some(current)) => Some((current, false)),
            (_, current) => Some((
                current
                    .unwrap_or(0)
                    .checked_add(1)
                    .ok_or(errors::OVERFLOW.error())?,
                true,
            )),
        },
    };
    lock.set_value(token, expire_at)?;
    let (name, value) = (Word::Arg(lock.name()), Word::Bytes(token));
    match expire_at {
        Some(at) => replicate::effect(
            ctx,
            c"SET",
            &[name, value, Word::Token(c"PXAT"), Word::Int(at)],
        ),
        None => replicate::effect(ctx, c"SET", &[name, value]),
    }
    match (fence, fencing) {
        (Some(fence), Some((value, true))) => {
            fence.store_integer(value)?;
            replicate::effect(
                ctx,
                c"SET",
                &[
                    Word::Arg(fence.name()),
                    Word::Int(value),
                    Word::Token(c"KEEPTTL"),
                ],
            );
            Ok(RedisValue::Integer(value))
        }
        (_, Some((value, false))) => Ok(RedisValue::Integer(value)),
        _ => Ok(RedisValue::Integer(1)),
    }
}

/// `LOCK.RELEASEIF key token` → 1 released, 0 not held by `token`.
fn release_if<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, token_arg] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let released = {
        let mut lock = Key::write(ctx, *name);
        let held = lock.string()? == Some(token);
        if held {
            lock.delete();
            lock.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
            // The release follows from the stored token alone; a hand-off to
            // a waiter below is replicated as its own effect, after it.
            replicate::verbatim(ctx);
        }
        held
    };
    wait::serve_waiters::<Locks>(ctx, name.as_bytes(), (), Cause::Release);
    Ok(RedisValue::Integer(i64::from(released)).into())
}

/// `LOCK.EXTEND key token PX ms | EX s [ADD]` → 1 when held by `token`: its
/// lease now ends `ms` from now, or with `ADD` `ms` after its current end
/// (what redis-py's `Lock.extend` does; a lock without a lease keeps none,
/// and answers 0). Else 0.
fn extend<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, token_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let [px, ex, add] = parse_options(options, &[PX, EX, ADD])?;
    if px.is_some() == ex.is_some() {
        return Err(errors::SYNTAX.error());
    }
    let lease = ttl_ms(single(px), single(ex))?.ok_or(errors::SYNTAX.error())?;
    let extended = {
        let mut lock = Key::write(ctx, *name);
        let held = lock.string()? == Some(token);
        let at = match (held, add.is_some()) {
            (false, _) => None,
            (true, true) => match lock.expire_at() {
                Some(end) => Some(time::after(end, lease)?),
                None => None,
            },
            (true, false) => Some(time::from_now(lease)?),
        };
        if let Some(at) = at {
            lock.set_expire_at(Some(at));
            replicate::effect(ctx, c"PEXPIREAT", &[Word::Arg(*name), Word::Int(at)]);
            lock.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"expire");
        }
        at.is_some()
    };
    // Waiters' timer follows the new expiry.
    wait::serve_waiters::<Locks>(ctx, name.as_bytes(), (), Cause::Expiry);
    Ok(RedisValue::Integer(i64::from(extended)).into())
}

/// A call naming several keys: `numkeys key [key …] token rest…`.
struct KeysCall<'a> {
    /// The keys, each once, in the order first named (a key named twice is
    /// one key, as in `redlock`'s scripts).
    names: Vec<Arg<'a>>,
    /// numkeys as given, repeats counted: a success's reply (`#KEYS`).
    count: i64,
    token: &'a [u8],
    /// The arguments after the token.
    rest: &'a [Arg<'a>],
}

/// Reads `numkeys key [key …] token` from argv index 1: numkeys between 1
/// and [`MOST_KEYS`], that many keys, then a token.
fn keys_call<'a>(args: &'a [Arg<'a>]) -> Result<KeysCall<'a>, RedisError> {
    let [_, numkeys, after @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let count = numkeys.to_i64()?;
    let n = usize::try_from(count)
        .ok()
        .filter(|n| (1..=MOST_KEYS).contains(n))
        .ok_or_else(|| errors::NUMKEYS_RANGE.with(&[&MOST_KEYS]))?;
    let (Some(keys), Some((token_arg, rest))) = (
        after.get(..n),
        after.get(n..).and_then(<[Arg]>::split_first),
    ) else {
        return Err(errors::NUMKEYS_MISMATCH.error());
    };
    let token = token(token_arg)?;
    let mut seen = HashSet::with_capacity(n);
    let names = keys
        .iter()
        .copied()
        .filter(|key| seen.insert(key.as_bytes()))
        .collect();
    Ok(KeysCall {
        names,
        count,
        token,
        rest,
    })
}

/// `LOCK.MACQUIRE numkeys key [key …] token [PX ms | EX s] [WAIT ms] [NX]`
/// → numkeys when every key is now `token`'s, nil when any is another
/// token's (with `NX`: when any exists) and nothing changed.
fn macquire<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let call = keys_call(args)?;
    let [px, ex, wait, fence, nx] = parse_options(call.rest, &[PX, EX, WAIT, FENCE, NX])?;
    if fence.is_some() {
        return Err(errors::MULTI_FENCE.error());
    }
    let lease = time::lease(px, ex)?;
    let wait = wait::parse_wait(single(wait))?;
    let nx = nx.is_some();

    // Keys that came free while clients wait belong to the oldest of them.
    for name in &call.names {
        wait::serve_waiters::<Locks>(ctx, name.as_bytes(), (), Cause::Expiry);
    }

    let mut locks: Vec<Key> = call
        .names
        .iter()
        .map(|name| Key::write(ctx, *name))
        .collect();
    let mut holders = Vec::with_capacity(locks.len());
    for lock in &locks {
        // With NX any key that exists is taken, whatever it holds (redlock's
        // lock script asks `EXISTS`); else a key of another type is an error,
        // as for LOCK.ACQUIRE.
        holders.push(match (lock.kind(), nx) {
            (Kind::Empty, _) => Holder::Nobody,
            (_, true) => Holder::Other,
            (_, false) => match lock.string()? {
                Some(held) if held == call.token => Holder::Caller,
                _ => Holder::Other,
            },
        });
    }
    let busy = holders.iter().position(|holder| *holder == Holder::Other);
    let Some(busy) = busy else {
        let expire_at = lease_end(lease)?;
        for (lock, holder) in locks.iter_mut().zip(holders) {
            grant(ctx, lock, None, call.token, expire_at, holder)?;
        }
        return Ok(RedisValue::Integer(call.count).into());
    };
    let (Some(wait), Some(first_busy)) = (wait, locks.get(busy)) else {
        return Ok(RedisValue::Null.into());
    };
    let name = first_busy.name().as_bytes();
    let next = first_busy.expire_at().map(|at| at.saturating_add(1));
    let request = Request {
        token: call.token.to_vec(),
        lease,
        fence: None,
        all: Some(AllKeys {
            names: call
                .names
                .iter()
                .map(|name| name.as_bytes().to_vec())
                .collect(),
            nx,
            reply: call.count,
        }),
    };
    Ok(wait::park::<Locks>(ctx, name, locks, request, wait, next).into())
}

/// `LOCK.MRELEASEIF numkeys key [key …] token` → how many keys `token` held,
/// each deleted and handed to its oldest waiter.
fn mrelease_if<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let call = keys_call(args)?;
    if !call.rest.is_empty() {
        return Err(errors::NUMKEYS_MISMATCH.error());
    }
    let mut locks: Vec<Key> = call
        .names
        .iter()
        .map(|name| Key::write(ctx, *name))
        .collect();
    let mut held = Vec::with_capacity(locks.len());
    for lock in &locks {
        held.push(lock.string()? == Some(call.token));
    }
    let mut released = Vec::new();
    for (lock, held) in locks.iter_mut().zip(held) {
        if held {
            lock.delete();
            lock.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
            released.push(lock.name());
        }
    }
    if !released.is_empty() {
        // The releases follow from the stored tokens alone; hand-offs below
        // are replicated as their own effects, after it.
        replicate::verbatim(ctx);
    }
    locks.close();
    for name in &released {
        wait::serve_waiters::<Locks>(ctx, name.as_bytes(), (), Cause::Release);
    }
    Ok(RedisValue::Integer(i64::try_from(released.len()).unwrap_or(i64::MAX)).into())
}

/// `LOCK.MEXTEND numkeys key [key …] token PX ms | EX s [ADD]` → numkeys
/// when `token` holds every key: each lease now ends `ms` from now (with
/// `ADD`, `ms` after its own end; a key without a lease then answers 0).
/// Else 0, and nothing changes.
fn mextend<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let call = keys_call(args)?;
    let [px, ex, add] = parse_options(call.rest, &[PX, EX, ADD])?;
    if px.is_some() == ex.is_some() {
        return Err(errors::SYNTAX.error());
    }
    let lease = ttl_ms(single(px), single(ex))?.ok_or(errors::SYNTAX.error())?;
    let from_now = time::from_now(lease)?;
    let extended = {
        let mut locks: Vec<Key> = call
            .names
            .iter()
            .map(|name| Key::write(ctx, *name))
            .collect();
        let mut ends = Vec::with_capacity(locks.len());
        for lock in &locks {
            let held = lock.string()? == Some(call.token);
            ends.push(match (held, add.is_some()) {
                (false, _) => None,
                (true, true) => match lock.expire_at() {
                    Some(end) => Some(time::after(end, lease)?),
                    None => None,
                },
                (true, false) => Some(from_now),
            });
        }
        let ends: Option<Vec<i64>> = ends.into_iter().collect();
        if let Some(ends) = &ends {
            for (lock, &at) in locks.iter_mut().zip(ends) {
                lock.set_expire_at(Some(at));
                replicate::effect(ctx, c"PEXPIREAT", &[Word::Arg(lock.name()), Word::Int(at)]);
                lock.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"expire");
            }
        }
        ends.is_some()
    };
    // Waiters' timers follow the new expiries.
    for name in &call.names {
        wait::serve_waiters::<Locks>(ctx, name.as_bytes(), (), Cause::Expiry);
    }
    Ok(RedisValue::Integer(if extended { call.count } else { 0 }).into())
}

/// The lock, and the fence counter after `FENCE` (searched from the options).
const ACQUIRE_KEYS: &[KeySpec] = &[
    UPDATES_FIRST,
    KeySpec {
        flags: UPDATED,
        begin: BeginSearch::after(&FENCE, 3),
        find: FindKeys::One,
    },
];
const RELEASE_KEY: &[KeySpec] = &[KeySpec {
    flags: raw::REDISMODULE_CMD_KEY_RW
        | raw::REDISMODULE_CMD_KEY_ACCESS
        | raw::REDISMODULE_CMD_KEY_DELETE,
    begin: BeginSearch::Index(1),
    find: FindKeys::One,
}];
const EXTEND_KEY: &[KeySpec] = &[UPDATES_FIRST];
/// `numkeys key [key …]`, each key read and written.
const MULTI_KEYS: &[KeySpec] = &[KeySpec {
    flags: UPDATED,
    begin: BeginSearch::Index(1),
    find: FindKeys::KeyNum { most: MOST_KEYS },
}];
/// `numkeys key [key …]`, each key read and maybe deleted.
const MULTI_RELEASE_KEYS: &[KeySpec] = &[KeySpec {
    flags: raw::REDISMODULE_CMD_KEY_RW
        | raw::REDISMODULE_CMD_KEY_ACCESS
        | raw::REDISMODULE_CMD_KEY_DELETE,
    begin: BeginSearch::Index(1),
    find: FindKeys::KeyNum { most: MOST_KEYS },
}];

const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const TOKEN: ArgSpec = ArgSpec::required(c"token", ArgType::String);
/// `numkeys key [key …]`, as the multi-key commands take them.
const NUMKEYS: ArgSpec = ArgSpec::required(c"numkeys", ArgType::Integer);
const KEYS: ArgSpec = ArgSpec::key(c"key", 0).multiple();

pub static WAITS_STARTED: Stat = Stat::counter(
    c"lock_waits",
    "lock waits started (`LOCK.ACQUIRE`, `LOCK.MACQUIRE`: one a wait, whatever its keys)",
);
pub static WAITS_TIMED_OUT: Stat =
    Stat::counter(c"lock_waits_timed_out", "lock waits that ran out (nil)");
pub static HANDOFFS_RELEASE: Stat = Stat::counter(
    c"lock_handoffs_release",
    "locks handed to a waiter (all keys of a `LOCK.MACQUIRE` count one) by `LOCK.RELEASEIF` or `LOCK.MRELEASEIF`",
);
pub static HANDOFFS_DELETE: Stat = Stat::counter(
    c"lock_handoffs_delete",
    "locks handed to a waiter after another removal (`DEL`, `RENAME`, eviction, flush, …)",
);
pub static HANDOFFS_EXPIRY: Stat = Stat::counter(
    c"lock_handoffs_expiry",
    "locks handed to a waiter at the lease's end",
);

pub static FAMILY: FamilySpec = FamilySpec {
    about: "owner-token locks with leases, a fair wait and fencing tokens",
    replaces: "`SET NX PX` locks, WATCH/MULTI or Lua owner-checked release, polling for a busy lock, redlock's scripts",
    commands: COMMANDS,
    stats: &[
        &WAITS_STARTED,
        &WAITS_TIMED_OUT,
        &HANDOFFS_RELEASE,
        &HANDOFFS_DELETE,
        &HANDOFFS_EXPIRY,
    ],
    waiting: Some(wait::watcher::<Locks>()),
    settings: &[],
    errors: errors::OWN,
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    ACQUIRE,
    CommandSpec {
        entry: entry!(c"lock.releaseif", release_if, RELEASE_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: 3,
        summary: c"Releases a lock only if the token holds it; the oldest waiter gets it next",
        complexity: c"O(1), plus O(N) over the N clients waiting for this lock",
        since: c"0.1.0",
        reply: "`1` when `token` held the lock and it was deleted (then handed to the oldest \
                waiter); `0` when the lock is free, expired or held by another token.",
        events: Some(Events {
            fires: "`del`",
            replica: None,
        }),
        args: &[
            KEY,
            TOKEN,
        ],
    },
    CommandSpec {
        entry: entry!(c"lock.extend", extend, EXTEND_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: -5,
        summary: c"Sets a held lock's lease to end the given time from now (with ADD, after its current end), only if the token holds it",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "`1` when `token` holds the lock and its lease now ends the given time from \
                now (with `ADD`, that much after its current end); `0` when it does not hold \
                it (free, expired or another token's), or with `ADD` when the lock has no \
                lease (nothing changes).",
        events: Some(Events {
            fires: "`expire`",
            replica: None,
        }),
        args: &[
            KEY,
            TOKEN,
            ArgSpec::one_of(c"lease", LEASE),
            ADD,
        ],
    },
    MACQUIRE,
    CommandSpec {
        entry: entry!(c"lock.mreleaseif", mrelease_if, MULTI_RELEASE_KEYS),
        flags: c"write",
        acl_categories: c"write slow",
        arity: -4,
        summary: c"Releases each of several locks the token holds; each goes to its oldest waiter next",
        complexity: c"O(N) for N keys, plus O(M) over the M clients waiting for the released locks",
        since: c"0.7.0",
        reply: "Integer reply: the number of keys `token` held, each deleted once (a key \
                named twice counts once) and handed to its oldest waiter; `0` when it held \
                none.",
        events: Some(Events {
            fires: "`del` on each key released",
            replica: None,
        }),
        args: &[
            NUMKEYS,
            KEYS,
            TOKEN,
        ],
    },
    CommandSpec {
        entry: entry!(c"lock.mextend", mextend, MULTI_KEYS),
        flags: c"write",
        acl_categories: c"write slow",
        arity: -6,
        summary: c"Sets the leases of several locks to end the given time from now (with ADD, after their current ends), only if the token holds every one",
        complexity: c"O(N) for N keys",
        since: c"0.7.0",
        reply: "`numkeys` as given when `token` holds every key and each lease now ends the \
                given time from now (with `ADD`, that much after its own end); `0` when any \
                key is not held by `token`, or with `ADD` any has no lease, and nothing \
                changes.",
        events: Some(Events {
            fires: "`expire` on each key",
            replica: None,
        }),
        args: &[
            NUMKEYS,
            KEYS,
            TOKEN,
            ArgSpec::one_of(c"lease", LEASE),
            ADD,
        ],
    },
];

const ACQUIRE: CommandSpec = CommandSpec {
    entry: entry!(c"lock.acquire", acquire, ACQUIRE_KEYS),
    flags: c"write deny-oom blocking",
    acl_categories: c"write slow blocking",
    arity: -3,
    summary: c"Takes a lock for a token (with a lease, an optional first-come-first-served wait and a fencing token); nil if another token holds it",
    complexity: c"O(1), plus O(N) over the N clients waiting for this lock when it is handed on",
    since: c"0.1.0",
    reply: "`1` when the token now holds the lock (a free lock, or one it already held, \
            its lease reset, without `NX`); with `FENCE`, the fencing token instead: the \
            new one (`fencekey` incremented), or for the holder asking again the current \
            one (a new one if `fencekey` is missing); nil when another token holds it \
            (with `NX`: when the lock is held at all, even by the same token) after \
            waiting up to `WAIT` ms in the key's first-come-first-served queue (at once \
            inside `MULTI` or a script).",
    events: Some(Events {
        fires: "`set`, then `expire` with a lease; `incrby` on the fence key",
        replica: Some("`set`, `expire`; `set` on the fence key"),
    }),
    args: &[
        KEY,
        TOKEN,
        ArgSpec::one_of(c"lease", LEASE).optional(),
        WAIT,
        FENCE,
        NX.optional(),
    ],
};

const MACQUIRE: CommandSpec = CommandSpec {
    entry: entry!(c"lock.macquire", macquire, MULTI_KEYS),
    flags: c"write deny-oom blocking",
    acl_categories: c"write slow blocking",
    arity: -4,
    summary: c"Takes several locks for a token, all or none (with a lease and an optional first-come-first-served wait); nil if another token holds any",
    complexity: c"O(N) for N keys, plus O(M) over the M clients waiting for a lock when it is handed on",
    since: c"0.7.0",
    reply: "`numkeys` as given (a key named twice counted twice) when every key is now \
            `token`'s, free keys taken and its own re-leased, all with the same lease \
            end; nil when any key is held by another token (with `NX`: when any key \
            exists, of any type) and nothing changes after waiting up to `WAIT` ms in the \
            key's first-come-first-served queue (at once inside `MULTI` or a script).",
    events: Some(Events {
        fires: "for each key `set`, then `expire` with a lease",
        replica: None,
    }),
    args: &[
        NUMKEYS,
        KEYS,
        TOKEN,
        ArgSpec::one_of(c"lease", LEASE).optional(),
        WAIT,
        NX.optional(),
    ],
};
