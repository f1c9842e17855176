//! First-come-first-served waits for something a key holds (a lock, a
//! resource of a pool, an ID of an ID pool), shared by every family that
//! offers `… WAIT ms`.
//!
//! A client that finds nothing to take is parked in its key's queue, in
//! arrival order. Whenever the key may have something to hand out, [`serve`]
//! offers it to the oldest waiter whose wait has not run out (the family's
//! [`Family::offer`] takes it as that waiter's command would, and replicates
//! it as its effect), and answers that waiter:
//! - freed by one of the family's commands (release, add, grow): the command
//!   calls [`serve_waiters`] itself, inside its own atomic unit;
//! - deleted, renamed, moved, restored, evicted or expired by anything else
//!   (keyspace events): in the same atomic unit as that command where the
//!   server has post-notification jobs (Redis 7.2+, Valkey), else on the next
//!   event-loop turn (a timer due now);
//! - a lease ends: a timer set to the moment the family named
//!   ([`Offer::Busy`]), so the hand-off does not wait for a client to touch
//!   the key;
//! - `FLUSHDB`/`FLUSHALL`/`SWAPDB`: a timer due now.
//!
//! The same timer ends waits whose time ran out (null reply). Waits are kept
//! here, not by the server's blocking timeout, so a wait is either granted or
//! timed out, never both. Only a primary serves: a server that turns replica
//! answers its waiters nil. Disconnects and `CLIENT UNBLOCK` leave the queue
//! (see `block.rs`).

use std::collections::{BTreeMap, VecDeque};
use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use redis_module::{raw, Context, RedisError, RedisResult, RedisValue};

use super::args::{string_bytes, Arg};
use super::block::{after_notification, may_block, Parked, ParkedId, Timer, Waitlist};
use super::key::OwnedString;
use super::panic::guard;
use super::time::now_ms;
use crate::api;

/// Which key: the database and the key's name.
pub type KeyId = (c_int, Vec<u8>);

/// What may have made something free (counted in `INFO recipes`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cause {
    /// One of the family's own commands (release, add, grow).
    Release,
    /// Anything else changed the key (delete, rename, restore, flush).
    Delete,
    /// A lease ran out.
    Expiry,
}

/// What a family answers when offered the key for its oldest waiter.
pub enum Offer {
    /// Taken for the waiter (or refused with an error): its reply.
    Granted(RedisResult),
    /// Nothing to take; `Some(t)`: look again at server time `t` (ms), when
    /// a lease ends.
    Busy(Option<i64>),
}

impl Offer {
    /// The offer a family's take makes: `Ok(Ok(reply))` taken, `Ok(Err(next))`
    /// nothing to take until `next`, `Err` refused.
    pub fn of(taken: Result<Result<RedisValue, Option<i64>>, RedisError>) -> Offer {
        match taken {
            Ok(Ok(reply)) => Offer::Granted(Ok(reply)),
            Ok(Err(next)) => Offer::Busy(next),
            Err(error) => Offer::Granted(Err(error)),
        }
    }
}

/// What happened to a wait, for the family's counters.
pub enum Event {
    Parked,
    TimedOut,
    Served(Cause),
}

/// A family whose commands may wait.
pub trait Family: 'static {
    /// What a waiter asked for, carried until its turn.
    type Request: Send + 'static;
    /// `INFO recipes` name of the count of keys with waiters.
    const KEYS_WAITED_ON: &'static CStr;
    fn waits() -> &'static Waits<Self::Request>;
    /// Takes what the key holds for `request`, as the waiter's command would
    /// have when it arrived (the caller has selected the key's database), and
    /// replicates it as an effect.
    fn offer(ctx: &Context, key: Arg, request: &Self::Request) -> Offer;
    fn count(event: Event);
}

struct Waiter<R> {
    client: Parked,
    request: R,
    /// Server time (ms) at which the wait runs out.
    deadline: i64,
}

struct Queue<R> {
    waiters: VecDeque<Waiter<R>>,
    /// The pending timer and the time it is due.
    timer: Option<(Timer, i64)>,
    /// A check is already due (job or timer); more events add none.
    scheduled: bool,
    /// What the due check answers (the event that scheduled it).
    cause: Option<Cause>,
}

impl<R> Default for Queue<R> {
    fn default() -> Self {
        Self {
            waiters: VecDeque::new(),
            timer: None,
            scheduled: false,
            cause: None,
        }
    }
}

/// A family's queues, one per key with waiters.
pub struct Waits<R> {
    queues: Mutex<BTreeMap<KeyId, Queue<R>>>,
    /// How many queues exist; lets the hot paths skip the map when nobody
    /// waits.
    count: AtomicUsize,
}

