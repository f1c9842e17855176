//! Stored data outlives releases: what every earlier release wrote (an RDB
//! file, an AOF with and without the RDB preamble, `DUMP` payloads of the
//! module types) loads into this build on every server, holding what it held
//! under the release that wrote it.
//!
//! `tests/fixtures/<release>/` was written by that release (`make fixtures`
//! runs [`write_fixtures`] with the release's module): the files, and for
//! each a `<fixture>.checks` file of commands and the replies that release
//! gave on loading its own files. The tests here load each file with this
//! build and ask the same commands.

use crate::harness;

use std::fs;
use std::path::{Path, PathBuf};

use harness::*;

// ---- what a fixture holds --------------------------------------------------

/// Ten years, in ms: leases and expiries that outlive the fixture.
const YEARS: &str = "315360000000";
/// The longest period `RATE` takes (36,525 days): a limiter that stays.
const CENTURY: &str = "3155760000000";

/// The keys every fixture holds, with the family that makes them.
const KEYS: &[&str] = &[
    "ids:plain",
    "ids:hash",
    "ids:floor",
    "lock:held",
    "lock:fence",
    "lock:forever",
    "{a}:article:1",
    "{a}:slugs",
    "cache:page",
    "cache:fields",
    "seats",
    "tickets",
    "rate:gcra",
    "rate:two",
    "rate:sliding",
    "browsers",
    "rw:shared",
    "rw:write",
    "rw:fence",
    "latch:armed",
    "{n}:counter",
    "{n}:index",
    "{n}:reverse",
    "suggest",
    "rotation",
];

/// The module data types, with what the server log calls each and the
/// release that added it.
const STORED: &[(&str, &str, &str)] = &[
    ("rr-idpool", "ID pool", "0.2.0"),
    ("rr-rspool", "resource pool", "0.3.0"),
    ("rr-rwlock", "readers-writer lock", "0.5.0"),
    ("rr-autocp", "autocomplete key", "0.6.0"),
    ("rr-uqueue", "unique queue", "0.6.0"),
];

/// Every type this build stores: what `make fixtures` dumps.
fn stored_types() -> impl Iterator<Item = &'static str> {
    STORED.iter().map(|(kind, _, _)| *kind)
}

/// The types of a release that left fixtures: a type added since the
/// newest fixtures (not released yet) has none until its release's `make
/// fixtures` writes them, and the tests that need one pass it by.
fn released_types() -> Vec<(&'static str, &'static str)> {
    let newest = releases()
        .iter()
        .map(|release| version(release))
        .max()
        .unwrap_or_default();
    STORED
        .iter()
        .filter(|(_, _, since)| {
            let since: Vec<u32> = since.split('.').map(|part| part.parse().unwrap()).collect();
            since <= newest
        })
        .map(|(kind, what, _)| (*kind, *what))
        .collect()
}

