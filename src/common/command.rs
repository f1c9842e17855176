//! Command metadata as a family declares it: each command's [`CommandSpec`]
//! (name, flags, ACL categories, arity, key specs, `COMMAND DOCS`
//! arguments) and its [`Entry`], made by [`entry!`](crate::entry). The
//! server is told about them in `ffi/command.rs`; every call goes through
//! `ffi/dispatch.rs`.

#![forbid(unsafe_code)]

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::{raw, Context, RedisError};

use super::args::is_token;
use super::errors;
use super::ffi::args::Arg;
use super::reply::Replied;

/// The signature of every command's behaviour: argv (with the command name at
/// index 0) in, reply out.
pub type Handler = for<'a> fn(&'a Context, &'a [Arg<'a>]) -> Replied<'a>;

/// The C function the server calls for a command.
pub type EntryPoint =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// A command's name, entry point, handler and key specs, stated once: made
/// by [`entry!`](crate::entry), read by the server's registration and by
/// every call (`ffi/dispatch.rs`).
pub struct Entry {
    /// The name it is registered under (lower case): what `{command}` in an
    /// error it answers stands for.
    pub name: &'static CStr,
    /// The name in upper case, as the docs write it and effects send it.
    pub upper_name: &'static CStr,
    pub call: EntryPoint,
    pub handler: Handler,
    /// Where its keys are (`COMMAND INFO`, cluster routing, key-position
    /// requests).
    pub key_specs: &'static [KeySpec],
    /// [`has_movable_keys`] of `key_specs`.
    pub movable: bool,
}