impl<R> Waits<R> {
    pub const fn new() -> Self {
        Self {
            queues: Mutex::new(BTreeMap::new()),
            count: AtomicUsize::new(0),
        }
    }

    /// The queues. Never held across a call that may reach back into this
    /// module (key writes fire keyspace events, finishing a wait may run
    /// callbacks).
    fn lock(&self) -> MutexGuard<'_, BTreeMap<KeyId, Queue<R>>> {
        self.queues
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn idle(&self) -> bool {
        self.count.load(Ordering::Relaxed) == 0
    }

    fn remove(&self, queues: &mut BTreeMap<KeyId, Queue<R>>, id: &KeyId) -> Option<Queue<R>> {
        let queue = queues.remove(id);
        if queue.is_some() {
            self.count.fetch_sub(1, Ordering::Relaxed);
        }
        queue
    }
}

/// The queues' side of parked clients, per family.
struct Forget<F>(PhantomData<F>);

impl<F: Family> Waitlist for Forget<F> {
    fn forget(client: ParkedId) -> bool {
        // An empty queue left here is removed when its timer fires: every
        // waiter has a deadline, so a queue with waiters always has a timer.
        F::waits().lock().values_mut().any(|queue| {
            let at = queue.waiters.iter().position(|w| w.client.id() == client);
            at.and_then(|at| queue.waiters.remove(at)).is_some()
        })
    }
}

pub fn key_id(ctx: &Context, name: &[u8]) -> KeyId {
    (selected_db(ctx), name.to_vec())
}

fn selected_db(ctx: &Context) -> c_int {
    unsafe { api!(RedisModule_GetSelectedDb)(ctx.get_raw()) }
}

/// A `WAIT ms` option: a positive number of milliseconds that, added to
/// now, stays representable.
pub fn parse_wait(command: &str, arg: Option<Arg>) -> Result<Option<i64>, RedisError> {
    let Some(ms) = arg else { return Ok(None) };
    match ms.to_i64()? {
        ms if ms > 0 && now_ms().checked_add(ms).is_some() => Ok(Some(ms)),
        _ => Err(RedisError::String(format!(
            "ERR invalid WAIT time in '{command}' command"
        ))),
    }
}

/// Parks the running command's client in `name`'s queue for up to `wait` ms
/// (the caller checked it is positive and representable) and answers
/// `NoReply`; nil when the client may not block (MULTI, scripts). `next`:
/// when something may free up by itself (a lease's end), as in
/// [`Offer::Busy`]. The caller has closed its keys.
pub fn park<F: Family>(
    ctx: &Context,
    name: &[u8],
    request: F::Request,
    wait: i64,
    next: Option<i64>,
) -> RedisValue {
    if !may_block(ctx) {
        return RedisValue::Null;
    }
    let Some(client) = Parked::park::<Forget<F>>(ctx) else {
        return RedisValue::Null;
    };
    WATCHING.store(true, Ordering::Relaxed);
    subscribe_once(ctx);
    let id = key_id(ctx, name);
    let waiter = Waiter {
        client,
        request,
        deadline: now_ms().saturating_add(wait),
    };
    {
        let waits = F::waits();
        let mut queues = waits.lock();
        let queue = queues.entry(id.clone()).or_insert_with(|| {
            waits.count.fetch_add(1, Ordering::Relaxed);
            Queue::default()
        });
        queue.waiters.push_back(waiter);
    }
    F::count(Event::Parked);
    settle::<F>(ctx, &id, next);
    RedisValue::NoReply
}

/// Serves `name`'s queue if it has one (cheap when nobody waits anywhere in
/// the family). `cause`: what may have freed something.
pub fn serve_waiters<F: Family>(ctx: &Context, name: &[u8], cause: Cause) {
    let waits = F::waits();
    if waits.idle() {
        return;
    }
    let id = key_id(ctx, name);
    if waits.lock().contains_key(&id) {
        serve::<F>(ctx, &id, cause);
    }
}

/// How many clients wait on `name` now.
pub fn waiting_on<F: Family>(ctx: &Context, name: &[u8]) -> usize {
    let waits = F::waits();
    if waits.idle() {
        return 0;
    }
    waits
        .lock()
        .get(&key_id(ctx, name))
        .map_or(0, |queue| queue.waiters.len())
}

fn is_primary(ctx: &Context) -> bool {
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.get_raw()) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_MASTER != 0
        && flags & raw::REDISMODULE_CTX_FLAGS_LOADING == 0
}

