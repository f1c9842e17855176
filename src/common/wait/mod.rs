//! First-come-first-served waits for something a key holds (a lock, a
//! resource of a pool, an ID of an ID pool), shared by every family that
//! offers `… WAIT ms`.
//!
//! A client that finds nothing to take is parked in its key's queue, in
//! arrival order. Whenever the key may have something to hand out, [`serve`]
//! offers it to the oldest waiter whose wait has not run out (the family's
//! [`Waitable::offer`] takes it as that waiter's command would, and replicates
//! it as its effect), and answers that waiter:
//! - freed by one of the family's commands (release, add, grow): the command
//!   calls [`serve_waiters`] itself, inside its own atomic unit;
//! - deleted, renamed, moved, restored, evicted or expired by anything else
//!   (keyspace events): in the same atomic unit as that command where the
//!   server has post-notification jobs (Redis 7.2+, Valkey), else on the next
//!   event-loop turn (a timer due now);
//! - a lease ends, or a family looks again by itself: a timer set to the
//!   moment the family named ([`Offer::Busy`]), so the hand-off does not wait
//!   for a client to touch the key (a latch, which plain string commands may
//!   open, is looked at again every few milliseconds while clients wait on
//!   it: no hook on other commands' path);
//! - `FLUSHDB`/`FLUSHALL`/`SWAPDB`: a timer due now.
//!
//! The same timer ends waits whose time ran out (null reply; a family whose
//! waiters take nothing answers from what the key holds then, see
//! [`at_deadline`]). Waits are kept here, not by the server's blocking
//! timeout, so a wait is either granted or timed out, never both.
//!
//! What the server allows decides when a queue is served ([`Writes`]), for
//! a family whose grants write ([`Waitable::WRITES`]; a latch's waiters take
//! nothing and are served anywhere, at any time): only a primary serves (a
//! server that turns replica answers its waiters nil); while it accepts no
//! writes (`CLIENT PAUSE … WRITE`, `FAILOVER`, a shutdown
//! waiting for its replicas, loading) nothing is handed out — writing then
//! would re-add keys the pause keeps from expiring, or propagate while the
//! server forbids it — and the queue is served when writes resume, waits
//! that run out meanwhile being answered nil at their deadline. In a cluster,
//! a key whose slot this node no longer serves is never handed on here: its
//! waiters are told to retry where the slot lives (`cluster.rs`).
//!
//! A waiter leaves its queue in O(log n) when it disconnects, is killed or is
//! unblocked (see `block.rs`); an emptied queue goes with its timer at once.
//! A grant whose reply never reaches its client (unblocked or gone in that
//! moment) is given back ([`Waitable::revoke`]) and goes to the next waiter.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use redis_module::{raw, Context, RedisError, RedisValue};

use super::ffi::args::{string_bytes, Arg};
use super::ffi::block::{may_block, Parked, ParkedId, Undelivered, Waitlist};
use super::ffi::cluster;
use super::ffi::context::now_ms;
use super::ffi::key::Key;
use super::ffi::panic::guard;
use super::ffi::strings::OwnedString;
use super::ffi::timer::{after_notification, Timer};
use super::stats::Stat;
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
pub enum Offer<G> {
    /// Taken for the waiter: its reply, and what was taken (given back with
    /// [`Waitable::revoke`] if the reply never reaches the waiter).
    Granted(RedisValue, G),
    /// Refused with an error, which answers that waiter; nothing was taken.
    Refused(RedisError),
    /// Nothing to take; `Some(t)`: look again at server time `t` (ms), when
    /// a lease ends.
    Busy(Option<i64>),
}

/// What a family's take found.
pub enum Take<T> {
    Got(T),
    /// Nothing free; `Some(t)`: something may be at server time `t` (ms),
    /// when a lease ends.
    Nothing(Option<i64>),
}

impl<T> Take<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Take<U> {
        match self {
            Take::Got(taken) => Take::Got(f(taken)),
            Take::Nothing(next) => Take::Nothing(next),
        }
    }
}

/// Whom a take is for: the running command's own client, whose command may
/// then replicate as it came, or a waiter served outside its command, whose
/// grant always replicates as its effect.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TakenFor {
    Command,
    Waiter,
}

