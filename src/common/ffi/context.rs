//! What the module reads of the server's state and of the running call's
//! context: the clock, random bytes, whether the module may write now, and
//! the database a call has selected.

use std::os::raw::c_int;

use redis_module::{raw, Context};

use crate::api;

/// The server's wall clock, in Unix milliseconds.
pub fn now_ms() -> i64 {
    // SAFETY: the function takes no argument and only reads the clock.
    unsafe { api!(RedisModule_Milliseconds)() }
}

/// 32 random bytes from the server's generator (seeded from the system's
/// entropy at start).
pub fn random_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    // SAFETY: the server writes exactly `seed.len()` bytes into it.
    unsafe { api!(RedisModule_GetRandomBytes)(seed.as_mut_ptr(), seed.len()) };
    seed
}

/// Whether the module may write now, outside a client's own command.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Writes {
    Allowed,
    /// Not now: writes are paused (`CLIENT PAUSE … WRITE`, `FAILOVER`, a
    /// shutdown waiting for replicas) or the server is loading. The server's
    /// own expire cycle waits the same way.
    Later,
    /// Never here: a replica, which only applies its primary's writes.
    Never,
}

pub fn writes(ctx: &Context) -> Writes {
    // SAFETY: `ctx` is the server's context of the running call; the function
    // only reads flags from it and from the server's state.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.get_raw()) } as u32;
    if flags & raw::REDISMODULE_CTX_FLAGS_MASTER == 0 {
        Writes::Never
    } else if flags & raw::REDISMODULE_CTX_FLAGS_LOADING != 0
        // SAFETY: no argument; the server only reads its pause state.
        || unsafe { api!(RedisModule_AvoidReplicaTraffic)() } != 0
    {
        Writes::Later
    } else {
        Writes::Allowed
    }
}

/// The database `ctx`'s client has selected.
pub fn selected_db(ctx: &Context) -> c_int {
    // SAFETY: `ctx` is the context of a command, timer, job or event callback,
    // all with a client, whose database the server reads.
    unsafe { api!(RedisModule_GetSelectedDb)(ctx.get_raw()) }
}

/// Selects database `db` for `ctx`'s client, unless it is selected.
pub fn select_db(ctx: &Context, db: c_int) {
    if selected_db(ctx) != db {
        // SAFETY: `ctx` has a client (a command's, or a timer's or job's
        // temporary one); the server refuses a `db` out of range.
        unsafe { api!(RedisModule_SelectDb)(ctx.get_raw(), db) };
    }
}