/// Ends the waits that ran out, then hands what the key holds to the oldest
/// waiters left while the family grants; finally sets the queue's timer (or
/// drops the queue).
fn serve<F: Family>(ctx: &Context, id: &KeyId, cause: Cause) {
    let waits = F::waits();
    if !is_primary(ctx) {
        // Only a primary decides; a server that became a replica lets go.
        let queue = waits.remove(&mut waits.lock(), id);
        if let Some(mut queue) = queue {
            if let Some((timer, _)) = queue.timer.take() {
                timer.stop::<KeyId>(ctx);
            }
            for waiter in queue.waiters {
                waiter.client.finish(Ok(RedisValue::Null));
            }
        }
        return;
    }
    if selected_db(ctx) != id.0 {
        // Only timers and jobs get here with another database selected; a
        // command serves its own database's keys.
        unsafe { api!(RedisModule_SelectDb)(ctx.get_raw(), id.0) };
    }
    // This serves whatever check was due: a later event must schedule anew
    // (the timer of a pending check may be replaced below).
    if let Some(queue) = waits.lock().get_mut(id) {
        queue.scheduled = false;
        queue.cause = None;
    }
    let name = OwnedString::from_bytes(ctx, &id.1);
    loop {
        let now = now_ms();
        let (timed_out, next) = {
            let mut queues = waits.lock();
            let Some(queue) = queues.get_mut(id) else {
                return;
            };
            let (gone, kept): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut queue.waiters)
                .into_iter()
                .partition(|waiter| waiter.deadline <= now);
            queue.waiters = kept;
            (gone, queue.waiters.pop_front())
        };
        for waiter in timed_out {
            F::count(Event::TimedOut);
            waiter.client.finish(Ok(RedisValue::Null));
        }
        let Some(waiter) = next else {
            settle::<F>(ctx, id, None);
            return;
        };
        match F::offer(ctx, name.as_arg(), &waiter.request) {
            Offer::Granted(reply) => {
                if reply.is_ok() {
                    F::count(Event::Served(cause));
                }
                // A refused grant answers that waiter with the error; what
                // the key holds stays for the next one.
                waiter.client.finish(reply);
            }
            Offer::Busy(next) => {
                if let Some(queue) = waits.lock().get_mut(id) {
                    queue.waiters.push_front(waiter);
                } else {
                    waiter.client.finish(Ok(RedisValue::Null));
                }
                settle::<F>(ctx, id, next);
                return;
            }
        }
    }
}

/// Points the queue's timer at its next moment — `next` or the first
/// deadline, whichever is sooner — or removes an empty queue.
fn settle<F: Family>(ctx: &Context, id: &KeyId, next: Option<i64>) {
    let waits = F::waits();
    let mut stale = None;
    {
        let mut queues = waits.lock();
        let Some(queue) = queues.get_mut(id) else {
            return;
        };
        if queue.waiters.is_empty() {
            stale = waits
                .remove(&mut queues, id)
                .and_then(|mut queue| queue.timer.take());
        } else if queue.scheduled {
            // A check is due (an event during this one, e.g. a grant's own
            // `expire`): it settles the timer when it runs. Replacing its
            // timer here would lose it, and every later event with it.
        } else {
            let first_deadline = queue.waiters.iter().map(|w| w.deadline).min();
            let due = [next, first_deadline]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(i64::MAX);
            if !matches!(queue.timer, Some((_, at)) if at == due) {
                stale = queue.timer.take();
                let delay = due.saturating_sub(now_ms());
                queue.timer = Some((Timer::start(ctx, delay, on_timer::<F>, id.clone()), due));
            }
        }
    }
    if let Some((timer, _)) = stale {
        timer.stop::<KeyId>(ctx);
    }
}

/// A queue's timer: a lease's end, a wait's deadline, or (servers without
/// post-notification jobs) a scheduled check.
fn on_timer<F: Family>(ctx: &Context, id: KeyId) {
    let mut cause = None;
    if let Some(queue) = F::waits().lock().get_mut(&id) {
        queue.timer = None;
        queue.scheduled = false;
        cause = queue.cause.take();
    }
    serve::<F>(ctx, &id, cause.unwrap_or(Cause::Expiry));
}

fn on_job<F: Family>(ctx: &Context, id: &KeyId) {
    let mut cause = None;
    if let Some(queue) = F::waits().lock().get_mut(id) {
        queue.scheduled = false;
        cause = queue.cause.take();
    }
    serve::<F>(ctx, id, cause.unwrap_or(Cause::Delete));
}

