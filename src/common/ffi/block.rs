//! Blocking clients on the raw module API.
//!
//! A command that must wait parks its client here with no server-side timeout:
//! the family keeps the client in its own queue and deadline, and later ends
//! the wait with [`Parked::finish`] (or [`Parked::grant`], for a reply that
//! carries something taken for the client). The server may also end it
//! first, when the client disconnects, is killed, or `CLIENT UNBLOCK` names
//! it; the family's [`Waitlist::forget`] then drops the client from its
//! queue and the client is freed here.
//!
//! A grant's reply reaches the client only when the server runs the reply
//! callback, a little after [`Parked::grant`]. A client unblocked, killed or
//! disconnected in between never gets it: the server then skips the reply
//! callback and frees the private data, and the grant's `undelivered`
//! callback runs from there, so that what was taken goes back. Every
//! callback runs under [`guard`], so a panic never crosses into the server.

use std::os::raw::{c_int, c_void};
use std::ptr;

use redis_module::{raw, Context, RedisResult, RedisValue};

use super::dispatch::INTERNAL_ERROR;
use super::panic::guard;
use super::reply;
use crate::api;

/// The family that keeps parked clients.
pub trait Waitlist {
    /// Removes the client from the family's queues. `false` when it is not
    /// there (its wait was already finished).
    fn forget(ctx: &Context, client: ParkedId) -> bool;
}

/// Identifies a parked client (comparable; not a handle).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct ParkedId(*mut raw::RedisModuleBlockedClient);

/// A parked client, owned by the family's queue until it is finished or
/// forgotten.
#[derive(Debug)]
pub struct Parked(*mut raw::RedisModuleBlockedClient);

// The server runs every command, callback and timer on its main thread; the
// handle is only kept in a `Mutex` that requires `Send`.
// SAFETY: a `Parked` is only used in commands, callbacks and timers, all on the
// server's main thread: the module starts no thread, and the callbacks the
// lazy-free thread runs (data types' `free`) never touch the wait queues.
unsafe impl Send for Parked {}
// SAFETY: a `ParkedId` is only compared, never dereferenced.
unsafe impl Send for ParkedId {}

impl Parked {
    /// Parks the running command's client; the command must then reply with
    /// `RedisValue::NoReply`. `None` if the server would not block it.
    pub fn park<W: Waitlist>(ctx: &Context) -> Option<Parked> {
        // SAFETY: `ctx` is the server's context of the running command, whose
        // client is blocked; the callbacks are this module's functions, valid
        // while it is loaded, and no private data is given yet (it comes with
        // `UnblockClient`).
        let bc = unsafe {
            api!(RedisModule_BlockClient)(
                ctx.get_raw(),
                Some(send_reply),
                Some(unblocked_by_command::<W>),
                Some(free_reply),
                0,
            )
        };
        if bc.is_null() {
            return None;
        }
        // SAFETY: `bc` is the non-null handle just returned, not yet unblocked.
        unsafe { api!(RedisModule_SetDisconnectCallback)(bc, Some(disconnected::<W>)) };
        Some(Parked(bc))
    }

    pub fn id(&self) -> ParkedId {
        ParkedId(self.0)
    }

    /// A stand-in for a parked client in unit tests of the queues, which only
    /// compare it (never a real handle: finishing it would reach the server).
    #[cfg(test)]
    pub fn stand_in(n: usize) -> Parked {
        Parked(n as *mut raw::RedisModuleBlockedClient)
    }

    /// Ends the wait: the client gets `reply` as its command's reply.
    pub fn finish(self, reply: RedisResult) {
        self.end(Delivery {
            reply: Some(reply),
            undelivered: None,
        });
    }

    /// Ends the wait with a reply that hands the client something taken for
    /// it. If the reply never reaches the client (it was unblocked, killed or
    /// disconnected first), `undelivered` runs instead, in a context without
    /// a client: it may start a timer, not open keys.
    pub fn grant(self, reply: RedisValue, undelivered: Undelivered) {
        self.end(Delivery {
            reply: Some(Ok(reply)),
            undelivered: Some(undelivered),
        });
    }

    fn end(self, delivery: Delivery) {
        let delivery = Box::into_raw(Box::new(delivery));
        // SAFETY: `self.0` is a handle from `park` that nothing has unblocked:
        // this `Parked` is consumed here, and `release` unblocks only a client
        // whose `Parked` `forget` removed. The server owns `delivery` until
        // `free_reply`.
        unsafe { api!(RedisModule_UnblockClient)(self.0, delivery.cast()) };
    }
}

/// What runs when a grant's reply could not be sent.
pub type Undelivered = Box<dyn FnOnce(&Context)>;