/// Writes keys of every family the running release has.
fn populate(con: &mut Connection) {
    let steps: &[&[&str]] = &[
        &["IDGEN.NEXT", "ids:plain"],
        &["IDGEN.NEXT", "ids:plain"],
        &["IDGEN.NEXT", "ids:plain"],
        &["IDGEN.NEXT", "ids:hash", "FIELD", "user", "COUNT", "5"],
        &["IDGEN.NEXT", "ids:hash", "FIELD", "order"],
        &["IDGEN.RESERVE", "ids:floor", "1000"],
        &[
            "LOCK.ACQUIRE",
            "lock:held",
            "owner-1",
            "PX",
            YEARS,
            "FENCE",
            "lock:fence",
        ],
        &["LOCK.ACQUIRE", "lock:forever", "owner-2"],
        &[
            "ARTICLE.CREATE",
            "{a}:article:1",
            "Hello",
            "First words",
            "Ann",
            "SLUG",
            "{a}:slugs",
            "hello-world",
        ],
        &["ARTICLE.VIEW", "{a}:article:1"],
        &["ARTICLE.VIEW", "{a}:article:1"],
        &["ARTICLE.UPDATE", "{a}:article:1", "TITLE", "Hello again"],
        &[
            "CACHE.SETJSON",
            "cache:page",
            r#"{"title": "Home", "tags": ["a", "b"], "n": 1.50}"#,
            "PX",
            YEARS,
        ],
        &[
            "CACHE.HSET",
            "cache:fields",
            "PX",
            YEARS,
            "f1",
            "v1",
            "f2",
            "v2",
        ],
        &["IDPOOL.CREATE", "seats", "10", "TTL", YEARS],
        &["IDPOOL.NEXT", "seats"],
        &["IDPOOL.NEXT", "seats"],
        &["IDPOOL.NEXT", "seats"],
        &["IDPOOL.RELEASE", "seats", "2"],
        &["IDPOOL.CREATE", "tickets", "5"],
        &["IDPOOL.NEXT", "tickets"],
        &["IDPOOL.NEXT", "tickets", "TTL", YEARS],
        &["RATE.LIMIT", "rate:gcra", "10", CENTURY],
        &["RATE.LIMIT", "rate:gcra", "10", CENTURY, "COST", "2"],
        &[
            "RATE.LIMIT",
            "rate:two",
            "5",
            CENTURY,
            "AND",
            "100",
            CENTURY,
            "BURST",
            "20",
        ],
        &["RATE.LIMIT", "rate:sliding", "5", CENTURY, "SLIDING"],
        &[
            "RATE.LIMIT",
            "rate:sliding",
            "5",
            CENTURY,
            "SLIDING",
            "COST",
            "2",
        ],
        &["POOL.ADD", "browsers", "b1", "b2", "b3", "b4"],
        &["POOL.ACQUIRE", "browsers", "worker-1", "PX", YEARS],
        &["POOL.ACQUIRE", "browsers", "worker-2"],
        &[
            "RWLOCK.ACQUIRE",
            "rw:shared",
            "READ",
            "reader-1",
            "PX",
            YEARS,
        ],
        &["RWLOCK.ACQUIRE", "rw:shared", "READ", "reader-2"],
        &[
            "RWLOCK.ACQUIRE",
            "rw:write",
            "WRITE",
            "writer-1",
            "PX",
            YEARS,
            "FENCE",
            "rw:fence",
        ],
        &["LATCH.SET", "latch:armed", "3", "PX", YEARS],
        &["LATCH.COUNTDOWN", "latch:armed"],
        &[
            "IDGEN.ASSIGN",
            "{n}:counter",
            "{n}:index",
            "https://example.com/a",
            "REVERSE",
            "{n}:reverse",
        ],
        // Weights that print the same on every server where a check shows
        // them; the digest holds the others' bits.
        &["AUTOCOMPLETE.FEED", "suggest", "redis", "2"],
        &["AUTOCOMPLETE.FEED", "suggest", "redis", "0.5"],
        &[
            "AUTOCOMPLETE.FEED",
            "suggest",
            "redis-module",
            "0.1",
            "PX",
            YEARS,
        ],
        &["AUTOCOMPLETE.FEED", "suggest", "redis-module", "0.2"],
        &["AUTOCOMPLETE.SET", "suggest", "自动补全", "-3"],
        &["AUTOCOMPLETE.FEED", "suggest", "rust"],
        // A queue whose order is not its insertion order: moved, removed,
        // rotated, and an item in Chinese.
        &["UQUEUE.INSERT", "rotation", "alice", "bob", "carol", "dave"],
        &["UQUEUE.INSERT", "rotation", "alice", "队列"],
        &["UQUEUE.REMOVE", "rotation", "carol"],
        &["UQUEUE.ROTATE", "rotation"],
    ];
    run_steps(con, steps);
}

