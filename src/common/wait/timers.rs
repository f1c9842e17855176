//! When a queue is looked at: its timer, pointed at its next moment (a
//! lease's end, the first deadline), and the checks scheduled when its key
//! may have something to hand out (a post-notification job where the server
//! has them, else a timer due now).

#![forbid(unsafe_code)]

use redis_module::Context;

use super::db::KeyId;
use super::queues::Cause;
use super::waitable::Waitable;
use crate::common::ffi::context::now_ms;
use crate::common::ffi::timer::{after_notification, Timer};

/// Serving a queue, which its timers and jobs (and the deferral of
/// `pause.rs`) end in: `serve.rs` implements it for every [`Waitable`].
pub trait Serve {
    fn serve(ctx: &Context, id: &KeyId, cause: Cause);
}

/// Points the queue's timer at its next moment — `next` or the first
/// deadline, whichever is sooner — or removes an empty queue.
pub fn settle<F: Waitable>(ctx: &Context, id: &KeyId, next: Option<i64>) {
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
    F::serve(ctx, &id, cause.unwrap_or(Cause::Expiry));
}

fn on_job<F: Waitable>(ctx: &Context, id: &KeyId) {
    let mut cause = None;
    if let Some(queue) = F::waits().lock().queues.get_mut(id) {
        queue.scheduled = false;
        cause = queue.cause.take();
    }
    F::serve(ctx, id, cause.unwrap_or(Cause::Delete));
}

/// A key with waiters may have something to hand out: serve it as soon as
/// writing is safe.
pub fn schedule<F: Waitable>(ctx: &Context, id: KeyId, cause: Cause) {
    if !mark_scheduled::<F>(&id, cause) || after_notification(ctx, on_job::<F>, id.clone()) {
        return;
    }
    start_check_timer::<F>(ctx, id);
}

/// Schedules a check of `id`'s queue on a timer due now (outside any
/// keyspace event, where no post-notification job can be added).
pub fn schedule_timer<F: Waitable>(ctx: &Context, id: KeyId, cause: Cause) {
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
