//! Every reply the module sends ([`Reply`], or a result), through the raw
//! API and our own code.
//!
//! The crate's `Context::reply` is never used: for an error or status line it
//! turns each `char` into a byte with `c as u8` and unwraps a `CString`, so a
//! character whose code point is a multiple of 256 (`가`, `一`, `Ā`) became a
//! NUL byte and a panic that aborted the server. Here an error or status line
//! is made safe first ([`with_line`]), so building it cannot fail, and text quoted
//! from a client goes through [`quote`](crate::common::reply::quote), which keeps
//! valid UTF-8 as it is.

use crate::common::errors;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_long};

use redis_module::redisvalue::RedisValueKey;
use redis_module::{raw, RedisError, RedisResult, RedisValue};

use crate::api;
use crate::common::reply::{Item, Replied, Reply};

/// A whole error or status line as a C string: `\r`/`\n` made spaces and NUL
/// escaped, so that it is one line and the conversion cannot fail. Handed to
/// `send`.
fn with_line(text: &str, send: impl FnOnce(&CStr)) {
    let bytes = text.as_bytes();
    let mut line = Vec::with_capacity(bytes.len() + 1);
    for &byte in bytes {
        match byte {
            b'\r' | b'\n' => line.push(b' '),
            0 => line.extend_from_slice(b"\\x00"),
            byte => line.push(byte),
        }
    }
    // No NUL is left, so this is always `Ok`.
    send(&CString::new(line).unwrap_or_default())
}

/// Sends an error line (`CODE message`).
pub fn error(ctx: *mut raw::RedisModuleCtx, text: &str) {
    // SAFETY: `ctx` is the server's context of the call being answered (a reply
    // is dropped if it has no client); the server copies `line`.
    with_line(text, |line| unsafe {
        api!(RedisModule_ReplyWithError)(ctx, line.as_ptr());
    });
}

/// Sends a command's result as its reply.
pub fn send(ctx: *mut raw::RedisModuleCtx, result: RedisResult) {
    match result {
        Ok(value) => send_value(ctx, value),
        // SAFETY: `ctx` has a client here: `send` answers a command
        // (`dispatch`) or a blocked client's reply callback, and the server
        // reads that client's command name.
        Err(RedisError::WrongArity) => unsafe {
            api!(RedisModule_WrongArity)(ctx);
        },
        Err(RedisError::WrongType) => error(ctx, errors::WRONG_TYPE.text),
        Err(RedisError::Str(text)) => error(ctx, text),
        Err(RedisError::String(text)) => error(ctx, &text),
    }
}

fn send_value(ctx: *mut raw::RedisModuleCtx, value: RedisValue) {
    // SAFETY: `ctx` is the server's context of the call being answered (a reply
    // is dropped if it has no client); the server copies every buffer,
    // `string.inner` is a live string owned by `value`, and an optional API
    // pointer (set at load) is called only when present.
    unsafe {
        match value {
            RedisValue::Integer(n) => {
                api!(RedisModule_ReplyWithLongLong)(ctx, n);
            }
            RedisValue::Null => {
                api!(RedisModule_ReplyWithNull)(ctx);
            }
            RedisValue::NoReply => {}
            RedisValue::SimpleStringStatic(text) => status(ctx, text),
            RedisValue::SimpleString(text) => status(ctx, &text),
            RedisValue::BulkString(text) => bulk(ctx, text.as_bytes()),
            RedisValue::StringBuffer(bytes) => bulk(ctx, &bytes),
            RedisValue::BulkRedisString(string) => {
                api!(RedisModule_ReplyWithString)(ctx, string.inner);
            }
            RedisValue::StaticError(text) => error(ctx, text),
            RedisValue::Bool(value) => match raw::RedisModule_ReplyWithBool {
                Some(reply_bool) => {
                    reply_bool(ctx, c_int::from(value));
                }
                None => {
                    api!(RedisModule_ReplyWithLongLong)(ctx, i64::from(value));
                }
            },
            RedisValue::Float(value) => {
                api!(RedisModule_ReplyWithDouble)(ctx, value);
            }
            RedisValue::BigNumber(digits) => match raw::RedisModule_ReplyWithBigNumber {
                Some(reply_big) => {
                    reply_big(ctx, digits.as_ptr().cast(), digits.len());
                }
                None => bulk(ctx, digits.as_bytes()),
            },
            RedisValue::VerbatimString((_, bytes)) => bulk(ctx, &bytes),
            RedisValue::Array(items) => {
                api!(RedisModule_ReplyWithArray)(ctx, items.len() as c_long);
                for item in items {
                    send_value(ctx, item);
                }
            }
            RedisValue::Map(map) => {
                api!(RedisModule_ReplyWithMap)(ctx, map.len() as c_long);
                for (key, value) in map {
                    send_key(ctx, key);
                    send_value(ctx, value);
                }
            }
            RedisValue::OrderedMap(map) => {
                api!(RedisModule_ReplyWithMap)(ctx, map.len() as c_long);
                for (key, value) in map {
                    send_key(ctx, key);
                    send_value(ctx, value);
                }
            }
            RedisValue::Set(set) => {
                set_header(ctx, set.len());
                set.into_iter().for_each(|key| send_key(ctx, key));
            }
            RedisValue::OrderedSet(set) => {
                set_header(ctx, set.len());
                set.into_iter().for_each(|key| send_key(ctx, key));
            }
        }
    }
}

