//! The counters behind `INFO recipes`: what an operator needs to see the
//! module's state and trouble at a glance. Each is one atomic add where the
//! event happens (the pool gauges also change from the server's lazy-free
//! thread), nothing walks keys when `INFO` asks, and `CONFIG RESETSTAT`
//! zeroes the counters (not the gauges), as it does the server's own.

use std::ffi::CStr;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;

use redis_module::raw;

use super::panic::guard;
use crate::api;

/// One figure of the INFO section.
pub struct Stat {
    name: &'static CStr,
    value: AtomicI64,
    /// A gauge is a state (reset would make it wrong); a counter counts
    /// events since the start or the last `CONFIG RESETSTAT`.
    gauge: bool,
}

impl Stat {
    const fn counter(name: &'static CStr) -> Self {
        Self {
            name,
            value: AtomicI64::new(0),
            gauge: false,
        }
    }

    const fn gauge(name: &'static CStr) -> Self {
        Self {
            name,
            value: AtomicI64::new(0),
            gauge: true,
        }
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

/// A context for the server calls a command filter makes (it gets none).
struct Detached(*mut raw::RedisModuleCtx);
// SAFETY: used only on the server's main thread, where filters run.
unsafe impl Send for Detached {}
unsafe impl Sync for Detached {}
static DETACHED: OnceLock<Detached> = OnceLock::new();

/// Registers the INFO section and the `CONFIG RESETSTAT` hook. `live` gives
/// the figures kept elsewhere (the wait queues).
pub fn register(ctx: *mut raw::RedisModuleCtx, live: Live) {
    let _ = LIVE.set(live);
    if let Some(detached) = unsafe { raw::RedisModule_GetDetachedThreadSafeContext } {
        let _ = DETACHED.set(Detached(unsafe { detached(ctx) }));
    }
    unsafe {
        api!(RedisModule_RegisterInfoFunc)(ctx, Some(info));
        api!(RedisModule_RegisterCommandFilter)(
            ctx,
            Some(on_command),
            raw::REDISMODULE_CMDFILTER_NOSELF as c_int,
        );
    }
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

/// Sees every command before it runs (a few comparisons): `CONFIG
/// RESETSTAT` zeroes the counters, if the client may run it.
extern "C" fn on_command(filter: *mut raw::RedisModuleCommandFilterCtx) {
    guard((), || unsafe {
        if api!(RedisModule_CommandFilterArgsCount)(filter) != 2 {
            return;
        }
        let word = |at: c_int| {
            let arg = api!(RedisModule_CommandFilterArgGet)(filter, at);
            if arg.is_null() {
                return &[][..];
            }
            let mut len = 0;
            let ptr = api!(RedisModule_StringPtrLen)(arg, &mut len);
            std::slice::from_raw_parts(ptr.cast::<u8>(), len)
        };
        if word(0).eq_ignore_ascii_case(b"config")
            && word(1).eq_ignore_ascii_case(b"resetstat")
            && permitted(filter)
        {
            for stat in STATS.iter().filter(|stat| !stat.gauge) {
                stat.value.store(0, Ordering::Relaxed);
            }
        }
    });
}

/// Whether the client behind a filtered `CONFIG RESETSTAT` may run it (the
/// filter runs before the server checks). Servers without the functions to
/// tell (Redis 7.0: no client ID in a filter) count it as permitted.
unsafe fn permitted(filter: *mut raw::RedisModuleCommandFilterCtx) -> bool {
    let (
        Some(client_id),
        Some(user_name),
        Some(user_by_name),
        Some(check),
        Some(free_user),
        Some(detached),
    ) = (
        raw::RedisModule_CommandFilterGetClientId,
        raw::RedisModule_GetClientUserNameById,
        raw::RedisModule_GetModuleUserFromUserName,
        raw::RedisModule_ACLCheckCommandPermissions,
        raw::RedisModule_FreeModuleUser,
        DETACHED.get(),
    )
    else {
        return true;
    };
    let name = user_name(detached.0, client_id(filter));
    if name.is_null() {
        // No such client or no ACL user: nothing to check against.
        return true;
    }
    let user = user_by_name(name);
    api!(RedisModule_FreeString)(detached.0, name);
    if user.is_null() {
        return true;
    }
    let mut argv = [
        api!(RedisModule_CommandFilterArgGet)(filter, 0),
        api!(RedisModule_CommandFilterArgGet)(filter, 1),
    ];
    let allowed = check(user, argv.as_mut_ptr(), 2) == raw::REDISMODULE_OK as c_int;
    free_user(user);
    allowed
}
