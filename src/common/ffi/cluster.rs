//! Which keys this node serves, in a cluster, and the slot migrations that
//! move keys away.
//!
//! A key leaves a node by `MIGRATE` (a `del` event, like a `DEL`), by Redis
//! 8.4+'s atomic slot migration (hidden, then trimmed without a per-key
//! event; the server announces the migration's end) or by Valkey 9's
//! (a `del` event per key after the slot moved). Waiting families hand a key
//! on only where the node still serves it ([`served_here`]); elsewhere their
//! waiters are told to retry, and a cluster client's retry is redirected to
//! the node the key lives on now.

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError};

use super::args::Arg;
use crate::api;
use crate::common::errors;

/// A key whose slot this node does not serve now.
pub struct Moved;

impl Moved {
    /// What a waiter on such a key is told: the error cluster clients retry
    /// on; their retry meets the server's own `MOVED` or `ASK`.
    pub fn error(&self) -> RedisError {
        errors::MOVED.error()
    }
}

/// `Ok` when this node serves `key` now: always outside a cluster. In a
/// cluster, the server is asked as it would be for a client's read of the
/// key (`RedisModule_Call` applies the cluster's redirections, with the
/// running client's `ASKING`): a key in a slot that moved, or missing from a
/// slot being migrated away, is `Moved`. Only hand-offs ask, never a
/// command's own path; `D` (Redis 7.2+, Valkey) stops the call before it
/// runs.
pub fn served_here(ctx: &Context, key: Arg) -> Result<(), Moved> {
    // SAFETY: `ctx` is the server's context of the running call; the function
    // only reads flags from it and from the server's state.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.get_raw()) } as u32;
    if flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER == 0 {
        return Ok(());
    }
    // SAFETY: a plain read of a server API pointer, written once by
    // `RedisModule_Init` at load, before any of this code runs.
    let dry_run = unsafe { raw::RedisModule_AddPostNotificationJob }.is_some();
    let format: &CStr = if dry_run { c"Ds" } else { c"s" };
    let call = api!(RedisModule_Call);
    // SAFETY: the format names one server string, which `key` is.
    let reply = unsafe {
        call(
            ctx.get_raw(),
            c"EXISTS".as_ptr(),
            format.as_ptr(),
            key.as_ptr(),
        )
    };
    // A refusal sets errno: a reply that is an error under `D`, none without.
    let refused = if dry_run {
        !reply.is_null()
    } else {
        reply.is_null()
    };
    let redirected = refused && std::io::Error::last_os_error().raw_os_error() == Some(EPERM);
    if !reply.is_null() {
        // SAFETY: `reply` is the non-null reply of the call above, freed once
        // here and not used after.
        unsafe { api!(RedisModule_FreeCallReply)(reply) };
    }
    if redirected {
        Err(Moved)
    } else {
        Ok(())
    }
}

/// What `RedisModule_Call` sets errno to when the cluster would redirect.
const EPERM: i32 = 1;

/// Valkey 9 refuses its atomic slot migration (`CLUSTER MIGRATESLOTS`) on a
/// server with a module that does not declare it copes with one: keys loaded
/// before the node owns their slot (whose events find no waiters here: no
/// client may wait on a slot the node does not serve), and a `del` per key
/// after the slot left (a hand-off then finds the key not served here).
const HANDLE_ATOMIC_SLOT_MIGRATION: c_int = 1 << 5;

/// The module options this server needs beyond the module's own: Valkey's
/// atomic slot migration declaration (a bit Redis does not define).
pub fn server_options(ctx: &Context) -> c_int {
    if server_name(ctx).as_deref() == Some(b"valkey".as_slice()) {
        HANDLE_ATOMIC_SLOT_MIGRATION
    } else {
        0
    }
}

/// Redis 8.4+'s atomic slot migration event, whose `MIGRATE_COMPLETED`
/// says keys left this node without a per-key event; `None` on servers
/// without it (Valkey numbers its events otherwise).
pub fn migration_event(ctx: &Context) -> Option<raw::RedisModuleEvent> {
    if server_name(ctx).is_some() {
        return None;
    }
    // SAFETY: a plain read of a server API pointer, written once by
    // `RedisModule_Init` at load, before any of this code runs.
    let supported = unsafe { raw::RedisModule_IsSubEventSupported }?;
    let event = raw::RedisModuleEvent {
        id: CLUSTER_SLOT_MIGRATION,
        dataver: 1,
    };
    // SAFETY: the function takes the event by value and only compares numbers;
    // an event it does not know yields 0.
    (unsafe { supported(event, MIGRATE_COMPLETED) } != 0).then_some(event)
}

/// Redis's `REDISMODULE_EVENT_CLUSTER_SLOT_MIGRATION` and its subevent
/// `…_MIGRATE_COMPLETED` (the crate's bindings predate them).
const CLUSTER_SLOT_MIGRATION: u64 = 18;
pub const MIGRATE_COMPLETED: u64 = 5;

/// The `server_name` of `INFO server`: Valkey names itself, Redis does not.
fn server_name(ctx: &Context) -> Option<Vec<u8>> {
    // SAFETY: a plain read of a server API pointer, written once by
    // `RedisModule_Init` at load, before any of this code runs.
    let get = unsafe { raw::RedisModule_GetServerInfo }?;
    // SAFETY: as above.
    let field = unsafe { raw::RedisModule_ServerInfoGetFieldC }?;
    // SAFETY: as above.
    let free = unsafe { raw::RedisModule_FreeServerInfo }?;
    // SAFETY: `ctx` is the server's context of the running call (without
    // automatic memory); the section name is a C string literal. The object
    // returned is ours until `free` below.
    let info = unsafe { get(ctx.get_raw(), c"server".as_ptr()) };
    if info.is_null() {
        return None;
    }
    // SAFETY: `info` is the non-null object just returned, not yet freed; the
    // field name is a C string literal.
    let value = unsafe { field(info, c"server_name".as_ptr()) };
    // SAFETY: a C string the info object owns until it is freed below.
    let name = (!value.is_null()).then(|| unsafe { CStr::from_ptr(value) }.to_bytes().to_vec());
    // SAFETY: `info` came from `get` with this `ctx` and is freed once, here;
    // `value`, which points into it, is not used after.
    unsafe { free(ctx.get_raw(), info) };
    name
}
