//! Commands and their exact replies, the servers' standard errors, clients blocked in a wait.

use super::*;

/// The error a command answers, as `CODE detail` (e.g. `WRONGTYPE Operation
/// against …`); panics if it succeeds.
pub fn error(con: &mut Connection, command: &redis::Cmd) -> String {
    match command.query::<Value>(con) {
        Ok(Value::ServerError(error)) => {
            format!("{} {}", error.code(), error.details().unwrap_or_default())
        }
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => format!(
            "{} {}",
            error.code().unwrap_or("?"),
            error.detail().unwrap_or_default()
        ),
    }
}

/// The server's error for a key of another type.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// The server's (and the module's) error for words out of place.
pub const SYNTAX: &str = "ERR syntax error";

/// The server's (and the module's) error for a number that is not one.
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

/// A cluster node's error for keys of one command in different slots.
pub const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";

/// The server's error for a call of `command` (lower case) with too few or
/// too many words.
pub fn arity(command: &str) -> String {
    format!("ERR wrong number of arguments for '{command}' command")
}

/// Builds a command from words: `cmd(&["IDGEN.NEXT", "k"])`.
pub fn cmd(words: &[&str]) -> redis::Cmd {
    let mut command = redis::cmd(words[0]);
    for word in &words[1..] {
        command.arg(*word);
    }
    command
}

/// An integer reply; panics if the command fails.
pub fn int(con: &mut impl redis::ConnectionLike, words: &[&str]) -> i64 {
    query(con, words)
}

/// A command's reply, or its error as `CODE detail`.
pub fn reply(con: &mut Connection, words: &[&str]) -> Result<Value, String> {
    match cmd(words).query::<Value>(con) {
        Ok(Value::ServerError(e)) => {
            Err(format!("{} {}", e.code(), e.details().unwrap_or_default()))
        }
        Ok(value) => Ok(value),
        Err(e) => Err(format!(
            "{} {}",
            e.code().unwrap_or("?"),
            e.detail().unwrap_or_default()
        )),
    }
}

/// How many clients the server has blocked (`INFO clients`).
pub fn blocked_clients(con: &mut Connection) -> i64 {
    info_field(con, "clients", "blocked_clients")
        .and_then(|n| n.parse().ok())
        .unwrap_or(-1)
}

pub fn wait_blocked(con: &mut Connection, n: i64) {
    wait_until(&format!("{n} client(s) are blocked"), || {
        blocked_clients(con) == n
    });
}

/// A client blocked in a waiting command: its `CLIENT ID`, and its reply
/// (or error) out of the thread that waits for it.
pub struct Waiter {
    pub id: i64,
    pub handle: std::thread::JoinHandle<Result<Value, String>>,
}

impl Waiter {
    /// Sends `words` from a new connection and returns once the server has
    /// the client blocked.
    pub fn start(server: &Server, words: &[&str]) -> Waiter {
        let mut con = server.con();
        let mut watch = server.con();
        let before = blocked_clients(&mut watch);
        let id = int(&mut con, &["CLIENT", "ID"]);
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let handle = std::thread::spawn(move || {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            reply(&mut con, &words)
        });
        wait_blocked(&mut watch, before + 1);
        Waiter { id, handle }
    }

    pub fn answer(self) -> Result<Value, String> {
        self.handle.join().expect("the waiting thread")
    }
}

/// A command's reply as `T`; panics if the command fails.
pub fn query<T: redis::FromRedisValue>(con: &mut impl redis::ConnectionLike, words: &[&str]) -> T {
    cmd(words)
        .query(con)
        .unwrap_or_else(|error| panic!("{words:?} failed: {error}"))
}

/// A command's reply; panics if the command fails.
pub fn value(con: &mut impl redis::ConnectionLike, words: &[&str]) -> Value {
    match query(con, words) {
        Value::ServerError(error) => panic!("{words:?} failed: {error:?}"),
        value => value,
    }
}

/// Runs a command that answers `OK`, and checks that it does.
pub fn ok(con: &mut impl redis::ConnectionLike, words: &[&str]) {
    assert_eq!(value(con, words), Value::Okay, "{words:?}");
}

/// A key's `PTTL`: ms left, -1 without an expiry, -2 when it is gone.
pub fn pttl(con: &mut impl redis::ConnectionLike, key: &str) -> i64 {
    int(con, &["PTTL", key])
}

/// The server's clock (`TIME`), in ms.
pub fn server_ms(con: &mut Connection) -> i64 {
    let (seconds, micros): (i64, i64) = query(con, &["TIME"]);
    seconds * 1000 + micros / 1000
}

/// Whether the server has `command` (`COMMAND INFO`).
pub fn has_command(con: &mut Connection, command: &str) -> bool {
    let info: Vec<Value> = query(con, &["COMMAND", "INFO", command]);
    !matches!(info.first(), None | Some(Value::Nil))
}

/// A key's value digest (`DEBUG DIGEST-VALUE`).
pub fn digest_value(con: &mut Connection, key: &str) -> Value {
    value(con, &["DEBUG", "DIGEST-VALUE", key])
}

/// A reply as one line: `nil`, `5`, `+OK`, `"text"` (bytes outside printable
/// ASCII as `\xNN`), `[a, b]`, `!CODE detail` for an error.
pub fn show(value: &Value) -> String {
    match value {
        Value::Nil => "nil".into(),
        Value::Int(n) => n.to_string(),
        Value::Okay => "+OK".into(),
        Value::SimpleString(text) => format!("+{text}"),
        Value::BulkString(bytes) => quote(bytes),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Value::ServerError(error) => {
            format!("!{} {}", error.code(), error.details().unwrap_or_default())
        }
        other => format!("{other:?}"),
    }
}

/// Bytes in double quotes, `"` and `\` escaped, anything outside printable
/// ASCII as `\xNN`.
pub fn quote(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &byte in bytes {
        match byte {
            b'"' | b'\\' => out.push_str(&format!("\\{}", byte as char)),
            0x20..=0x7e => out.push(byte as char),
            _ => out.push_str(&format!("\\x{byte:02x}")),
        }
    }
    out.push('"');
    out
}

/// A string reply's text (bulk or simple), an integer's digits.
pub fn text(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::SimpleString(text) => text.clone(),
        Value::Okay => "OK".into(),
        Value::Int(n) => n.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

/// The name/value pairs of a map reply (RESP3), or of a flat array of names
/// and values (RESP2).
pub(super) fn pairs(value: &Value) -> Vec<(&Value, &Value)> {
    match value {
        Value::Map(pairs) => pairs.iter().map(|(name, value)| (name, value)).collect(),
        Value::Array(items) => items
            .chunks(2)
            .map(|pair| match pair {
                [name, value] => (name, value),
                _ => panic!("not a map: {items:?}"),
            })
            .collect(),
        other => panic!("not a map: {other:?}"),
    }
}

impl Waiter {
    /// The answer as `T`; an error answer fails the test.
    pub fn answer_as<T: redis::FromRedisValue>(self) -> T {
        let answer = self
            .answer()
            .unwrap_or_else(|error| panic!("the waiter was answered {error}"));
        redis::from_redis_value(answer.clone())
            .unwrap_or_else(|error| panic!("the waiter's answer {answer:?}: {error}"))
    }
}
