//! The server's clock, and expiry options read with Redis's rules. Times are
//! absolute Unix milliseconds from the primary's clock, so the effects the
//! module replicates (`PXAT`, `PEXPIREAT`) mean the same on every replica.

use redis_module::RedisError;

use super::args::Arg;
use super::errors;
use crate::api;

/// The server's wall clock, in Unix milliseconds.
pub fn now_ms() -> i64 {
    // SAFETY: the function takes no argument and only reads the clock.
    unsafe { api!(RedisModule_Milliseconds)() }
}

/// A relative time in milliseconds from `PX ms` or `EX s` (at most one of
/// them; both is the caller's syntax error). Like `SET`, a time that is not
/// positive, or that overflows once made absolute, is refused with
/// `ERR invalid expire time in '<command>' command`.
pub fn ttl_ms(command: &str, px: Option<Arg>, ex: Option<Arg>) -> Result<Option<i64>, RedisError> {
    let invalid = || errors::invalid_expire(command);
    let ms = match (px, ex) {
        (Some(ms), _) => ms.to_i64()?,
        (None, Some(s)) => s.to_i64()?.checked_mul(1000).ok_or_else(invalid)?,
        (None, None) => return Ok(None),
    };
    if ms <= 0 || now_ms().checked_add(ms).is_none() {
        return Err(invalid());
    }
    Ok(Some(ms))
}