/// A key with waiters may have something to hand out: serve it as soon as
/// writing is safe.
fn schedule<F: Family>(ctx: &Context, id: KeyId, cause: Cause) {
    let waits = F::waits();
    {
        let mut queues = waits.lock();
        match queues.get_mut(&id) {
            Some(queue) if !queue.scheduled => {
                queue.scheduled = true;
                queue.cause = Some(cause);
            }
            _ => return,
        }
    }
    if after_notification(ctx, on_job::<F>, id.clone()) {
        return;
    }
    let stale = {
        let mut queues = waits.lock();
        let Some(queue) = queues.get_mut(&id) else {
            return;
        };
        let stale = queue.timer.take();
        queue.timer = Some((Timer::start(ctx, 0, on_timer::<F>, id.clone()), now_ms()));
        stale
    };
    if let Some((timer, _)) = stale {
        timer.stop::<KeyId>(ctx);
    }
}

/// A family as the shared event handlers see it.
pub struct Watcher {
    key_changed: fn(&Context, &[u8], Cause),
    all_changed: fn(&Context),
    figures: fn() -> (&'static CStr, usize, usize),
}

/// The watcher of family `F`, for [`init`].
pub const fn watcher<F: Family>() -> Watcher {
    Watcher {
        key_changed: key_changed::<F>,
        all_changed: all_changed::<F>,
        figures: figures::<F>,
    }
}

fn key_changed<F: Family>(ctx: &Context, name: &[u8], cause: Cause) {
    if F::waits().idle() {
        return;
    }
    let id = key_id(ctx, name);
    if F::waits().lock().contains_key(&id) {
        schedule::<F>(ctx, id, cause);
    }
}

fn all_changed<F: Family>(ctx: &Context) {
    let ids: Vec<KeyId> = F::waits().lock().keys().cloned().collect();
    for id in ids {
        schedule::<F>(ctx, id, Cause::Delete);
    }
}

fn figures<F: Family>() -> (&'static CStr, usize, usize) {
    let queues = F::waits().lock();
    let clients = queues.values().map(|queue| queue.waiters.len()).sum();
    (F::KEYS_WAITED_ON, queues.len(), clients)
}

static WATCHERS: OnceLock<&'static [Watcher]> = OnceLock::new();
/// Some client has waited: keyspace events are watched from then on.
static WATCHING: AtomicBool = AtomicBool::new(false);
static SUBSCRIBED: AtomicBool = AtomicBool::new(false);

fn watchers() -> &'static [Watcher] {
    WATCHERS.get().copied().unwrap_or_default()
}

/// Keys with waiters per family, then the clients waiting in all, for
/// `INFO recipes`.
pub fn figures_all() -> Vec<(&'static CStr, i64)> {
    let mut clients = 0;
    let mut figures = Vec::new();
    for watcher in watchers() {
        let (name, keys, waiting) = (watcher.figures)();
        figures.push((name, keys as i64));
        clients += waiting;
    }
    figures.push((c"clients_waiting", clients as i64));
    figures
}

/// Keyspace events are watched only once some client has waited, so a
/// server that never uses WAIT pays nothing for them.
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

/// A key was deleted, expired, evicted, renamed, moved, restored or had its
/// TTL changed: if some family has waiters on it, check it soon.
extern "C" fn on_keyspace_event(
    ctx: *mut raw::RedisModuleCtx,
    _class: c_int,
    event: *const c_char,
    key: *mut raw::RedisModuleString,
) -> c_int {
    guard((), || {
        if key.is_null() {
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
        let name = unsafe { string_bytes(key) };
        for watcher in watchers() {
            (watcher.key_changed)(&ctx, name, cause);
        }
    });
    raw::REDISMODULE_OK as c_int
}

/// `FLUSHDB`/`FLUSHALL` and `SWAPDB` change keys without per-key events:
/// check every key that has waiters.
extern "C" fn on_databases_changed(
    ctx: *mut raw::RedisModuleCtx,
    event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    guard((), || {
        let flush_started = event.id == raw::REDISMODULE_EVENT_FLUSHDB
            && subevent != raw::REDISMODULE_SUBEVENT_FLUSHDB_END;
        if flush_started || !WATCHING.load(Ordering::Relaxed) {
            return;
        }
        let ctx = Context::new(ctx);
        for watcher in watchers() {
            (watcher.all_changed)(&ctx);
        }
    });
}

/// Called once at load with every family that waits.
pub fn init(ctx: &Context, families: &'static [Watcher]) {
    let _ = WATCHERS.set(families);
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
