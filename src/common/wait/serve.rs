//! Serving a queue: the waits that ran out are answered, then what the key
//! holds goes to the oldest waiters while the family grants; a grant whose
//! reply never reached its waiter is given back.

#![forbid(unsafe_code)]

use std::sync::atomic::Ordering;

use redis_module::{Context, RedisError, RedisValue};

use super::db::{self, key_id, KeyId};
use super::pause::{defer, put_off};
use super::queues::{Cause, Waiter};
use super::timers::{settle, Serve};
use super::waitable::{Event, Offer, Waitable};
use crate::common::errors;
use crate::common::ffi::args::Arg;
use crate::common::ffi::block::Undelivered;
use crate::common::ffi::cluster;
use crate::common::ffi::context::{now_ms, writes, Writes};
use crate::common::ffi::key::OpenKeys;
use crate::common::ffi::strings::OwnedString;
use crate::common::ffi::timer::Timer;

impl<F: Waitable> Serve for F {
    fn serve(ctx: &Context, id: &KeyId, cause: Cause) {
        serve::<F>(ctx, id, cause);
    }
}

/// Serves `name`'s queue if it has one (cheap when nobody waits anywhere in
/// the family). `cause`: what may have freed something. `open`: every key
/// the command still holds, handed over and closed here first (serving opens
/// them again); `()` when it holds none.
pub fn serve_waiters<F: Waitable>(ctx: &Context, name: &[u8], open: impl OpenKeys, cause: Cause) {
    open.close();
    let waits = F::waits();
    if waits.idle() {
        return;
    }
    let id = key_id(ctx, name);
    if waits.lock().queues.contains_key(&id) {
        serve::<F>(ctx, &id, cause);
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
    db::select(ctx, id);
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
            Offer::Refused(error) => refuse::<F>(waiter, error),
            Offer::Busy(next) => {
                let back = waits.lock().put_back(id, arrival, waiter);
                if let Err(waiter) = back {
                    waiter.client.finish(Ok(RedisValue::Null));
                }
                settle::<F>(ctx, id, next);
                return;
            }
            // Busy because of another key: the waiter waits there, and
            // what this key holds goes on to the next waiter.
            Offer::Elsewhere(other, next) => {
                let there = (id.0, other);
                if waits.lock().move_to(&there, arrival, waiter) {
                    waits.count.fetch_add(1, Ordering::Relaxed);
                }
                settle::<F>(ctx, &there, next);
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
                refuse::<F>(waiter, error);
                return;
            }
            Offer::Busy(_) | Offer::Elsewhere(..) => {}
        }
    }
    F::count(Event::TimedOut);
    waiter.client.finish(Ok(RedisValue::Null));
}

/// Answers a waiter with the error its grant was refused with, as its
/// command answers it.
fn refuse<F: Waitable>(waiter: Waiter<F::Request>, error: RedisError) {
    let command = F::command(&waiter.request).name();
    waiter
        .client
        .finish(Err(errors::answered_by(error, command)));
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
    db::select(ctx, &id);
    let name = OwnedString::from_bytes(ctx, &id.1);
    if cluster::served_here(ctx, name.as_arg()).is_err() {
        // The key moved on with its holder; that node decides now.
        return;
    }
    if F::revoke(ctx, name.as_arg(), &grant) {
        serve_waiters::<F>(ctx, &id.1, (), Cause::Release);
    }
}