impl<G> Offer<G> {
    /// The offer a family's take makes: the waiter's reply and the grant, or
    /// why not.
    pub fn of(taken: Result<Take<(RedisValue, G)>, RedisError>) -> Offer<G> {
        match taken {
            Ok(Take::Got((reply, grant))) => Offer::Granted(reply, grant),
            Ok(Take::Nothing(next)) => Offer::Busy(next),
            Err(error) => Offer::Refused(error),
        }
    }
}

/// What happened to a wait, for the family's counters.
pub enum Event {
    Parked,
    TimedOut,
    Served(Cause),
}

/// What a family whose commands may wait (`… WAIT ms`) gives the queues
/// (its registration is its `FamilySpec`: "family" names that alone).
pub trait Waitable: 'static {
    /// What a waiter asked for, carried until its turn.
    type Request: Send + 'static;
    /// What a grant took, enough to give exactly that back.
    type Grant: Send + 'static;
    /// `INFO recipes` name of the count of keys with waiters.
    const KEYS_WAITED_ON: &'static CStr;
    /// Whether serving a waiter writes (takes something, replicated as an
    /// effect). A family whose waiters only watch a key (a latch opening)
    /// serves them on a replica and while writes are paused too.
    const WRITES: bool = true;
    fn waits() -> &'static Waits<Self::Request>;
    /// Takes what the key holds for `request`, as the waiter's command would
    /// have when it arrived (the caller has selected the key's database), and
    /// replicates it as an effect.
    fn offer(ctx: &Context, key: Arg, request: &Self::Request) -> Offer<Self::Grant>;
    /// Gives back what `grant` took, if the key still holds it as granted,
    /// and replicates that as an effect. `true` when something was given
    /// back (the caller then serves the queue).
    fn revoke(ctx: &Context, key: Arg, grant: &Self::Grant) -> bool;
    /// Counts a wait's events in `INFO recipes`.
    fn count(event: Event);
}

struct Waiter<R> {
    client: Parked,
    request: R,
    /// Server time (ms) at which the wait runs out.
    deadline: i64,
}

struct Queue<R> {
    /// The waiters by arrival number: the oldest first.
    waiters: BTreeMap<u64, Waiter<R>>,
    /// `(deadline, arrival)` of every waiter: the first to run out first.
    deadlines: BTreeSet<(i64, u64)>,
    /// The pending timer and the time it is due.
    timer: Option<(Timer<KeyId>, i64)>,
    /// A check is already due (job or timer); more events add none.
    scheduled: bool,
    /// What the due check answers (the event that scheduled it).
    cause: Option<Cause>,
    /// Put off until the server accepts writes again.
    deferred: bool,
}

impl<R> Default for Queue<R> {
    fn default() -> Self {
        Self {
            waiters: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            timer: None,
            scheduled: false,
            cause: None,
            deferred: false,
        }
    }
}

impl<R> Queue<R> {
    fn first_deadline(&self) -> Option<i64> {
        self.deadlines.first().map(|&(deadline, _)| deadline)
    }
}

/// A family's queues, one per key with waiters, and where each parked client
/// waits.
struct Book<R> {
    queues: BTreeMap<KeyId, Queue<R>>,
    places: BTreeMap<ParkedId, (KeyId, u64)>,
    arrivals: u64,
}

impl<R> Book<R> {
    fn push(&mut self, id: &KeyId, waiter: Waiter<R>) -> bool {
        self.arrivals += 1;
        let arrival = self.arrivals;
        self.places
            .insert(waiter.client.id(), (id.clone(), arrival));
        let created = !self.queues.contains_key(id);
        let queue = self.queues.entry(id.clone()).or_default();
        queue.deadlines.insert((waiter.deadline, arrival));
        queue.waiters.insert(arrival, waiter);
        created
    }

    /// Takes a waiter out of `id`'s queue (its place is forgotten).
    fn take(&mut self, id: &KeyId, arrival: u64) -> Option<Waiter<R>> {
        let queue = self.queues.get_mut(id)?;
        let waiter = queue.waiters.remove(&arrival)?;
        queue.deadlines.remove(&(waiter.deadline, arrival));
        self.places.remove(&waiter.client.id());
        Some(waiter)
    }

    /// Takes the oldest waiter, with its arrival number.
    fn take_first(&mut self, id: &KeyId) -> Option<(u64, Waiter<R>)> {
        let arrival = *self.queues.get(id)?.waiters.keys().next()?;
        self.take(id, arrival).map(|waiter| (arrival, waiter))
    }

