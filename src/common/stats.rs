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

use super::panic::guard;
use crate::api;

/// One figure of the INFO section: a counter (events since the module was
/// loaded) or a gauge (a state, such as the pools stored now).
pub struct Stat {
    name: &'static CStr,
    value: AtomicI64,
}

impl Stat {
    const fn counter(name: &'static CStr) -> Self {
        Self {
            name,
            value: AtomicI64::new(0),
        }
    }

    const fn gauge(name: &'static CStr) -> Self {
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

pub static LOCK_WAITS: Stat = Stat::counter(c"lock_waits");
pub static LOCK_WAITS_TIMED_OUT: Stat = Stat::counter(c"lock_waits_timed_out");
pub static LOCK_HANDOFFS_RELEASE: Stat = Stat::counter(c"lock_handoffs_release");
pub static LOCK_HANDOFFS_DELETE: Stat = Stat::counter(c"lock_handoffs_delete");
pub static LOCK_HANDOFFS_EXPIRY: Stat = Stat::counter(c"lock_handoffs_expiry");
pub static POOLS: Stat = Stat::gauge(c"pools");
pub static POOL_LEASES: Stat = Stat::gauge(c"pool_leases");
pub static POOL_LEASES_RECLAIMED: Stat = Stat::counter(c"pool_leases_reclaimed");
pub static RESOURCE_POOLS: Stat = Stat::gauge(c"resource_pools");
pub static RESOURCE_WAITS: Stat = Stat::counter(c"resource_waits");
pub static RESOURCE_WAITS_TIMED_OUT: Stat = Stat::counter(c"resource_waits_timed_out");
pub static RESOURCE_HANDOFFS: Stat = Stat::counter(c"resource_handoffs");
pub static IDPOOL_WAITS: Stat = Stat::counter(c"idpool_waits");
pub static IDPOOL_WAITS_TIMED_OUT: Stat = Stat::counter(c"idpool_waits_timed_out");
pub static IDPOOL_HANDOFFS: Stat = Stat::counter(c"idpool_handoffs");
pub static RATE_ALLOWED: Stat = Stat::counter(c"rate_allowed");
pub static RATE_LIMITED: Stat = Stat::counter(c"rate_limited");
pub static PANICS: Stat = Stat::counter(c"panics_caught");

/// In the order `INFO` shows them, after the lock gauges.
static STATS: [&Stat; 18] = [
    &LOCK_WAITS,
    &LOCK_WAITS_TIMED_OUT,
    &LOCK_HANDOFFS_RELEASE,
    &LOCK_HANDOFFS_DELETE,
    &LOCK_HANDOFFS_EXPIRY,
    &POOLS,
    &POOL_LEASES,
    &POOL_LEASES_RECLAIMED,
    &IDPOOL_WAITS,
    &IDPOOL_WAITS_TIMED_OUT,
    &IDPOOL_HANDOFFS,
    &RESOURCE_POOLS,
    &RESOURCE_WAITS,
    &RESOURCE_WAITS_TIMED_OUT,
    &RESOURCE_HANDOFFS,
    &RATE_ALLOWED,
    &RATE_LIMITED,
    &PANICS,
];

/// Figures computed when `INFO` asks (cheap: no key is read).
pub type Live = fn() -> Vec<(&'static CStr, i64)>;

static LIVE: OnceLock<Live> = OnceLock::new();

/// Registers the INFO section. `live` gives the figures kept elsewhere (the
/// wait queues).
pub fn register(ctx: *mut raw::RedisModuleCtx, live: Live) {
    let _ = LIVE.set(live);
    unsafe { api!(RedisModule_RegisterInfoFunc)(ctx, Some(info)) };
}

extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    guard((), || unsafe {
        api!(RedisModule_InfoAddSection)(ctx, c"".as_ptr());
        if let Some(live) = LIVE.get() {
            for (name, value) in live() {
                api!(RedisModule_InfoAddFieldLongLong)(ctx, name.as_ptr(), value);
            }
        }
        for stat in STATS {
            api!(RedisModule_InfoAddFieldLongLong)(ctx, stat.name.as_ptr(), stat.get());
        }
    });
}
