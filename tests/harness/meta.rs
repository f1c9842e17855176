//! Command metadata: `COMMAND DOCS`, `COMMAND INFO`, `COMMAND GETKEYS`, `INFO commandstats`.

use super::*;

/// The commands a server has run since its stats were last reset, by
/// lower-case name with their call counts (`INFO commandstats`).
pub fn commands_run(con: &mut Connection) -> Vec<(String, u64)> {
    let stats: String = redis::cmd("INFO").arg("commandstats").query(con).unwrap();
    stats
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_lowercase(), calls))
        })
        .collect()
}

/// Checks that `COMMAND GETKEYS` finds exactly `key` in each of `calls` and
/// that `COMMAND DOCS command` is exactly `docs` (as [`command_docs`] gives
/// it).
pub fn check_keys_and_docs(
    con: &mut Connection,
    calls: &[Vec<&str>],
    key: &str,
    command: &str,
    docs: Vec<String>,
) {
    for words in calls {
        assert_eq!(getkeys(con, words), [key], "{words:?}");
    }
    assert_eq!(command_docs(con, command), docs, "COMMAND DOCS {command}");
}

/// What `COMMAND GETKEYS` finds in a command.
pub fn getkeys(con: &mut Connection, words: &[&str]) -> Vec<String> {
    let mut command = redis::cmd("COMMAND");
    command.arg("GETKEYS").arg(words);
    command
        .query(con)
        .unwrap_or_else(|e| panic!("COMMAND GETKEYS {words:?}: {e}"))
}

/// `COMMAND DOCS command` as lines, in the reply's order: `field: value` for
/// each field, then under `arguments:` one line per argument, `- name=…
/// type=… token=… flags=a,b` (its own arguments indented below it). The
/// `display_text` that Redis 7.2+ and Valkey add is left out where it is the
/// argument's name.
pub fn command_docs(con: &mut Connection, command: &str) -> Vec<String> {
    fn scalar(value: &Value) -> String {
        match value {
            Value::Array(items) | Value::Set(items) => {
                items.iter().map(text).collect::<Vec<_>>().join(",")
            }
            other => text(other),
        }
    }
    fn arguments(list: &Value, depth: usize, out: &mut Vec<String>) {
        let Value::Array(list) = list else {
            panic!("arguments: {list:?}")
        };
        for argument in list {
            let fields = pairs(argument);
            let name = fields
                .iter()
                .find(|(field, _)| text(field) == "name")
                .map(|(_, name)| text(name));
            let mut line = format!("{}-", "  ".repeat(depth));
            for (field, value) in &fields {
                let field = text(field);
                if field == "arguments" || (field == "display_text" && Some(text(value)) == name) {
                    continue;
                }
                line.push_str(&format!(" {field}={}", scalar(value)));
            }
            out.push(line);
            if let Some((_, nested)) = fields.iter().find(|(field, _)| text(field) == "arguments") {
                arguments(nested, depth + 1, out);
            }
        }
    }
    let reply = value(con, &["COMMAND", "DOCS", command]);
    let docs = pairs(&reply);
    assert_eq!(docs.len(), 1, "COMMAND DOCS {command}: {reply:?}");
    let mut out = Vec::new();
    for (field, value) in pairs(docs[0].1) {
        let field = text(field);
        if field == "arguments" {
            out.push("arguments:".to_string());
            arguments(value, 0, &mut out);
        } else {
            out.push(format!("{field}: {}", scalar(value)));
        }
    }
    out
}

/// What [`command_docs`] gives for a command of this module: its summary,
/// the release that added it and its complexity, then its arguments.
pub fn module_docs(
    summary: &str,
    since: &str,
    complexity: &str,
    arguments: &[&str],
) -> Vec<String> {
    let head = [
        format!("summary: {summary}"),
        format!("since: {since}"),
        "group: module".to_string(),
        format!("complexity: {complexity}"),
        "module: recipes".to_string(),
        "arguments:".to_string(),
    ];
    head.into_iter()
        .chain(arguments.iter().map(|line| line.to_string()))
        .collect()
}

/// One field of a command's `COMMAND INFO` entry (2: flags, 6: ACL
/// categories), as words.
fn command_info_words(con: &mut Connection, command: &str, field: usize) -> Vec<String> {
    let info: Vec<Value> = query(con, &["COMMAND", "INFO", command]);
    match info.first() {
        Some(Value::Array(entry)) => match entry.get(field) {
            Some(Value::Array(words) | Value::Set(words)) => words.iter().map(text).collect(),
            other => panic!("COMMAND INFO {command}: field {field} is {other:?}"),
        },
        other => panic!("COMMAND INFO {command}: {other:?}"),
    }
}

/// A command's flags (`COMMAND INFO`), in the server's order.
pub fn command_flags(con: &mut Connection, command: &str) -> Vec<String> {
    command_info_words(con, command, 2)
}

/// A command's ACL categories (`COMMAND INFO`): empty where the server
/// cannot give a module's commands any (Redis 7.0).
pub fn command_categories(con: &mut Connection, command: &str) -> Vec<String> {
    command_info_words(con, command, 6)
}

/// The module's commands (`COMMAND LIST FILTERBY MODULE recipes`), sorted.
pub fn module_commands(con: &mut Connection) -> Vec<String> {
    let mut names: Vec<String> = query(con, &["COMMAND", "LIST", "FILTERBY", "MODULE", "recipes"]);
    names.sort();
    names
}