fn status(ctx: *mut raw::RedisModuleCtx, text: &str) {
    // SAFETY: `ctx` is the server's context of the call being answered (a reply
    // is dropped if it has no client); the server copies `line`.
    with_line(text, |line| unsafe {
        api!(RedisModule_ReplyWithSimpleString)(ctx, line.as_ptr());
    });
}

fn bulk(ctx: *mut raw::RedisModuleCtx, bytes: &[u8]) {
    // SAFETY: `ctx` is the server's context of the call being answered (a reply
    // is dropped if it has no client); the server copies the `bytes.len()`
    // bytes before returning.
    unsafe {
        api!(RedisModule_ReplyWithStringBuffer)(ctx, bytes.as_ptr().cast::<c_char>(), bytes.len())
    };
}

fn set_header(ctx: *mut raw::RedisModuleCtx, len: usize) {
    // SAFETY: `ctx` is the server's context of the call being answered (a reply
    // is dropped if it has no client); `RedisModule_ReplyWithSet` is an API
    // pointer set at load, called only when present.
    unsafe {
        match raw::RedisModule_ReplyWithSet {
            Some(reply_set) => reply_set(ctx, len as c_long),
            None => api!(RedisModule_ReplyWithArray)(ctx, len as c_long),
        };
    }
}

fn send_key(ctx: *mut raw::RedisModuleCtx, key: RedisValueKey) {
    match key {
        RedisValueKey::Integer(n) => send_value(ctx, RedisValue::Integer(n)),
        RedisValueKey::String(text) => bulk(ctx, text.as_bytes()),
        RedisValueKey::BulkString(bytes) => bulk(ctx, &bytes),
        RedisValueKey::BulkRedisString(string) => {
            send_value(ctx, RedisValue::BulkRedisString(string))
        }
        RedisValueKey::Bool(value) => send_value(ctx, RedisValue::Bool(value)),
    }
}

/// Whether the running call's client speaks RESP3.
fn resp3(ctx: *mut raw::RedisModuleCtx) -> bool {
    // SAFETY: `ctx` is the server's context of the running call; the
    // function only reads flags from it and from the server's state.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_RESP3 != 0
}

/// Sends a handler's reply.
pub fn send_reply(ctx: *mut raw::RedisModuleCtx, replied: Replied) {
    match replied {
        Ok(Reply::Value(value)) => send(ctx, Ok(value)),
        Ok(Reply::Map(pairs)) => {
            let len = pairs.len();
            fields(ctx, pairs.into_iter(), len, true)
        }
        Ok(Reply::Record(names, values)) => {
            let named = resp3(ctx);
            let pairs = names
                .iter()
                .zip(values)
                .map(|(name, value)| (*name, Item::Int(value)));
            fields(ctx, pairs, names.len(), named)
        }
        Err(error) => send(ctx, Err(error)),
    }
}

