//! ARTICLE: records created atomically only if absent, partial updates,
//! unique slugs and page views.
//!
//! An article is one hash: `title`, `content`, `author`, `created_at`, and
//! when present `updated_at`, `slug` and `views`, readable with `HGETALL`.
//! A slug index is a hash `slug → article key`. Times are the server's clock
//! in Unix milliseconds. Every check is made before anything is written, so a
//! command that does not succeed changes nothing.
//!
//! Replication: `CREATE` and `UPDATE` read the clock (`created_at`,
//! `updated_at`), so they send their effect, `HSET` with the primary's time;
//! `SETSLUG`, `VIEW` and `DELETE` follow from the stored hashes alone and go
//! verbatim.

#![forbid(unsafe_code)]

mod errors;

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisValue};

use crate::common::args::{parse_i64, parse_options, single};
use crate::common::command::{
    ArgSpec, ArgType, BeginSearch, CommandSpec, Events, FindKeys, KeySpec, READS_FIRST, UPDATED,
    UPDATES_FIRST,
};
use crate::common::config::Setting;
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::context::now_ms;
use crate::common::ffi::key::{Field, Key, Kind};
use crate::common::ffi::replicate::{self, Word};
use crate::common::ffi::strings::OwnedString;
use crate::common::reply::{self, Item, Replied, Reply};
use crate::entry;

const TITLE: &CStr = c"title";
const CONTENT: &CStr = c"content";
const AUTHOR: &CStr = c"author";
const CREATED_AT: &CStr = c"created_at";
const UPDATED_AT: &CStr = c"updated_at";
const SLUG: &CStr = c"slug";
const VIEWS: &CStr = c"views";

/// An article's fields, in the order `ARTICLE.GET` gives them.
const FIELDS: [&CStr; 7] = [TITLE, CONTENT, AUTHOR, CREATED_AT, UPDATED_AT, SLUG, VIEWS];
/// The fields `ARTICLE.GET … JSON` gives as numbers.
const NUMBERS: [&CStr; 3] = [CREATED_AT, UPDATED_AT, VIEWS];

/// `SLUG slugkey slug` (`ARTICLE.CREATE`): the slug index, the slug claimed.
const SLUG_CLAIM: ArgSpec = ArgSpec::block(
    c"slug-claim",
    c"SLUG",
    &[ArgSpec::key(c"slugkey", 1), SLUG_ARG],
);
/// `SLUG slugkey` (`ARTICLE.DELETE`): the slug index.
const SLUG_INDEX: ArgSpec = ArgSpec::option(c"slugkey", c"SLUG", ArgType::Key(1));
const JSON: ArgSpec = ArgSpec::flag(c"json", c"JSON");
const TITLE_OPTION: ArgSpec = ArgSpec::option(c"title", c"TITLE", ArgType::String);
const CONTENT_OPTION: ArgSpec = ArgSpec::option(c"content", c"CONTENT", ArgType::String);
const AUTHOR_OPTION: ArgSpec = ArgSpec::option(c"author", c"AUTHOR", ArgType::String);

const SAME_KEY: RedisError = errors::SLUG_INDEX_KEY.error();

/// `ARTICLE.BYSLUG` finds a slug stored under any setting.
pub static SLUG_MAX_CHARS: Setting = Setting::new(
    c"article-slug-max-chars",
    (200, 1, 4096),
    "the characters of a slug `ARTICLE.CREATE` and `ARTICLE.SETSLUG` give",
);

/// A slug: 1 to `most` characters, each a Unicode letter or digit, `-` or
/// `_`.
fn valid_slug(bytes: &[u8], most: i64) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    (1..=most).contains(&(text.chars().count() as i64))
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

fn slug<'a>(arg: &Arg<'a>, most: i64) -> Result<Arg<'a>, RedisError> {
    if valid_slug(arg.as_bytes(), most) {
        Ok(*arg)
    } else {
        Err(errors::INVALID_SLUG.with(&[&most]))
    }
}

fn taken(slug: Arg) -> RedisError {
    errors::SLUG_TAKEN.with(&[&reply::quote(slug.as_bytes())])
}

/// Whether the key holds an article (any hash); another type is `WRONGTYPE`.
fn exists<M>(article: &Key<M>) -> Result<bool, RedisError> {
    match article.kind() {
        Kind::Empty => Ok(false),
        Kind::Hash => Ok(true),
        Kind::String | Kind::Other => Err(RedisError::WrongType),
    }
}

/// A slug index is a hash, or not there yet; another type is `WRONGTYPE`.
fn check_index<M>(index: &Key<M>) -> Result<(), RedisError> {
    exists(index).map(|_| ())
}

