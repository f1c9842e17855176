//! The server's events the wait queues watch: the keyspace events of a key
//! that may have something to hand out now, and the changes of whole
//! databases, which come without per-key events. What they mean is the
//! watcher's ([`Watch`]).

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

use redis_module::{raw, Context};

use super::args::string_bytes;
use super::cluster;
use super::panic::guard;
use crate::api;

/// What hears the events.
pub trait Watch: 'static {
    /// A key was deleted, expired (`expired`), evicted, renamed, moved,
    /// restored or had its TTL changed.
    fn key_changed(ctx: &Context, name: &[u8], expired: bool);
    /// `FLUSHDB`/`FLUSHALL`, `SWAPDB` or a completed atomic slot migration
    /// away from this node (Redis 8.4+) changed keys without per-key events.
    fn databases_changed(ctx: &Context);
}

/// Subscribes `W` to the keyspace events of deleted, expired, evicted,
/// renamed, moved and restored keys, and of TTL changes. `ctx` is the running
/// command's context.
pub fn subscribe_keyspace<W: Watch>(ctx: &Context) {
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
            Some(on_keyspace_event::<W>),
        )
    };
}

/// Subscribes `W` to the events that change whole databases: flushes,
/// `SWAPDB`, and the end of an atomic slot migration where the server has
/// one. Called once, at load.
pub fn subscribe_databases<W: Watch>(ctx: &Context) {
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
                Some(on_databases_changed::<W>),
            )
        };
    }
}

extern "C" fn on_keyspace_event<W: Watch>(
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
        let ctx = Context::new(ctx);
        // SAFETY: the server's key name, valid during this callback.
        let name = unsafe { string_bytes(key) };
        W::key_changed(&ctx, name, expired);
    });
    raw::REDISMODULE_OK as c_int
}

extern "C" fn on_databases_changed<W: Watch>(
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
        if ignored {
            return;
        }
        W::databases_changed(&Context::new(ctx));
    });
}
