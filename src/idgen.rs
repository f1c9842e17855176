//! IDGEN: auto-increment ID generators.
//!
//! A generator is a plain string key holding a base-10 integer (what `INCR`
//! makes), or a field of a hash (what `HINCRBY` makes), so existing clients
//! keep reading and writing it. Its value is the last ID handed out or
//! reserved; 0 when it was never used.
//!
//! Replication: verbatim. What a call hands out follows from the stored value
//! alone, so a replica or an AOF replay running the same command reaches the
//! same value, as for `INCR`.

#![forbid(unsafe_code)]

mod errors;

use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError, RedisValue};

use crate::common::args::{parse_i64, parse_options, single};
use crate::common::command::{
    ArgSpec, ArgType, BeginSearch, CommandSpec, Events, FindKeys, KeySpec, COUNT, READS_FIRST,
    UPDATED, UPDATES_FIRST,
};
use crate::common::family::FamilySpec;
use crate::common::ffi::args::Arg;
use crate::common::ffi::key::{Field, Key, Kind, Write};
use crate::common::ffi::replicate;
use crate::common::ffi::strings::OwnedString;
use crate::common::reply::Replied;
use crate::entry;

/// The most IDs one `IDGEN.NEXT … COUNT` takes.
const MAX_COUNT: i64 = 1 << 31;

/// `FIELD field`: the generator is a field of a hash.
const FIELD: ArgSpec = ArgSpec::option(c"field", c"FIELD", ArgType::String);
/// `REVERSE reverse`: the reverse index of `IDGEN.ASSIGN`, its third key.
const REVERSE: ArgSpec = ArgSpec::option(c"reverse", c"REVERSE", ArgType::Key(2));

/// The block of IDs a request for `count` takes after `last`: `first..=new_last`.
// Always inlined: IDGEN.ASSIGN, a large function, called it (1.5% more
// instructions).
#[inline(always)]
fn take(last: i64, count: i64) -> Result<(i64, i64), RedisError> {
    match last.checked_add(count) {
        Some(new_last) => Ok((new_last - count + 1, new_last)),
        None => Err(errors::EXHAUSTED.with(&[&count, &last])),
    }
}

/// A generator: a string key, or one field of a hash key.
struct Generator<'a, M = Write> {
    key: Key<'a, M>,
    field: Option<Arg<'a>>,
}

impl<'a, M> Generator<'a, M> {
    fn new(key: Key<'a, M>, field: Option<Arg<'a>>) -> Self {
        Self { key, field }
    }

    /// The last ID handed out or reserved; 0 for a generator never used.
    fn last(&self) -> Result<i64, RedisError> {
        match self.field {
            None => Ok(self.key.integer()?.unwrap_or(0)),
            Some(field) => match self.key.hash_field(Field::Arg(field))? {
                None => Ok(0),
                Some(value) => {
                    parse_i64(value.as_bytes()).ok_or(errors::HASH_NOT_AN_INTEGER.error())
                }
            },
        }
    }
}

impl Generator<'_> {
    /// Stores a new last ID and announces the write as the equivalent
    /// built-in (`incrby` / `hincrby`) would.
    fn set_last(&mut self, ctx: &Context, last: i64) -> Result<(), RedisError> {
        match self.field {
            None => self.key.store_integer(last)?,
            Some(field) => {
                self.key
                    .set_hash_field(Field::Arg(field), OwnedString::from_i64(ctx, last).as_arg());
                self.key
                    .written(raw::REDISMODULE_NOTIFY_HASH as c_int, c"hincrby");
            }
        }
        Ok(())
    }
}

/// `IDGEN.NEXT key [FIELD field] [COUNT count]` → the first of the IDs taken.
fn next<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [field, count] = parse_options(options, &[FIELD, COUNT])?;
    let count = match single(count) {
        None => 1,
        Some(count) => match count.to_i64()? {
            count @ 1..=MAX_COUNT => count,
            _ => return Err(errors::COUNT_RANGE.with(&[&MAX_COUNT])),
        },
    };
    let mut generator = Generator::new(Key::write(ctx, *name), single(field));
    let (first, last) = take(generator.last()?, count)?;
    generator.set_last(ctx, last)?;
    // The IDs follow from the stored value alone, as for INCR.
    replicate::verbatim(ctx);
    Ok(RedisValue::Integer(first).into())
}