fn hash_event(key: &mut Key, event: &CStr) {
    key.written(raw::REDISMODULE_NOTIFY_HASH as c_int, event);
}

/// `ARTICLE.CREATE key title content author [SLUG slugkey slug]`
fn create<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, title, content, author, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [slug_option] = parse_options(options, &[SLUG_CLAIM])?;
    let claim = match slug_option {
        Some([index, wanted]) => Some((*index, slug(wanted, SLUG_MAX_CHARS.cap(ctx))?)),
        _ => None,
    };
    if claim.is_some_and(|(index, _)| index.as_bytes() == name.as_bytes()) {
        return Err(SAME_KEY);
    }
    let mut article = Key::write(ctx, *name);
    let mut index = claim.map(|(index, wanted)| (Key::write(ctx, index), wanted));
    let present = exists(&article)?;
    if let Some((index, wanted)) = &index {
        check_index(index)?;
        if !present {
            if let Some(owner) = index.hash_field(Field::Arg(*wanted))? {
                if owner.as_bytes() != name.as_bytes() {
                    return Err(taken(*wanted));
                }
            }
        }
    }
    if present {
        return Ok(RedisValue::Integer(0).into());
    }
    let now = now_ms();
    let created_at = OwnedString::from_i64(ctx, now);
    let mut fields = vec![
        (TITLE, *title),
        (CONTENT, *content),
        (AUTHOR, *author),
        (CREATED_AT, created_at.as_arg()),
    ];
    if let Some((_, wanted)) = &index {
        fields.push((SLUG, *wanted));
    }
    for (field, value) in &fields {
        article.set_hash_field(Field::Name(field), *value);
    }
    let mut words = vec![
        Word::Arg(*name),
        Word::Token(TITLE),
        Word::Arg(*title),
        Word::Token(CONTENT),
        Word::Arg(*content),
        Word::Token(AUTHOR),
        Word::Arg(*author),
        Word::Token(CREATED_AT),
        Word::Int(now),
    ];
    if let Some((_, wanted)) = &index {
        words.extend([Word::Token(SLUG), Word::Arg(*wanted)]);
    }
    replicate::effect(ctx, c"HSET", &words);
    hash_event(&mut article, c"hset");
    if let Some((index, wanted)) = &mut index {
        index.set_hash_field(Field::Arg(*wanted), *name);
        replicate::effect(
            ctx,
            c"HSET",
            &[
                Word::Arg(index.name()),
                Word::Arg(*wanted),
                Word::Arg(*name),
            ],
        );
        hash_event(index, c"hset");
    }
    Ok(RedisValue::Integer(1).into())
}

/// `ARTICLE.GET key [JSON]` → the article's fields (a map), or its JSON.
fn get<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    // The one option, read without `parse_options`: its loop, inlined here,
    // kept the field reads below from being inlined (3.5% more instructions).
    let json = match options {
        [] => false,
        [flag] if flag.is(&JSON) => true,
        _ => return Err(errors::SYNTAX.error()),
    };
    let article = Key::read(ctx, *name);
    if !exists(&article)? {
        return Ok(RedisValue::Null.into());
    }
    let mut fields = Vec::with_capacity(FIELDS.len());
    for field in FIELDS {
        if let Some(value) = article.hash_field(Field::Name(field))? {
            fields.push((field, value));
        }
    }
    if json {
        return Ok(RedisValue::StringBuffer(to_json(
            fields
                .iter()
                .map(|(field, value)| (*field, value.as_bytes())),
        ))
        .into());
    }
    Ok(Reply::Map(
        fields
            .into_iter()
            .map(|(field, value)| (field.to_bytes(), Item::String(value)))
            .collect(),
    ))
}

/// A JSON object of the fields: times and views as numbers, text as strings
/// (bytes that are not UTF-8 become U+FFFD).
fn to_json<'v>(fields: impl Iterator<Item = (&'static CStr, &'v [u8])>) -> Vec<u8> {
    let mut object = serde_json::Map::new();
    for (field, value) in fields {
        let number = NUMBERS.contains(&field).then(|| parse_i64(value)).flatten();
        let value = match number {
            Some(number) => serde_json::Value::from(number),
            None => serde_json::Value::String(String::from_utf8_lossy(value).into_owned()),
        };
        object.insert(field.to_string_lossy().into_owned(), value);
    }
    // Serializing a map of strings and integers cannot fail.
    serde_json::to_vec(&object).unwrap_or_default()
}

