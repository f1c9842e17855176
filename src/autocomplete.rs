//! AUTOCOMPLETE: search-box suggestions (the book's chapter 16) on one key
//! per subject.
//!
//! A key of the module data type `rr-autocp` holds every entry once: its
//! content (UTF-8), its weight and, for an entry fed with a lifetime, the
//! absolute time it fades. `core.rs` keeps them in a tree ordered by content
//! (`common/tree.rs`), each subtree knowing its best weight and earliest fade
//! time, so the top N under a prefix (a range of contents) costs
//! O((N + F) log M) (`search.rs`), F faded entries passed over, whatever the
//! number of entries under the prefix. The key also keeps (`hints.rs`) the
//! answers of the prefixes last hinted (up to
//! `recipes.autocomplete-hint-cache` of them) until a write that can change
//! them or the first fade among their entries: a hot prefix costs O(N), its
//! reply written from the kept copy of its contents.
//!
//! Fading. An entry whose time has passed is never answered (hints, weights,
//! counts skip it by the server's clock, on replicas too). Only the primary
//! removes it, as it does expired keys: each write to the key first removes
//! up to [`FADE_BATCH`] faded entries, earliest first (and any faded entry the
//! write names), and replicates their removal as `AUTOCOMPLETE.REMOVE`.
//!
//! Replication. A write that faded nothing and takes no relative time goes
//! verbatim: its outcome follows from the key alone. Otherwise it goes as its
//! effect: the removals, then the command with `PXAT <absolute ms>` for
//! `PX`/`EX`, so a replica or an AOF replay with another clock ends in the
//! primary's state.
#![forbid(unsafe_code)]

pub mod core;
mod errors;
mod hints;
mod search;
pub mod text;

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisError, RedisValue};

use self::core::{Suggestions, WriteError, MAX_ENTRIES};
use crate::common::args::{is_option, parse_options, single};
use crate::common::command::{
    ArgSpec, ArgType, CommandSpec, Events, KeySpec, COUNT, EX, PX, READS_FIRST, UPDATES_FIRST,
};
use crate::common::config::Setting;
use crate::common::datatype::{self, adopt, Stored, StoredType};
use crate::common::family::FamilySpec;
use crate::common::ffi;
use crate::common::ffi::args::Arg;
use crate::common::ffi::context::now_ms;
use crate::common::ffi::io::{Digest, Reader, Rewrite, Writer};
use crate::common::ffi::key::{Key, Kind};
use crate::common::ffi::replicate::{self, Word};
use crate::common::ffi::reply::direct;
use crate::common::reply::{Item, Replied, Reply};
use crate::common::stats::Stat;
use crate::common::time;
use crate::entry;

/// The encoding versions of the stored form this build reads, oldest first;
/// it writes the last (see `Stored for Suggestions` below).
pub const ENCODINGS: &[i32] = &[1];

pub static AUTOCOMPLETE_TYPE: RedisType = RedisType::new(
    "rr-autocp",
    datatype::written::<Suggestions>(),
    ffi::datatype::methods::<Suggestions>(),
);

pub static MAX_CHARS: Setting = Setting::new(
    c"autocomplete-max-chars",
    (256, 1, 65_536),
    "the characters of a content `AUTOCOMPLETE.FEED` and `AUTOCOMPLETE.SET` take; entries stored under a larger \
     value stay, are hinted and can be fed again only after the setting is raised",
);

/// See `autocomplete/hints.rs` for the answers kept.
pub static HINT_CACHE: Setting = Setting::new(
    c"autocomplete-hint-cache",
    (64, 0, 4096),
    "the prefixes whose `AUTOCOMPLETE.HINT` answer (up to `COUNT 64`, prefixes up to 64 bytes) an autocomplete \
     key keeps in memory across the writes that cannot change them, the least asked replaced first; each takes \
     about 160 bytes (a short prefix, `COUNT` up to 10), at most about 530, and a copy of its entries' contents \
     up to 2 KiB, counted in `MEMORY USAGE`. 0 keeps none: every hint searches, and a key gives back what it \
     kept at its next hint. Not a cap on writes: each server, a replica too, keeps answers by its own setting, \
     and they are never stored, so the setting changes no data",
);

