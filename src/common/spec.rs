//! The module's spec: everything it offers, as one machine-readable file,
//! `docs/spec.json`, written from the declarations (each family's
//! `FamilySpec`, the error catalogue, the crate's version and licence) and
//! committed. `RECIPES_BLESS=1 cargo test --lib spec` writes it; without
//! the variable the test fails when the file differs from what the
//! declarations give. The client packages' error tables, the manual's
//! reference pages and the README's family table are generated from it
//! (`tools/generate.py`), and checked the same way.

#![cfg(test)]
#![forbid(unsafe_code)]

use std::ffi::CStr;

use redis_module::raw;
use serde_json::{json, Map, Value};

use super::command::{ArgSpec, ArgType, BeginSearch, CommandSpec, FindKeys, KeySpec};
use super::errors::{self, ErrorText};
use super::family::FamilySpec;
use super::stats;
use super::wait;

fn text(value: &CStr) -> String {
    value.to_string_lossy().into_owned()
}

fn words(value: &CStr) -> Vec<String> {
    value
        .to_string_lossy()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// An argument as `COMMAND DOCS` gives it, and its nested arguments.
fn argument(spec: &ArgSpec) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(text(spec.name)));
    let kind = match spec.kind {
        ArgType::Key(_) => "key",
        ArgType::String => "string",
        ArgType::Integer => "integer",
        ArgType::Double => "double",
        ArgType::OneOf(_) => "oneof",
        ArgType::Block(_) => "block",
        ArgType::PureToken => "pure-token",
    };
    out.insert("type".into(), json!(kind));
    if let ArgType::Key(index) = spec.kind {
        out.insert("key_spec_index".into(), json!(index));
    }
    if let Some(token) = spec.token {
        out.insert("token".into(), json!(text(token)));
    }
    if spec.optional {
        out.insert("optional".into(), json!(true));
    }
    if spec.multiple {
        out.insert("multiple".into(), json!(true));
    }
    if let ArgType::OneOf(parts) | ArgType::Block(parts) = spec.kind {
        out.insert(
            "arguments".into(),
            parts.iter().map(argument).collect::<Vec<_>>().into(),
        );
    }
    out.into()
}

/// One argument as a command's syntax line shows it, as the server's own
/// documentation writes them: `TOKEN name`, `[optional]`, `a | b`,
/// `name [name ...]`.
fn syntax_of(spec: &ArgSpec) -> String {
    let body = match spec.kind {
        ArgType::OneOf(parts) => {
            let inner: Vec<String> = parts.iter().map(syntax_of).collect();
            let joined = inner.join(" | ");
            match (spec.token, spec.optional) {
                (Some(token), _) => format!("{} <{joined}>", text(token)),
                (None, true) => joined,
                (None, false) => format!("<{joined}>"),
            }
        }
        ArgType::Block(parts) => {
            let inner: Vec<String> = parts.iter().map(syntax_of).collect();
            let joined = inner.join(" ");
            match spec.token {
                Some(token) => format!("{} {joined}", text(token)),
                None => joined,
            }
        }
        ArgType::PureToken => spec.token.map(text).unwrap_or_else(|| text(spec.name)),
        _ => match spec.token {
            Some(token) => format!("{} {}", text(token), text(spec.name)),
            None => text(spec.name),
        },
    };
    let body = if spec.multiple {
        format!("{body} [{body} ...]")
    } else {
        body
    };
    if spec.optional {
        format!("[{body}]")
    } else {
        body
    }
}

fn syntax(command: &CommandSpec) -> String {
    let mut line = text(command.name()).to_uppercase();
    for arg in command.args {
        line.push(' ');
        line.push_str(&syntax_of(arg));
    }
    line
}

/// The key flags a key spec declares, by the names `COMMAND INFO` gives them.
fn key_flags(flags: u32) -> Vec<&'static str> {
    [
        (raw::REDISMODULE_CMD_KEY_RO, "RO"),
        (raw::REDISMODULE_CMD_KEY_RW, "RW"),
        (raw::REDISMODULE_CMD_KEY_OW, "OW"),
        (raw::REDISMODULE_CMD_KEY_RM, "RM"),
        (raw::REDISMODULE_CMD_KEY_ACCESS, "access"),
        (raw::REDISMODULE_CMD_KEY_UPDATE, "update"),
        (raw::REDISMODULE_CMD_KEY_INSERT, "insert"),
        (raw::REDISMODULE_CMD_KEY_DELETE, "delete"),
        (raw::REDISMODULE_CMD_KEY_NOT_KEY, "not_key"),
        (raw::REDISMODULE_CMD_KEY_INCOMPLETE, "incomplete"),
        (raw::REDISMODULE_CMD_KEY_VARIABLE_FLAGS, "variable_flags"),
    ]
    .into_iter()
    .filter(|(bit, _)| flags & bit != 0)
    .map(|(_, name)| name)
    .collect()
}