/// `ARTICLE.UPDATE key [TITLE t] [CONTENT c] [AUTHOR a]` → 1 updated, 0 when
/// there is no such article (nothing is created).
fn update<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [title, content, author] =
        parse_options(options, &[TITLE_OPTION, CONTENT_OPTION, AUTHOR_OPTION])?;
    let changes: Vec<(&CStr, Arg)> = [(TITLE, title), (CONTENT, content), (AUTHOR, author)]
        .into_iter()
        .filter_map(|(field, value)| single(value).map(|value| (field, value)))
        .collect();
    let mut article = Key::write(ctx, *name);
    if !exists(&article)? {
        return Ok(RedisValue::Integer(0).into());
    }
    let now = now_ms();
    let updated_at = OwnedString::from_i64(ctx, now);
    let mut words = vec![Word::Arg(*name)];
    for (field, value) in &changes {
        article.set_hash_field(Field::Name(field), *value);
        words.extend([Word::Token(field), Word::Arg(*value)]);
    }
    article.set_hash_field(Field::Name(UPDATED_AT), updated_at.as_arg());
    words.extend([Word::Token(UPDATED_AT), Word::Int(now)]);
    replicate::effect(ctx, c"HSET", &words);
    hash_event(&mut article, c"hset");
    Ok(RedisValue::Integer(1).into())
}

/// `ARTICLE.SETSLUG key slugkey newslug` → 1 when the article now has that
/// slug, 0 when there is no such article.
fn set_slug<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, index_name, wanted] = args else {
        return Err(RedisError::WrongArity);
    };
    let wanted = slug(wanted, SLUG_MAX_CHARS.cap(ctx))?;
    if index_name.as_bytes() == name.as_bytes() {
        return Err(SAME_KEY);
    }
    let mut article = Key::write(ctx, *name);
    let mut index = Key::write(ctx, *index_name);
    let present = exists(&article)?;
    check_index(&index)?;
    if !present {
        return Ok(RedisValue::Integer(0).into());
    }
    let owner = index.hash_field(Field::Arg(wanted))?;
    let owned = match &owner {
        Some(owner) if owner.as_bytes() != name.as_bytes() => return Err(taken(wanted)),
        Some(_) => true,
        None => false,
    };
    let current = article.hash_field(Field::Name(SLUG))?;
    let current = current.as_ref().map(OwnedString::as_bytes);
    if owned && current == Some(wanted.as_bytes()) {
        return Ok(RedisValue::Integer(1).into());
    }
    // Claim the new slug first, so the index never empties on the way.
    if !owned {
        index.set_hash_field(Field::Arg(wanted), *name);
        hash_event(&mut index, c"hset");
    }
    if let Some(old) = current.filter(|old| *old != wanted.as_bytes()) {
        let old = OwnedString::from_bytes(ctx, old);
        let old_owner = index.hash_field(Field::Arg(old.as_arg()))?;
        if old_owner.is_some_and(|owner| owner.as_bytes() == name.as_bytes()) {
            index.delete_hash_field(Field::Arg(old.as_arg()));
            hash_event(&mut index, c"hdel");
        }
    }
    article.set_hash_field(Field::Name(SLUG), wanted);
    hash_event(&mut article, c"hset");
    // The move follows from the two hashes alone.
    replicate::verbatim(ctx);
    Ok(RedisValue::Integer(1).into())
}

/// `ARTICLE.BYSLUG slugkey slug` → the article key, or nil.
fn by_slug<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, index_name, wanted] = args else {
        return Err(RedisError::WrongArity);
    };
    let wanted = slug(wanted, SLUG_MAX_CHARS.max)?;
    let index = Key::read(ctx, *index_name);
    check_index(&index)?;
    Ok(match index.hash_field(Field::Arg(wanted))? {
        Some(owner) => RedisValue::StringBuffer(owner.as_bytes().to_vec()),
        None => RedisValue::Null,
    }
    .into())
}

/// `ARTICLE.VIEW key` → the new page-view count, or nil with no article.
fn view<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let mut article = Key::write(ctx, *name);
    if !exists(&article)? {
        return Ok(RedisValue::Null.into());
    }
    let views = match article.hash_field(Field::Name(VIEWS))? {
        None => 0,
        Some(value) => parse_i64(value.as_bytes()).ok_or(errors::HASH_NOT_AN_INTEGER.error())?,
    };
    let views = views.checked_add(1).ok_or(errors::OVERFLOW.error())?;
    article.set_hash_field(
        Field::Name(VIEWS),
        OwnedString::from_i64(ctx, views).as_arg(),
    );
    hash_event(&mut article, c"hincrby");
    // The count follows from the stored one, as for HINCRBY.
    replicate::verbatim(ctx);
    Ok(RedisValue::Integer(views).into())
}