/// The commands a check asks, in order: the state as it stands, then what
/// the next call gives.
fn checks(con: &mut Connection) -> Vec<Vec<String>> {
    let mut checks: Vec<Vec<&str>> = vec![vec!["DBSIZE"], vec!["KEYS", "*"]];
    for key in KEYS {
        checks.push(vec!["TYPE", key]);
        checks.push(vec!["PEXPIRETIME", key]);
    }
    for (family, check) in [
        ("IDGEN.CURRENT", vec!["IDGEN.CURRENT", "ids:plain"]),
        (
            "IDGEN.CURRENT",
            vec!["IDGEN.CURRENT", "ids:hash", "FIELD", "user"],
        ),
        ("IDGEN.CURRENT", vec!["IDGEN.CURRENT", "ids:floor"]),
        ("LOCK.ACQUIRE", vec!["GET", "lock:held"]),
        ("LOCK.ACQUIRE", vec!["GET", "lock:fence"]),
        ("LOCK.ACQUIRE", vec!["GET", "lock:forever"]),
        ("ARTICLE.GET", vec!["HGETALL", "{a}:article:1"]),
        ("ARTICLE.GET", vec!["HGETALL", "{a}:slugs"]),
        ("ARTICLE.GET", vec!["ARTICLE.GET", "{a}:article:1"]),
        (
            "ARTICLE.GET",
            vec!["ARTICLE.BYSLUG", "{a}:slugs", "hello-world"],
        ),
        ("CACHE.GETJSON", vec!["CACHE.GETJSON", "cache:page"]),
        ("CACHE.GETJSON", vec!["HGETALL", "cache:fields"]),
        ("IDPOOL.INFO", vec!["IDPOOL.INFO", "seats"]),
        ("IDPOOL.INFO", vec!["IDPOOL.INFO", "tickets"]),
        (
            "IDPOOL.INFO",
            vec!["DEBUG", "DIGEST-VALUE", "seats", "tickets"],
        ),
        ("RATE.LIMIT", vec!["GET", "rate:gcra"]),
        ("RATE.LIMIT", vec!["GET", "rate:two"]),
        ("RATE.LIMIT", vec!["GET", "rate:sliding"]),
        ("POOL.INFO", vec!["POOL.INFO", "browsers"]),
        ("POOL.INFO", vec!["POOL.HOLDERS", "browsers"]),
        ("POOL.INFO", vec!["DEBUG", "DIGEST-VALUE", "browsers"]),
        ("RWLOCK.INFO", vec!["RWLOCK.INFO", "rw:shared"]),
        ("RWLOCK.INFO", vec!["RWLOCK.INFO", "rw:write"]),
        (
            "RWLOCK.INFO",
            vec!["DEBUG", "DIGEST-VALUE", "rw:shared", "rw:write"],
        ),
        ("RWLOCK.INFO", vec!["GET", "rw:fence"]),
        ("LATCH.COUNT", vec!["LATCH.COUNT", "latch:armed"]),
        ("IDGEN.ASSIGN", vec!["HGETALL", "{n}:index"]),
        ("IDGEN.ASSIGN", vec!["HGETALL", "{n}:reverse"]),
        (
            "AUTOCOMPLETE.HINT",
            vec!["AUTOCOMPLETE.HINT", "suggest", "r"],
        ),
        (
            "AUTOCOMPLETE.HINT",
            vec!["AUTOCOMPLETE.HINT", "suggest", "自", "WITHWEIGHTS"],
        ),
        (
            "AUTOCOMPLETE.HINT",
            vec!["AUTOCOMPLETE.WEIGHT", "suggest", "redis"],
        ),
        ("AUTOCOMPLETE.HINT", vec!["AUTOCOMPLETE.CARD", "suggest"]),
        (
            "AUTOCOMPLETE.HINT",
            vec!["DEBUG", "DIGEST-VALUE", "suggest"],
        ),
        ("UQUEUE.ITEMS", vec!["UQUEUE.ITEMS", "rotation"]),
        ("UQUEUE.ITEMS", vec!["UQUEUE.LEN", "rotation"]),
        ("UQUEUE.ITEMS", vec!["DEBUG", "DIGEST-VALUE", "rotation"]),
        // What the next calls give.
        ("IDGEN.NEXT", vec!["IDGEN.NEXT", "ids:plain"]),
        (
            "IDGEN.NEXT",
            vec!["IDGEN.NEXT", "ids:hash", "FIELD", "user"],
        ),
        (
            "LOCK.ACQUIRE",
            vec!["LOCK.ACQUIRE", "lock:held", "other", "PX", "1000"],
        ),
        (
            "LOCK.ACQUIRE",
            vec!["LOCK.RELEASEIF", "lock:forever", "owner-2"],
        ),
        ("ARTICLE.VIEW", vec!["ARTICLE.VIEW", "{a}:article:1"]),
        ("IDPOOL.NEXT", vec!["IDPOOL.NEXT", "seats"]),
        ("IDPOOL.NEXT", vec!["IDPOOL.NEXT", "seats"]),
        ("IDPOOL.NEXT", vec!["IDPOOL.NEXT", "tickets"]),
        ("IDPOOL.NEXT", vec!["IDPOOL.INFO", "seats"]),
        ("POOL.ACQUIRE", vec!["POOL.ACQUIRE", "browsers", "worker-3"]),
        (
            "POOL.ACQUIRE",
            vec!["POOL.RELEASE", "browsers", "b2", "worker-2"],
        ),
        ("POOL.ACQUIRE", vec!["POOL.HOLDERS", "browsers"]),
        (
            "RWLOCK.ACQUIRE",
            vec!["RWLOCK.ACQUIRE", "rw:shared", "READ", "reader-9"],
        ),
        (
            "RWLOCK.ACQUIRE",
            vec!["RWLOCK.ACQUIRE", "rw:write", "READ", "reader-9"],
        ),
        (
            "RWLOCK.ACQUIRE",
            vec!["RWLOCK.RELEASE", "rw:write", "writer-1"],
        ),
        ("RWLOCK.ACQUIRE", vec!["RWLOCK.INFO", "rw:shared"]),
        ("LATCH.COUNTDOWN", vec!["LATCH.COUNTDOWN", "latch:armed"]),
        (
            "IDGEN.ASSIGN",
            vec![
                "IDGEN.ASSIGN",
                "{n}:counter",
                "{n}:index",
                "https://example.com/a",
                "REVERSE",
                "{n}:reverse",
            ],
        ),
        (
            "IDGEN.ASSIGN",
            vec![
                "IDGEN.ASSIGN",
                "{n}:counter",
                "{n}:index",
                "https://example.com/new",
                "REVERSE",
                "{n}:reverse",
            ],
        ),
        (
            "AUTOCOMPLETE.FEED",
            vec!["AUTOCOMPLETE.FEED", "suggest", "redis"],
        ),
        (
            "AUTOCOMPLETE.FEED",
            vec!["AUTOCOMPLETE.REMOVE", "suggest", "rust"],
        ),
        (
            "AUTOCOMPLETE.FEED",
            vec!["AUTOCOMPLETE.HINT", "suggest", "r"],
        ),
        ("UQUEUE.ROTATE", vec!["UQUEUE.ROTATE", "rotation"]),
        (
            "UQUEUE.ROTATE",
            vec!["UQUEUE.INSERT", "rotation", "erin", "bob"],
        ),
        ("UQUEUE.ROTATE", vec!["UQUEUE.ITEMS", "rotation"]),
    ] {
        if has_command(con, family) {
            checks.push(check);
        }
    }
    checks
        .into_iter()
        .map(|words| words.into_iter().map(String::from).collect())
        .collect()
}

