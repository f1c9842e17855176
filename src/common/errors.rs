//! Every error the module answers, written once: the catalogue.
//!
//! A command answers an error by naming its entry here (`errors::SYNTAX.error()`,
//! or `errors::NO_POOL.with(&[&key])` where the text holds a value). No error
//! text is written anywhere else in `src/` (a test checks it), so the list below
//! is complete. It goes into the module's spec (`spec.rs`, `docs/spec.json`),
//! from which `docs/src/errors.md`'s tables and the client packages' error
//! classes are generated (`tools/generate.py`); every error the attack suite
//! meets is checked against it (`tests/hardening.rs`).
//!
//! A condition a client branches on has a code of its own as the reply's first
//! word (`BUSYKEY`, `NOPOOL`, …), as the server's `WRONGTYPE` and `BUSYGROUP`:
//! the clients choose an error's class by its code alone. Other errors start
//! with `ERR`. Texts shared with the server's own commands
//! are the server's, word for word.

// The catalogue's `when`, and the errors the server answers for the module,
// are read by the spec's test (`spec.rs`).
#![cfg_attr(not(test), allow(dead_code))]
#![forbid(unsafe_code)]

use std::fmt::{Display, Write};

use redis_module::RedisError;

/// One error: its text as the client receives it, `{name}` where a value goes
/// (a name used twice takes the same value), and what answers it.
pub struct ErrorText {
    pub text: &'static str,
    /// The commands that answer it and when (Markdown, for `docs/src/errors.md`).
    pub when: &'static str,
}

impl ErrorText {
    /// The error, for a text that holds no value.
    pub const fn error(&self) -> RedisError {
        RedisError::Str(self.text)
    }

    /// The error with `values` put in its `{name}`s, in the order the names
    /// first appear.
    pub fn with(&self, values: &[&dyn Display]) -> RedisError {
        RedisError::String(fill(self.text, values))
    }
}