    /// Puts a waiter taken by [`Book::take_first`] back in its place; `Err`
    /// gives it back when its queue is gone.
    fn put_back(&mut self, id: &KeyId, arrival: u64, waiter: Waiter<R>) -> Result<(), Waiter<R>> {
        let Some(queue) = self.queues.get_mut(id) else {
            return Err(waiter);
        };
        self.places
            .insert(waiter.client.id(), (id.clone(), arrival));
        queue.deadlines.insert((waiter.deadline, arrival));
        queue.waiters.insert(arrival, waiter);
        Ok(())
    }

    /// Takes every waiter of `id` whose wait ran out by `now`.
    fn take_timed_out(&mut self, id: &KeyId, now: i64) -> Vec<Waiter<R>> {
        let mut gone = Vec::new();
        while let Some(&(deadline, arrival)) = self.queues.get(id).and_then(|q| q.deadlines.first())
        {
            if deadline > now {
                break;
            }
            match self.take(id, arrival) {
                Some(waiter) => gone.push(waiter),
                None => break,
            }
        }
        gone
    }
}

/// The `INFO recipes` counters of a family's waits: begun, ran out, and
/// served (a hand-off).
pub struct WaitStats {
    pub started: Stat,
    pub timed_out: Stat,
    pub handoffs: Stat,
}

impl WaitStats {
    /// The counters `<family>_waits`, `<family>_waits_timed_out` and
    /// `<family>_handoffs`, named in full.
    pub const fn new(
        started: &'static CStr,
        timed_out: &'static CStr,
        handoffs: &'static CStr,
    ) -> Self {
        Self {
            started: Stat::counter(started),
            timed_out: Stat::counter(timed_out),
            handoffs: Stat::counter(handoffs),
        }
    }

    /// Counts one event of a wait ([`Waitable::count`]).
    pub fn count(&self, event: Event) {
        match event {
            Event::Parked => self.started.incr(),
            Event::TimedOut => self.timed_out.incr(),
            Event::Served(_) => self.handoffs.incr(),
        }
    }
}

/// A family's waits.
pub struct Waits<R> {
    book: Mutex<Book<R>>,
    /// How many queues exist; lets the hot paths skip the map when nobody
    /// waits.
    count: AtomicUsize,
}

impl<R> Waits<R> {
    pub const fn new() -> Self {
        Self {
            book: Mutex::new(Book {
                queues: BTreeMap::new(),
                places: BTreeMap::new(),
                arrivals: 0,
            }),
            count: AtomicUsize::new(0),
        }
    }

    /// The queues. Never held across a call that may reach back into this
    /// module (key writes fire keyspace events, finishing a wait may run
    /// callbacks).
    fn lock(&self) -> MutexGuard<'_, Book<R>> {
        self.book
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn idle(&self) -> bool {
        self.count.load(Ordering::Relaxed) == 0
    }