/// `ARTICLE.DELETE key [SLUG slugkey]` → 1 deleted (with its slug mapping),
/// 0 when there is no such article.
fn delete<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [index_name] = parse_options(options, &[SLUG_INDEX])?;
    let index_name = single(index_name);
    if index_name.is_some_and(|index| index.as_bytes() == name.as_bytes()) {
        return Err(SAME_KEY);
    }
    let mut article = Key::write(ctx, *name);
    let mut index = index_name.map(|index| Key::write(ctx, index));
    let present = exists(&article)?;
    if let Some(index) = &index {
        check_index(index)?;
    }
    if !present {
        return Ok(RedisValue::Integer(0).into());
    }
    let current = article.hash_field(Field::Name(SLUG))?;
    article.delete();
    article.written(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
    if let (Some(index), Some(current)) = (&mut index, &current) {
        // Only the article's own mapping: a slug since given to another
        // article stays with it.
        let owner = index.hash_field(Field::Arg(current.as_arg()))?;
        if owner.is_some_and(|owner| owner.as_bytes() == name.as_bytes()) {
            index.delete_hash_field(Field::Arg(current.as_arg()));
            hash_event(index, c"hdel");
            if index.kind() == Kind::Empty {
                index.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
            }
        }
    }
    // What goes follows from the two hashes alone.
    replicate::verbatim(ctx);
    Ok(RedisValue::Integer(1).into())
}

/// The article, and the slug index after `SLUG` (searched after the author).
const CREATE_KEYS: &[KeySpec] = &[
    KeySpec {
        flags: raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_INSERT,
        begin: BeginSearch::Index(1),
        find: FindKeys::One,
    },
    KeySpec {
        flags: UPDATED,
        begin: BeginSearch::after(&SLUG_CLAIM, 5),
        find: FindKeys::One,
    },
];
const READ_ARTICLE: &[KeySpec] = &[READS_FIRST];
const WRITE_ARTICLE: &[KeySpec] = &[UPDATES_FIRST];
const SETSLUG_KEYS: &[KeySpec] = &[
    UPDATES_FIRST,
    KeySpec {
        flags: UPDATED,
        begin: BeginSearch::Index(2),
        find: FindKeys::One,
    },
];
const DELETE_KEYS: &[KeySpec] = &[
    KeySpec {
        flags: raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_DELETE,
        begin: BeginSearch::Index(1),
        find: FindKeys::One,
    },
    KeySpec {
        flags: raw::REDISMODULE_CMD_KEY_RW
            | raw::REDISMODULE_CMD_KEY_ACCESS
            | raw::REDISMODULE_CMD_KEY_DELETE,
        begin: BeginSearch::after(&SLUG_INDEX, 2),
        find: FindKeys::One,
    },
];

const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const SLUG_ARG: ArgSpec = ArgSpec::required(c"slug", ArgType::String);