/// Where a key spec starts looking for its key.
pub enum BeginSearch {
    /// At a fixed argv index.
    Index(i32),
    /// Right after the first argument equal to `keyword`, searching from argv
    /// index `from` (e.g. `FENCE fencekey`); absent keyword, no key.
    Keyword { keyword: &'static CStr, from: i32 },
}

impl BeginSearch {
    /// Right after `option`'s token (e.g. `FENCE fencekey`), searching from
    /// argv index `from`.
    pub const fn after(option: &ArgSpec, from: i32) -> Self {
        match option.token {
            Some(keyword) => Self::Keyword { keyword, from },
            None => panic!("a key found by keyword follows a token"),
        }
    }
}

/// Whether a command's keys move with its arguments: a key found by keyword,
/// or a run of keys counted by an argument. Such a command is registered with
/// `getkeys-api`: cluster routing (`CROSSSLOT`, `MOVED`) on Redis 7.x and
/// Valkey finds a module command's keys only through the legacy (first, last,
/// step) range or that API, and the range can describe neither an optional
/// key nor keys followed by options.
pub const fn has_movable_keys(key_specs: &[KeySpec]) -> bool {
    let mut at = 0;
    while at < key_specs.len() {
        let spec = &key_specs[at];
        if matches!(spec.begin, BeginSearch::Keyword { .. })
            || matches!(spec.find, FindKeys::KeyNum { .. })
        {
            return true;
        }
        at += 1;
    }
    false
}

/// How many keys a key spec finds where its search begins.
#[derive(Clone, Copy)]
pub enum FindKeys {
    /// One key, right there.
    One,
    /// A count (`numkeys`), then that many keys: the server's `keynum` spec
    /// with the count at `keynumidx` 0 from the beginning, the first key at 1,
    /// every key one apart (`keystep` 1). A count that is not an integer
    /// between 1 and `most` finds no key (the command refuses it).
    KeyNum { most: usize },
}

/// Key flags of a key read and changed in place (as `INCR`'s).
pub const UPDATED: u32 =
    raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE;

// ---- Arguments several families take, declared once ----------------------
// Each is what `COMMAND DOCS` shows and what `args::parse_options` reads.

/// `PX milliseconds`: one choice of a lease or a lifetime.
pub const PX: ArgSpec = ArgSpec::tokened(c"milliseconds", c"PX", ArgType::Integer);
/// `EX seconds`: the other.
pub const EX: ArgSpec = ArgSpec::tokened(c"seconds", c"EX", ArgType::Integer);
/// A lease as the commands that hold something take it: `PX milliseconds |
/// EX seconds` (parsed by `time::lease`).
pub const LEASE: &[ArgSpec] = &[PX, EX];
/// `WAIT ms`: how long a command may wait (parsed by `wait::parse_wait`).
pub const WAIT: ArgSpec = ArgSpec::option(c"wait", c"WAIT", ArgType::Integer);
/// `COUNT count`: how many.
pub const COUNT: ArgSpec = ArgSpec::option(c"count", c"COUNT", ArgType::Integer);
/// `FENCE fencekey`: the counter of fencing tokens, the command's second key.
pub const FENCE: ArgSpec = ArgSpec::option(c"fencekey", c"FENCE", ArgType::Key(1));
/// `ADD`: a lease extended from its current end rather than from now.
pub const ADD: ArgSpec = ArgSpec::flag(c"add", c"ADD");
/// `NX`: only where nothing is yet (required: one choice of a
/// [`ArgType::OneOf`], or [`ArgSpec::optional`] alone).
pub const NX: ArgSpec = ArgSpec::keyword(c"nx", c"NX");

/// The first argument, a key read and changed in place.
pub const UPDATES_FIRST: KeySpec = KeySpec {
    flags: UPDATED,
    begin: BeginSearch::Index(1),
    find: FindKeys::One,
};

/// The first argument, a key only read.
pub const READS_FIRST: KeySpec = KeySpec {
    flags: raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS,
    begin: BeginSearch::Index(1),
    find: FindKeys::One,
};

/// A key spec: how the server, `COMMAND GETKEYS` and cluster clients find one
/// key (or one run of keys) in the arguments.
pub struct KeySpec {
    /// `REDISMODULE_CMD_KEY_*` flags.
    pub flags: u32,
    pub begin: BeginSearch,
    pub find: FindKeys,
}

impl KeySpec {
    /// The argv indexes of this spec's keys in `args`: what a key-position
    /// request is answered (`getkeys-api`).
    pub fn positions(&self, args: &[Arg]) -> Vec<usize> {
        let begin = match self.begin {
            BeginSearch::Index(at) => usize::try_from(at).ok(),
            BeginSearch::Keyword { keyword, from } => {
                let from = usize::try_from(from).unwrap_or(usize::MAX);
                args.iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, arg)| is_token(arg.as_bytes(), keyword))
                    .map(|(at, _)| at + 1)
            }
        };
        let Some(begin) = begin.filter(|&at| at < args.len()) else {
            return Vec::new();
        };
        match self.find {
            FindKeys::One => vec![begin],
            FindKeys::KeyNum { most } => {
                let count = args
                    .get(begin)
                    .and_then(|arg| arg.to_i64().ok())
                    .and_then(|count| usize::try_from(count).ok())
                    .filter(|count| (1..=most).contains(count));
                match count {
                    Some(count) if begin + count < args.len() => {
                        (begin + 1..=begin + count).collect()
                    }
                    _ => Vec::new(),
                }
            }
        }
    }
}