    /// How many keys have waiters.
    pub fn keys(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Removes `id`'s queue; its waiters (forgotten) and timer are the
    /// caller's.
    fn remove(&self, book: &mut Book<R>, id: &KeyId) -> Option<Queue<R>> {
        let queue = book.queues.remove(id)?;
        self.count.fetch_sub(1, Ordering::Relaxed);
        for waiter in queue.waiters.values() {
            book.places.remove(&waiter.client.id());
        }
        Some(queue)
    }

    /// Removes `id`'s queue if nobody waits in it; its timer is the
    /// caller's to stop.
    fn remove_if_empty(&self, book: &mut Book<R>, id: &KeyId) -> Option<(Timer<KeyId>, i64)> {
        if book.queues.get(id)?.waiters.is_empty() {
            return self
                .remove(book, id)
                .and_then(|mut queue| queue.timer.take());
        }
        None
    }
}

/// The queues' side of parked clients, per family.
struct Forget<F>(PhantomData<F>);

impl<F: Waitable> Waitlist for Forget<F> {
    /// The client leaves its queue. When it was the oldest waiter, those
    /// behind it may be served now (a waiting writer leaving lets the readers
    /// behind it in): the queue is looked at again on the next event-loop
    /// turn.
    fn forget(ctx: &Context, client: ParkedId) -> bool {
        let waits = F::waits();
        let (found, stale, head_left) = {
            let mut book = waits.lock();
            let Some((id, arrival)) = book.places.get(&client).cloned() else {
                return false;
            };
            let head = book
                .queues
                .get(&id)
                .and_then(|queue| queue.waiters.keys().next().copied());
            let found = book.take(&id, arrival).is_some();
            let stale = waits.remove_if_empty(&mut book, &id);
            let others = book.queues.contains_key(&id);
            (
                found,
                stale,
                (head == Some(arrival) && others).then_some(id),
            )
        };
        if let Some((timer, _)) = stale {
            timer.stop(ctx);
        }
        if let Some(id) = head_left {
            schedule_timer::<F>(ctx, id, Cause::Release);
        }
        found
    }
}

pub fn key_id(ctx: &Context, name: &[u8]) -> KeyId {
    (selected_db(ctx), name.to_vec())
}

fn selected_db(ctx: &Context) -> c_int {
    // SAFETY: `ctx` is the context of a command, timer, job or event callback,
    // all with a client, whose database the server reads.
    unsafe { api!(RedisModule_GetSelectedDb)(ctx.get_raw()) }
}

fn select_db(ctx: &Context, db: c_int) {
    if selected_db(ctx) != db {
        // SAFETY: `ctx` has a client (a command's, or a timer's or job's
        // temporary one); the server refuses a `db` out of range.
        unsafe { api!(RedisModule_SelectDb)(ctx.get_raw(), db) };
    }
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
/// [`Offer::Busy`]. `open`: every key the command still holds, closed
/// here first (settling the queue may open them again).
pub fn park<'k, F: Waitable>(
    ctx: &Context,
    name: &[u8],
    open: impl IntoIterator<Item = Key<'k>>,
    request: F::Request,
    wait: i64,
    next: Option<i64>,
) -> RedisValue {
    open.into_iter().for_each(drop);
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
    let waits = F::waits();
    if waits.lock().push(&id, waiter) {
        waits.count.fetch_add(1, Ordering::Relaxed);
    }
    F::count(Event::Parked);
    settle::<F>(ctx, &id, next);
    RedisValue::NoReply
}

/// Serves `name`'s queue if it has one (cheap when nobody waits anywhere in
/// the family). `cause`: what may have freed something. `open`: every key
/// the command still holds, closed here first (serving opens them again);
/// `None` when it holds none.
pub fn serve_waiters<'k, F: Waitable>(
    ctx: &Context,
    name: &[u8],
    open: impl IntoIterator<Item = Key<'k>>,
    cause: Cause,
) {
    open.into_iter().for_each(drop);
    let waits = F::waits();
    if waits.idle() {
        return;
    }
    let id = key_id(ctx, name);
    if waits.lock().queues.contains_key(&id) {
        serve::<F>(ctx, &id, cause);
    }
}

/// How many clients wait on `name` now.
pub fn waiting_on<F: Waitable>(ctx: &Context, name: &[u8]) -> usize {
    let waits = F::waits();
    if waits.idle() {
        return 0;
    }
    waits
        .lock()
        .queues
        .get(&key_id(ctx, name))
        .map_or(0, |queue| queue.waiters.len())
}

/// Whether the module may write now, outside a client's own command.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Writes {
    Allowed,
    /// Not now: writes are paused (`CLIENT PAUSE … WRITE`, `FAILOVER`, a
    /// shutdown waiting for replicas) or the server is loading. The server's
    /// own expire cycle waits the same way.
    Later,
    /// Never here: a replica, which only applies its primary's writes.
    Never,
}

fn writes(ctx: &Context) -> Writes {
    // SAFETY: `ctx` is the server's context of the running call; the function
    // only reads flags from it and from the server's state.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.get_raw()) } as u32;
    if flags & raw::REDISMODULE_CTX_FLAGS_MASTER == 0 {
        Writes::Never
    } else if flags & raw::REDISMODULE_CTX_FLAGS_LOADING != 0
        // SAFETY: no argument; the server only reads its pause state.
        || unsafe { api!(RedisModule_AvoidReplicaTraffic)() } != 0
    {
        Writes::Later
    } else {
        Writes::Allowed
    }
}

/// Answers every waiter of `id` with `reply` and drops the queue.
fn dismiss<F: Waitable>(ctx: &Context, id: &KeyId, reply: impl Fn() -> redis_module::RedisResult) {
    let waits = F::waits();
    let queue = waits.remove(&mut waits.lock(), id);
    if let Some(mut queue) = queue {
        if let Some((timer, _)) = queue.timer.take() {
            timer.stop(ctx);
        }
        for (_, waiter) in queue.waiters {
            waiter.client.finish(reply());
        }
    }
}