/// The most faded entries one write removes (and replicates) before its own
/// change: a key where many faded at once is cleaned over several writes,
/// each paying O(log M) per entry, never a scan of the key.
pub const FADE_BATCH: usize = 128;

/// `COUNT`'s default and largest values for `AUTOCOMPLETE.HINT`.
const DEFAULT_COUNT: i64 = 10;
const MOST_COUNT: i64 = i32::MAX as i64;

const EVENT_CLASS: c_int = raw::REDISMODULE_NOTIFY_MODULE as c_int;

// ---- arguments ---------------------------------------------------------------

/// An entry's content: 1 to `recipes.autocomplete-max-chars` characters of
/// UTF-8.
fn content<'a>(ctx: &Context, arg: &Arg<'a>) -> Result<&'a [u8], RedisError> {
    let bytes = arg.as_bytes();
    if bytes.is_empty() {
        return Err(errors::EMPTY_CONTENT.error());
    }
    let chars = text::chars(bytes).map_err(|_| errors::NOT_UTF8.error())?;
    let most = MAX_CHARS.cap(ctx);
    if chars as i64 > most {
        return Err(errors::CONTENT_TOO_LONG.with(&[&most]));
    }
    Ok(bytes)
}

/// A prefix: any UTF-8, empty included (every entry).
fn prefix<'a>(arg: &Arg<'a>) -> Result<&'a [u8], RedisError> {
    let bytes = arg.as_bytes();
    if !text::is_utf8(bytes) {
        return Err(errors::NOT_UTF8.error());
    }
    Ok(bytes)
}

/// A weight or an increment: a finite double.
fn weight(arg: &Arg) -> Result<f64, RedisError> {
    let value = std::str::from_utf8(arg.as_bytes())
        .ok()
        .and_then(|text| text.parse::<f64>().ok())
        .ok_or(errors::NOT_A_FLOAT.error())?;
    if !value.is_finite() {
        return Err(errors::WEIGHT_NOT_FINITE.error());
    }
    Ok(value)
}

fn is_time_token(arg: &Arg) -> bool {
    let bytes = arg.as_bytes();
    FADES.iter().any(|spec| is_option(bytes, spec))
}

/// When an entry written with `PX ms | EX s | PXAT unix-ms` fades (at most
/// one of them), and whether the time was relative (so the write is
/// replicated with `PXAT`).
fn fade_time(options: &[Arg]) -> Result<(Option<i64>, bool), RedisError> {
    let [px, ex, pxat] = parse_options(options, &[PX, EX, PXAT])?;
    if [px, ex, pxat]
        .iter()
        .filter(|given| given.is_some())
        .count()
        > 1
    {
        return Err(errors::SYNTAX.error());
    }
    if let Some(at) = single(pxat) {
        return match at.to_i64()? {
            at if at > 0 => Ok((Some(at), false)),
            _ => Err(errors::INVALID_EXPIRE.error()),
        };
    }
    match time::lease(px, ex)? {
        Some(ms) => Ok((Some(time::from_now(ms)?), true)),
        None => Ok((None, false)),
    }
}

fn write_error(error: WriteError) -> RedisError {
    match error {
        WriteError::NotANumber => errors::WEIGHT_OVERFLOW.error(),
        WriteError::EmptyContent => errors::EMPTY_CONTENT.error(),
        WriteError::Full => errors::AUTOCOMPLETE_FULL.with(&[&MAX_ENTRIES]),
    }
}

// ---- fading --------------------------------------------------------------------

/// Whether `content` is stored in `suggestions` and has not faded by `now`:
/// its weight then.
fn live(suggestions: &Suggestions, content: &[u8], now: i64) -> Option<f64> {
    match suggestions.get(content)? {
        (_, Some(at)) if at <= now => None,
        (weight, _) => Some(weight),
    }
}

