//! While the server accepts no writes (`CLIENT PAUSE … WRITE`, `FAILOVER`,
//! a shutdown waiting for its replicas, loading): the work put off until
//! writes resume, and a queue's waits answered at their deadlines meanwhile.

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use redis_module::{Context, RedisValue};

use super::db::KeyId;
use super::queues::Cause;
use super::timers::{settle, Serve};
use super::waitable::{Event, Waitable};
use crate::common::ffi::context::{now_ms, writes, Writes};
use crate::common::ffi::timer::Timer;

/// While the server accepts no writes: answers the waits that ran out, keeps
/// a timer for the next deadline, and serves the queue once writes resume.
pub fn put_off<F: Waitable>(ctx: &Context, id: &KeyId, cause: Cause) {
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
                F::serve(ctx, &id, cause);
            }),
        );
    }
    // Only deadlines are due while paused: lease ends wait for the resume.
    settle::<F>(ctx, id, None);
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

pub fn defer(ctx: &Context, job: Deferred) {
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