/// Ends the waits that ran out, then hands what the key holds to the oldest
/// waiters left while the family grants; finally sets the queue's timer (or
/// drops the queue).
fn serve<F: Waitable>(ctx: &Context, id: &KeyId, cause: Cause) {
    let waits = F::waits();
    let allowed = if F::WRITES {
        writes(ctx)
    } else {
        Writes::Allowed
    };
    match allowed {
        Writes::Never => {
            // Only a primary decides; a server that became a replica lets go.
            dismiss::<F>(ctx, id, || Ok(RedisValue::Null));
            return;
        }
        Writes::Later => {
            put_off::<F>(ctx, id, cause);
            return;
        }
        Writes::Allowed => {}
    }
    // Only timers and jobs get here with another database selected; a
    // command serves its own database's keys.
    select_db(ctx, id.0);
    // This serves whatever check was due: a later event must schedule anew
    // (the timer of a pending check may be replaced below).
    if let Some(queue) = waits.lock().queues.get_mut(id) {
        queue.scheduled = false;
        queue.cause = None;
    }
    let name = OwnedString::from_bytes(ctx, &id.1);
    if let Err(moved) = cluster::served_here(ctx, name.as_arg()) {
        // The key left this node (a slot migration): its waiters retry where
        // it lives now, and nothing is handed on here.
        dismiss::<F>(ctx, id, || Err(moved.error()));
        return;
    }
    loop {
        let now = now_ms();
        let (timed_out, next) = {
            let mut book = waits.lock();
            let timed_out = book.take_timed_out(id, now);
            (timed_out, book.take_first(id))
        };
        for waiter in timed_out {
            at_deadline::<F>(ctx, id, name.as_arg(), waiter, cause);
        }
        let Some((arrival, waiter)) = next else {
            settle::<F>(ctx, id, None);
            return;
        };
        match F::offer(ctx, name.as_arg(), &waiter.request) {
            Offer::Granted(reply, grant) => {
                F::count(Event::Served(cause));
                waiter
                    .client
                    .grant(reply, give_back::<F>(id.clone(), grant));
            }
            // A refused grant answers that waiter with the error; what the
            // key holds stays for the next one.
            Offer::Refused(error) => waiter.client.finish(Err(error)),
            Offer::Busy(next) => {
                let back = waits.lock().put_back(id, arrival, waiter);
                if let Err(waiter) = back {
                    waiter.client.finish(Ok(RedisValue::Null));
                }
                settle::<F>(ctx, id, next);
                return;
            }
        }
    }
}

/// Answers a waiter whose time ran out: nil, but for a family whose waiters
/// take nothing ([`Waitable::WRITES`] false), what the key holds at the
/// deadline — an open latch answers 1 even then, however it opened (the
/// event that opened it may be served only after the deadline, in the same
/// check). The caller has selected the key's database.
fn at_deadline<F: Waitable>(
    ctx: &Context,
    id: &KeyId,
    name: Arg,
    waiter: Waiter<F::Request>,
    cause: Cause,
) {
    if !F::WRITES {
        match F::offer(ctx, name, &waiter.request) {
            Offer::Granted(reply, grant) => {
                F::count(Event::Served(cause));
                waiter
                    .client
                    .grant(reply, give_back::<F>(id.clone(), grant));
                return;
            }
            Offer::Refused(error) => {
                waiter.client.finish(Err(error));
                return;
            }
            Offer::Busy(_) => {}
        }
    }
    F::count(Event::TimedOut);
    waiter.client.finish(Ok(RedisValue::Null));
}