/// On a primary, removes up to [`FADE_BATCH`] faded entries, and every
/// faded entry among `named`, and replicates their removal. `true` when it
/// removed any (the write then replicates as its effect, after them). The
/// key is deleted if it emptied.
fn fade(ctx: &Context, key: &mut Key, now: i64, named: &[&[u8]]) -> Result<bool, RedisError> {
    if !replicate::deciding(ctx) {
        return Ok(false);
    }
    let Some(suggestions) = key.typed_value::<Suggestions>()? else {
        return Ok(false);
    };
    let mut faded = suggestions.fade(now, FADE_BATCH);
    for content in named {
        if suggestions.fade_at(content).is_some_and(|at| at <= now) && suggestions.remove(content) {
            faded.push(content.to_vec());
        }
    }
    if faded.is_empty() {
        return Ok(false);
    }
    let emptied = suggestions.is_empty();
    FADED.add(faded.len() as i64);
    let name = key.name();
    let words: Vec<Word> = std::iter::once(Word::Arg(name))
        .chain(faded.iter().map(|content| Word::Bytes(content)))
        .collect();
    replicate::effect(ctx, REMOVE.upper_name(), &words);
    key.written(EVENT_CLASS, c"autocomplete.fade");
    if emptied {
        key.delete();
        key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
    }
    Ok(true)
}

/// After a write into a key that fading emptied (and so deleted) on the
/// way, gives the key back the expiry time it had (`before`), replicated as
/// `PEXPIREAT` after the write's own effect. Otherwise nothing.
fn keep_expiry(ctx: &Context, key: &mut Key, before: Option<i64>) {
    let Some(at) = before else { return };
    if key.expire_at() == Some(at) {
        return;
    }
    key.set_expire_at(Some(at));
    replicate::effect(ctx, c"PEXPIREAT", &[Word::Arg(key.name()), Word::Int(at)]);
    key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"expire");
}

/// The suggestions at `key`, created empty (and counted) if the key is.
fn suggestions_at<'k>(key: &'k mut Key) -> Result<&'k mut Suggestions, RedisError> {
    if key.kind() == Kind::Empty {
        key.set_typed_value(adopt(Suggestions::default()))?;
    }
    key.typed_value::<Suggestions>()?
        .ok_or(errors::NOT_STORED.error())
}

// ---- commands ------------------------------------------------------------------

/// `AUTOCOMPLETE.FEED key content [increment] [PX ms | EX s | PXAT unix-ms]`
/// → the entry's weight after adding `increment` (default 1).
fn feed<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, content_arg, rest @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let content = content(ctx, content_arg)?;
    let (increment_arg, options) = match rest.split_first() {
        Some((first, more)) if !is_time_token(first) => (Some(first), more),
        _ => (None, rest),
    };
    let increment = increment_arg.map(weight).transpose()?.unwrap_or(1.0);
    let (fade_at, relative) = fade_time(options)?;
    let now = now_ms();
    let mut key = Key::write(ctx, *name);
    if let Some(suggestions) = key.typed_value::<Suggestions>()? {
        let current = live(suggestions, content, now);
        if !(current.unwrap_or(0.0) + increment).is_finite() {
            return Err(errors::WEIGHT_OVERFLOW.error());
        }
        if current.is_none() && suggestions.len() >= MAX_ENTRIES {
            return Err(write_error(WriteError::Full));
        }
    }
    let expiry = key.expire_at();
    let faded = fade(ctx, &mut key, now, &[content])?;
    let weight = suggestions_at(&mut key)?
        .feed(content, increment, fade_at)
        .map_err(write_error)?;
    if faded || relative {
        let mut words = vec![Word::Arg(*name), Word::Arg(*content_arg)];
        if let Some(increment) = increment_arg {
            words.push(Word::Arg(*increment));
        }
        if let Some(at) = fade_at {
            words.extend([Word::Token(c"PXAT"), Word::Int(at)]);
        }
        replicate::effect(ctx, FEED.upper_name(), &words);
    } else {
        replicate::verbatim(ctx);
    }
    keep_expiry(ctx, &mut key, expiry);
    key.written(EVENT_CLASS, c"autocomplete.feed");
    Ok(RedisValue::Float(weight).into())
}

