//! The error catalogue: the errors of every command and those several
//! families share are written here; each family writes its own in its
//! `errors.rs` (`src/idpool/errors.rs`, …), which re-exports these.
//!
//! A command answers an error by naming its entry (`errors::SYNTAX.error()`,
//! or `errors::NO_POOL.with(&[&key])` where the text holds a value). A text's
//! `{command}` is the declared name of the command answering it, filled in
//! where the error is answered ([`answered_by`]): `INVALID_EXPIRE.error()`
//! names no command. No error
//! text is written anywhere else in `src/` (a test checks it), so the
//! catalogue is complete. It goes into the module's spec (`spec.rs`, `docs/spec.json`),
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

use std::ffi::CStr;
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

/// `error` as the command declared as `command` answers it: a catalogue
/// text's `{command}` filled with that name (`ffi/dispatch.rs` for a
/// command's reply, `wait/serve.rs` for a waiter's). Only a text as the
/// catalogue writes it (`RedisError::Str`, from [`ErrorText::error`]) is
/// filled: one that holds values ([`ErrorText::with`]) may hold a client's
/// bytes, and stays as it is.
pub fn answered_by(error: RedisError, command: &CStr) -> RedisError {
    match error {
        RedisError::Str(text) if text.contains(COMMAND) => {
            RedisError::String(text.replace(COMMAND, &command.to_string_lossy()))
        }
        error => error,
    }
}

/// Where a text names the command answering it.
const COMMAND: &str = "{command}";

pub const fn entry(text: &'static str, when: &'static str) -> ErrorText {
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

// ---- Errors of several families ----------------------------------------------

pub const HASH_NOT_AN_INTEGER: ErrorText = entry(
    "ERR hash value is not an integer",
    "`IDGEN.* … FIELD` (the field holds no integer), `IDGEN.ASSIGN` (the index holds no integer for the \
     name), `ARTICLE.VIEW`",
);
pub const OVERFLOW: ErrorText = entry(
    "ERR increment or decrement would overflow",
    "`ARTICLE.VIEW`, `LOCK.ACQUIRE … FENCE`, `RWLOCK.ACQUIRE … WRITE … FENCE`, `RATE.FIXED` (past ±2^63)",
);
pub const COUNT_RANGE: ErrorText = entry(
    "ERR COUNT must be between 1 and {most}",
    "`IDGEN.NEXT … COUNT` (2147483648), `AUTOCOMPLETE.HINT … COUNT` and `NEARBY.RANDOM … COUNT` (2147483647)",
);
pub const EMPTY_TOKEN: ErrorText = entry(
    "ERR token must not be empty",
    "`LOCK.*`, `RWLOCK.ACQUIRE`, `RWLOCK.RELEASE`, `RWLOCK.EXTEND`",
);
pub const FENCE_KEY: ErrorText = entry(
    "ERR FENCE key must differ from the lock key",
    "`LOCK.ACQUIRE`, `RWLOCK.ACQUIRE`",
);
pub const LEASE_END: ErrorText = entry(
    "ERR a lease ends at 0 (never) or a positive time",
    "`IDPOOL.APPLY`, `POOL.APPLY`, `RWLOCK.APPLY`",
);

/// The errors several families answer, as `docs/src/errors.md` lists them
/// (each family declares its own in its `errors.rs`).
pub const SHARED: &[&ErrorText] = &[
    &HASH_NOT_AN_INTEGER,
    &OVERFLOW,
    &COUNT_RANGE,
    &EMPTY_TOKEN,
    &FENCE_KEY,
    &LEASE_END,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    /// Every error: those of every command, the shared ones, each family's.
    fn all() -> impl Iterator<Item = &'static ErrorText> {
        let own = crate::FAMILIES.iter().flat_map(|family| family.errors);
        EVERY_COMMAND.iter().chain(SHARED).chain(own).copied()
    }

    fn declared(text: &str) -> usize {
        text.lines()
            .filter(|line| line.starts_with("pub const ") && line.contains(": ErrorText = entry("))
            .count()
    }

    /// Every entry declared here is in one of the two lists, and each
    /// family's (`src/<family>/errors.rs`) in its `FamilySpec`'s `errors`.
    #[test]
    fn every_entry_is_listed() {
        assert_eq!(
            declared(include_str!("errors.rs")),
            EVERY_COMMAND.len() + SHARED.len(),
            "an ErrorText is missing from EVERY_COMMAND or SHARED"
        );
        for family in crate::FAMILIES {
            let name = family.commands[0].name().to_string_lossy();
            let name = name.split('.').next().unwrap_or_default();
            let path = root().join("src").join(name).join("errors.rs");
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            assert_eq!(
                declared(&text),
                family.errors.len(),
                "{}: an ErrorText is missing from its family's errors",
                path.display()
            );
        }
    }

    #[test]
    fn fill_puts_values_in_names_in_order_of_first_appearance() {
        assert_eq!(fill("a {x} b {y} c {x}", &[&1, &"two"]), "a 1 b two c 1");
        assert_eq!(fill("no values {x}", &[]), "no values {x}");
        assert_eq!(fill("open { only", &[&1]), "open { only");
        assert_eq!(
            COUNT_RANGE.with(&[&64]).to_string(),
            "ERR COUNT must be between 1 and 64"
        );
    }

    #[test]
    fn the_command_is_filled_where_the_error_is_answered() {
        let answered = |error| answered_by(error, c"lock.acquire").to_string();
        assert_eq!(
            answered(INVALID_EXPIRE.error()),
            "ERR invalid expire time in 'lock.acquire' command"
        );
        assert_eq!(
            answered(INVALID_WAIT.error()),
            "ERR invalid WAIT time in 'lock.acquire' command"
        );
        assert_eq!(answered(SYNTAX.error()), SYNTAX.text);
        // A text holding a client's value is never filled again.
        let unknown = UNKNOWN_COMMAND.with(&[&"{command}"]);
        assert_eq!(answered(unknown), "ERR unknown command '{command}'…");
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

    /// Errors are named in the catalogue (this file and each family's
    /// `errors.rs`), never written where they are answered: no
    /// `RedisError::Str`/`RedisError::String` and no quoted error code
    /// (`"ERR …`) elsewhere in `src/`, tests apart.
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
                    && !path.ends_with("errors.rs")
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
