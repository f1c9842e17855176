//! LOCK: owner-token locks with a lease, a first-come-first-served wait,
//! extension and fencing tokens.
//!
//! A lock is a plain string key whose value is the holder's token and whose
//! TTL is the lease — what `SET key token NX PX ms` makes — so it works with
//! existing clients (redis-py's `Lock`, Valkey's `DELIFEQ`). A fencing token
//! is a counter key (what `INCR` makes) incremented on every acquisition.
//!
//! Waiting: a client that `LOCK.ACQUIRE … WAIT ms` finds the lock held is
//! parked in that lock's queue, in arrival order. Whenever the lock may have
//! become free, [`serve`] hands it to the oldest waiter whose wait has not run
//! out, as the acquisition it is, and answers that waiter:
//! - released by `LOCK.RELEASEIF`: at once, inside the release;
//! - deleted, renamed, moved, evicted or expired by anything else (keyspace
//!   events): in the same atomic unit as that command where the server has
//!   post-notification jobs (Redis 7.2+, Valkey), else on the next event-loop
//!   turn (a timer due now);
//! - its TTL runs out: a timer set to the expiry time, so the hand-off does
//!   not wait for the server's expire cycle;
//! - `FLUSHDB`/`FLUSHALL`: a timer due now.
//!
//! The same timer ends waits whose time ran out (null reply). Waits are kept
//! here, not by the server's blocking timeout, so a wait is either granted or
//! timed out, never both.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use redis_module::{raw, Context, RedisError, RedisResult, RedisValue};

use crate::api;
use crate::common::args::{parse_options, single, string_bytes, Arg, OptSpec, SYNTAX_ERROR};
use crate::common::block::{after_notification, may_block, Parked, ParkedId, Timer, Waitlist};
use crate::common::command::{
    ArgSpec, ArgType, BeginSearch, CommandSpec, KeySpec, UPDATED, UPDATES_FIRST,
};
use crate::common::key::{Key, Kind, OwnedString};
use crate::common::panic::guard;
use crate::common::replicate::{self, Word};
use crate::common::stats;
use crate::common::time::{now_ms, ttl_ms};
use crate::entry;

const PX: OptSpec = OptSpec::valued("PX");
const EX: OptSpec = OptSpec::valued("EX");
const WAIT: OptSpec = OptSpec::valued("WAIT");
const FENCE: OptSpec = OptSpec::valued("FENCE");

const FENCE_OVERFLOW: RedisError = RedisError::Str("ERR increment or decrement would overflow");

/// A token as the commands take it: any bytes but none.
fn token<'a>(arg: &Arg<'a>) -> Result<&'a [u8], RedisError> {
    match arg.as_bytes() {
        [] => Err(RedisError::Str("ERR token must not be empty")),
        token => Ok(token),
    }
}

/// Which lock: the database and key name.
type LockId = (c_int, Vec<u8>);

fn lock_id(ctx: &Context, name: &[u8]) -> LockId {
    (selected_db(ctx), name.to_vec())
}

fn selected_db(ctx: &Context) -> c_int {
    unsafe { api!(RedisModule_GetSelectedDb)(ctx.get_raw()) }
}

/// What a grant must do; a waiter carries it until its turn.
struct Request {
    token: Vec<u8>,
    /// The lease in milliseconds, counted from the grant; `None` = no TTL.
    lease: Option<i64>,
    fence: Option<Vec<u8>>,
}

struct Waiter {
    client: Parked,
    request: Request,
    /// Server time (ms) at which the wait runs out.
    deadline: i64,
}

#[derive(Default)]
struct Queue {
    waiters: VecDeque<Waiter>,
    /// The pending timer and the time it is due.
    timer: Option<(Timer, i64)>,
    /// A hand-off check is already due (job or timer); more events add none.
    scheduled: bool,
    /// What the due check answers (the event that scheduled it).
    cause: Option<Cause>,
}

/// What freed a lock that is handed to a waiter (counted in `INFO recipes`).
#[derive(Clone, Copy)]
enum Cause {
    Release,
    Delete,
    Expiry,
}

impl Cause {
    fn count(self) {
        match self {
            Cause::Release => stats::LOCK_HANDOFFS_RELEASE.incr(),
            Cause::Delete => stats::LOCK_HANDOFFS_DELETE.incr(),
            Cause::Expiry => stats::LOCK_HANDOFFS_EXPIRY.incr(),
        }
    }
}