#[derive(Clone, Copy)]
pub enum ArgType {
    Key(i32),
    String,
    Integer,
    /// A number with a fraction (a weight).
    Double,
    /// Exactly one of these (e.g. `PX ms | EX s`).
    OneOf(&'static [ArgSpec]),
    /// These together (e.g. `SLUG slugkey slug`).
    Block(&'static [ArgSpec]),
    /// A token alone (e.g. `JSON`).
    PureToken,
}

/// One argument as `COMMAND DOCS` shows it and, for an option (one with a
/// token), as `args::parse_options` reads it: the token, then as many values
/// as [`ArgSpec::values`] says.
pub struct ArgSpec {
    pub name: &'static CStr,
    pub kind: ArgType,
    pub token: Option<&'static CStr>,
    pub optional: bool,
    /// May repeat (`name [name …]`).
    pub multiple: bool,
}

impl ArgSpec {
    /// How many words follow the token of this option: none for a token
    /// alone, a block's parts, else one.
    pub const fn values(&self) -> usize {
        match self.kind {
            ArgType::PureToken => 0,
            ArgType::Block(parts) => parts.len(),
            _ => 1,
        }
    }

    pub const fn key(name: &'static CStr, spec: i32) -> Self {
        Self {
            name,
            kind: ArgType::Key(spec),
            token: None,
            optional: false,
            multiple: false,
        }
    }
    pub const fn required(name: &'static CStr, kind: ArgType) -> Self {
        Self {
            name,
            kind,
            token: None,
            optional: false,
            multiple: false,
        }
    }
    /// An optional `TOKEN value` pair.
    pub const fn option(name: &'static CStr, token: &'static CStr, kind: ArgType) -> Self {
        Self {
            name,
            kind,
            token: Some(upper_case(token)),
            optional: true,
            multiple: false,
        }
    }
    /// A required `TOKEN value` pair (e.g. one choice of a [`ArgType::OneOf`]).
    pub const fn tokened(name: &'static CStr, token: &'static CStr, kind: ArgType) -> Self {
        Self {
            name,
            kind,
            token: Some(upper_case(token)),
            optional: false,
            multiple: false,
        }
    }
    /// An optional token without a value (e.g. `JSON`).
    pub const fn flag(name: &'static CStr, token: &'static CStr) -> Self {
        Self {
            name,
            kind: ArgType::PureToken,
            token: Some(upper_case(token)),
            optional: true,
            multiple: false,
        }
    }
    /// A required token without a value (one choice of a
    /// [`ArgType::OneOf`], e.g. `READ | WRITE`).
    pub const fn keyword(name: &'static CStr, token: &'static CStr) -> Self {
        Self {
            optional: false,
            ..Self::flag(name, token)
        }
    }
    /// An optional `TOKEN value value…` group.
    pub const fn block(
        name: &'static CStr,
        token: &'static CStr,
        parts: &'static [ArgSpec],
    ) -> Self {
        Self {
            name,
            kind: ArgType::Block(parts),
            token: Some(upper_case(token)),
            optional: true,
            multiple: false,
        }
    }
    /// A required group of arguments without a token (e.g. `field value`).
    pub const fn group(name: &'static CStr, parts: &'static [ArgSpec]) -> Self {
        Self {
            name,
            kind: ArgType::Block(parts),
            token: None,
            optional: false,
            multiple: false,
        }
    }
    /// The same argument, allowed to repeat.
    pub const fn multiple(self) -> Self {
        Self {
            multiple: true,
            ..self
        }
    }
    /// One of `choices`, required (see [`ArgSpec::optional`]).
    pub const fn one_of(name: &'static CStr, choices: &'static [ArgSpec]) -> Self {
        Self {
            name,
            kind: ArgType::OneOf(choices),
            token: None,
            optional: false,
            multiple: false,
        }
    }

    /// The same argument, which may be left out.
    pub const fn optional(self) -> Self {
        Self {
            optional: true,
            ..self
        }
    }
}

/// Refuses, when compiled, a token that is not upper case: `args::is_token`
/// folds only the argument's case.
const fn upper_case(token: &'static CStr) -> &'static CStr {
    let bytes = token.to_bytes();
    let mut at = 0;
    while at < bytes.len() {
        assert!(
            !bytes[at].is_ascii_lowercase(),
            "option tokens are upper case"
        );
        at += 1;
    }
    token
}

/// Everything the server is told about one command.
pub struct CommandSpec {
    /// Its name and entry point: `entry!(c"family.name", handler, key_specs)`.
    pub entry: &'static Entry,
    /// Command flags, e.g. `write deny-oom fast`.
    pub flags: &'static CStr,
    /// ACL categories, e.g. `write fast`, applied where the server can.
    pub acl_categories: &'static CStr,
    /// As in `COMMAND INFO`: N exactly, -N at least N (the name counts).
    pub arity: i32,
    pub summary: &'static CStr,
    pub complexity: &'static CStr,
    pub since: &'static CStr,
    pub args: &'static [ArgSpec],
    /// What it replies (Markdown, for the module's spec and the manual).
    #[cfg_attr(not(test), allow(dead_code))]
    pub reply: &'static str,
    /// The keyspace events it fires when it writes; `None` for a command
    /// that never writes or only carries a primary's effects (`*.APPLY`).
    #[cfg_attr(not(test), allow(dead_code))]
    pub events: Option<Events>,
}

/// The keyspace events a write fires (Markdown, each event's name in
/// backticks): on the primary, and on a replica applying what the primary
/// sent (`None`: the same). `tests/events.rs` checks them against what
/// servers fire.
#[cfg_attr(not(test), allow(dead_code))]
pub struct Events {
    pub fires: &'static str,
    pub replica: Option<&'static str>,
}

impl CommandSpec {
    /// The name it is registered under (lower case, e.g. `lock.acquire`).
    pub const fn name(&self) -> &'static CStr {
        self.entry.name
    }

    /// The name in upper case (`LOCK.ACQUIRE`), as the docs and errors
    /// write it and the effects it is replicated as send it.
    pub const fn upper_name(&self) -> &'static CStr {
        self.entry.upper_name
    }
}

/// `name` in upper case, as the `N` bytes of a C string (its NUL counted):
/// made when compiled, by [`entry!`](crate::entry).
pub const fn upper_case_name<const N: usize>(name: &CStr) -> [u8; N] {
    let bytes = name.to_bytes_with_nul();
    assert!(bytes.len() == N, "N is the name's length and its NUL");
    let mut out = [0; N];
    let mut at = 0;
    while at < N {
        out[at] = bytes[at].to_ascii_uppercase();
        at += 1;
    }
    out
}

/// `ERR <COMMAND> only carries a primary's effects …; use <INSTEAD>`: an
/// internal command a client sent, and the commands to send instead.
pub fn internal_only(command: &CommandSpec, instead: &[&CommandSpec]) -> RedisError {
    let mut names = String::new();
    for (at, other) in instead.iter().enumerate() {
        if at > 0 {
            names.push_str(if at + 1 == instead.len() {
                " or "
            } else {
                ", "
            });
        }
        names.push_str(&other.upper_name().to_string_lossy());
    }
    errors::INTERNAL_ONLY.with(&[&command.upper_name().to_string_lossy(), &names])
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::common::reply::Replied;

    /// Every command the module registers.
    fn commands() -> impl Iterator<Item = &'static CommandSpec> {
        crate::FAMILIES.iter().flat_map(|family| family.commands)
    }