/// `IDGEN.RESERVE key floor [FIELD field]` → 1 when the generator was raised
/// to `floor`, 0 when it had already reached it.
fn reserve<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, floor, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let floor = floor.to_i64()?;
    if floor < 0 {
        return Err(errors::NEGATIVE_FLOOR.error());
    }
    let [field] = parse_options(options, &[FIELD])?;
    let mut generator = Generator::new(Key::write(ctx, *name), single(field));
    // Raising only, never lowering: a reserve can never make an ID repeat.
    if generator.last()? >= floor {
        return Ok(RedisValue::Integer(0).into());
    }
    generator.set_last(ctx, floor)?;
    replicate::verbatim(ctx);
    Ok(RedisValue::Integer(1).into())
}

/// `IDGEN.CURRENT key [FIELD field]` → the last ID handed out or reserved.
fn current<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [field] = parse_options(options, &[FIELD])?;
    let generator = Generator::new(Key::read(ctx, *name), single(field));
    Ok(RedisValue::Integer(generator.last()?).into())
}

/// `IDGEN.ASSIGN counter index name [REVERSE reverse]` → the ID of `name`:
/// the one the hash `index` holds for it, or else the counter's next, then
/// recorded in `index` (and `reverse`, ID → name) in the same step. With
/// `REVERSE`, a name that has its ID gets its reverse entry too where
/// `reverse` lacks one (as `HSETNX`): names first assigned without it.
fn assign<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, counter, index, name, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let [reverse] = parse_options(options, &[REVERSE])?;
    let reverse = single(reverse);
    let names = [Some(*counter), Some(*index), reverse];
    for (at, a) in names.iter().enumerate() {
        for b in names.iter().skip(at + 1) {
            if let (Some(a), Some(b)) = (a, b) {
                if a.as_bytes() == b.as_bytes() {
                    return Err(errors::SAME_INDEX_KEYS.error());
                }
            }
        }
    }
    // Every key checked before anything is written: the index, the reverse
    // index (a hash or nothing, whether the name is known or not), then for
    // a new name the counter.
    let mut index = Key::write(ctx, *index);
    let known = match index.hash_field(Field::Arg(*name))? {
        Some(id) => Some(parse_i64(id.as_bytes()).ok_or(errors::HASH_NOT_AN_INTEGER.error())?),
        None => None,
    };
    let mut reverse = reverse.map(|reverse| Key::write(ctx, reverse));
    if reverse
        .as_ref()
        .is_some_and(|reverse| !matches!(reverse.kind(), Kind::Empty | Kind::Hash))
    {
        return Err(RedisError::WrongType);
    }
    let id = match known {
        Some(id) => id,
        None => {
            let mut generator = Generator::new(Key::write(ctx, *counter), None);
            let (id, _) = take(generator.last()?, 1)?;
            generator.set_last(ctx, id)?;
            id
        }
    };
    let id_string = OwnedString::from_i64(ctx, id);
    let mut wrote = known.is_none();
    if known.is_none() {
        index.set_hash_field(Field::Arg(*name), id_string.as_arg());
        index.written(raw::REDISMODULE_NOTIFY_HASH as c_int, c"hset");
    }
    if let Some(reverse) = &mut reverse {
        let field = Field::Arg(id_string.as_arg());
        // A new ID is recorded as given; a known one only where the reverse
        // index has nothing for it (whatever it holds is left as it is).
        if known.is_none() || reverse.hash_field(field)?.is_none() {
            reverse.set_hash_field(field, *name);
            reverse.written(raw::REDISMODULE_NOTIFY_HASH as c_int, c"hset");
            wrote = true;
        }
    }
    if wrote {
        // What is written follows from the stored values alone, as for
        // INCR: a replica or an AOF replay of the command does the same.
        replicate::verbatim(ctx);
    }
    Ok(RedisValue::Integer(id).into())
}

const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
/// The counter, the index and the reverse index after `REVERSE`.
const ASSIGN_KEYS: &[KeySpec] = &[
    UPDATES_FIRST,
    KeySpec {
        flags: UPDATED,
        begin: BeginSearch::Index(2),
        find: FindKeys::One,
    },
    KeySpec {
        flags: UPDATED,
        begin: BeginSearch::after(&REVERSE, 4),
        find: FindKeys::One,
    },
];

