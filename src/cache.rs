//! CACHE: what the built-ins lack for caching on Redis 7.0–7.4. Text and
//! binary caches are `SET … EX` / `GET` (see `docs/src/cache.md`); this family adds
//! JSON values checked and projected by the server, and hashes written
//! together with their TTL.
//!
//! A JSON value is a plain string holding the document minified (numbers kept
//! exactly as written, object keys in their order), so `GET` still reads it.

#![forbid(unsafe_code)]

mod core;
mod errors;

use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisValue};

use crate::common::args::{parse_options, single};
use crate::common::command::{
    ArgSpec, ArgType, BeginSearch, CommandSpec, Events, FindKeys, KeySpec, EX, NX, PX, READS_FIRST,
};
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::key::{Field, Key, Kind};
use crate::common::ffi::replicate::{self, Word};
use crate::common::reply::Replied;
use crate::common::time::{self, ttl_ms};
use crate::entry;

/// Checks and minifies a JSON document: in one pass when it can (see
/// `cache/core.rs`), else through a document tree, whose error names where the
/// document is wrong (serde_json's messages describe the mistake without
/// quoting the input).
fn minify(document: &[u8]) -> Result<Vec<u8>, RedisError> {
    if let Some(minified) = self::core::minify(document) {
        return Ok(minified);
    }
    let value: serde_json::Value =
        serde_json::from_slice(document).map_err(|error| errors::INVALID_JSON.with(&[&error]))?;
    Ok(serde_json::to_vec(&value).unwrap_or_default())
}

/// `CACHE.SETJSON key json [EX s | PX ms] [NX | XX]` → OK, or nil when NX/XX
/// prevents it. Like `SET`, it replaces a value of any type and its TTL.
fn set_json<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, document, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [ex, px, nx, xx] = parse_options(options, &[EX, PX, NX, XX])?;
    if (ex.is_some() && px.is_some()) || (nx.is_some() && xx.is_some()) {
        return Err(errors::SYNTAX.error());
    }
    let ttl = ttl_ms(single(px), single(ex))?;
    let minified = minify(document.as_bytes())?;
    let mut key = Key::write(ctx, *name);
    let exists = key.kind() != Kind::Empty;
    if (nx.is_some() && exists) || (xx.is_some() && !exists) {
        return Ok(RedisValue::Null.into());
    }
    match ttl {
        // Without a TTL the stored value follows from the arguments (and
        // NX/XX from the key), so the command goes verbatim.
        None => {
            key.set_value(&minified, None)?;
            replicate::verbatim(ctx);
        }
        Some(ms) => {
            let at = time::from_now(ms)?;
            key.set_value(&minified, Some(at))?;
            let (name, value) = (Word::Arg(*name), Word::Bytes(&minified));
            replicate::effect(
                ctx,
                c"SET",
                &[name, value, Word::Token(c"PXAT"), Word::Int(at)],
            );
        }
    }
    Ok(RedisValue::SimpleStringStatic("OK").into())
}

/// `CACHE.GETJSON key [FIELD name …]` → the document, or an object of only
/// the named top-level fields; nil for a missing key.
fn get_json<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, rest @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let fields = match rest {
        [] => None,
        [token, names @ ..] if token.is(&FIELD) && !names.is_empty() => Some(names),
        _ => return Err(errors::SYNTAX.error()),
    };
    let key = Key::read(ctx, *name);
    let Some(stored) = key.string()? else {
        return Ok(RedisValue::Null.into());
    };
    let not_json = || errors::NOT_JSON.error();
    let Some(fields) = fields else {
        // Checked without building the document.
        serde_json::from_slice::<serde::de::IgnoredAny>(stored).map_err(|_| not_json())?;
        return Ok(RedisValue::StringBuffer(stored.to_vec()).into());
    };
    let value: serde_json::Value = serde_json::from_slice(stored).map_err(|_| not_json())?;
    let serde_json::Value::Object(mut object) = value else {
        return Err(errors::NOT_A_JSON_OBJECT.error());
    };
    let mut projection = serde_json::Map::with_capacity(fields.len());
    for field in fields {
        let field = String::from_utf8_lossy(field.as_bytes());
        if let Some(value) = object.remove(field.as_ref()) {
            projection.insert(field.into_owned(), value);
        }
    }
    Ok(RedisValue::StringBuffer(serde_json::to_vec(&projection).unwrap_or_default()).into())
}

/// `CACHE.HSET key EX s | PX ms field value [field value …]` → the number of
/// fields added; the key's TTL is set in the same step.
fn hset<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, unit, amount, pairs @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let (px, ex) = match () {
        _ if unit.is(&PX) => (Some(*amount), None),
        _ if unit.is(&EX) => (None, Some(*amount)),
        _ => return Err(errors::SYNTAX.error()),
    };
    let ttl = ttl_ms(px, ex)?.ok_or(errors::SYNTAX.error())?;
    // One expiry: a first field named EX or PX reads as a second one.
    if pairs
        .first()
        .is_some_and(|field| field.is(&EX) || field.is(&PX))
    {
        return Err(errors::SYNTAX.error());
    }
    if pairs.is_empty() || pairs.len() % 2 != 0 {
        return Err(RedisError::WrongArity);
    }
    let mut key = Key::write(ctx, *name);
    match key.kind() {
        Kind::Empty | Kind::Hash => {}
        Kind::String | Kind::Other => return Err(RedisError::WrongType),
    }
    // Made before anything is written: a time past the largest is an error.
    let at = time::from_now(ttl)?;
    let mut added = 0;
    let mut words = Vec::with_capacity(1 + pairs.len());
    words.push(Word::Arg(*name));
    for pair in pairs.chunks_exact(2) {
        let (field, value) = (pair[0], pair[1]);
        if !key.set_hash_field(Field::Arg(field), value) {
            added += 1;
        }
        words.extend([Word::Arg(field), Word::Arg(value)]);
    }
    key.set_expire_at(Some(at));
    replicate::effect(ctx, c"HSET", &words);
    replicate::effect(ctx, c"PEXPIREAT", &[Word::Arg(*name), Word::Int(at)]);
    key.written(raw::REDISMODULE_NOTIFY_HASH as c_int, c"hset");
    key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"expire");
    Ok(RedisValue::Integer(added).into())
}