    fn name(command: &CommandSpec) -> &'static str {
        command.name().to_str().unwrap_or_default()
    }

    #[test]
    fn names_are_lower_case_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for command in commands() {
            let name = name(command);
            assert_eq!(name, name.to_ascii_lowercase());
            assert!(seen.insert(name), "{name} declared twice");
        }
    }

    /// The string literals of a line of code (`"…"` and `c"…"`), each with
    /// whether it is a C string.
    fn literals(line: &str) -> Vec<(bool, &str)> {
        let mut found = Vec::new();
        let mut rest = line;
        while let Some(open) = rest.find('"') {
            let c_string = rest[..open].ends_with('c');
            let after = &rest[open + 1..];
            let Some(close) = after.find('"') else { break };
            found.push((c_string, &after[..close]));
            rest = &after[close + 1..];
        }
        found
    }

    /// Whether `text` is only command names: one (`"lock.acquire"`) or a
    /// list (`"A, B or C"`), in any case.
    fn names_commands(text: &str, names: &[&str]) -> bool {
        let words: Vec<&str> = text
            .split([',', ' '])
            .filter(|word| !word.is_empty() && *word != "or" && *word != "and")
            .collect();
        !words.is_empty()
            && words
                .iter()
                .all(|word| names.iter().any(|name| name.eq_ignore_ascii_case(word)))
    }

    /// A command's name is written once, in its declaration
    /// (`entry!(c"family.name", …)`): its errors get it from there (the
    /// dispatcher fills `{command}`), other code from the declaration
    /// (`APPLY.name()`). The only other literals that may read the same are
    /// the module's keyspace events (lower-case C strings), named after the
    /// commands that fire them as the server's events are.
    #[test]
    fn no_command_name_is_written_outside_its_declaration() {
        fn walk(dir: &Path, names: &[&str], found: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, names, found);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                // The code, not its tests (at the end of each file).
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                let mut choosing_event = false;
                for (number, line) in code.lines().enumerate() {
                    let code_part = line.split("//").next().unwrap_or("");
                    if code_part.contains("let event = match") {
                        choosing_event = true;
                    }
                    let fires_event = choosing_event
                        || ["written(", "notify(", "follow("]
                            .iter()
                            .any(|call| code_part.contains(call));
                    for (c_string, literal) in literals(code_part) {
                        if !names_commands(literal, names) {
                            continue;
                        }
                        let declaration = code_part.contains("entry!(c\"");
                        let event =
                            c_string && fires_event && literal == literal.to_ascii_lowercase();
                        if !declaration && !event {
                            found.push(format!(
                                "{}:{}: {}",
                                path.display(),
                                number + 1,
                                line.trim()
                            ));
                        }
                    }
                    if choosing_event && code_part.trim_start().starts_with("};") {
                        choosing_event = false;
                    }
                }
            }
        }
        let names: Vec<&str> = commands().map(name).collect();
        let mut found = Vec::new();
        walk(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &names,
            &mut found,
        );
        assert!(
            found.is_empty(),
            "command names written outside their declarations:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn the_test_above_sees_names_and_lists_of_names() {
        let names = ["lock.acquire", "lock.extend"];
        assert!(names_commands("lock.acquire", &names));
        assert!(names_commands("LOCK.ACQUIRE or LOCK.EXTEND", &names));
        assert!(names_commands("LOCK.ACQUIRE, LOCK.EXTEND", &names));
        assert!(!names_commands("ERR LOCK.ACQUIRE takes no FENCE", &names));
        assert!(!names_commands("", &names));
        assert_eq!(
            literals(r#"f(c"a.b", "x y") "z""#),
            [(true, "a.b"), (false, "x y"), (false, "z")]
        );
    }

    fn never<'a>(_: &'a Context, _: &'a [Arg<'a>]) -> Replied<'a> {
        Ok(redis_module::RedisValue::Null.into())
    }

    const fn command(entry: &'static Entry) -> CommandSpec {
        CommandSpec {
            entry,
            flags: c"",
            acl_categories: c"",
            arity: 1,
            summary: c"",
            complexity: c"",
            since: c"",
            reply: "",
            events: None,
            args: &[],
        }
    }

    #[test]
    fn internal_only_names_the_commands_as_the_docs_write_them() {
        const APPLY: CommandSpec = command(crate::entry!(c"x.apply", never, &[]));
        const A: CommandSpec = command(crate::entry!(c"x.a", never, &[]));
        const B: CommandSpec = command(crate::entry!(c"x.b", never, &[]));
        const C: CommandSpec = command(crate::entry!(c"x.c", never, &[]));
        assert_eq!(APPLY.name(), c"x.apply");
        assert_eq!(APPLY.upper_name(), c"X.APPLY");
        let text = |instead: &[&CommandSpec]| internal_only(&APPLY, instead).to_string();
        let start = "ERR X.APPLY only carries a primary's effects to replicas and the AOF; use";
        assert_eq!(text(&[&A]), format!("{start} X.A"));
        assert_eq!(text(&[&A, &B]), format!("{start} X.A or X.B"));
        assert_eq!(text(&[&A, &B, &C]), format!("{start} X.A, X.B or X.C"));
    }

    #[test]
    fn an_option_takes_the_words_its_kind_says() {
        assert_eq!(ADD.values(), 0);
        assert_eq!(NX.values(), 0);
        assert_eq!(PX.values(), 1);
        assert_eq!(WAIT.values(), 1);
        assert_eq!(FENCE.values(), 1);
        const PAIR: ArgSpec = ArgSpec::block(
            c"pair",
            c"PAIR",
            &[
                ArgSpec::required(c"a", ArgType::Integer),
                ArgSpec::required(c"b", ArgType::Integer),
            ],
        );
        assert_eq!(PAIR.values(), 2);
        assert!(matches!(
            BeginSearch::after(&FENCE, 3),
            BeginSearch::Keyword { keyword, from: 3 } if keyword == c"FENCE"
        ));
    }
}