/// While the server accepts no writes: answers the waits that ran out, keeps
/// a timer for the next deadline, and serves the queue once writes resume.
fn put_off<F: Waitable>(ctx: &Context, id: &KeyId, cause: Cause) {
    let waits = F::waits();
    let timed_out = waits.lock().take_timed_out(id, now_ms());
    for waiter in timed_out {
        F::count(Event::TimedOut);
        waiter.client.finish(Ok(RedisValue::Null));
    }
    let first_time = {
        let mut book = waits.lock();
        match book.queues.get_mut(id) {
            Some(queue) => {
                queue.scheduled = false;
                queue.cause = Some(cause);
                !std::mem::replace(&mut queue.deferred, true)
            }
            None => false,
        }
    };
    if first_time {
        let id = id.clone();
        defer(
            ctx,
            Box::new(move |ctx: &Context| {
                let cause = {
                    let mut book = F::waits().lock();
                    let Some(queue) = book.queues.get_mut(&id) else {
                        return;
                    };
                    queue.deferred = false;
                    queue.cause.take().unwrap_or(Cause::Expiry)
                };
                serve::<F>(ctx, &id, cause);
            }),
        );
    }
    // Only deadlines are due while paused: lease ends wait for the resume.
    settle::<F>(ctx, id, None);
}

/// What runs when a grant's reply never reached its waiter: a timer due now
/// gives the grant back (the server frees the reply where no key can be
/// opened).
fn give_back<F: Waitable>(id: KeyId, grant: F::Grant) -> Undelivered {
    Box::new(move |ctx: &Context| {
        Timer::start(ctx, 0, revoke::<F>, (id, grant));
    })
}

fn revoke<F: Waitable>(ctx: &Context, (id, grant): (KeyId, F::Grant)) {
    match writes(ctx) {
        // The primary's state rules: it gives back what it granted.
        Writes::Never => return,
        Writes::Later => {
            defer(
                ctx,
                Box::new(move |ctx: &Context| revoke::<F>(ctx, (id, grant))),
            );
            return;
        }
        Writes::Allowed => {}
    }
    select_db(ctx, id.0);
    let name = OwnedString::from_bytes(ctx, &id.1);
    if cluster::served_here(ctx, name.as_arg()).is_err() {
        // The key moved on with its holder; that node decides now.
        return;
    }
    if F::revoke(ctx, name.as_arg(), &grant) {
        serve_waiters::<F>(ctx, &id.1, None, Cause::Release);
    }
}

/// Work put off until the server accepts writes again, in the order it came.
type Deferred = Box<dyn FnOnce(&Context) + Send>;

static DEFERRED: Mutex<Vec<Deferred>> = Mutex::new(Vec::new());
/// Whether the resume timer runs.
static RESUMING: AtomicBool = AtomicBool::new(false);
/// How often a paused server is asked whether writes resumed: the pause's
/// end is not announced, and asking is what ends an expired pause.
const RESUME_POLL_MS: i64 = 10;

fn deferred() -> MutexGuard<'static, Vec<Deferred>> {
    DEFERRED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn defer(ctx: &Context, job: Deferred) {
    deferred().push(job);
    if !RESUMING.swap(true, Ordering::Relaxed) {
        Timer::start(ctx, RESUME_POLL_MS, resume, ());
    }
}

fn resume(ctx: &Context, (): ()) {
    if writes(ctx) == Writes::Later {
        Timer::start(ctx, RESUME_POLL_MS, resume, ());
        return;
    }
    RESUMING.store(false, Ordering::Relaxed);
    let jobs = std::mem::take(&mut *deferred());
    for job in jobs {
        job(ctx);
    }
}

/// Points the queue's timer at its next moment — `next` or the first
/// deadline, whichever is sooner — or removes an empty queue.
fn settle<F: Waitable>(ctx: &Context, id: &KeyId, next: Option<i64>) {
    let waits = F::waits();
    let stale = {
        let mut book = waits.lock();
        let Some(queue) = book.queues.get_mut(id) else {
            return;
        };
        if queue.waiters.is_empty() {
            waits.remove_if_empty(&mut book, id)
        } else if queue.scheduled {
            // A check is due (an event during this one, e.g. a grant's own
            // `expire`): it settles the timer when it runs. Replacing its
            // timer here would lose it, and every later event with it.
            None
        } else {
            let due = [next, queue.first_deadline()]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(i64::MAX);
            if matches!(queue.timer, Some((_, at)) if at == due) {
                None
            } else {
                let stale = queue.timer.take();
                let delay = due.saturating_sub(now_ms());
                queue.timer = Some((Timer::start(ctx, delay, on_timer::<F>, id.clone()), due));
                stale
            }
        }
    };
    if let Some((timer, _)) = stale {
        timer.stop(ctx);
    }
}