/// `text` with each `{name}` replaced by the value of its name: names take
/// `values` in the order they first appear. A name without a value stays as
/// written.
fn fill(text: &str, values: &[&dyn Display]) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut names: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|close| open + close) else {
            break;
        };
        out.push_str(&rest[..open]);
        let name = &rest[open + 1..close];
        let index = names
            .iter()
            .position(|seen| *seen == name)
            .unwrap_or_else(|| {
                names.push(name);
                names.len() - 1
            });
        match values.get(index) {
            Some(value) => {
                let _ = write!(out, "{value}");
            }
            None => out.push_str(&rest[open..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

const fn entry(text: &'static str, when: &'static str) -> ErrorText {
    ErrorText { text, when }
}

// ---- Errors of every command ----------------------------------------------

/// Answered by the server from the command's arity (`RedisError::WrongArity`).
pub const WRONG_ARITY: ErrorText = entry(
    "ERR wrong number of arguments for '{command}' command",
    "too few or too many arguments",
);
pub const SYNTAX: ErrorText = entry(
    "ERR syntax error",
    "an unknown, repeated or incomplete option",
);
pub const NOT_AN_INTEGER: ErrorText = entry(
    "ERR value is not an integer or out of range",
    "an argument that must be an integer",
);
/// Answered for `RedisError::WrongType`.
pub const WRONG_TYPE: ErrorText = entry(
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    "a key of another type",
);
/// The server's own, before the command runs.
pub const CROSS_SLOT: ErrorText = entry(
    "CROSSSLOT Keys in request don't hash to the same slot",
    "keys of one call in different slots (cluster; the server's)",
);
pub const INTERNAL: ErrorText = entry(
    "ERR internal error in module recipes (details in the server log)",
    "a bug the panic guard contained",
);
pub const INVALID_EXPIRE: ErrorText = entry(
    "ERR invalid expire time in '{command}' command",
    "`PX`/`EX`/`TTL` not positive, or past the largest time; a lease or TTL that would end past the largest \
     time (Unix ms 2^63-1) once added to now or, with `ADD`, to the current end (nothing changes)",
);
pub const INVALID_WAIT: ErrorText = entry(
    "ERR invalid WAIT time in '{command}' command",
    "`WAIT` not positive, or past the largest time",
);
pub const INTERNAL_ONLY: ErrorText = entry(
    "ERR {command} only carries a primary's effects to replicas and the AOF; use {commands}",
    "a client sends an internal `IDPOOL.APPLY`, `POOL.APPLY`, `RATE.APPLY` or `RWLOCK.APPLY`",
);
pub const NOT_STORED: ErrorText = entry(
    "ERR could not store the value",
    "the server refused to store a value",
);
pub const MOVED: ErrorText = entry(
    "TRYAGAIN the key's slot moved to another node while waiting; retry the command",
    "a waiting command's key moved to another node (`… WAIT`); cluster clients retry it",
);
/// The server's own, for a command it does not know.
pub const UNKNOWN_COMMAND: ErrorText = entry(
    "ERR unknown command '{name}'…",
    "the server has no `recipes` module, or one older than the command",
);

/// The errors every command may answer, as `docs/src/errors.md` lists them.
pub const EVERY_COMMAND: &[&ErrorText] = &[
    &WRONG_ARITY,
    &SYNTAX,
    &NOT_AN_INTEGER,
    &WRONG_TYPE,
    &CROSS_SLOT,
    &INTERNAL,
    &INVALID_EXPIRE,
    &INVALID_WAIT,
    &INTERNAL_ONLY,
    &NOT_STORED,
    &MOVED,
    &UNKNOWN_COMMAND,
];

// ---- Errors of some families ----------------------------------------------

pub const HASH_NOT_AN_INTEGER: ErrorText = entry(
    "ERR hash value is not an integer",
    "`IDGEN.* … FIELD` (the field holds no integer), `IDGEN.ASSIGN` (the index holds no integer for the \
     name), `ARTICLE.VIEW`",
);
pub const OVERFLOW: ErrorText = entry(
    "ERR increment or decrement would overflow",
    "`ARTICLE.VIEW`, `LOCK.ACQUIRE … FENCE`, `RWLOCK.ACQUIRE … WRITE … FENCE`, `RATE.FIXED` (past ±2^63)",
);
pub const EXHAUSTED: ErrorText = entry(
    "EXHAUSTED taking {count} more ID(s) after {last} would pass 9223372036854775807",
    "`IDGEN.NEXT`, `IDGEN.ASSIGN` (a new name)",
);
pub const COUNT_RANGE: ErrorText = entry(
    "ERR COUNT must be between 1 and {most}",
    "`IDGEN.NEXT … COUNT` (2147483648), `AUTOCOMPLETE.HINT … COUNT` (2147483647)",
);
pub const NEGATIVE_FLOOR: ErrorText = entry(
    "ERR floor must be a non-negative integer",
    "`IDGEN.RESERVE`",
);
pub const SAME_INDEX_KEYS: ErrorText = entry(
    "ERR the counter, index and REVERSE keys must differ",
    "`IDGEN.ASSIGN` naming one key twice",
);
pub const EMPTY_TOKEN: ErrorText = entry(
    "ERR token must not be empty",
    "`LOCK.*`, `RWLOCK.ACQUIRE`, `RWLOCK.RELEASE`, `RWLOCK.EXTEND`",
);
pub const FENCE_KEY: ErrorText = entry(
    "ERR FENCE key must differ from the lock key",
    "`LOCK.ACQUIRE`, `RWLOCK.ACQUIRE`",
);
pub const NUMKEYS_RANGE: ErrorText = entry(
    "ERR numkeys must be between 1 and {most}",
    "`LOCK.MACQUIRE`, `LOCK.MRELEASEIF`, `LOCK.MEXTEND` (`most`: 1024)",
);
pub const NUMKEYS_MISMATCH: ErrorText = entry(
    "ERR numkeys does not match the arguments: numkeys keys, then the token",
    "`LOCK.MACQUIRE`, `LOCK.MEXTEND` (fewer keys than numkeys, or no token after them), `LOCK.MRELEASEIF` \
     (anything but numkeys keys and a token)",
);
pub const MULTI_FENCE: ErrorText = entry(
    "ERR LOCK.MACQUIRE takes no FENCE (its reply is the number of keys): take a fencing token with LOCK.ACQUIRE … FENCE",
    "`LOCK.MACQUIRE … FENCE`",
);
pub const NO_UPGRADE: ErrorText = entry(
    "NOUPGRADE token holds a read lock: release it before asking for WRITE (two readers upgrading would deadlock)",
    "`RWLOCK.ACQUIRE … WRITE` by a token holding `READ`",
);
pub const LATCH_COUNT: ErrorText = entry(
    "ERR count must be a positive integer",
    "`LATCH.SET` (`count` below 1)",
);
pub const LATCH_DECREMENT: ErrorText = entry(
    "ERR decrement must be a positive integer",
    "`LATCH.COUNTDOWN` (`n` below 1)",
);
pub const LATCH_TIMEOUT: ErrorText = entry(
    "ERR invalid timeout in 'latch.wait' command",
    "`LATCH.WAIT` (`ms` below 1, or past the largest time)",
);
pub const SLUG_TAKEN: ErrorText = entry(
    "SLUGTAKEN slug '{slug}' belongs to another article",
    "`ARTICLE.CREATE`, `ARTICLE.SETSLUG`",
);
pub const INVALID_SLUG: ErrorText = entry(
    "BADSLUG invalid slug: use 1 to {most} Unicode letters, digits, '-' or '_'",
    "`ARTICLE.CREATE`, `ARTICLE.SETSLUG` (`most`: `recipes.article-slug-max-chars`), `ARTICLE.BYSLUG` (4096)",
);
pub const SLUG_INDEX_KEY: ErrorText = entry(
    "ERR the slug index must be another key than the article",
    "`ARTICLE.*` with a slug index",
);
pub const INVALID_JSON: ErrorText = entry(
    "BADJSON invalid JSON: {message}",
    "`CACHE.SETJSON` (`message`: serde_json's)",
);
pub const NOT_JSON: ErrorText = entry(
    "ERR the value is not JSON",
    "`CACHE.GETJSON` (a string not written as JSON)",
);
pub const NOT_A_JSON_OBJECT: ErrorText = entry(
    "ERR the value is not a JSON object",
    "`CACHE.GETJSON … FIELD`",
);
pub const IDPOOL_MAX: ErrorText = entry(
    "ERR max must be between 1 and 4294967295",
    "`IDPOOL.CREATE`, `IDPOOL.RESIZE`",
);
pub const IDPOOL_ID: ErrorText = entry(
    "ERR id must be between 1 and {max}",
    "`IDPOOL.RELEASE`, `IDPOOL.RENEW`",
);
pub const NO_POOL: ErrorText = entry(
    "NOPOOL no ID pool at key '{key}'",
    "`IDPOOL.*` but `CREATE`",
);
pub const KEY_EXISTS: ErrorText = entry(
    "BUSYKEY Target key name already exists.",
    "`IDPOOL.CREATE` on an existing key",
);
pub const CANNOT_SHRINK: ErrorText = entry(
    "NOSHRINK cannot shrink the pool to {max}: ID {id} is leased",
    "`IDPOOL.RESIZE`",
);
pub const LEASE_END: ErrorText = entry(
    "ERR a lease ends at 0 (never) or a positive time",
    "`IDPOOL.APPLY`, `POOL.APPLY`, `RWLOCK.APPLY`",
);
pub const EMPTY_OWNER: ErrorText = entry("ERR owner must not be empty", "`POOL.*`");
pub const RATE_RANGE: ErrorText = entry(
    "ERR {what} must be an integer between 1 and {most}",
    "`RATE.LIMIT`, `RATE.PEEK` (`what`: max, period, burst or cost)",
);
pub const COST_TOO_HIGH: ErrorText = entry(
    "TOOCOSTLY cost {cost} exceeds the {limit} of {most}: such an action can never be allowed",
    "`RATE.LIMIT`, `RATE.PEEK` (`limit`: burst, or max for `SLIDING`), `RATE.FIXED … WAIT` (`limit`: max)",
);
pub const FIXED_RANGE: ErrorText = entry(
    "ERR {what} must be an integer between {least} and {most}",
    "`RATE.FIXED` (`what`: period, max or BLOCK)",
);
pub const FIXED_NEEDS_MAX: ErrorText = entry(
    "ERR {option} needs MAX",
    "`RATE.FIXED` (`option`: BLOCK, EXTEND, BACKOFF or WAIT)",
);
pub const FIXED_NEEDS_PERIOD: ErrorText = entry(
    "ERR {option} sets the TTL to the period: give a period above 0",
    "`RATE.FIXED` (`option`: RENEW, EXTEND or BACKOFF)",
);
pub const EMISSION_TOO_LONG: ErrorText = entry(
    "ERR burst × period / max must be at most 100 years",
    "`RATE.LIMIT`, `RATE.PEEK`",
);
pub const SLIDING_BURST: ErrorText = entry(
    "ERR BURST applies to GCRA limits; a SLIDING window allows max at once",
    "`RATE.LIMIT`, `RATE.PEEK`",
);
pub const SLIDING_MAX: ErrorText = entry(
    "ERR a SLIDING window's max must be at most {most} when its period is over {most} ms",
    "`RATE.LIMIT` (`most`: `recipes.rate-sliding-max`)",
);
pub const TOO_MANY_LIMITS: ErrorText = entry(
    "ERR too many limits in one call (at most {most})",
    "`RATE.LIMIT` (16, or `recipes.rate-max-limits` for a new limiter), `RATE.PEEK` (16)",
);
pub const NOT_A_LIMITER: ErrorText = entry(
    "MISMATCH the key holds a string that is not a rate limiter",
    "`RATE.LIMIT`, `RATE.PEEK`, `RATE.RESET`",
);
pub const LIMIT_COUNT_MISMATCH: ErrorText = entry(
    "MISMATCH the key holds a limiter of {held} limit(s); this call gives {given} (RATE.RESET it first)",
    "`RATE.LIMIT`, `RATE.PEEK`",
);
pub const GCRA_NOT_SLIDING: ErrorText = entry(
    "MISMATCH the key holds a GCRA limiter, not a SLIDING window (RATE.RESET it first)",
    "`RATE.LIMIT`, `RATE.PEEK` … `SLIDING`",
);
pub const SLIDING_NOT_GCRA: ErrorText = entry(
    "MISMATCH the key holds a SLIDING window, not a GCRA limiter (RATE.RESET it first)",
    "`RATE.LIMIT`, `RATE.PEEK` without `SLIDING`",
);
pub const EMPTY_CONTENT: ErrorText = entry(
    "ERR content must not be empty",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET`",
);
pub const CONTENT_TOO_LONG: ErrorText = entry(
    "ERR content must be at most {most} characters",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET` (`most`: `recipes.autocomplete-max-chars`)",
);
pub const NOT_UTF8: ErrorText = entry(
    "ERR content and prefix must be valid UTF-8",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET`, `AUTOCOMPLETE.HINT`",
);
/// `ZINCRBY`'s text.
pub const NOT_A_FLOAT: ErrorText = entry(
    "ERR value is not a valid float",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET` (a weight or increment that is not a number)",
);
pub const WEIGHT_NOT_FINITE: ErrorText = entry(
    "ERR weight must be a finite number",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET` (`inf`, `nan`)",
);
pub const WEIGHT_OVERFLOW: ErrorText = entry(
    "ERR resulting weight is not a finite number",
    "`AUTOCOMPLETE.FEED` (the sum overflows)",
);
pub const AUTOCOMPLETE_FULL: ErrorText = entry(
    "ERR an autocomplete key holds at most {most} entries",
    "`AUTOCOMPLETE.FEED`, `AUTOCOMPLETE.SET` of a new entry",
);
pub const QUEUE_MAXLEN: ErrorText = entry(
    "ERR maxlen must be a positive integer",
    "`QUEUE.RPUSH`, `QUEUE.LPUSH` (`maxlen` below 1; nothing is written)",
);

pub const REPEATED_ITEM: ErrorText = entry(
    "ERR item '{item}' given more than once",
    "`UQUEUE.INSERT` naming an item twice (the book's `ValueError`)",
);
pub const UQUEUE_FULL: ErrorText = entry(
    "ERR a unique queue holds at most {most} items",
    "`UQUEUE.INSERT` of new items into a full queue",
);

/// The errors of some families, as `docs/src/errors.md` lists them.
pub const BY_FAMILY: &[&ErrorText] = &[
    &HASH_NOT_AN_INTEGER,
    &OVERFLOW,
    &EXHAUSTED,
    &COUNT_RANGE,
    &NEGATIVE_FLOOR,
    &SAME_INDEX_KEYS,
    &EMPTY_TOKEN,
    &FENCE_KEY,
    &NUMKEYS_RANGE,
    &NUMKEYS_MISMATCH,
    &MULTI_FENCE,
    &NO_UPGRADE,
    &LATCH_COUNT,
    &LATCH_DECREMENT,
    &LATCH_TIMEOUT,
    &SLUG_TAKEN,
    &INVALID_SLUG,
    &SLUG_INDEX_KEY,
    &INVALID_JSON,
    &NOT_JSON,
    &NOT_A_JSON_OBJECT,
    &IDPOOL_MAX,
    &IDPOOL_ID,
    &NO_POOL,
    &KEY_EXISTS,
    &CANNOT_SHRINK,
    &LEASE_END,
    &EMPTY_OWNER,
    &RATE_RANGE,
    &COST_TOO_HIGH,
    &FIXED_RANGE,
    &FIXED_NEEDS_MAX,
    &FIXED_NEEDS_PERIOD,
    &EMISSION_TOO_LONG,
    &SLIDING_BURST,
    &SLIDING_MAX,
    &TOO_MANY_LIMITS,
    &NOT_A_LIMITER,
    &LIMIT_COUNT_MISMATCH,
    &GCRA_NOT_SLIDING,
    &SLIDING_NOT_GCRA,
    &EMPTY_CONTENT,
    &CONTENT_TOO_LONG,
    &NOT_UTF8,
    &NOT_A_FLOAT,
    &WEIGHT_NOT_FINITE,
    &WEIGHT_OVERFLOW,
    &AUTOCOMPLETE_FULL,
    &QUEUE_MAXLEN,
    &REPEATED_ITEM,
    &UQUEUE_FULL,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    fn all() -> impl Iterator<Item = &'static ErrorText> {
        EVERY_COMMAND.iter().chain(BY_FAMILY).copied()
    }

    /// A catalogue text as a Markdown table cell shows it.
    /// Every entry declared here is in one of the two lists.
    #[test]
    fn every_entry_is_listed() {
        let declared = include_str!("errors.rs")
            .lines()
            .filter(|line| line.starts_with("pub const ") && line.contains(": ErrorText = entry("))
            .count();
        assert_eq!(
            declared,
            all().count(),
            "an ErrorText is missing from EVERY_COMMAND or BY_FAMILY"
        );
    }

    #[test]
    fn fill_puts_values_in_names_in_order_of_first_appearance() {
        assert_eq!(fill("a {x} b {y} c {x}", &[&1, &"two"]), "a 1 b two c 1");
        assert_eq!(fill("no values {x}", &[]), "no values {x}");
        assert_eq!(fill("open { only", &[&1]), "open { only");
        assert_eq!(
            SLIDING_MAX.with(&[&60000]).to_string(),
            "ERR a SLIDING window's max must be at most 60000 when its period is over 60000 ms"
        );
    }

    #[test]
    fn texts_are_unique_one_line_and_start_with_a_code() {
        let mut seen = std::collections::HashSet::new();
        for error in all() {
            assert!(
                seen.insert(error.text),
                "twice in the catalogue: {}",
                error.text
            );
            assert!(!error.text.contains(['\r', '\n']), "{}", error.text);
            let code = error.text.split(' ').next().unwrap_or("");
            assert!(
                !code.is_empty() && code.bytes().all(|b| b.is_ascii_uppercase()),
                "an error starts with an upper-case code: {}",
                error.text
            );
            assert!(!error.when.is_empty(), "{}", error.text);
        }
    }

    /// The codes errors start with (`ERR`, `WRONGTYPE`, …).
    fn codes() -> Vec<&'static str> {
        let mut codes: Vec<&str> = all()
            .filter_map(|error| error.text.split(' ').next())
            .collect();
        codes.sort_unstable();
        codes.dedup();
        codes
    }

    /// Errors are named here, never written where they are answered: no
    /// `RedisError::Str`/`RedisError::String` and no quoted error code
    /// (`"ERR …`) outside this file in `src/`, tests apart.
    #[test]
    fn no_error_text_is_written_outside_the_catalogue() {
        fn walk(dir: &Path, found: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && !path.ends_with("common/errors.rs")
                {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    // The code, not its tests (at the end of each file).
                    let code = text.split("#[cfg(test)]").next().unwrap_or("");
                    for (number, line) in code.lines().enumerate() {
                        let quotes_a_code = codes()
                            .iter()
                            .any(|code| line.contains(&format!("\"{code} ")));
                        if line.contains("RedisError::Str(\"")
                            || line.contains("RedisError::String(format!")
                            || quotes_a_code
                        {
                            found.push(format!(
                                "{}:{}: {}",
                                path.display(),
                                number + 1,
                                line.trim()
                            ));
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        walk(&root().join("src"), &mut found);
        assert!(
            found.is_empty(),
            "error texts written outside src/common/errors.rs:\n{}",
            found.join("\n")
        );
    }
}
