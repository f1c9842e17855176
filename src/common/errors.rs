//! The errors more than one command answers, written once. Every error the
//! module answers, with the commands that answer it, is listed in
//! `docs/errors.md`; clients (the Python package's exception classes) follow
//! that list.

#![forbid(unsafe_code)]

use redis_module::RedisError;

/// An unknown, repeated or incomplete option: the server's own text.
pub const SYNTAX_ERROR: RedisError = RedisError::Str("ERR syntax error");
/// An argument that should be an integer: the server's own text.
pub const NOT_AN_INTEGER: RedisError =
    RedisError::Str("ERR value is not an integer or out of range");
/// A hash field that should hold an integer: `HINCRBY`'s text.
pub const HASH_NOT_AN_INTEGER: RedisError = RedisError::Str("ERR hash value is not an integer");
/// A counter at its largest value: `INCR`'s text.
pub const OVERFLOW: RedisError = RedisError::Str("ERR increment or decrement would overflow");
/// The server refused to store a value (it does not, for an empty key).
/// A lock's token (LOCK, RWLOCK) given as an empty string.
pub const EMPTY_TOKEN: RedisError = RedisError::Str("ERR token must not be empty");

pub const NOT_STORED: RedisError = RedisError::Str("ERR could not store the value");

/// An expiry that is not positive, or passes the largest time: `SET`'s text.
pub fn invalid_expire(command: &str) -> RedisError {
    RedisError::String(format!("ERR invalid expire time in '{command}' command"))
}

/// An internal `*.APPLY` command sent by a client: only the replication
/// stream and AOF loading may send one.
pub fn internal_only(command: &str, instead: &str) -> RedisError {
    RedisError::String(format!(
        "ERR {command} only carries a primary's effects to replicas and the AOF; use {instead}"
    ))
}