/// `AUTOCOMPLETE.SET key content weight [PX ms | EX s | PXAT unix-ms]` → 1
/// when the entry is new, 0 when it had a weight.
fn set<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, content_arg, weight_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let content = content(ctx, content_arg)?;
    let value = weight(weight_arg)?;
    let (fade_at, relative) = fade_time(options)?;
    let now = now_ms();
    let mut key = Key::write(ctx, *name);
    let new = match key.typed_value::<Suggestions>()? {
        Some(suggestions) => {
            let new = live(suggestions, content, now).is_none();
            if new && suggestions.len() >= MAX_ENTRIES {
                return Err(write_error(WriteError::Full));
            }
            new
        }
        None => true,
    };
    let expiry = key.expire_at();
    let faded = fade(ctx, &mut key, now, &[content])?;
    suggestions_at(&mut key)?
        .set(content, value, fade_at)
        .map_err(write_error)?;
    if faded || relative {
        let mut words = vec![
            Word::Arg(*name),
            Word::Arg(*content_arg),
            Word::Arg(*weight_arg),
        ];
        if let Some(at) = fade_at {
            words.extend([Word::Token(c"PXAT"), Word::Int(at)]);
        }
        replicate::effect(ctx, SET.upper_name(), &words);
    } else {
        replicate::verbatim(ctx);
    }
    keep_expiry(ctx, &mut key, expiry);
    key.written(EVENT_CLASS, c"autocomplete.set");
    Ok(RedisValue::Integer(i64::from(new)).into())
}

/// `AUTOCOMPLETE.REMOVE key content [content …]` → how many of them had a
/// weight (faded ones do not count). An emptied key is deleted.
fn remove<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, contents @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if contents.is_empty() {
        return Err(RedisError::WrongArity);
    }
    let now = now_ms();
    let mut key = Key::write(ctx, *name);
    if key.typed_value::<Suggestions>()?.is_none() {
        return Ok(RedisValue::Integer(0).into());
    }
    let named: Vec<&[u8]> = contents.iter().map(|arg| arg.as_bytes()).collect();
    let faded = fade(ctx, &mut key, now, &named)?;
    let Some(suggestions) = key.typed_value::<Suggestions>()? else {
        return Ok(RedisValue::Integer(0).into());
    };
    let removed: Vec<Arg> = contents
        .iter()
        .filter(|content| suggestions.remove(content.as_bytes()))
        .copied()
        .collect();
    let emptied = suggestions.is_empty();
    if !removed.is_empty() {
        if faded {
            let words: Vec<Word> = std::iter::once(Word::Arg(*name))
                .chain(removed.iter().map(|content| Word::Arg(*content)))
                .collect();
            replicate::effect(ctx, REMOVE.upper_name(), &words);
        } else {
            replicate::verbatim(ctx);
        }
        key.written(EVENT_CLASS, c"autocomplete.remove");
        if emptied {
            key.delete();
            key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
        }
    }
    Ok(RedisValue::Integer(removed.len() as i64).into())
}

/// `AUTOCOMPLETE.HINT key prefix [COUNT n] [WITHWEIGHTS]` → up to `n`
/// (default 10) contents starting with `prefix`, weight descending (equal
/// weights: content descending), each followed by its weight with
/// `WITHWEIGHTS` (RESP3: pairs, as `ZRANGE … WITHSCORES`).
fn hint<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, prefix_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let prefix = prefix(prefix_arg)?;
    let [count, with_weights] = parse_options(options, &[COUNT, WITHWEIGHTS])?;
    let count = match single(count) {
        None => DEFAULT_COUNT,
        Some(count) => match count.to_i64()? {
            count @ 1..=MOST_COUNT => count,
            _ => return Err(count_range()),
        },
    };
    let key = Key::read(ctx, *name);
    let Some(suggestions) = key.value::<Suggestions>()? else {
        return Ok(RedisValue::Array(Vec::new()).into());
    };
    let keep = usize::try_from(HINT_CACHE.value()).unwrap_or(0);
    let weights = with_weights.is_some();
    let pairs = weights && direct::resp3(ctx);
    // Written from the stored bytes as they are read: nothing can fail
    // from here on.
    let ((), searched) = suggestions.hint_with(prefix, count as usize, now_ms, keep, |hints| {
        if weights {
            return reply_weighed(ctx, hints, pairs);
        }
        direct::array(ctx, hints.len());
        let (copied, rest) = hints.contents();
        direct::bulks(ctx, copied);
        direct::bulks(ctx, rest);
    });
    if searched {
        HINTS_SEARCHED.incr();
    }
    Ok(RedisValue::NoReply.into())
}

