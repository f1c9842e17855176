//! The way into every command: the `extern "C"` entry point
//! [`entry!`](crate::entry) makes for a handler, and [`dispatch`], which runs
//! the handler and sends its reply under the panic guard, or answers the
//! server's key-position request from the command's key specs.

use crate::common::errors;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisValue};

use crate::common::reply::Reply;

use super::args::{from_argv, Arg};
use super::panic::guard;
use super::reply;
use crate::api;
use crate::common::command::{Handler, KeySpec};

/// Wraps a [`Handler`] and its command's key specs in an `extern "C"` entry
/// point for the server.
#[macro_export]
macro_rules! entry {
    ($handler:path, $key_specs:expr) => {{
        extern "C" fn entry(
            ctx: *mut redis_module::raw::RedisModuleCtx,
            argv: *mut *mut redis_module::raw::RedisModuleString,
            argc: std::os::raw::c_int,
        ) -> std::os::raw::c_int {
            // Known when compiled: not looked for in the specs at each call.
            const MOVABLE: bool = $crate::common::command::has_movable_keys($key_specs);
            $crate::common::ffi::dispatch::dispatch(ctx, argv, argc, $handler, $key_specs, MOVABLE)
        }
        $crate::common::command::Entry {
            call: entry,
            key_specs: $key_specs,
        }
    }};
}

/// Runs a handler and sends its reply, both inside the panic guard. A panic
/// (already logged by the hook) answers the client with an error and the
/// server lives on. For a command whose keys move with its arguments
/// (`movable`: [`has_movable_keys`](crate::common::command::has_movable_keys)
/// of its key specs), the server may instead ask where the keys are; the
/// key specs answer.
pub fn dispatch(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: Handler,
    key_specs: &[KeySpec],
    movable: bool,
) -> c_int {
    let answered = guard(false, || {
        // SAFETY: the server passes its own argv, valid for this call.
        let args = unsafe { from_argv(argv, argc) };
        if movable
            // SAFETY: `ctx` is the server's context of this command call.
            && unsafe { api!(RedisModule_IsKeysPositionRequest)(ctx) } != 0
        {
            // No client waits on this request: a panic reports no keys.
            guard((), || report_key_positions(ctx, args, key_specs));
            return true;
        }
        let context = Context::new(ctx);
        let replied = handler(&context, args);
        if let Ok(Reply::Value(RedisValue::NoReply)) = &replied {
            // Sent while the command ran (`reply::direct`). It owns nothing:
            // forgotten rather than passed to the drop glue of every reply.
            std::mem::forget(replied);
        } else {
            reply::send_reply(ctx, replied);
        }
        true
    });
    if !answered {
        guard((), || reply::error(ctx, INTERNAL_ERROR));
    }
    raw::REDISMODULE_OK as c_int
}

/// The reply to a command whose code panicked.
pub const INTERNAL_ERROR: &str = errors::INTERNAL.text;

/// Answers a key-position request from the key specs, so the server's routing
/// and `COMMAND GETKEYS` agree.
fn report_key_positions(ctx: *mut raw::RedisModuleCtx, args: &[Arg], key_specs: &[KeySpec]) {
    for spec in key_specs {
        for position in spec.positions(args) {
            let Ok(position) = c_int::try_from(position) else {
                continue;
            };
            // SAFETY: called during the server's key-position request.
            unsafe {
                match raw::RedisModule_KeyAtPosWithFlags {
                    Some(key_at) => key_at(ctx, position, spec.flags as c_int),
                    None => api!(RedisModule_KeyAtPos)(ctx, position),
                }
            }
        }
    }
}
