//! The `INFO recipes` section: registered at load, it shows the figures the
//! wait queues keep, then every family's [`Stat`], then the panics caught.

use std::ffi::CStr;
use std::os::raw::c_int;
use std::sync::OnceLock;

use redis_module::raw;

use super::panic::{caught, guard};
use crate::api;
use crate::common::stats::{Stat, PANICS_CAUGHT};

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
        api!(RedisModule_InfoAddFieldLongLong)(ctx, PANICS_CAUGHT.name.as_ptr(), caught());
    });
}
