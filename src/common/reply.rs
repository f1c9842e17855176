//! Replies the crate's `RedisValue` cannot shape: a map that keeps its
//! order (a RESP3 map, a flat field/value array under RESP2).

use redis_module::{Context, RedisValue};

use crate::api;

/// Replies with `pairs` as a map, in their order. The command then returns
/// the value this gives back.
pub fn map(ctx: &Context, pairs: &[(&[u8], &[u8])]) -> RedisValue {
    let raw = ctx.get_raw();
    unsafe {
        api!(RedisModule_ReplyWithMap)(raw, pairs.len() as std::os::raw::c_long);
        for (name, value) in pairs {
            api!(RedisModule_ReplyWithStringBuffer)(raw, name.as_ptr().cast(), name.len());
            api!(RedisModule_ReplyWithStringBuffer)(raw, value.as_ptr().cast(), value.len());
        }
    }
    RedisValue::NoReply
}