/// `ERR COUNT must be …`, built out of the hints' way.
#[cold]
#[inline(never)]
fn count_range() -> RedisError {
    errors::COUNT_RANGE.with(&[&MOST_COUNT])
}

/// A hint's reply `WITHWEIGHTS`: each content and its weight (RESP3:
/// pairs).
#[inline(never)]
fn reply_weighed(ctx: &Context, hints: hints::Hints<'_>, pairs: bool) {
    let len = hints.len();
    direct::array(ctx, if pairs { len } else { 2 * len });
    for (content, weight) in hints {
        if pairs {
            direct::array(ctx, 2);
        }
        direct::bulk(ctx, content);
        direct::double(ctx, weight);
    }
}

/// `AUTOCOMPLETE.WEIGHT key content` → the entry's weight, or nil.
fn weight_of<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, content] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let found = match key.value::<Suggestions>()? {
        Some(suggestions) => live(suggestions, content.as_bytes(), now_ms()),
        None => None,
    };
    Ok(found.map_or(RedisValue::Null, RedisValue::Float).into())
}

/// The entries of `suggestions` that have not faded by now.
fn live_entries(suggestions: &Suggestions) -> usize {
    suggestions.len() - suggestions.due(now_ms())
}

/// `AUTOCOMPLETE.CARD key` → the number of entries (0 for a missing key).
fn card<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let entries = key.value::<Suggestions>()?.map_or(0, live_entries);
    Ok(RedisValue::Integer(entries as i64).into())
}

/// `AUTOCOMPLETE.INFO key` → map of `entries`, `memory` (bytes, as `MEMORY
/// USAGE` counts the value) and `next_fade` (the earliest time an entry
/// fades, Unix ms, or nil); nil for a missing key.
fn info<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let Some(suggestions) = key.value::<Suggestions>()? else {
        return Ok(RedisValue::Null.into());
    };
    // A time already past: a faded entry the primary's next write removes.
    let next_fade = suggestions.next_fade().map_or(Item::Null, Item::Int);
    Ok(Reply::Map(vec![
        (b"entries", Item::Int(live_entries(suggestions) as i64)),
        (b"memory", Item::Int(suggestions.memory() as i64)),
        (b"next_fade", next_fade),
    ]))
}

// ---- the stored form ------------------------------------------------------------

impl Stored for Suggestions {
    const ENCODINGS: &'static [i32] = ENCODINGS;
    const WHAT: &'static str = "autocomplete key";
    fn data_type() -> &'static RedisType {
        &AUTOCOMPLETE_TYPE
    }

    /// Stored form (version 1): the number of entries, then each entry in
    /// content order: content, weight (IEEE 754 bits), fade time (Unix ms,
    /// 0: never).
    fn save(&self, out: &mut Writer) {
        out.unsigned(self.len() as u64);
        for (content, weight, fade_at) in self.iter() {
            out.bytes(content);
            out.unsigned(weight.to_bits());
            out.unsigned(fade_at.map_or(0, |at| at as u64));
        }
    }

    /// Refuses an empty key, empty or invalid UTF-8 content, a content
    /// longer than the widest `recipes.autocomplete-max-chars` (which the
    /// AOF rewrite's `AUTOCOMPLETE.SET` could not replay), a weight that is
    /// not finite, a fade time past the largest time, and a repeated
    /// content; takes the entries in any order.
    fn load(input: &mut Reader, _encoding: i32) -> Result<Suggestions, &'static str> {
        let count = input.unsigned()?;
        if count == 0 {
            return Err("no entries");
        }
        // Grown as read: a hostile count cannot make us reserve memory.
        let mut entries = Vec::new();
        for _ in 0..count {
            let content = input.bytes()?;
            match text::chars(&content) {
                Ok(0) | Err(_) => return Err("a content empty or not UTF-8"),
                Ok(chars) if chars as i64 > MAX_CHARS.max => {
                    return Err("a content longer than any setting takes")
                }
                Ok(_) => {}
            }
            let weight = f64::from_bits(input.unsigned()?);
            if !weight.is_finite() {
                return Err("a weight that is not a finite number");
            }
            let fade_at = match input.unsigned()? {
                0 => None,
                at => Some(i64::try_from(at).map_err(|_| "a fade time past the largest time")?),
            };
            entries.push((content, weight, fade_at));
        }
        Suggestions::from_entries(entries)
    }

    /// One `AUTOCOMPLETE.SET key content weight [PXAT at]` per entry, the
    /// weight written so that it parses back to the same double.
    fn rewrite(&self, out: &mut Rewrite) {
        for (content, weight, fade_at) in self.iter() {
            let weight = format!("{weight:e}");
            let mut words = vec![Word::Bytes(content), Word::Bytes(weight.as_bytes())];
            if let Some(at) = fade_at {
                words.extend([Word::Token(c"PXAT"), Word::Int(at)]);
            }
            out.emit(SET.upper_name(), &words);
        }
    }

    fn digest(&self, out: &mut Digest) {
        for (content, weight, fade_at) in self.iter() {
            out.bytes(content);
            out.integer(weight.to_bits() as i64);
            out.integer(fade_at.unwrap_or(0));
            out.end_sequence();
        }
    }

    fn memory(&self) -> usize {
        Suggestions::memory(self)
    }

    fn allocations(&self) -> usize {
        Suggestions::allocations(self)
    }

    fn count(&self, sign: i64) {
        AUTOCOMPLETE_KEYS.add(sign);
    }
}