/// A reply as one line: the same reply renders the same on every server
/// (`KEYS` and `HGETALL` in sorted order).
fn render(words: &[&str], value: &Value) -> String {
    let sorted = match (words[0].to_uppercase().as_str(), value) {
        ("KEYS", Value::Array(items)) => {
            let mut items: Vec<String> = items.iter().map(show).collect();
            items.sort();
            Some(format!("[{}]", items.join(", ")))
        }
        ("HGETALL", Value::Array(items)) => {
            let mut pairs: Vec<String> = items
                .chunks(2)
                .map(|pair| pair.iter().map(show).collect::<Vec<_>>().join(": "))
                .collect();
            pairs.sort();
            Some(format!("{{{}}}", pairs.join(", ")))
        }
        _ => None,
    };
    sorted.unwrap_or_else(|| show(value))
}

/// Asks every check, one line each: `words => reply`.
fn ask(con: &mut Connection, checks: &[Vec<String>]) -> Vec<String> {
    checks
        .iter()
        .map(|words| {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let answer = match reply(con, &words) {
                Ok(value) => render(&words, &value),
                Err(error) => format!("!{error}"),
            };
            format!("{} => {answer}", words.join(" "))
        })
        .collect()
}

// ---- the fixtures on disk --------------------------------------------------

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every release that left fixtures, oldest first.
fn releases() -> Vec<PathBuf> {
    let mut releases: Vec<PathBuf> = fs::read_dir(fixtures_dir())
        .expect("tests/fixtures")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_dir())
        .collect();
    releases.sort_by_key(|path| version(path));
    assert!(!releases.is_empty(), "no fixtures under tests/fixtures");
    releases
}