pub static FAMILY: FamilySpec = FamilySpec {
    about: "auto-increment ID generators",
    replaces: "`INCR` ID generators, `SET NX` reservations, `INCRBY` batch allocation, `HGET`-then-`INCR` name → ID maps",
    commands: COMMANDS,
    stats: &[],
    waiting: None,
    settings: &[],
    errors: errors::OWN,
    stored: &[],
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        entry: entry!(c"idgen.next", next, WRITE_KEY),
        flags: c"write deny-oom fast",
        acl_categories: c"write fast",
        arity: -2,
        summary:
            c"Takes the next ID (or COUNT consecutive IDs) from a generator and returns the first",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "Integer reply: the first ID taken; with `COUNT`, the first of the `count` \
                consecutive IDs `first` … `first+count-1` now taken (the generator now holds \
                the last of them).",
        events: Some(Events {
            fires: "`incrby` on a string; `hincrby` with `FIELD`",
            replica: None,
        }),
        args: &[
            ArgSpec::key(c"key", 0),
            FIELD,
            COUNT,
        ],
    },
    CommandSpec {
        entry: entry!(c"idgen.reserve", reserve, WRITE_KEY),
        flags: c"write deny-oom fast",
        acl_categories: c"write fast",
        arity: -3,
        summary:
            c"Raises a generator so that IDs up to floor are never handed out; never lowers it",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "`1` when the generator was raised to `floor`; `0` when it had already reached \
                `floor` (nothing changes).",
        events: Some(Events {
            fires: "`incrby`",
            replica: None,
        }),
        args: &[
            ArgSpec::key(c"key", 0),
            ArgSpec::required(c"floor", ArgType::Integer),
            FIELD,
        ],
    },
    CommandSpec {
        entry: entry!(c"idgen.current", current, READ_KEY),
        flags: c"readonly fast",
        acl_categories: c"read fast",
        arity: -2,
        summary: c"Returns the last ID a generator handed out or reserved (0 if never used)",
        complexity: c"O(1)",
        since: c"0.1.0",
        reply: "Integer reply: the last ID handed out or reserved (the key's value, or \
                `field`'s with `FIELD`); `0` for a generator never used (missing key or \
                field).",
        events: None,
        args: &[ArgSpec::key(c"key", 0), FIELD],
    },
    CommandSpec {
        entry: entry!(c"idgen.assign", assign, ASSIGN_KEYS),
        flags: c"write deny-oom fast",
        acl_categories: c"write fast",
        arity: -4,
        summary: c"Returns the ID a name has in an index hash, or gives it the counter's next ID (recorded in the index, and in a reverse hash) in one step",
        complexity: c"O(1)",
        since: c"0.5.0",
        reply: "Integer reply: the ID of `name`: the one the hash `index` already holds for \
                it, else `counter`'s next ID, recorded in `index` (and in `reverse` with \
                `REVERSE`) in the same step.",
        events: Some(Events {
            fires: "a new name: `incrby` on the counter, `hset` on the index and the reverse \
                    index; a known name whose reverse entry is missing: `hset` on the reverse \
                    index",
            replica: None,
        }),
        args: &[
            ArgSpec::key(c"counter", 0),
            ArgSpec::key(c"index", 1),
            ArgSpec::required(c"name", ArgType::String),
            REVERSE,
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::take;

    #[test]
    fn take_returns_the_first_and_last_of_the_block() {
        assert_eq!(take(0, 1).ok(), Some((1, 1)));
        assert_eq!(take(1_000_000, 3).ok(), Some((1_000_001, 1_000_003)));
        assert_eq!(take(-5, 2).ok(), Some((-4, -3)));
        assert_eq!(take(i64::MAX - 3, 3).ok(), Some((i64::MAX - 2, i64::MAX)));
    }

    #[test]
    fn take_refuses_to_pass_the_top_of_the_id_space() {
        assert!(take(i64::MAX, 1).is_err());
        assert!(take(i64::MAX - 2, 3).is_err());
        assert!(take(0, 1 << 31).is_ok());
    }
}
