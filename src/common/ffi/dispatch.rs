//! The way into every command: the `extern "C"` entry point
//! [`entry!`](crate::entry) makes for a handler, and [`dispatch`], which runs
//! the handler and sends its reply under the panic guard (an error's
//! `{command}` filled with the command's declared name), or answers the
//! server's key-position request from the command's key specs.

use crate::common::errors;
use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisValue};

use crate::common::reply::Reply;

use super::args::{from_argv, Arg};
use super::panic::guard;
use super::reply;
use crate::api;
use crate::common::command::{Entry, KeySpec};

/// Declares a command's name (lower case) with its
/// [`Handler`](crate::common::command::Handler) and key specs: its
/// [`Entry`], whose `extern "C"` entry point the server calls.
#[macro_export]
macro_rules! entry {
    ($name:expr, $handler:path, $key_specs:expr) => {{
        extern "C" fn call(
            ctx: *mut redis_module::raw::RedisModuleCtx,
            argv: *mut *mut redis_module::raw::RedisModuleString,
            argc: std::os::raw::c_int,
        ) -> std::os::raw::c_int {
            $crate::common::ffi::dispatch::dispatch(ctx, argv, argc, &ENTRY)
        }
        const UPPER_NAME: &[u8] =
            &$crate::common::command::upper_case_name::<{ $name.count_bytes() + 1 }>($name);
        static ENTRY: $crate::common::command::Entry = $crate::common::command::Entry {
            name: $name,
            upper_name: match std::ffi::CStr::from_bytes_with_nul(UPPER_NAME) {
                Ok(name) => name,
                Err(_) => panic!("a command's name is a C string"),
            },
            call,
            handler: $handler,
            key_specs: $key_specs,
            // Known when compiled: not looked for in the specs at each call.
            movable: $crate::common::command::has_movable_keys($key_specs),
        };
        &ENTRY
    }};
}

/// Runs a command's handler and sends its reply, both inside the panic
/// guard; an error it answers has its `{command}` filled with the command's
/// name ([`errors::answered_by`]). A panic (already logged by the hook)
/// answers the client with an error and the server lives on. For a command
/// whose keys move with its arguments (`movable`:
/// [`has_movable_keys`](crate::common::command::has_movable_keys) of its key
/// specs), the server may instead ask where the keys are; the key specs
/// answer.
pub fn dispatch(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    entry: &'static Entry,
) -> c_int {
    let answered = guard(false, || {
        // SAFETY: the server passes its own argv, valid for this call.
        let args = unsafe { from_argv(argv, argc) };
        if entry.movable
            // SAFETY: `ctx` is the server's context of this command call.
            && unsafe { api!(RedisModule_IsKeysPositionRequest)(ctx) } != 0
        {
            // No client waits on this request: a panic reports no keys.
            guard((), || report_key_positions(ctx, args, entry.key_specs));
            return true;
        }
        let context = Context::new(ctx);
        let mut replied = (entry.handler)(&context, args);
        if let Err(error) = &mut replied {
            name_command(error, entry.name);
        }
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

/// Fills the `{command}` of the error a command's handler returned with the
/// command's name.
#[cold]
fn name_command(error: &mut RedisError, name: &CStr) {
    let returned = std::mem::replace(error, RedisError::WrongArity);
    *error = errors::answered_by(returned, name);
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
