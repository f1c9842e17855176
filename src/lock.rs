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

#![forbid(unsafe_code)]

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisResult, RedisValue};

use crate::common::args::{parse_options, single, token, OptSpec};
use crate::common::command::{
    ArgSpec, ArgType, BeginSearch, CommandSpec, FindKeys, KeySpec, LEASE, UPDATED, UPDATES_FIRST,
};
use crate::common::errors;
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::key::{Key, Kind};
use crate::common::ffi::replicate::{self, Word};
use crate::common::ffi::strings::OwnedString;
use crate::common::reply::{Replied, Reply};
use crate::common::stats::Stat;
use crate::common::time::{self, ttl_ms};
use crate::common::wait::{self, Cause, Event, Offer, Take, Waitable, Waits};
use crate::entry;

const PX: OptSpec = OptSpec::valued("PX");
const EX: OptSpec = OptSpec::valued("EX");
const WAIT: OptSpec = OptSpec::valued("WAIT");
const FENCE: OptSpec = OptSpec::valued("FENCE");
const ADD: OptSpec = OptSpec::flag("ADD");
const NX: OptSpec = OptSpec::flag("NX");

/// What a grant must do; a waiter carries it until its turn.
pub struct Request {
    token: Vec<u8>,
    /// The lease in milliseconds, counted from the grant; `None` = no TTL.
    lease: Option<i64>,
    fence: Option<Vec<u8>>,
}

/// What a hand-off gave a waiter: its token, until its lease's end.
pub struct Handed {
    token: Vec<u8>,
    expire_at: Option<i64>,
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

    /// A free lock goes to the waiter, as the acquisition it asked for; a
    /// held one is looked at again just after its lease ends.
    fn offer(ctx: &Context, name: Arg, request: &Request) -> Offer<Handed> {
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
            };
            Ok(Take::Got((reply, handed)))
        });
        Offer::of(granted)
    }

    /// A hand-off whose reply never reached the waiter: the lock is released
    /// if that grant still holds it (the fencing token it took stays used:
    /// fences only rise). Replicated as `DEL key`.
    fn revoke(ctx: &Context, name: Arg, handed: &Handed) -> bool {
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

/// `LOCK.ACQUIRE key token [PX ms | EX s] [WAIT ms] [FENCE fencekey] [NX]`
/// (`NX`: only a free lock is taken; its holder asking again is refused, as
/// `SET … NX` refuses it).
fn acquire<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, token_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let [px, ex, wait, fence, nx] = parse_options(options, &[PX, EX, WAIT, FENCE, NX])?;
    let lease = time::lease("lock.acquire", px, ex)?;
    let wait = wait::parse_wait("lock.acquire", single(wait))?;
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
    lease
        .map(|ms| time::from_now("lock.acquire", ms))
        .transpose()
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
    let lease = ttl_ms("lock.extend", single(px), single(ex))?.ok_or(errors::SYNTAX.error())?;
    let extended = {
        let mut lock = Key::write(ctx, *name);
        let held = lock.string()? == Some(token);
        let at = match (held, add.is_some()) {
            (false, _) => None,
            (true, true) => match lock.expire_at() {
                Some(end) => Some(time::after("lock.extend", end, lease)?),
                None => None,
            },
            (true, false) => Some(time::from_now("lock.extend", lease)?),
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

/// The lock, and the fence counter after `FENCE` (searched from the options).
const ACQUIRE_KEYS: &[KeySpec] = &[
    UPDATES_FIRST,
    KeySpec {
        flags: UPDATED,
        begin: BeginSearch::Keyword {
            keyword: c"FENCE",
            from: 3,
        },
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

pub static WAITS_STARTED: Stat = Stat::counter(c"lock_waits");
pub static WAITS_TIMED_OUT: Stat = Stat::counter(c"lock_waits_timed_out");
pub static HANDOFFS_RELEASE: Stat = Stat::counter(c"lock_handoffs_release");
pub static HANDOFFS_DELETE: Stat = Stat::counter(c"lock_handoffs_delete");
pub static HANDOFFS_EXPIRY: Stat = Stat::counter(c"lock_handoffs_expiry");

pub static FAMILY: FamilySpec = FamilySpec {
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
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: c"lock.acquire",
        entry: entry!(acquire, ACQUIRE_KEYS),
        flags: c"write deny-oom blocking",
        acl_categories: c"write slow blocking",
        arity: -3,
        summary: c"Takes a lock for a token (with a lease, an optional first-come-first-served wait and a fencing token); nil if another token holds it",
        complexity: c"O(1), plus O(N) over the N clients waiting for this lock when it is handed on",
        since: c"0.1.0",
        args: &[
            ArgSpec::key(c"key", 0),
            ArgSpec::required(c"token", ArgType::String),
            ArgSpec::one_of(c"lease", LEASE).optional(),
            ArgSpec::option(c"wait", c"WAIT", ArgType::Integer),
            ArgSpec::option(c"fencekey", c"FENCE", ArgType::Key(1)),
            ArgSpec::flag(c"nx", c"NX"),
        ],
    },
    CommandSpec {
        name: c"lock.releaseif",
        entry: entry!(release_if, RELEASE_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: 3,
        summary: c"Releases a lock only if the token holds it; the oldest waiter gets it next",
        complexity: c"O(1), plus O(N) over the N clients waiting for this lock",
        since: c"0.1.0",
        args: &[
            ArgSpec::key(c"key", 0),
            ArgSpec::required(c"token", ArgType::String),
        ],
    },
    CommandSpec {
        name: c"lock.extend",
        entry: entry!(extend, EXTEND_KEY),
        flags: c"write fast",
        acl_categories: c"write fast",
        arity: -5,
        summary: c"Sets a held lock's lease to end the given time from now (with ADD, after its current end), only if the token holds it",
        complexity: c"O(1)",
        since: c"0.1.0",
        args: &[
            ArgSpec::key(c"key", 0),
            ArgSpec::required(c"token", ArgType::String),
            ArgSpec::one_of(c"lease", LEASE),
            ArgSpec::flag(c"add", c"ADD"),
        ],
    },
];
