//! A client's way into a queue ([`park`], after [`parse_wait`]) and out of
//! it when the server ends its wait first (disconnected, killed,
//! unblocked).

#![forbid(unsafe_code)]

use crate::common::errors;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;

use redis_module::{Context, RedisError, RedisValue};

use super::db::key_id;
use super::events::start_watching;
use super::queues::{Cause, Waiter};
use super::timers::{schedule_timer, settle};
use super::waitable::{Event, Waitable};
use crate::common::ffi::args::Arg;
use crate::common::ffi::block::{may_block, Parked, ParkedId, Waitlist};
use crate::common::ffi::context::now_ms;
use crate::common::ffi::key::OpenKeys;

/// A `WAIT ms` option ([`WAIT`](crate::common::command::WAIT)): a positive
/// number of milliseconds that, added to now, stays representable.
pub fn parse_wait(arg: Option<Arg>) -> Result<Option<i64>, RedisError> {
    let Some(ms) = arg else { return Ok(None) };
    match ms.to_i64()? {
        ms if ms > 0 && now_ms().checked_add(ms).is_some() => Ok(Some(ms)),
        _ => Err(errors::INVALID_WAIT.error()),
    }
}

/// Parks the running command's client in `name`'s queue for up to `wait` ms
/// (the caller checked it is positive and representable) and answers
/// `NoReply`; nil when the client may not block (MULTI, scripts). `next`:
/// when something may free up by itself (a lease's end), as in
/// [`Offer::Busy`](super::Offer::Busy). `open`: every key the command still
/// holds, handed over and closed here first (settling the queue may open them
/// again).
pub fn park<F: Waitable>(
    ctx: &Context,
    name: &[u8],
    open: impl OpenKeys,
    request: F::Request,
    wait: i64,
    next: Option<i64>,
) -> RedisValue {
    open.close();
    if !may_block(ctx) {
        return RedisValue::Null;
    }
    let Some(client) = Parked::park::<Forget<F>>(ctx) else {
        return RedisValue::Null;
    };
    start_watching(ctx);
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