/// A parked client's private data once its wait is ended by the module: the
/// reply still to send (`None` once sent, or once `CLIENT UNBLOCK` answered
/// instead), and what to do if a grant's reply is never sent.
struct Delivery {
    reply: Option<RedisResult>,
    undelivered: Option<Undelivered>,
}

/// The delivery the server holds for the client of `ctx`, if the module
/// ended its wait.
fn delivery<'a>(ctx: *mut raw::RedisModuleCtx) -> Option<&'a mut Delivery> {
    // SAFETY: `ctx` is the context the server passed to a blocked-client
    // callback of this module (`send_reply`, `unblocked_by_command`); only a
    // field is read.
    let data = unsafe { api!(RedisModule_GetBlockedClientPrivateData)(ctx) };
    // SAFETY: the only private data the module gives a blocked client is a
    // boxed `Delivery` (`Parked::end`), which the server keeps until
    // `free_reply`, after every other callback of this client.
    unsafe { data.cast::<Delivery>().as_mut() }
}

/// Whether the running command may block its client: not inside MULTI, a
/// script, or any other context that forbids it.
pub fn may_block(ctx: &Context) -> bool {
    // SAFETY: `ctx` is the server's context of the running call; the function
    // only reads flags from it and from the server's state.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.get_raw()) } as u32;
    flags
        & (raw::REDISMODULE_CTX_FLAGS_MULTI
            | raw::REDISMODULE_CTX_FLAGS_LUA
            | raw::REDISMODULE_CTX_FLAGS_DENY_BLOCKING)
        == 0
}

/// Replies to a client whose wait ended with [`Parked::finish`].
extern "C" fn send_reply(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    let answered = guard(false, || {
        let reply = match delivery(ctx) {
            // The grant reaches its client: nothing to give back.
            Some(delivery) => {
                let reply = delivery.reply.take();
                if reply.is_some() {
                    delivery.undelivered = None;
                }
                reply
            }
            None => Some(Ok(RedisValue::Null)),
        };
        // `None`: `CLIENT UNBLOCK` already answered this client.
        if let Some(reply) = reply {
            reply::send(ctx, reply);
        }
        true
    });
    if !answered {
        guard((), || reply::error(ctx, INTERNAL_ERROR));
    }
    raw::REDISMODULE_OK as c_int
}

/// The last callback of a wait the module ended: a grant whose reply was
/// never sent (the client went first) runs its `undelivered` here.
extern "C" fn free_reply(ctx: *mut raw::RedisModuleCtx, data: *mut c_void) {
    if data.is_null() {
        return;
    }
    guard((), || {
        // SAFETY: made by `Box::into_raw` in `Parked::end`; the server frees
        // it once, after every other callback of this client.
        let delivery = unsafe { Box::from_raw(data.cast::<Delivery>()) };
        if let Some(undelivered) = delivery.undelivered {
            undelivered(&Context::new(ctx));
        }
    });
}

/// `CLIENT UNBLOCK id [TIMEOUT]` on a parked client: it leaves the queue and
/// gets a null reply, as a timed-out wait does. (Redis 7.0 to 8.6 and Valkey
/// never call this once the module ended the wait; should a server do so,
/// the client is answered nil alone and its grant, never sent, goes back.)
extern "C" fn unblocked_by_command<W: Waitlist>(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    guard((), || match delivery(ctx) {
        Some(delivery) => delivery.reply = None,
        None => {
            // SAFETY: `ctx` is the context of this blocked client's unblock
            // callback; the function only reads its handle field.
            let bc = unsafe { api!(RedisModule_GetBlockedClientHandle)(ctx) };
            release::<W>(&Context::new(ctx), bc);
        }
    });
    guard((), || reply::send(ctx, Ok(RedisValue::Null)));
    raw::REDISMODULE_OK as c_int
}

/// The client went away (disconnect, `CLIENT KILL`, `CLIENT UNBLOCK … ERROR`,
/// a primary turned replica): it leaves the queue.
extern "C" fn disconnected<W: Waitlist>(
    ctx: *mut raw::RedisModuleCtx,
    bc: *mut raw::RedisModuleBlockedClient,
) {
    guard((), || release::<W>(&Context::new(ctx), bc));
}

/// Frees a client the server ended the wait of, if the family still had it
/// (a client already finished is freed by the server after its reply).
fn release<W: Waitlist>(ctx: &Context, bc: *mut raw::RedisModuleBlockedClient) {
    if !bc.is_null() && W::forget(ctx, ParkedId(bc)) {
        // SAFETY: `bc` is a handle the server passed for a client still
        // blocked, and `forget` just removed its `Parked` from the queue, so it
        // is unblocked here once and nowhere else.
        unsafe { api!(RedisModule_UnblockClient)(bc, ptr::null_mut()) };
    }
}