/// A queue's timer: a lease's end, a wait's deadline, or (servers without
/// post-notification jobs) a scheduled check.
fn on_timer<F: Waitable>(ctx: &Context, id: KeyId) {
    let mut cause = None;
    if let Some(queue) = F::waits().lock().queues.get_mut(&id) {
        queue.timer = None;
        queue.scheduled = false;
        cause = queue.cause.take();
    }
    serve::<F>(ctx, &id, cause.unwrap_or(Cause::Expiry));
}

fn on_job<F: Waitable>(ctx: &Context, id: &KeyId) {
    let mut cause = None;
    if let Some(queue) = F::waits().lock().queues.get_mut(id) {
        queue.scheduled = false;
        cause = queue.cause.take();
    }
    serve::<F>(ctx, id, cause.unwrap_or(Cause::Delete));
}

/// A key with waiters may have something to hand out: serve it as soon as
/// writing is safe.
fn schedule<F: Waitable>(ctx: &Context, id: KeyId, cause: Cause) {
    if !mark_scheduled::<F>(&id, cause) || after_notification(ctx, on_job::<F>, id.clone()) {
        return;
    }
    start_check_timer::<F>(ctx, id);
}

/// Schedules a check of `id`'s queue on a timer due now (outside any
/// keyspace event, where no post-notification job can be added).
fn schedule_timer<F: Waitable>(ctx: &Context, id: KeyId, cause: Cause) {
    if mark_scheduled::<F>(&id, cause) {
        start_check_timer::<F>(ctx, id);
    }
}

/// Marks `id`'s queue as due for a check because of `cause`; `false` when
/// it has no queue or a check is already due.
fn mark_scheduled<F: Waitable>(id: &KeyId, cause: Cause) -> bool {
    let mut book = F::waits().lock();
    match book.queues.get_mut(id) {
        Some(queue) if !queue.scheduled => {
            queue.scheduled = true;
            queue.cause = Some(cause);
            true
        }
        _ => false,
    }
}

/// Points `id`'s queue timer at now, for a scheduled check.
fn start_check_timer<F: Waitable>(ctx: &Context, id: KeyId) {
    let waits = F::waits();
    let stale = {
        let mut book = waits.lock();
        let Some(queue) = book.queues.get_mut(&id) else {
            return;
        };
        let stale = queue.timer.take();
        queue.timer = Some((Timer::start(ctx, 0, on_timer::<F>, id.clone()), now_ms()));
        stale
    };
    if let Some((timer, _)) = stale {
        timer.stop(ctx);
    }
}

