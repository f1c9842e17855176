//! Replication, decided per command and per call, in the command's own code:
//!
//! - [`verbatim`]: the command as it came, when its outcome depends only on
//!   its arguments and the keys' contents (as the server replicates `INCR`).
//!   A replica or an AOF replay runs the same command on the same data and
//!   reaches the same state; it costs what a built-in's propagation costs.
//! - [`effect`]: plain commands that reproduce what the command did, with
//!   absolute times (`SET … PXAT`, `PEXPIREAT`, `IDPOOL.APPLY … LEASE id at`),
//!   when the outcome depends on the clock, on a choice the module made, or
//!   on state a replica lacks (a waiter queue), as the server turns `SET … EX`
//!   into `SET … PXAT`.
//!
//! A command that changed nothing replicates nothing.

use std::ffi::CStr;

use redis_module::{raw, Context};

use super::args::Arg;
use super::strings::{create_string, fixed_string, integer_string};
use crate::api;

/// One argument of a replicated command.
#[derive(Clone, Copy)]
pub enum Word<'a> {
    /// An argument of the running command, passed on as it came.
    Arg(Arg<'a>),
    Int(i64),
    /// A fixed word (`KEEPTTL`, a field name): its server string is made
    /// once and shared by every call.
    Token(&'static CStr),
    /// Bytes the module holds (e.g. a waiting client's token).
    Bytes(&'a [u8]),
}

/// Replicates the running command as it came.
pub fn verbatim(ctx: &Context) {
    // SAFETY: `ctx` is the context of a command's own call (only command
    // handlers replicate verbatim), whose client's argv the server propagates.
    unsafe { api!(RedisModule_ReplicateVerbatim)(ctx.get_raw()) };
}

/// Whether this server decides outcomes itself: a primary running a client's
/// command, not a replica applying its primary's stream nor a server loading
/// its AOF (there a command replicated verbatim must do exactly what it did
/// on the primary, e.g. reclaim no ended lease by its own clock).
pub fn deciding(ctx: &Context) -> bool {
    // SAFETY: `ctx` is the server's context of the running call; the function
    // only reads flags from it and from the server's state.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.get_raw()) } as u32;
    flags & (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) == 0
}

/// Sends `command words…` to replicas and the AOF once the running command
/// ends (inside one MULTI/EXEC with anything else it replicates, in order).
pub fn effect(ctx: &Context, command: &CStr, words: &[Word]) {
    let raw_ctx = ctx.get_raw();
    with_strings(raw_ctx, words, |argv| {
        // SAFETY: `argv` holds `argv.len()` valid server strings; the server
        // takes its own references to them ("v" format), and fails only for
        // an unknown command name, which is fixed in our code.
        unsafe {
            api!(RedisModule_Replicate)(
                raw_ctx,
                command.as_ptr(),
                c"v".as_ptr(),
                argv.as_mut_ptr(),
                argv.len(), // size_t
            )
        };
    });
}

/// Runs `with` on the server strings of `words` (made for the call where
/// the word is not one already, freed after).
pub(super) fn with_strings(
    ctx: *mut raw::RedisModuleCtx,
    words: &[Word],
    with: impl FnOnce(&mut [*mut raw::RedisModuleString]),
) {
    let mut argv: Vec<*mut raw::RedisModuleString> = words
        .iter()
        .map(|word| match *word {
            Word::Arg(arg) => arg.as_ptr(),
            Word::Int(value) => integer_string(ctx, value),
            Word::Token(token) => fixed_string(token),
            Word::Bytes(bytes) => create_string(ctx, bytes),
        })
        .collect();
    with(&mut argv);
    for (string, word) in argv.iter().zip(words) {
        if matches!(word, Word::Int(_) | Word::Bytes(_)) {
            // SAFETY: made above by `create_string` with this context, and
            // owned by nothing else.
            unsafe { api!(RedisModule_FreeString)(ctx, *string) };
        }
    }
}