/// Locks with waiters and clients waiting, for `INFO recipes`.
pub fn waiting() -> [(&'static CStr, i64); 2] {
    let queues = queues();
    let clients: usize = queues.values().map(|queue| queue.waiters.len()).sum();
    [
        (c"locks_with_waiters", queues.len() as i64),
        (c"clients_waiting", clients as i64),
    ]
}

static QUEUES: Mutex<BTreeMap<LockId, Queue>> = Mutex::new(BTreeMap::new());
/// How many queues exist; lets the hot paths skip the map when nobody waits.
static QUEUE_COUNT: AtomicUsize = AtomicUsize::new(0);
static SUBSCRIBED: AtomicBool = AtomicBool::new(false);

/// The queues. Never held across a call that may reach back into this module
/// (key writes fire keyspace events, finishing a wait may run callbacks).
fn queues() -> MutexGuard<'static, BTreeMap<LockId, Queue>> {
    QUEUES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn remove_queue(queues: &mut BTreeMap<LockId, Queue>, id: &LockId) -> Option<Queue> {
    let queue = queues.remove(id);
    if queue.is_some() {
        QUEUE_COUNT.fetch_sub(1, Ordering::Relaxed);
    }
    queue
}

struct Waiters;

impl Waitlist for Waiters {
    fn forget(client: ParkedId) -> bool {
        // An empty queue left here is removed when its timer fires: every
        // waiter has a deadline, so a queue with waiters always has a timer.
        queues().values_mut().any(|queue| {
            let at = queue.waiters.iter().position(|w| w.client.id() == client);
            at.and_then(|at| queue.waiters.remove(at)).is_some()
        })
    }
}

/// `LOCK.ACQUIRE key token [PX ms | EX s] [WAIT ms] [FENCE fencekey]`
fn acquire<'a>(ctx: &Context, args: &'a [Arg<'a>]) -> RedisResult {
    let [_, name, token_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let [px, ex, wait, fence] = parse_options(options, &[PX, EX, WAIT, FENCE])?;
    if px.is_some() && ex.is_some() {
        return Err(SYNTAX_ERROR);
    }
    let lease = ttl_ms("lock.acquire", single(px), single(ex))?;
    let wait = match single(wait) {
        None => None,
        Some(ms) => match ms.to_i64()? {
            ms if ms > 0 && now_ms().checked_add(ms).is_some() => Some(ms),
            _ => {
                return Err(RedisError::Str(
                    "ERR invalid WAIT time in 'lock.acquire' command",
                ))
            }
        },
    };
    let fence = single(fence);
    if fence.is_some_and(|fence| fence.as_bytes() == name.as_bytes()) {
        return Err(RedisError::Str(
            "ERR FENCE key must differ from the lock key",
        ));
    }

    // A lock that came free while clients wait belongs to the oldest of them
    // (it freed by expiry: a delete would have scheduled a check already).
    serve_waiters(ctx, name.as_bytes(), Cause::Expiry);

    let lock = Key::write(ctx, *name);
    let fence_key = fence.map(|fence| Key::write(ctx, fence));
    let holder = match lock.string()? {
        None => Holder::Nobody,
        Some(held) if held == token => Holder::Caller,
        Some(_) => Holder::Other,
    };
    // Checked whatever the outcome, so a bad FENCE key is always an error.
    if let Some(fence_key) = &fence_key {
        fence_key.integer()?;
    }
    match holder {
        Holder::Nobody => grant(ctx, &lock, fence_key.as_ref(), token, lease, false),
        Holder::Caller => grant(ctx, &lock, fence_key.as_ref(), token, lease, true),
        Holder::Other => {
            let Some(wait) = wait.filter(|_| may_block(ctx)) else {
                return Ok(RedisValue::Null);
            };
            let Some(client) = Parked::park::<Waiters>(ctx) else {
                return Ok(RedisValue::Null);
            };
            let waiter = Waiter {
                client,
                request: Request {
                    token: token.to_vec(),
                    lease,
                    fence: fence.map(|fence| fence.as_bytes().to_vec()),
                },
                deadline: now_ms().saturating_add(wait),
            };
            let expire_at = lock.expire_at();
            drop(fence_key);
            drop(lock);
            enqueue(ctx, lock_id(ctx, name.as_bytes()), waiter, expire_at);
            Ok(RedisValue::NoReply)
        }
    }
}

enum Holder {
    Nobody,
    Caller,
    Other,
}

/// Makes `token` the holder, with a lease counted from now and, with a fence
/// key, the next fencing token (`again`: the holder re-acquiring keeps its
/// token). Everything is checked before anything is written. Replicated as
/// `SET key token [PXAT t]` and `SET fencekey n KEEPTTL`.
fn grant(
    ctx: &Context,
    lock: &Key,
    fence: Option<&Key>,
    token: &[u8],
    lease: Option<i64>,
    again: bool,
) -> RedisResult {
    let fencing = match fence {
        None => None,
        Some(fence) => match (again, fence.integer()?) {
            (true, Some(current)) => Some((current, false)),
            (_, current) => Some((
                current.unwrap_or(0).checked_add(1).ok_or(FENCE_OVERFLOW)?,
                true,
            )),
        },
    };
    // A lease ends at a time of this server's clock: replicated as its
    // effect, with that absolute time.
    let expire_at = lease.map(|ms| now_ms().saturating_add(ms));
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
fn release_if<'a>(ctx: &Context, args: &'a [Arg<'a>]) -> RedisResult {
    let [_, name, token_arg] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let released = {
        let lock = Key::write(ctx, *name);
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
    serve_waiters(ctx, name.as_bytes(), Cause::Release);
    Ok(RedisValue::Integer(i64::from(released)))
}

/// `LOCK.EXTEND key token PX ms | EX s` → 1 when held by `token` (lease now
/// ends `ms` from now), else 0.
fn extend<'a>(ctx: &Context, args: &'a [Arg<'a>]) -> RedisResult {
    let [_, name, token_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let [px, ex] = parse_options(options, &[PX, EX])?;
    if px.is_some() == ex.is_some() {
        return Err(SYNTAX_ERROR);
    }
    let lease = ttl_ms("lock.extend", single(px), single(ex))?.ok_or(SYNTAX_ERROR)?;
    let extended = {
        let lock = Key::write(ctx, *name);
        let held = lock.string()? == Some(token);
        if held {
            let at = now_ms().saturating_add(lease);
            lock.set_expire_at(Some(at));
            replicate::effect(ctx, c"PEXPIREAT", &[Word::Arg(*name), Word::Int(at)]);
            lock.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"expire");
        }
        held
    };
    // Waiters' timer follows the new expiry.
    serve_waiters(ctx, name.as_bytes(), Cause::Expiry);
    Ok(RedisValue::Integer(i64::from(extended)))
}

/// Serves the lock's queue if it has one (cheap when nobody waits anywhere).
fn serve_waiters(ctx: &Context, name: &[u8], cause: Cause) {
    if QUEUE_COUNT.load(Ordering::Relaxed) == 0 {
        return;
    }
    let id = lock_id(ctx, name);
    if queues().contains_key(&id) {
        serve(ctx, &id, cause);
    }
}

fn enqueue(ctx: &Context, id: LockId, waiter: Waiter, expire_at: Option<i64>) {
    subscribe_once(ctx);
    {
        let mut queues = queues();
        let queue = queues.entry(id.clone()).or_insert_with(|| {
            QUEUE_COUNT.fetch_add(1, Ordering::Relaxed);
            Queue::default()
        });
        queue.waiters.push_back(waiter);
    }
    stats::LOCK_WAITS.incr();
    settle(ctx, &id, expire_at);
}

fn is_primary(ctx: &Context) -> bool {
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.get_raw()) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_MASTER != 0
        && flags & raw::REDISMODULE_CTX_FLAGS_LOADING == 0
}

/// Ends the waits that ran out, then, while the lock is free, hands it to the
/// oldest waiter left; finally sets the queue's timer (or drops the queue).
/// `cause` is what freed the lock, if it is free.
fn serve(ctx: &Context, id: &LockId, cause: Cause) {
    if !is_primary(ctx) {
        // Only a primary decides; a server that became a replica lets go.
        let queue = remove_queue(&mut queues(), id);
        if let Some(mut queue) = queue {
            if let Some((timer, _)) = queue.timer.take() {
                timer.stop::<LockId>(ctx);
            }
            for waiter in queue.waiters {
                waiter.client.finish(Ok(RedisValue::Null));
            }
        }
        return;
    }
    let db = id.0;
    if selected_db(ctx) != db {
        // Only timers and jobs get here with another database selected; a
        // command serves its own database's locks.
        unsafe { api!(RedisModule_SelectDb)(ctx.get_raw(), db) };
    }
    // This serves whatever check was due: a later event must schedule anew
    // (the timer of a pending check may be replaced below).
    if let Some(queue) = queues().get_mut(id) {
        queue.scheduled = false;
        queue.cause = None;
    }
    let name = OwnedString::from_bytes(ctx, &id.1);
    loop {
        let now = now_ms();
        let timed_out: VecDeque<Waiter> = match queues().get_mut(id) {
            Some(queue) => {
                let (gone, kept) = std::mem::take(&mut queue.waiters)
                    .into_iter()
                    .partition(|waiter| waiter.deadline <= now);
                queue.waiters = kept;
                gone
            }
            None => return,
        };
        for waiter in timed_out {
            stats::LOCK_WAITS_TIMED_OUT.incr();
            waiter.client.finish(Ok(RedisValue::Null));
        }
        let lock = Key::write(ctx, name.as_arg());
        if lock.kind() != Kind::Empty {
            let expire_at = lock.expire_at();
            drop(lock);
            settle(ctx, id, expire_at);
            return;
        }
        let next = queues()
            .get_mut(id)
            .and_then(|queue| queue.waiters.pop_front());
        let Some(waiter) = next else {
            drop(lock);
            settle(ctx, id, None);
            return;
        };
        let request = &waiter.request;
        let fence_name = request
            .fence
            .as_ref()
            .map(|f| OwnedString::from_bytes(ctx, f));
        let fence = fence_name.as_ref().map(|f| Key::write(ctx, f.as_arg()));
        let reply = grant(
            ctx,
            &lock,
            fence.as_ref(),
            &request.token,
            request.lease,
            false,
        );
        drop(fence);
        drop(lock);
        if reply.is_ok() {
            cause.count();
        }
        // A refused grant (the fence key changed type meanwhile) answers that
        // waiter with the error; the lock stays free for the next one.
        waiter.client.finish(reply);
    }
}

/// Points the queue's timer at its next moment — the lock's expiry or the
/// first deadline, whichever is sooner — or removes an empty queue.
fn settle(ctx: &Context, id: &LockId, expire_at: Option<i64>) {
    let mut stale = None;
    {
        let mut queues = queues();
        let Some(queue) = queues.get_mut(id) else {
            return;
        };
        if queue.waiters.is_empty() {
            stale = remove_queue(&mut queues, id).and_then(|mut queue| queue.timer.take());
        } else if queue.scheduled {
            // A check is due (an event during this one, e.g. the grant's own
            // `expire`): it settles the timer when it runs. Replacing its
            // timer here would lose it, and every later event with it.
        } else {
            // A key expires once its time has passed, so look 1 ms after.
            let first_deadline = queue.waiters.iter().map(|w| w.deadline).min();
            let due = [expire_at.map(|at| at.saturating_add(1)), first_deadline]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(i64::MAX);
            if !matches!(queue.timer, Some((_, at)) if at == due) {
                stale = queue.timer.take();
                let delay = due.saturating_sub(now_ms());
                queue.timer = Some((Timer::start(ctx, delay, on_timer, id.clone()), due));
            }
        }
    }
    if let Some((timer, _)) = stale {
        timer.stop::<LockId>(ctx);
    }
}

/// A queue's timer: the lock's expiry, a wait's deadline, or (servers
/// without post-notification jobs) a scheduled check.
fn on_timer(ctx: &Context, id: LockId) {
    let mut cause = None;
    if let Some(queue) = queues().get_mut(&id) {
        queue.timer = None;
        queue.scheduled = false;
        cause = queue.cause.take();
    }
    serve(ctx, &id, cause.unwrap_or(Cause::Expiry));
}

fn on_job(ctx: &Context, id: &LockId) {
    let mut cause = None;
    if let Some(queue) = queues().get_mut(id) {
        queue.scheduled = false;
        cause = queue.cause.take();
    }
    serve(ctx, id, cause.unwrap_or(Cause::Delete));
}

/// A lock that has waiters may have come free: serve it as soon as writing
/// is safe.
fn schedule(ctx: &Context, id: LockId, cause: Cause) {
    {
        let mut queues = queues();
        match queues.get_mut(&id) {
            Some(queue) if !queue.scheduled => {
                queue.scheduled = true;
                queue.cause = Some(cause);
            }
            _ => return,
        }
    }
    if after_notification(ctx, on_job, id.clone()) {
        return;
    }
    let stale = {
        let mut queues = queues();
        let Some(queue) = queues.get_mut(&id) else {
            return;
        };
        let stale = queue.timer.take();
        queue.timer = Some((Timer::start(ctx, 0, on_timer, id.clone()), now_ms()));
        stale
    };
    if let Some((timer, _)) = stale {
        timer.stop::<LockId>(ctx);
    }
}

/// Keyspace events are watched only once some client has waited, so a server
/// that never uses WAIT pays nothing for them.
fn subscribe_once(ctx: &Context) {
    if SUBSCRIBED.swap(true, Ordering::Relaxed) {
        return;
    }
    let classes = raw::REDISMODULE_NOTIFY_GENERIC
        | raw::REDISMODULE_NOTIFY_EXPIRED
        | raw::REDISMODULE_NOTIFY_EVICTED;
    unsafe {
        api!(RedisModule_SubscribeToKeyspaceEvents)(
            ctx.get_raw(),
            classes as c_int,
            Some(on_keyspace_event),
        )
    };
}

/// A key was deleted, expired, evicted, renamed, moved or had its TTL
/// changed: if it is a lock with waiters, check it soon.
extern "C" fn on_keyspace_event(
    ctx: *mut raw::RedisModuleCtx,
    _class: c_int,
    event: *const c_char,
    key: *mut raw::RedisModuleString,
) -> c_int {
    guard((), || {
        if QUEUE_COUNT.load(Ordering::Relaxed) == 0 || key.is_null() {
            return;
        }
        // SAFETY: the server's event name, a C string valid during the call.
        let expired = !event.is_null() && unsafe { CStr::from_ptr(event) } == c"expired";
        let cause = if expired {
            Cause::Expiry
        } else {
            Cause::Delete
        };
        let ctx = Context::new(ctx);
        // SAFETY: the server's key name, valid during this callback.
        let id = lock_id(&ctx, unsafe { string_bytes(key) });
        if queues().contains_key(&id) {
            schedule(&ctx, id, cause);
        }
    });
    raw::REDISMODULE_OK as c_int
}

/// `FLUSHDB`/`FLUSHALL` and `SWAPDB` change keys without per-key events:
/// check every lock that has waiters.
extern "C" fn on_databases_changed(
    ctx: *mut raw::RedisModuleCtx,
    event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    guard((), || {
        let flush_started = event.id == raw::REDISMODULE_EVENT_FLUSHDB
            && subevent != raw::REDISMODULE_SUBEVENT_FLUSHDB_END;
        if flush_started || QUEUE_COUNT.load(Ordering::Relaxed) == 0 {
            return;
        }
        let ctx = Context::new(ctx);
        let ids: Vec<LockId> = queues().keys().cloned().collect();
        for id in ids {
            schedule(&ctx, id, Cause::Delete);
        }
    });
}

/// Called once at load.
pub fn init(ctx: &Context) {
    for id in [
        raw::REDISMODULE_EVENT_FLUSHDB,
        raw::REDISMODULE_EVENT_SWAPDB,
    ] {
        let event = raw::RedisModuleEvent { id, dataver: 1 };
        unsafe {
            api!(RedisModule_SubscribeToServerEvent)(
                ctx.get_raw(),
                event,
                Some(on_databases_changed),
            )
        };
    }
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
    },
];
const RELEASE_KEY: &[KeySpec] = &[KeySpec {
    flags: raw::REDISMODULE_CMD_KEY_RW
        | raw::REDISMODULE_CMD_KEY_ACCESS
        | raw::REDISMODULE_CMD_KEY_DELETE,
    begin: BeginSearch::Index(1),
}];
const EXTEND_KEY: &[KeySpec] = &[UPDATES_FIRST];

const LEASE: &[ArgSpec] = &[
    ArgSpec::tokened(c"milliseconds", c"PX", ArgType::Integer),
    ArgSpec::tokened(c"seconds", c"EX", ArgType::Integer),
];

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
        key_specs: ACQUIRE_KEYS,
        args: &[
            ArgSpec::key(c"key", 0),
            ArgSpec::required(c"token", ArgType::String),
            ArgSpec::one_of(c"lease", LEASE, true),
            ArgSpec::option(c"wait", c"WAIT", ArgType::Integer),
            ArgSpec::option(c"fencekey", c"FENCE", ArgType::Key(1)),
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
        key_specs: RELEASE_KEY,
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
        arity: 5,
        summary: c"Sets a held lock's lease to end the given time from now, only if the token holds it",
        complexity: c"O(1)",
        since: c"0.1.0",
        key_specs: EXTEND_KEY,
        args: &[
            ArgSpec::key(c"key", 0),
            ArgSpec::required(c"token", ArgType::String),
            ArgSpec::one_of(c"lease", LEASE, false),
        ],
    },
];