const WRITE_KEY: &[KeySpec] = &[KeySpec {
    flags: raw::REDISMODULE_CMD_KEY_OW | raw::REDISMODULE_CMD_KEY_UPDATE,
    begin: BeginSearch::Index(1),
    find: FindKeys::One,
}];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const HASH_KEY: &[KeySpec] = &[KeySpec {
    flags: raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE,
    begin: BeginSearch::Index(1),
    find: FindKeys::One,
}];

/// `EX s | PX ms`, in `SET`'s order.
const EXPIRATION: &[ArgSpec] = &[EX, PX];
const XX: ArgSpec = ArgSpec::keyword(c"xx", c"XX");
const CONDITION: &[ArgSpec] = &[NX, XX];
/// `FIELD name [name …]`: the names follow to the end.
const FIELD: ArgSpec = ArgSpec::option(c"name", c"FIELD", ArgType::String).multiple();

pub static FAMILY: FamilySpec = FamilySpec {
    about: "checked JSON values and hashes written with their TTL",
    replaces:
        "JSON serialised by the client without checks, `MULTI`/`HSET`/`EXPIRE`/`EXEC` hash caches",
    commands: COMMANDS,
    stats: &[],
    waiting: None,
    settings: &[],
    errors: errors::OWN,
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        entry: entry!(c"cache.setjson", set_json, WRITE_KEY),
        flags: c"write deny-oom",
        acl_categories: c"write string",
        arity: -3,
        summary:
            c"Stores a JSON document (checked, minified) as a string, with SET's EX/PX and NX/XX",
        complexity: c"O(N) where N is the size of the document",
        since: c"0.1.0",
        reply: "Simple string reply `OK` when the minified document was stored; nil when `NX` \
                (the key exists) or `XX` (the key does not exist) prevented it.",
        events: Some(Events {
            fires: "`set`, then `expire` with `EX`/`PX`",
            replica: None,
        }),
        args: &[
            ArgSpec::key(c"key", 0),
            ArgSpec::required(c"json", ArgType::String),
            ArgSpec::one_of(c"expiration", EXPIRATION).optional(),
            ArgSpec::one_of(c"condition", CONDITION).optional(),
        ],
    },
    CommandSpec {
        entry: entry!(c"cache.getjson", get_json, READ_KEY),
        flags: c"readonly",
        acl_categories: c"read string",
        arity: -2,
        summary: c"Returns a JSON document, or an object of only the named top-level fields",
        complexity: c"O(N) where N is the size of the document",
        since: c"0.1.0",
        reply: "Bulk string reply: the stored JSON document; with `FIELD`, a JSON object of \
                only the named top-level fields that exist, in the order named (`{}` when \
                none does); nil when the key does not exist.",
        events: None,
        args: &[ArgSpec::key(c"key", 0), FIELD],
    },
    CommandSpec {
        entry: entry!(c"cache.hset", hset, HASH_KEY),
        flags: c"write deny-oom",
        acl_categories: c"write hash",
        arity: -6,
        summary:
            c"Sets hash fields and the key's TTL in one step; returns the number of fields added",
        complexity: c"O(N) where N is the number of fields",
        since: c"0.1.0",
        reply: "Integer reply: the number of fields that were new (fields that existed are \
                updated but not counted; a field named twice counts once), the key's TTL set \
                in the same step.",
        events: Some(Events {
            fires: "`hset`, `expire`",
            replica: None,
        }),
        args: &[
            ArgSpec::key(c"key", 0),
            ArgSpec::one_of(c"expiration", EXPIRATION),
            ArgSpec::group(
                c"data",
                &[
                    ArgSpec::required(c"field", ArgType::String),
                    ArgSpec::required(c"value", ArgType::String),
                ],
            )
            .multiple(),
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::minify;

    #[test]
    fn minifies_and_keeps_numbers_and_text_exactly() {
        let got = minify(
            br#" { "b" : 1 , "a" : [ 123456789012345678901234567890, 1.10, -0 ], "t" : "caf\u00e9 \u65e5 \"q\"" } "#,
        )
        .ok();
        let expected =
            r#"{"b":1,"a":[123456789012345678901234567890,1.10,-0],"t":"café 日 \"q\""}"#;
        assert_eq!(got.as_deref(), Some(expected.as_bytes()));
    }

    #[test]
    fn refuses_invalid_json_with_its_position() {
        let error = minify(b"{\"a\": [1, 2,, 3]}")
            .err()
            .map(|e| format!("{e:?}"));
        let error = error.unwrap_or_default();
        assert!(
            error.contains("BADJSON invalid JSON: expected value at line 1 column 13"),
            "{error}"
        );
        assert!(minify(b"").is_err());
        assert!(minify(b"{\"a\":1} trailing").is_err());
        assert!(minify(b"\xff").is_err());
    }
}
