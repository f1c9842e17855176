//! Readers of the families' `INFO` replies and `INFO recipes`.

use super::*;

/// Every `recipes_*` figure of `INFO <section>`, by name without the prefix.
pub fn recipes_figures(
    con: &mut Connection,
    section: &str,
) -> std::collections::HashMap<String, i64> {
    let text: String = query(con, &["INFO", section]);
    text.lines()
        .filter_map(|line| line.strip_prefix("recipes_"))
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.to_string(), value.trim().parse().unwrap()))
        .collect()
}

/// A `RATE.LIMIT`/`RATE.PEEK` decision as RESP2 gives it: limited, limit,
/// remaining, retry-after, reset-after.
pub fn decide(con: &mut impl redis::ConnectionLike, words: &[&str]) -> [i64; 5] {
    let reply: Vec<i64> = query(con, words);
    reply
        .try_into()
        .unwrap_or_else(|reply| panic!("{words:?}: {reply:?}"))
}

/// `POOL.INFO` as (size, free, held, waiting).
pub fn pool_info(con: &mut Connection, key: &str) -> (i64, i64, i64, i64) {
    let map: std::collections::HashMap<String, i64> = query(con, &["POOL.INFO", key]);
    (map["size"], map["free"], map["held"], map["waiting"])
}

/// `POOL.HOLDERS` as (resource, owner, lease end).
pub fn pool_holders(con: &mut Connection, key: &str) -> Vec<(String, String, i64)> {
    query(con, &["POOL.HOLDERS", key])
}

/// `IDPOOL.INFO` as (max, leased, next, default_ttl).
pub type IdpoolInfo = (i64, i64, i64, Option<i64>);

/// `IDPOOL.INFO`, every field present.
pub fn idpool_info(con: &mut Connection, key: &str) -> IdpoolInfo {
    let map: std::collections::HashMap<String, Option<i64>> = query(con, &["IDPOOL.INFO", key]);
    let field = |name: &str| {
        map.get(name)
            .copied()
            .unwrap_or_else(|| panic!("no {name} in {map:?}"))
    };
    (
        field("max").unwrap(),
        field("leased").unwrap(),
        field("next").unwrap(),
        field("default_ttl"),
    )
}
