//! Code the server runs later, on its main thread: module timers, and jobs
//! run right after the keyspace notification being handled. Every callback
//! runs under [`guard`], so a panic never crosses into the server.

use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::ptr;

use redis_module::{raw, Context};

use super::panic::guard;
use crate::api;

/// A module timer: runs `callback(ctx, data)` once, `delay_ms` from now, on
/// the main thread, in a context where keys may be written and effects are
/// replicated. The type of its data is part of its type, so stopping it
/// frees the data as what it is.
pub struct Timer<T> {
    id: raw::RedisModuleTimerID,
    /// The address of the data the server holds for it (only compared):
    /// what tells this timer from another that came to carry its id.
    job: usize,
    data: PhantomData<fn(T)>,
}

type TimerJob<T> = (fn(&Context, T), T);

/// The longest delay handed to the server (about 24 days): it computes the
/// due time in microseconds, which a delay near `i64::MAX` ms would overflow.
/// A caller waiting longer is called early and simply sets a new timer.
const MAX_DELAY_MS: i64 = 1 << 31;

impl<T> Timer<T> {
    pub fn start(ctx: &Context, delay_ms: i64, callback: fn(&Context, T), data: T) -> Timer<T> {
        let job: *mut TimerJob<T> = Box::into_raw(Box::new((callback, data)));
        // SAFETY: `ctx` is the server's context of the running call; the server
        // keeps `job` until it hands it to `fire::<T>` or back to `stop`, the
        // only places it is freed.
        let id = unsafe {
            api!(RedisModule_CreateTimer)(
                ctx.get_raw(),
                delay_ms.clamp(0, MAX_DELAY_MS),
                Some(fire::<T>),
                job.cast(),
            )
        };
        Timer {
            id,
            job: job as usize,
            data: PhantomData,
        }
    }

    /// Cancels the timer if it has not fired yet, dropping its data; a
    /// timer that fired is left alone. The server names a timer by its due
    /// time on the wall clock, unique among the pending ones, so after this
    /// one fired a clock stepped back could give its id to another timer:
    /// that one is told apart by its data, and not stopped.
    pub fn stop(self, ctx: &Context) {
        let (mut remaining, mut pending): (u64, *mut c_void) = (0, ptr::null_mut());
        // SAFETY: `ctx` is the server's context of the running call; the two
        // out-pointers are locals the server writes to.
        let found = unsafe {
            api!(RedisModule_GetTimerInfo)(ctx.get_raw(), self.id, &mut remaining, &mut pending)
        };
        if found != raw::REDISMODULE_OK as c_int || pending as usize != self.job {
            return;
        }
        let mut job: *mut c_void = ptr::null_mut();
        // SAFETY: `ctx` is the server's context of the running call, and `job`
        // a local the server writes the timer's data pointer to.
        let stopped = unsafe { api!(RedisModule_StopTimer)(ctx.get_raw(), self.id, &mut job) };
        if stopped == raw::REDISMODULE_OK as c_int && !job.is_null() {
            // SAFETY: made by `Box::into_raw` in `start` of this `Timer<T>`.
            drop(unsafe { Box::from_raw(job.cast::<TimerJob<T>>()) });
        }
    }
}

extern "C" fn fire<T>(ctx: *mut raw::RedisModuleCtx, job: *mut c_void) {
    if job.is_null() {
        return;
    }
    guard((), || {
        // SAFETY: made by `Box::into_raw` in `Timer::start`; a timer fires once.
        let (callback, data) = *unsafe { Box::from_raw(job.cast::<TimerJob<T>>()) };
        callback(&Context::new(ctx), data);
    });
}

type Job<T> = (fn(&Context, &T), T);

/// Runs `callback(ctx, data)` right after the keyspace notification being
/// handled, inside the same atomic unit as the command that caused it, where
/// keys may be written (Redis 7.2+, Valkey). `false` when the server has no
/// such jobs; the caller then falls back to a timer.
pub fn after_notification<T>(ctx: &Context, callback: fn(&Context, &T), data: T) -> bool {
    // SAFETY: a plain read of a server API pointer, written once by
    // `RedisModule_Init` at load, before any of this code runs. This function
    // is optional (Redis 7.2+).
    let Some(add_job) = (unsafe { raw::RedisModule_AddPostNotificationJob }) else {
        return false;
    };
    let job: *mut Job<T> = Box::into_raw(Box::new((callback, data)));
    // SAFETY: `ctx` is the context of the keyspace or server event being
    // handled, which has a (temporary) client whose database the job records;
    // on success the server owns `job` until it calls `free_job`.
    let added = unsafe {
        add_job(
            ctx.get_raw(),
            Some(run_job::<T>),
            job.cast(),
            Some(free_job::<T>),
        )
    };
    if added != raw::REDISMODULE_OK as c_int {
        // Refused (e.g. while loading): the server did not take the data.
        // SAFETY: made by `Box::into_raw` above; a refused job is not stored by
        // the server, so the box is still ours, freed once here.
        drop(unsafe { Box::from_raw(job) });
        return false;
    }
    true
}

extern "C" fn run_job<T>(ctx: *mut raw::RedisModuleCtx, job: *mut c_void) {
    if job.is_null() {
        return;
    }
    guard((), || {
        // SAFETY: made in `after_notification`; freed by `free_job` afterwards.
        let (callback, data) = unsafe { &*job.cast::<Job<T>>() };
        callback(&Context::new(ctx), data);
    });
}

extern "C" fn free_job<T>(job: *mut c_void) {
    if !job.is_null() {
        // SAFETY: made in `after_notification`; the server frees once.
        guard((), || drop(unsafe { Box::from_raw(job.cast::<Job<T>>()) }));
    }
}
