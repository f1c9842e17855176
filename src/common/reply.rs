//! Replies the crate's `RedisValue` cannot shape: a map that keeps its
//! order (a RESP3 map, a flat field/value array under RESP2).

use redis_module::{Context, RedisValue};

use crate::api;

/// One value of a map reply.
#[derive(Clone, Copy)]
pub enum Value<'a> {
    Bytes(&'a [u8]),
    Int(i64),
    Null,
}

/// Replies with `pairs` as a map, in their order. The command then returns
/// the value this gives back.
pub fn map(ctx: &Context, pairs: &[(&[u8], Value)]) -> RedisValue {
    let raw = ctx.get_raw();
    unsafe {
        api!(RedisModule_ReplyWithMap)(raw, pairs.len() as std::os::raw::c_long);
        for (name, value) in pairs {
            api!(RedisModule_ReplyWithStringBuffer)(raw, name.as_ptr().cast(), name.len());
            match *value {
                Value::Bytes(bytes) => {
                    api!(RedisModule_ReplyWithStringBuffer)(raw, bytes.as_ptr().cast(), bytes.len())
                }
                Value::Int(value) => api!(RedisModule_ReplyWithLongLong)(raw, value),
                Value::Null => api!(RedisModule_ReplyWithNull)(raw),
            };
        }
    }
    RedisValue::NoReply
}