/// A family as the shared event handlers see it.
#[derive(Clone, Copy)]
pub struct Watcher {
    key_changed: fn(&Context, &[u8], Cause),
    all_changed: fn(&Context),
    figures: fn() -> (&'static CStr, usize, usize),
}

/// The watcher of family `F`, for [`init`].
pub const fn watcher<F: Waitable>() -> Watcher {
    Watcher {
        key_changed: key_changed::<F>,
        all_changed: all_changed::<F>,
        figures: figures::<F>,
    }
}

fn key_changed<F: Waitable>(ctx: &Context, name: &[u8], cause: Cause) {
    if F::waits().idle() {
        return;
    }
    let id = key_id(ctx, name);
    if F::waits().lock().queues.contains_key(&id) {
        schedule::<F>(ctx, id, cause);
    }
}

fn all_changed<F: Waitable>(ctx: &Context) {
    let ids: Vec<KeyId> = F::waits().lock().queues.keys().cloned().collect();
    for id in ids {
        schedule::<F>(ctx, id, Cause::Delete);
    }
}

fn figures<F: Waitable>() -> (&'static CStr, usize, usize) {
    let book = F::waits().lock();
    (F::KEYS_WAITED_ON, book.queues.len(), book.places.len())
}

static WATCHERS: OnceLock<Vec<Watcher>> = OnceLock::new();
/// Some client has waited: keyspace events are watched from then on.
static WATCHING: AtomicBool = AtomicBool::new(false);
static SUBSCRIBED: AtomicBool = AtomicBool::new(false);

fn watchers() -> &'static [Watcher] {
    WATCHERS.get().map(Vec::as_slice).unwrap_or_default()
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
    // SAFETY: `ctx` is the running command's context (the server records its
    // module); `on_keyspace_event` is this module's function, valid while
    // loaded.
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

/// `FLUSHDB`/`FLUSHALL`, `SWAPDB` and a completed atomic slot migration
/// away from this node (Redis 8.4+) change keys without per-key events:
/// check every key that has waiters.
extern "C" fn on_databases_changed(
    ctx: *mut raw::RedisModuleCtx,
    event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    guard((), || {
        let ignored = match event.id {
            raw::REDISMODULE_EVENT_FLUSHDB => subevent != raw::REDISMODULE_SUBEVENT_FLUSHDB_END,
            raw::REDISMODULE_EVENT_SWAPDB => false,
            _ => subevent != cluster::MIGRATE_COMPLETED,
        };
        if ignored || !WATCHING.load(Ordering::Relaxed) {
            return;
        }
        let ctx = Context::new(ctx);
        for watcher in watchers() {
            (watcher.all_changed)(&ctx);
        }
    });
}

/// Called once at load with every family that waits.
pub fn init(ctx: &Context, families: impl IntoIterator<Item = Watcher>) {
    let _ = WATCHERS.set(families.into_iter().collect());
    let events = [
        raw::REDISMODULE_EVENT_FLUSHDB,
        raw::REDISMODULE_EVENT_SWAPDB,
    ]
    .map(|id| raw::RedisModuleEvent { id, dataver: 1 });
    for event in events.into_iter().chain(cluster::migration_event(ctx)) {
        // SAFETY: `ctx` is the load context (it has the module); the server
        // refuses an event it does not know; the callback is this module's
        // function.
        unsafe {
            api!(RedisModule_SubscribeToServerEvent)(
                ctx.get_raw(),
                event,
                Some(on_databases_changed),
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiter(client: usize, deadline: i64) -> Waiter<&'static str> {
        Waiter {
            client: Parked::stand_in(client),
            request: "r",
            deadline,
        }
    }

    fn key(name: &str) -> KeyId {
        (0, name.as_bytes().to_vec())
    }

    #[test]
    fn waiters_come_out_in_arrival_order_and_put_back_keeps_the_place() {
        let mut book: Book<&str> = Book {
            queues: BTreeMap::new(),
            places: BTreeMap::new(),
            arrivals: 0,
        };
        let (a, b) = (key("a"), key("b"));
        assert!(book.push(&a, waiter(1, 500)));
        assert!(!book.push(&a, waiter(2, 100)));
        assert!(book.push(&b, waiter(3, 300)));
        assert!(!book.push(&a, waiter(4, 900)));
        assert_eq!(book.places.len(), 4);
        let (arrival, first) = book.take_first(&a).expect("a waiter");
        assert_eq!((arrival, first.client.id()), (1, Parked::stand_in(1).id()));
        assert_eq!(book.places.len(), 3, "taken out, its place forgotten");
        assert!(book.put_back(&a, arrival, first).is_ok());
        assert_eq!(book.places.len(), 4);
        let order: Vec<u64> = book.queues[&a].waiters.keys().copied().collect();
        assert_eq!(order, [1, 2, 4], "back at the head");
        assert_eq!(book.queues[&a].first_deadline(), Some(100));
        assert!(book.put_back(&key("gone"), 9, waiter(9, 1)).is_err());
        assert_eq!(book.queues[&b].waiters.len(), 1);
    }

    #[test]
    fn waits_run_out_in_deadline_order_whatever_their_arrival() {
        let mut book: Book<&str> = Book {
            queues: BTreeMap::new(),
            places: BTreeMap::new(),
            arrivals: 0,
        };
        let a = key("a");
        for (client, deadline) in [(1, 500), (2, 100), (3, 300), (4, 900)] {
            book.push(&a, waiter(client, deadline));
        }
        assert!(book.take_timed_out(&a, 99).is_empty());
        let gone: Vec<i64> = book
            .take_timed_out(&a, 300)
            .iter()
            .map(|w| w.deadline)
            .collect();
        assert_eq!(gone, [100, 300], "a deadline counts as run out at its time");
        let left: Vec<u64> = book.queues[&a].waiters.keys().copied().collect();
        assert_eq!(left, [1, 4]);
        assert_eq!(book.places.len(), 2);
        assert_eq!(book.queues[&a].first_deadline(), Some(500));
        let taken = book.take(&a, 4).expect("waiter 4");
        assert_eq!(taken.deadline, 900);
        assert!(book.take(&a, 4).is_none(), "taken once");
        assert_eq!(book.places.len(), 1);
    }
}
