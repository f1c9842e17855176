//! Expiry options read with Redis's rules, and sums of times. Times are
//! absolute Unix milliseconds from the primary's clock ([`now_ms`]), so the
//! effects the module replicates (`PXAT`, `PEXPIREAT`) mean the same on
//! every replica.

#![forbid(unsafe_code)]

use redis_module::RedisError;

use super::args::single;
use super::errors;
use super::ffi::args::Arg;
use super::ffi::context::now_ms;

/// A relative time in milliseconds from `PX ms` or `EX s` (at most one of
/// them; both is the caller's syntax error). Like `SET`, a time that is not
/// positive, or that overflows once made absolute, is refused with
/// `ERR invalid expire time in '<command>' command`.
pub fn ttl_ms(px: Option<Arg>, ex: Option<Arg>) -> Result<Option<i64>, RedisError> {
    let invalid = || errors::INVALID_EXPIRE.error();
    let ms = match (px, ex) {
        (Some(ms), _) => ms.to_i64()?,
        (None, Some(s)) => s.to_i64()?.checked_mul(1000).ok_or_else(invalid)?,
        (None, None) => return Ok(None),
    };
    if ms <= 0 {
        return Err(invalid());
    }
    after(now_ms(), ms)?;
    Ok(Some(ms))
}

/// `PX ms | EX s` ([`LEASE`](super::command::LEASE)), at most one of them
/// (both: `ERR syntax error`): the lease in ms as [`ttl_ms`] reads it, `None`
/// without either.
pub fn lease(px: Option<&[Arg]>, ex: Option<&[Arg]>) -> Result<Option<i64>, RedisError> {
    if px.is_some() && ex.is_some() {
        return Err(errors::SYNTAX.error());
    }
    ttl_ms(single(px), single(ex))
}

/// The time `ms` milliseconds after the Unix time `at` (ms): the one place a
/// stored time (a key's expiry, a lease's end) is summed. The sum must be a
/// time every server takes back (`1..=i64::MAX`: a replica applying it, a
/// loader reading it, `RESTORE` of the key's `DUMP`); else, as `SET` refuses
/// a time past its range, `ERR invalid expire time in '<command>' command`,
/// before the command changes anything.
pub fn after(at: i64, ms: i64) -> Result<i64, RedisError> {
    at.checked_add(ms)
        .filter(|&end| end > 0)
        .ok_or(errors::INVALID_EXPIRE.error())
}

/// [`after`] from the server's clock now.
pub fn from_now(ms: i64) -> Result<i64, RedisError> {
    after(now_ms(), ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sum_past_the_largest_time_is_refused() {
        assert_eq!(after(5, 7).ok(), Some(12));
        assert_eq!(after(0, i64::MAX).ok(), Some(i64::MAX));
        assert_eq!(after(1, i64::MAX - 1).ok(), Some(i64::MAX));
        for (at, ms) in [
            (1, i64::MAX),
            (i64::MAX, 1),
            (i64::MAX, i64::MAX),
            (0, 0),
            (-5, 3),
        ] {
            let Err(error) = after(at, ms) else {
                panic!("{at} + {ms} accepted");
            };
            assert_eq!(error.to_string(), errors::INVALID_EXPIRE.text);
        }
    }
}