// ---- registration ----------------------------------------------------------------

const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const CONTENT: ArgSpec = ArgSpec::required(c"content", ArgType::String);
const SINCE: &CStr = c"0.6.0";
const PXAT: ArgSpec = ArgSpec::tokened(c"unix-time-milliseconds", c"PXAT", ArgType::Integer);
/// When an entry fades: `PX ms | EX s | PXAT unix-ms`.
const FADES: &[ArgSpec] = &[PX, EX, PXAT];
const WITHWEIGHTS: ArgSpec = ArgSpec::flag(c"withweights", c"WITHWEIGHTS");

pub static AUTOCOMPLETE_KEYS: Stat = Stat::gauge(
    c"autocomplete_keys",
    "autocomplete keys stored (`rr-autocp` values, copies included)",
);
pub static FADED: Stat = Stat::counter(
    c"autocomplete_entries_faded",
    "autocomplete entries removed by the primary because their time passed (at most 128 a write)",
);
pub static HINTS_SEARCHED: Stat = Stat::counter(
    c"autocomplete_hints_searched",
    "`AUTOCOMPLETE.HINT`s that searched the key's tree: no answer kept for the prefix (first asked, replaced, \
     `COUNT` over 64, a prefix over 64 bytes, `recipes.autocomplete-hint-cache 0`) or the one kept was changed by \
     a write or one of its entries faded. The other hints (`cmdstat_autocomplete.hint` calls less these) were \
     answered from a kept answer",
);

pub static FAMILY: FamilySpec = FamilySpec {
    about: "search-box suggestions, one key per subject, entries that fade",
    replaces:
        "a sorted set per prefix (`ZINCRBY` on each, `ZRANGE … REV`), `FT.SUGADD`/`FT.SUGGET`",
    commands: COMMANDS,
    stats: &[&AUTOCOMPLETE_KEYS, &FADED, &HINTS_SEARCHED],
    waiting: None,
    settings: &[&MAX_CHARS, &HINT_CACHE],
    errors: errors::OWN,
    stored: &[StoredType {
        data_type: &AUTOCOMPLETE_TYPE,
        encodings: ENCODINGS,
    }],
};