fn key_spec(spec: &KeySpec) -> Value {
    let begin = match spec.begin {
        BeginSearch::Index(at) => json!({ "index": at }),
        BeginSearch::Keyword { keyword, from } => {
            json!({ "keyword": text(keyword), "startfrom": from })
        }
    };
    let find = match spec.find {
        FindKeys::One => json!({ "range": { "lastkey": 0, "step": 1, "limit": 0 } }),
        FindKeys::KeyNum { most } => {
            json!({ "keynum": { "keynumidx": 0, "firstkey": 1, "step": 1 }, "most": most })
        }
    };
    json!({ "flags": key_flags(spec.flags), "begin_search": begin, "find_keys": find })
}

fn command(spec: &CommandSpec) -> Value {
    json!({
        "name": text(spec.name()).to_uppercase(),
        "syntax": syntax(spec),
        "summary": text(spec.summary),
        "complexity": text(spec.complexity),
        "since": text(spec.since),
        "arity": spec.arity,
        "flags": words(spec.flags),
        "acl_categories": words(spec.acl_categories),
        "key_specs": spec.entry.key_specs.iter().map(key_spec).collect::<Vec<_>>(),
        "arguments": spec.args.iter().map(argument).collect::<Vec<_>>(),
        "reply": spec.reply,
        "events": spec.events.as_ref().map(|events| json!({
            "fires": events.fires,
            "replica": events.replica.unwrap_or(events.fires),
        })),
    })
}

/// An error: its code (the reply's first word), its text (`{name}` where a
/// value goes) and when it is answered.
fn error(entry: &ErrorText) -> Value {
    let code = entry.text.split(' ').next().unwrap_or_default();
    json!({ "code": code, "text": entry.text, "when": entry.when })
}

/// A family's name: its commands' prefix (`lock.acquire` → `LOCK`).
fn family_name(family: &FamilySpec) -> String {
    family
        .commands
        .first()
        .map(|command| text(command.name()))
        .and_then(|name| name.split('.').next().map(str::to_uppercase))
        .unwrap_or_default()
}

fn family(family: &FamilySpec) -> Value {
    json!({
        "name": family_name(family),
        "about": family.about,
        "replaces": family.replaces,
        "commands": family.commands.iter().map(command).collect::<Vec<_>>(),
        "settings": family.settings.iter().map(|setting| json!({
            "name": format!("recipes.{}", text(setting.name)),
            "default": setting.default,
            "min": setting.min,
            "max": setting.max,
            "doc": setting.doc,
        })).collect::<Vec<_>>(),
        "info": info_fields(family),
        "errors": family.errors.iter().copied().map(error).collect::<Vec<_>>(),
    })
}

fn info_field(name: &CStr, gauge: bool, doc: &str) -> Value {
    json!({
        "name": format!("recipes_{}", text(name)),
        "kind": if gauge { "gauge" } else { "counter" },
        "doc": doc,
    })
}

/// A family's `INFO recipes` fields: its keys with waiters when it waits,
/// then its figures.
fn info_fields(family: &FamilySpec) -> Vec<Value> {
    let waiting = family
        .waiting
        .iter()
        .map(|watcher| info_field(wait::keys_waited_on(watcher), true, stats::WITH_WAITERS));
    let figures = family
        .stats
        .iter()
        .map(|stat| info_field(stat.name, stat.gauge, stat.doc));
    waiting.chain(figures).collect()
}

/// The `INFO recipes` fields of no family.
fn shared_info() -> Vec<Value> {
    [stats::CLIENTS_WAITING, stats::PANICS_CAUGHT]
        .iter()
        .map(|shown| info_field(shown.name, shown.gauge, shown.doc))
        .collect()
}

/// The whole spec.
pub fn spec() -> Value {
    json!({
        "module": "recipes",
        "version": env!("CARGO_PKG_VERSION"),
        "license": env!("CARGO_PKG_LICENSE"),
        "errors": errors::EVERY_COMMAND.iter().copied().map(error).collect::<Vec<_>>(),
        "shared_errors": errors::SHARED.iter().copied().map(error).collect::<Vec<_>>(),
        "families": crate::FAMILIES.iter().copied().map(family).collect::<Vec<_>>(),
        "info": shared_info(),
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::spec;

    /// `docs/spec.json` is what the declarations give (`RECIPES_BLESS=1`
    /// writes it).
    #[test]
    fn spec_json_is_generated_from_the_declarations() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/spec.json");
        let mut want = serde_json::to_string_pretty(&spec()).expect("the spec is JSON");
        want.push('\n');
        if std::env::var_os("RECIPES_BLESS").is_some() {
            std::fs::write(&path, &want).expect("docs/spec.json written");
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/spec.json differs from the module's declarations: run \
             `RECIPES_BLESS=1 cargo test --lib spec` (or `make spec`) and commit it"
        );
    }
}