fn version(release: &Path) -> Vec<u32> {
    let name = release
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    name.split('.')
        .map(|part| {
            part.parse()
                .unwrap_or_else(|_| panic!("release dir {name}"))
        })
        .collect()
}

/// The checks a release recorded for `fixture`: the commands, and the
/// lines this build must answer.
fn recorded(release: &Path, fixture: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let path = release.join(format!("{fixture}.checks"));
    let text =
        fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let lines: Vec<String> = text.lines().map(String::from).collect();
    let commands = lines
        .iter()
        .map(|line| {
            let (words, _) = line.split_once(" => ").expect("a `words => reply` line");
            words.split(' ').map(String::from).collect()
        })
        .collect();
    (commands, lines)
}

/// The module data types' `DUMP` payloads a release left, named
/// `<type>.v<encoding version>.dump`: (path, type, version).
fn dumps(release: &Path) -> Vec<(PathBuf, String, u64)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(release).expect("release dir").flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if let Some(stem) = name.strip_suffix(".dump") {
            let (kind, version) = stem.rsplit_once(".v").expect("<type>.v<N>.dump");
            out.push((path, kind.to_string(), version.parse().expect("version")));
        }
    }
    out.sort();
    out
}

/// The key a type's `DUMP` payload came from.
fn dump_key(kind: &str) -> &'static str {
    match kind {
        "rr-idpool" => "seats",
        "rr-rspool" => "browsers",
        "rr-rwlock" => "rw:shared",
        "rr-autocp" => "suggest",
        "rr-uqueue" => "rotation",
        other => panic!("no fixture key for type {other}"),
    }
}

/// The encoding version a module value's `DUMP` payload carries: the low 10
/// bits of the module type ID after the type byte.
fn encoding_of(payload: &[u8]) -> u64 {
    let id: [u8; 8] = payload[2..10].try_into().expect("a module DUMP payload");
    u64::from_be_bytes(id) & 1023
}

/// The server configuration that loads each fixture kind.
const FIXTURES: &[(&str, &[&str])] = &[
    ("rdb", &[]),
    ("aof-plain", &["--appendonly", "yes"]),
    ("aof-preamble", &["--appendonly", "yes"]),
];

/// Starts `flavor` on a copy of `release`'s `fixture` (an RDB file or an
/// AOF directory).
fn start_on(flavor: Flavor, release: &Path, fixture: &str) -> Server {
    let config = FIXTURES
        .iter()
        .find(|(name, _)| *name == fixture)
        .map(|(_, config)| *config)
        .expect("a fixture kind");
    Server::start_prepared(flavor, config, |dir| match fixture {
        "rdb" => copy_tree(&release.join("dump.rdb"), &dir.join("dump.rdb")),
        aof => copy_tree(&release.join(aof), &dir.join("appendonlydir")),
    })
}

fn restore_dumps(con: &mut Connection, release: &Path) {
    for (path, kind, _) in dumps(release) {
        let payload = fs::read(&path).expect("read payload");
        let reply: Value = redis::cmd("RESTORE")
            .arg(dump_key(&kind))
            .arg(0)
            .arg(payload)
            .query(con)
            .unwrap_or_else(|error| panic!("RESTORE {}: {error}", path.display()));
        assert_eq!(reply, Value::Okay, "RESTORE {}", path.display());
    }
}

/// Error replies 0.6.0 gave a code of their own (CHANGELOG, "Replies
/// changed"): a reply recorded by an earlier release as the first is
/// answered as the second. Nothing else may differ.
const CHANGED_REPLIES: &[(&str, &str)] = &[
    (
        " => !ERR no ID pool at key ",
        " => !NOPOOL no ID pool at key ",
    ),
    (
        " => !ERR ID generator exhausted: taking ",
        " => !EXHAUSTED taking ",
    ),
    (
        " => !ERR the key holds a ",
        " => !MISMATCH the key holds a ",
    ),
    (
        " => !ERR token holds a read lock",
        " => !NOUPGRADE token holds a read lock",
    ),
];

