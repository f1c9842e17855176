//! A lease's end, as the pools (IDPOOL, POOL, RWLOCK) store it, carry it in
//! their effects and show it, and the ended leases a write reclaims.

#![forbid(unsafe_code)]

use redis_module::{Context, RedisError};

use super::ffi::replicate::deciding;
use super::stats::Stat;
use super::{errors, time};

/// The stored end of a lease that does not end: after every time.
pub const NO_END: u64 = u64::MAX;

/// Whether a stored lease end is one the commands could have made: no end,
/// or a Unix millisecond time a signed 64-bit integer holds.
pub fn valid(end: u64) -> bool {
    end == NO_END || (1..=i64::MAX as u64).contains(&end)
}

/// The end of a lease of `ms` (none: no end) from the Unix time `from`
/// (ms), checked by [`time::after`]: always [`valid`].
pub fn end_after(from: u64, ms: Option<i64>) -> Result<u64, RedisError> {
    let Some(ms) = ms else { return Ok(NO_END) };
    let from = i64::try_from(from).map_err(|_| errors::INVALID_EXPIRE.error())?;
    Ok(time::after(from, ms)? as u64)
}

/// The end as an effect or an AOF rewrite carries it
/// (`IDPOOL.APPLY … LEASE id at`, `POOL.APPLY … HOLD resource owner at`):
/// 0 for no end.
pub fn to_wire(end: u64) -> i64 {
    if end == NO_END {
        0
    } else {
        end as i64
    }
}

/// Reads an end as [`to_wire`] writes it.
pub fn from_wire(at: i64) -> Result<u64, RedisError> {
    match at {
        0 => Ok(NO_END),
        at if at > 0 => Ok(at as u64),
        _ => Err(errors::LEASE_END.error()),
    }
}

/// The end as a reply shows it: -1 for no end, as `PEXPIRETIME` does.
pub fn to_reply(end: u64) -> i64 {
    if end == NO_END {
        -1
    } else {
        end as i64
    }
}

/// The ended leases a pool's write removes first, collected by `reclaim`
/// and counted in `counted`: only where this server decides outcomes (a
/// primary running a client's command), which then replicates the removals.
/// A replica or an AOF replay running a command that went verbatim reclaims
/// nothing: the primary had nothing to reclaim then, or it would have sent
/// the effect instead.
pub fn reclaim_ended<T>(
    ctx: &Context,
    counted: Option<&Stat>,
    reclaim: impl FnOnce(&mut Vec<T>),
) -> Vec<T> {
    let mut freed = Vec::new();
    if deciding(ctx) {
        reclaim(&mut freed);
        if let Some(counted) = counted {
            counted.add(freed.len() as i64);
        }
    }
    freed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_end_survives_the_wire() {
        for end in [NO_END, 1, 1_795_000_000_000, i64::MAX as u64] {
            assert!(valid(end));
            assert_eq!(from_wire(to_wire(end)).ok(), Some(end));
        }
        assert!(from_wire(-1).is_err());
        assert!(!valid(0));
        assert!(!valid(i64::MAX as u64 + 1));
        assert_eq!(to_reply(NO_END), -1);
        assert_eq!(to_reply(5), 5);
    }

    #[test]
    fn an_end_is_never_made_past_the_largest_time() {
        assert_eq!(end_after(5, None).ok(), Some(NO_END));
        assert_eq!(end_after(5, Some(7)).ok(), Some(12));
        let largest = i64::MAX as u64;
        assert_eq!(end_after(1, Some(i64::MAX - 1)).ok(), Some(largest));
        assert!(valid(largest));
        assert!(end_after(2, Some(i64::MAX - 1)).is_err());
        assert!(end_after(largest, Some(largest as i64)).is_err());
        assert!(end_after(NO_END, Some(1)).is_err());
    }
}