pub const COMMANDS: &[CommandSpec] = &[
    FEED,
    SET,
    CommandSpec {
        entry: entry!(c"autocomplete.hint", hint, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: -3,
        summary: c"The heaviest entries starting with a prefix, weight descending",
        complexity: c"O((N + F) log M) for N entries returned, F faded entries passed over and M entries in the key; O(N) for a prefix whose answer the key keeps (hinted since its last write)",
        since: SINCE,
        reply: "An array of up to `n` (default 10) contents starting with `prefix` (`\"\"`: \
                all), heaviest first, equal weights by content descending; with `WITHWEIGHTS` \
                each content followed by its weight as a bulk string under RESP2, and under \
                RESP3 an array of `[content, weight]` pairs with doubles (as `ZRANGE … \
                WITHSCORES`); an empty array when nothing matches or the key is missing.",
        events: None,
        args: &[
            KEY,
            ArgSpec::required(c"prefix", ArgType::String),
            COUNT,
            WITHWEIGHTS,
        ],
    },
    REMOVE,
    CommandSpec {
        entry: entry!(c"autocomplete.weight", weight_of, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 3,
        summary: c"An entry's weight, or nil",
        complexity: c"O(log M) for M entries",
        since: SINCE,
        reply: "The entry's weight: a bulk string under RESP2, a double under RESP3; nil when \
                there is no such entry (or it has faded).",
        events: None,
        args: &[KEY, CONTENT],
    },
    CommandSpec {
        entry: entry!(c"autocomplete.card", card, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: 2,
        summary: c"The number of entries",
        complexity: c"O(1), plus O(F log M) for F faded entries not removed yet",
        since: SINCE,
        reply: "Integer reply: the number of entries that have not faded; `0` for a missing \
                key.",
        events: None,
        args: &[KEY],
    },
    CommandSpec {
        entry: entry!(c"autocomplete.info", info, READ_KEY),
        flags: c"readonly",
        acl_categories: c"read",
        arity: 2,
        summary: c"Entries, memory and the next fade time of an autocomplete key; nil when missing",
        complexity: c"O(M / 910) for M entries (the memory is summed over blocks of 910 entries)",
        since: SINCE,
        reply: "Integers `entries` (not faded), `memory` (bytes, as `MEMORY USAGE` counts the \
                value) and `next_fade` (the earliest time an entry fades, Unix ms, possibly \
                already past, or nil when none fades): a flat array of names and values under \
                RESP2, a map under RESP3; nil when the key does not exist.",
        events: None,
        args: &[KEY],
    },
];

const FEED: CommandSpec = CommandSpec {
    entry: entry!(c"autocomplete.feed", feed, WRITE_KEY),
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -3,
    summary: c"Adds to an entry's weight (creating it), optionally with a lifetime after which it fades; returns the new weight",
    complexity: c"O(log M) for M entries, plus O(log M) per faded entry removed",
    since: SINCE,
    reply: "The entry's weight after adding `increment` (default 1; a new or faded entry \
            starts from 0): a bulk string as `ZINCRBY` formats it under RESP2, a double \
            under RESP3.",
    events: Some(Events {
        fires: "`autocomplete.feed`; first `autocomplete.fade` when faded entries went, \
                `del` if they emptied the key",
        replica: Some("`autocomplete.feed`; `autocomplete.remove`, `del` for the faded entries"),
    }),
    args: &[
        KEY,
        CONTENT,
        ArgSpec::required(c"increment", ArgType::Double).optional(),
        ArgSpec::one_of(c"lifetime", FADES).optional(),
    ],
};

const SET: CommandSpec = CommandSpec {
    entry: entry!(c"autocomplete.set", set, WRITE_KEY),
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -4,
    summary: c"Gives an entry an exact weight, optionally with a lifetime; 1 when it is new",
    complexity: c"O(log M) for M entries, plus O(log M) per faded entry removed",
    since: SINCE,
    reply: "`1` when the entry is new (or had faded); `0` when it had a weight, now \
            replaced by `weight`.",
    events: Some(Events {
        fires: "`autocomplete.set`; first `autocomplete.fade` when faded entries went, \
                `del` if they emptied the key",
        replica: Some("`autocomplete.set`; `autocomplete.remove`, `del` for the faded entries"),
    }),
    args: &[
        KEY,
        CONTENT,
        ArgSpec::required(c"weight", ArgType::Double),
        ArgSpec::one_of(c"lifetime", FADES).optional(),
    ],
};

const REMOVE: CommandSpec = CommandSpec {
    entry: entry!(c"autocomplete.remove", remove, WRITE_KEY),
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: -3,
    summary: c"Removes entries; returns how many there were",
    complexity: c"O(N log M) for N entries named and M in the key",
    since: SINCE,
    reply: "Integer reply: how many of the named contents had an entry (faded ones not \
            counted, one named twice counted once), now removed; `0` for a missing key.",
    events: Some(Events {
        fires: "`autocomplete.remove` when it removed any, `del` when the key empties; \
                first `autocomplete.fade` when faded entries went",
        replica: Some("`autocomplete.remove`, `del`"),
    }),
    args: &[KEY, CONTENT.multiple()],
};