fn assert_recorded(con: &mut Connection, release: &Path, fixture: &str, flavor: Flavor) {
    let (commands, expected) = recorded(release, fixture);
    let answered = ask(con, &commands);
    for (want, got) in expected.iter().zip(&answered) {
        let want = CHANGED_REPLIES
            .iter()
            .fold(want.clone(), |line, (old, new)| line.replace(old, new));
        assert_eq!(
            got,
            &want,
            "{} {fixture} on {}: this build answers otherwise",
            release.display(),
            flavor.name()
        );
    }
    assert_eq!(answered.len(), expected.len());
}

// ---- the tests -------------------------------------------------------------

server_tests! {
    /// Each release's RDB file loads, and every key holds what it held.
    fn rdb_files_of_every_release_load(flavor) {
        for release in releases() {
            let server = start_on(flavor, &release, "rdb");
            assert_recorded(&mut server.con(), &release, "rdb", flavor);
        }
    }

    /// Each release's AOF, rewritten as commands and then grown by the
    /// commands the module logs (`*.APPLY` effects, verbatim writes),
    /// replays into the same state.
    fn aof_files_of_every_release_load(flavor) {
        for release in releases() {
            for fixture in ["aof-plain", "aof-preamble"] {
                let server = start_on(flavor, &release, fixture);
                assert_recorded(&mut server.con(), &release, fixture, flavor);
            }
        }
    }

    /// Each release's `DUMP` payloads of the module types `RESTORE`, and
    /// each payload carries the encoding version its name says.
    fn dump_payloads_of_every_release_restore(flavor) {
        for release in releases() {
            for (path, _, version) in dumps(&release) {
                let payload = fs::read(&path).expect("read payload");
                assert_eq!(encoding_of(&payload), version, "{}", path.display());
            }
            if dumps(&release).is_empty() {
                continue;
            }
            let server = Server::start(flavor);
            let mut con = server.con();
            restore_dumps(&mut con, &release);
            assert_recorded(&mut con, &release, "dump", flavor);
        }
    }

    /// Every encoding version this build writes has a fixture: a change of
    /// a type's stored form comes with fixtures of the form it replaces.
    fn every_encoding_written_has_a_fixture(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: Value = cmd(&["IDPOOL.CREATE", "seats", "3"]).query(&mut con).unwrap();
        let _: Value = cmd(&["POOL.ADD", "browsers", "b1"]).query(&mut con).unwrap();
        let _: Value = cmd(&["RWLOCK.ACQUIRE", "rw:shared", "READ", "r"])
            .query(&mut con)
            .unwrap();
        let _: Value = cmd(&["AUTOCOMPLETE.FEED", "suggest", "redis"])
            .query(&mut con)
            .unwrap();
        let _: Value = cmd(&["UQUEUE.INSERT", "rotation", "alice"])
            .query(&mut con)
            .unwrap();
        let fixtures: Vec<(String, u64)> = releases()
            .iter()
            .flat_map(|release| dumps(release))
            .map(|(_, kind, version)| (kind, version))
            .collect();
        // A release that stored a type left a payload of it.
        for release in releases() {
            let checks = fs::read_to_string(release.join("rdb.checks")).unwrap();
            for (kind, _) in released_types() {
                let stored = checks.contains(&format!("=> +{kind}"));
                let dumped = dumps(&release).iter().any(|(_, dumped, _)| dumped == kind);
                assert_eq!(stored, dumped, "{}: {kind}", release.display());
            }
        }
        for (kind, _) in released_types() {
            let payload: Vec<u8> = cmd(&["DUMP", dump_key(kind)]).query(&mut con).unwrap();
            let version = encoding_of(&payload);
            assert!(
                fixtures.contains(&(kind.to_string(), version)),
                "{kind} is written in encoding version {version}, and no release under \
                 tests/fixtures left a {kind}.v{version}.dump: run `make fixtures`"
            );
        }
    }
}