pub static FAMILY: FamilySpec = FamilySpec {
    about: "records created only if absent, with unique slugs and page views",
    replaces:
        "`MSETNX`/`MGET`/`MSET` records, a hash plus an `HSETNX` slug index, `INCR` page views",
    commands: COMMANDS,
    stats: &[],
    waiting: None,
    settings: &[&SLUG_MAX_CHARS],
    errors: errors::OWN,
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        entry: entry!(c"article.create", create, CREATE_KEYS),
        flags: c"write deny-oom",
        acl_categories: c"write hash",
        arity: -5,
        summary: c"Creates an article (a hash with created_at), only if absent, optionally claiming a unique slug",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "`1` when the article was created (with `SLUG`, its slug claimed); `0` when \
                `key` already exists (nothing changes).",
        events: Some(Events {
            fires: "`hset` (the slug index's too)",
            replica: None,
        }),
        args: &[
            KEY,
            ArgSpec::required(c"title", ArgType::String),
            ArgSpec::required(c"content", ArgType::String),
            ArgSpec::required(c"author", ArgType::String),
            SLUG_CLAIM,
        ],
    },
    CommandSpec {
        entry: entry!(c"article.get", get, READ_ARTICLE),
        flags: c"readonly",
        acl_categories: c"read hash",
        arity: -2,
        summary: c"Returns an article's fields (a map), or with JSON one JSON object; nil if absent",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "The article's fields that are present, in the order `title`, `content`, \
                `author`, `created_at`, `updated_at`, `slug`, `views`, each value a bulk \
                string: a flat array of names and values under RESP2, a map under RESP3; with \
                `JSON`, a bulk string holding one JSON object of those fields, `created_at`, \
                `updated_at` and `views` as numbers; nil when `key` does not exist.",
        events: None,
        args: &[KEY, JSON],
    },
    CommandSpec {
        entry: entry!(c"article.update", update, WRITE_ARTICLE),
        flags: c"write deny-oom",
        acl_categories: c"write hash",
        arity: -4,
        summary: c"Changes an existing article's title, content or author and sets updated_at; 0 if absent",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "`1` when the article was updated (the given fields and `updated_at` set); `0` \
                when there is no such article (nothing is created).",
        events: Some(Events {
            fires: "`hset` (the slug index's too)",
            replica: None,
        }),
        args: &[
            KEY,
            TITLE_OPTION,
            CONTENT_OPTION,
            AUTHOR_OPTION,
        ],
    },
    CommandSpec {
        entry: entry!(c"article.setslug", set_slug, SETSLUG_KEYS),
        flags: c"write deny-oom",
        acl_categories: c"write hash",
        arity: 4,
        summary: c"Gives an article a new unique slug, releasing its old one, in one step",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "`1` when the article now has `newslug` (also when it already had it); `0` \
                when there is no such article.",
        events: Some(Events {
            fires: "`hset` on the index and the article, `hdel` of the old slug",
            replica: None,
        }),
        args: &[
            KEY,
            ArgSpec::key(c"slugkey", 1),
            ArgSpec::required(c"newslug", ArgType::String),
        ],
    },
    CommandSpec {
        entry: entry!(c"article.byslug", by_slug, READ_ARTICLE),
        flags: c"readonly fast",
        acl_categories: c"read hash fast",
        arity: 3,
        summary: c"Returns the key of the article that holds a slug, or nil",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "Bulk string reply: the key of the article that holds `slug` in the index \
                `slugkey`; nil when none does (or the index does not exist).",
        events: None,
        args: &[ArgSpec::key(c"slugkey", 0), SLUG_ARG],
    },
    CommandSpec {
        entry: entry!(c"article.view", view, WRITE_ARTICLE),
        flags: c"write deny-oom fast",
        acl_categories: c"write hash fast",
        arity: 2,
        summary: c"Counts a page view of an existing article and returns the new count; nil if absent",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "Integer reply: the article's page-view count after adding this view; nil when \
                there is no such article.",
        events: Some(Events {
            fires: "`hincrby`",
            replica: None,
        }),
        args: &[KEY],
    },
    CommandSpec {
        entry: entry!(c"article.delete", delete, DELETE_KEYS),
        flags: c"write",
        acl_categories: c"write hash",
        arity: -2,
        summary: c"Deletes an article and, with SLUG, its slug mapping",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "`1` when the article was deleted (with `SLUG`, its slug's mapping too, if the \
                index still maps it to this article); `0` when there is no such article.",
        events: Some(Events {
            fires: "`del`; `hdel` on the slug index, `del` when it empties",
            replica: None,
        }),
        args: &[KEY, SLUG_INDEX],
    },
];

#[cfg(test)]
mod tests {
    use super::{to_json, valid_slug, CONTENT, CREATED_AT, TITLE, VIEWS};

    #[test]
    fn slugs_are_letters_digits_dash_and_underscore() {
        for good in [
            "a",
            "hello-world",
            "snake_case_2",
            "été",
            "日本語",
            "Ünïcode-9",
        ] {
            assert!(valid_slug(good.as_bytes(), 200), "{good}");
        }
        assert!(valid_slug("x".repeat(200).as_bytes(), 200));
        assert!(
            valid_slug("é".repeat(200).as_bytes(), 200),
            "200 characters, 400 bytes"
        );
        for bad in [
            "",
            "with space",
            "dot.ted",
            "slash/",
            "emoji😀",
            "tab\t",
            "new\nline",
        ] {
            assert!(!valid_slug(bad.as_bytes(), 200), "{bad:?}");
        }
        assert!(!valid_slug("x".repeat(201).as_bytes(), 200));
        assert!(!valid_slug(b"\xff\xfe", 200));
    }

    #[test]
    fn json_escapes_text_and_keeps_numbers() {
        let fields = [
            (TITLE, &b"say \"hi\"\n\\ \xe2\x9c\x93"[..]),
            (CONTENT, &b"bad \xff byte"[..]),
            (CREATED_AT, &b"1700000000000"[..]),
            (VIEWS, &b"not a number"[..]),
        ];
        let json = to_json(fields.into_iter());
        let parsed: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
        assert_eq!(parsed["title"], "say \"hi\"\n\\ ✓");
        assert_eq!(parsed["content"], "bad \u{fffd} byte");
        assert_eq!(parsed["created_at"], 1_700_000_000_000_i64);
        assert_eq!(parsed["views"], "not a number");
    }
}