fn fields<'a>(
    ctx: *mut raw::RedisModuleCtx,
    pairs: impl Iterator<Item = (&'static [u8], Item<'a>)>,
    len: usize,
    named: bool,
) {
    // SAFETY: `ctx` is the server's context of the running call (a reply is
    // dropped if it has no client); `bulk` passes buffers the server copies.
    unsafe {
        if named {
            api!(RedisModule_ReplyWithMap)(ctx, len as c_long);
        } else {
            api!(RedisModule_ReplyWithArray)(ctx, len as c_long);
        }
        for (name, value) in pairs {
            if named {
                bulk(ctx, name);
            }
            match value {
                Item::String(string) => bulk(ctx, string.as_bytes()),
                Item::Int(value) => {
                    api!(RedisModule_ReplyWithLongLong)(ctx, value);
                }
                Item::Null => {
                    api!(RedisModule_ReplyWithNull)(ctx);
                }
                Item::Value(value) => send_value(ctx, value),
            };
        }
    }
}

/// Replies sent piece by piece, while the command still works (a handler
/// that sends its reply this way returns `RedisValue::NoReply`): an array
/// whose items come from a list as they are popped, without holding them
/// in a `Vec` first. Each piece is one item of the reply being built.
pub mod direct {
    use std::os::raw::c_long;

    use redis_module::Context;

    use crate::api;
    use crate::common::ffi::args::Arg;

    /// An array header of `len` items; exactly `len` pieces must follow.
    pub fn array(ctx: &Context, len: usize) {
        // SAFETY: `ctx` is the server's context of the running call (a reply
        // is dropped if it has no client).
        unsafe { api!(RedisModule_ReplyWithArray)(ctx.get_raw(), len as c_long) };
    }

    pub fn integer(ctx: &Context, value: i64) {
        // SAFETY: as in `array`.
        unsafe { api!(RedisModule_ReplyWithLongLong)(ctx.get_raw(), value) };
    }

    pub fn null(ctx: &Context) {
        // SAFETY: as in `array`.
        unsafe { api!(RedisModule_ReplyWithNull)(ctx.get_raw()) };
    }

    /// Bytes as a bulk string (the server copies them).
    pub fn bulk(ctx: &Context, bytes: &[u8]) {
        super::bulk(ctx.get_raw(), bytes);
    }

    /// Each of `items` as a bulk string: the loop of a long reply, the
    /// server function looked up once.
    #[inline]
    pub fn bulks<'b>(ctx: &Context, items: impl Iterator<Item = &'b [u8]>) {
        let send = api!(RedisModule_ReplyWithStringBuffer);
        let ctx = ctx.get_raw();
        for bytes in items {
            // SAFETY: as in `array`; the server copies the `bytes.len()`
            // bytes before returning.
            unsafe { send(ctx, bytes.as_ptr().cast(), bytes.len()) };
        }
    }

    /// A double (RESP3), or its shortest text as a bulk string (RESP2).
    pub fn double(ctx: &Context, value: f64) {
        // SAFETY: as in `array`.
        unsafe { api!(RedisModule_ReplyWithDouble)(ctx.get_raw(), value) };
    }

    /// Whether the running call's client speaks RESP3.
    pub fn resp3(ctx: &Context) -> bool {
        super::resp3(ctx.get_raw())
    }

    /// An argument of the call as a bulk string.
    pub fn arg(ctx: &Context, item: Arg) {
        // SAFETY: as in `array`; `item` is a live server string, which the
        // server copies into the reply.
        unsafe { api!(RedisModule_ReplyWithString)(ctx.get_raw(), item.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::with_line;

    #[test]
    fn a_line_is_one_line_without_nul() {
        let line = |text: &str| {
            let mut sent = Vec::new();
            with_line(text, |line| sent = line.to_bytes().to_vec());
            sent
        };
        assert_eq!(line("ERR a\r\nb"), b"ERR a  b");
        assert_eq!(line("ERR \0"), b"ERR \\x00");
        assert_eq!(line("ERR 가"), "ERR 가".as_bytes());
        assert_eq!(line("OK"), b"OK");
        assert_eq!(line(""), b"");
        // Either side of the stack buffer's size, with and without changes.
        for len in [94, 95, 96, 97, 300] {
            let plain = "e".repeat(len);
            assert_eq!(line(&plain), plain.as_bytes());
            let broken = format!("{}\n", "e".repeat(len));
            assert_eq!(line(&broken), format!("{} ", "e".repeat(len)).as_bytes());
        }
    }
}
