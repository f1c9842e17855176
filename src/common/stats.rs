//! The counters behind `INFO recipes`: what an operator needs to see the
//! module's state and trouble at a glance. Each is one atomic add where the
//! event happens (the pool gauges also change from the server's lazy-free
//! thread), and nothing walks keys when `INFO` asks. Counters count from the
//! module's load, as other modules' INFO fields do: `CONFIG RESETSTAT` does
//! not reach them, since noticing it would take a command filter, which runs
//! on every command of every application sharing the server.

use std::ffi::CStr;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;

use redis_module::raw;

use super::ffi::panic::{caught, guard};
use crate::api;

/// One figure of the INFO section: a counter (events since the module was
/// loaded) or a gauge (a state, such as the pools stored now).
pub struct Stat {
    name: &'static CStr,
    value: AtomicI64,
}

impl Stat {
    pub const fn counter(name: &'static CStr) -> Self {
        Self {
            name,
            value: AtomicI64::new(0),
        }
    }

    pub const fn gauge(name: &'static CStr) -> Self {
        Self::counter(name)
    }

    pub fn add(&self, n: i64) {
        self.value.fetch_add(n, Ordering::Relaxed);
    }

    pub fn incr(&self) {
        self.add(1);
    }

    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }
}

/// Figures computed when `INFO` asks (cheap: no key is read).
pub type Live = fn() -> Vec<(&'static CStr, i64)>;

static LIVE: OnceLock<Live> = OnceLock::new();
static STATS: OnceLock<Vec<&'static Stat>> = OnceLock::new();

/// Registers the INFO section: `live` gives the figures kept elsewhere (the
/// wait queues), then come `stats` in order, then the panics the guard
/// caught.
pub fn register(
    ctx: *mut raw::RedisModuleCtx,
    live: Live,
    stats: impl IntoIterator<Item = &'static Stat>,
) {
    let _ = LIVE.set(live);
    let _ = STATS.set(stats.into_iter().collect());
    // SAFETY: `ctx` is the module's load context; `info` is this module's
    // function, valid while it is loaded.
    unsafe { api!(RedisModule_RegisterInfoFunc)(ctx, Some(info)) };
}

extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    // SAFETY: `ctx` is the INFO context the server passed to this callback; the
    // section and field names are C strings the server copies.
    guard((), || unsafe {
        api!(RedisModule_InfoAddSection)(ctx, c"".as_ptr());
        if let Some(live) = LIVE.get() {
            for (name, value) in live() {
                api!(RedisModule_InfoAddFieldLongLong)(ctx, name.as_ptr(), value);
            }
        }
        for stat in STATS.get().map(Vec::as_slice).unwrap_or_default() {
            api!(RedisModule_InfoAddFieldLongLong)(ctx, stat.name.as_ptr(), stat.get());
        }
        api!(RedisModule_InfoAddFieldLongLong)(ctx, c"panics_caught".as_ptr(), caught());
    });
}