/// A copy of `payload` (a module value's `DUMP`, or an RDB file holding
/// such values) whose values of `kind` claim encoding version `encoding`,
/// checksum renewed: what a later release would have written.
fn from_a_later_release(payload: &[u8], kind: &str, encoding: u64) -> Vec<u8> {
    let template = fs::read(latest_dump(kind)).expect("a fixture payload");
    let id = &template[2..10];
    let renamed = ((u64::from_be_bytes(id.try_into().unwrap()) & !1023) | encoding).to_be_bytes();
    let mut out = payload[..payload.len() - 8].to_vec();
    let mut at = 0;
    let mut found = false;
    while let Some(offset) = out[at..].windows(8).position(|window| window == id) {
        out[at + offset..at + offset + 8].copy_from_slice(&renamed);
        at += offset + 8;
        found = true;
    }
    assert!(found, "no {kind} value in the payload");
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The newest fixture payload of `kind`.
fn latest_dump(kind: &str) -> PathBuf {
    releases()
        .iter()
        .flat_map(|release| dumps(release))
        .filter(|(_, dumped, _)| dumped == kind)
        .map(|(path, _, _)| path)
        .next_back()
        .expect("a fixture payload")
}

server_tests! {
    /// A value written by a later release (a downgrade) is refused, with a
    /// log line naming the release it needs, and nothing is stored.
    fn a_value_from_a_later_release_is_refused(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for (kind, _) in released_types() {
            let payload = fs::read(latest_dump(kind)).unwrap();
            let later = from_a_later_release(&payload, kind, 900);
            assert_eq!(encoding_of(&later), 900);
            let refused = error(
                &mut con,
                redis::cmd("RESTORE").arg(dump_key(kind)).arg(0).arg(later),
            );
            assert_eq!(refused, "ERR Bad data format");
            assert_eq!(int(&mut con, &["EXISTS", dump_key(kind)]), 0);
        }
        let log = server.log();
        for (_, what) in released_types() {
            let line = format!(
                "<recipes> refusing a stored {what} in encoding version 900: it was written by \
                 redis-recipes 9.0.0 or later; this is redis-recipes {}, which reads encoding \
                 versions 1. Load the data with redis-recipes 9.0.0 or later",
                env!("CARGO_PKG_VERSION")
            );
            assert!(log.contains(&line), "{line}\nnot in:\n{log}");
        }
    }

    /// A server whose RDB file holds a value from a later release does not
    /// start on it, and says which release it needs.
    fn an_rdb_file_from_a_later_release_is_refused_at_start(flavor) {
        let release = releases().pop().unwrap();
        let rdb = fs::read(release.join("dump.rdb")).unwrap();
        let later = from_a_later_release(&rdb, "rr-idpool", 900);
        let log = refused_start(flavor, &[], &[], |dir| {
            fs::write(dir.join("dump.rdb"), &later).unwrap();
        });
        assert!(
            log.contains("<recipes> refusing a stored ID pool in encoding version 900: it was \
                          written by redis-recipes 9.0.0 or later"),
            "{log}"
        );
    }
}

/// Writes this module's fixtures to `tests/fixtures/$RECIPES_FIXTURE_RELEASE`
/// on Redis 7.0, the oldest server of the matrix (every later server reads
/// its files). Run by `make fixtures` with the release's build as
/// `$RECIPES_MODULE`.
#[test]
#[ignore]
fn write_fixtures() {
    let release = std::env::var("RECIPES_FIXTURE_RELEASE").expect("RECIPES_FIXTURE_RELEASE");
    let out = fixtures_dir().join(&release);
    assert!(!out.exists(), "{} exists", out.display());
    fs::create_dir_all(&out).expect("create the fixture dir");
    let flavor = Flavor::Redis;

    // The AOF without the preamble: the keys rewritten as the commands the
    // module emits, then the commands a second round of writes logs.
    let server = Server::start_with(
        flavor,
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let mut con = server.con();
    populate(&mut con);
    rewrite_aof(&mut con);
    second_round(&mut con);
    let _: Value = cmd(&["SAVE"]).query(&mut con).unwrap();
    copy_tree(&server.dir().join("appendonlydir"), &out.join("aof-plain"));
    copy_tree(&server.dir().join("dump.rdb"), &out.join("dump.rdb"));
    let has_types = has_command(&mut con, "IDPOOL.CREATE");
    for kind in stored_types() {
        let key = dump_key(kind);
        if let Ok(Some(payload)) = cmd(&["DUMP", key]).query::<Option<Vec<u8>>>(&mut con) {
            let version = encoding_of(&payload);
            fs::write(out.join(format!("{kind}.v{version}.dump")), payload).unwrap();
        }
    }
    assert!(!has_types || !dumps(&out).is_empty());

    // The AOF with the preamble: an RDB base, then logged commands.
    let _: Value = cmd(&["CONFIG", "SET", "aof-use-rdb-preamble", "yes"])
        .query(&mut con)
        .unwrap();
    rewrite_aof(&mut con);
    third_round(&mut con);
    copy_tree(
        &server.dir().join("appendonlydir"),
        &out.join("aof-preamble"),
    );
    drop(con);
    drop(server);

    // What this release answers on loading each of its own files.
    for (fixture, _) in FIXTURES {
        let server = start_on(flavor, &out, fixture);
        let mut con = server.con();
        let asked = checks(&mut con);
        let lines = ask(&mut con, &asked);
        fs::write(
            out.join(format!("{fixture}.checks")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    if !dumps(&out).is_empty() {
        let server = Server::start(flavor);
        let mut con = server.con();
        restore_dumps(&mut con, &out);
        let asked = checks(&mut con);
        let lines = ask(&mut con, &asked);
        fs::write(out.join("dump.checks"), lines.join("\n") + "\n").unwrap();
    }
}

/// More writes after the rewrite, so the AOF holds the commands the module
/// logs for them.
fn second_round(con: &mut Connection) {
    let steps: &[&[&str]] = &[
        &["IDGEN.NEXT", "ids:plain", "COUNT", "2"],
        &["LOCK.EXTEND", "lock:held", "owner-1", "PX", YEARS],
        &["ARTICLE.VIEW", "{a}:article:1"],
        &["IDPOOL.NEXT", "seats"],
        &["IDPOOL.RENEW", "seats", "1", YEARS],
        &["RATE.LIMIT", "rate:gcra", "10", CENTURY],
        &["RATE.LIMIT", "rate:sliding", "5", CENTURY, "SLIDING"],
        &["POOL.ACQUIRE", "browsers", "worker-3", "PX", YEARS],
        &["POOL.RELEASE", "browsers", "b3", "worker-3"],
        &["RWLOCK.EXTEND", "rw:shared", "reader-1", "PX", YEARS],
        &[
            "RWLOCK.ACQUIRE",
            "rw:shared",
            "READ",
            "reader-3",
            "PX",
            YEARS,
        ],
        &["LATCH.COUNTDOWN", "latch:armed"],
        &["AUTOCOMPLETE.FEED", "suggest", "rust", "2", "PX", YEARS],
        &["AUTOCOMPLETE.SET", "suggest", "中文", "0.5"],
        &["UQUEUE.INSERT", "rotation", "frank", "bob"],
        &["UQUEUE.ROTATE", "rotation"],
        &[
            "IDGEN.ASSIGN",
            "{n}:counter",
            "{n}:index",
            "https://example.com/b",
            "REVERSE",
            "{n}:reverse",
        ],
    ];
    run_steps(con, steps);
}

fn third_round(con: &mut Connection) {
    let steps: &[&[&str]] = &[
        &["IDGEN.NEXT", "ids:hash", "FIELD", "order"],
        &["IDPOOL.RELEASE", "tickets", "1"],
        &["POOL.ADD", "browsers", "b5"],
        &["RWLOCK.RELEASE", "rw:shared", "reader-3"],
        &["AUTOCOMPLETE.REMOVE", "suggest", "中文"],
        &["UQUEUE.REMOVE", "rotation", "frank"],
    ];
    run_steps(con, steps);
}

fn run_steps(con: &mut Connection, steps: &[&[&str]]) {
    for step in steps {
        if has_command(con, step[0]) {
            cmd(step)
                .query::<Value>(con)
                .unwrap_or_else(|error| panic!("{step:?}: {error}"));
        }
    }
}
