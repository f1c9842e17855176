//! AUTOCOMPLETE on real servers: every reply (RESP2 and RESP3), the order
//! of hints against the book's own per-prefix sorted sets built on the same
//! server (a random dictionary with Chinese and emoji, every prefix of some
//! entries, several COUNTs), prefixes as characters, weights formatted as
//! the server formats `ZINCRBY`'s, every error (changing nothing), fading
//! on a primary and a replica (removed by the primary's writes, at most 128
//! a write, and replicated), `PX`/`EX` sent as `PXAT`, RDB, AOF rewrite and
//! `DUMP`/`RESTORE` bit-exact, hostile payloads, a loader that takes any
//! order, `MEMORY USAGE`, keyspace events, metadata and cluster routing.

use crate::harness;

use std::thread;
use std::time::{Duration, Instant};

use harness::{
    arity, cmd, commands_run, digest, digest_value, error, in_error_catalogue, int, module_docs,
    query, recipes_figures, refused_restore, server_ms, value, Cluster, Connection, Replicated,
    Server, Value, SYNTAX, WRONGTYPE,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const EMPTY: &str = "ERR content must not be empty";
const NOT_UTF8: &str = "ERR content and prefix must be valid UTF-8";
const NOT_FLOAT: &str = "ERR value is not a valid float";
const NOT_FINITE: &str = "ERR weight must be a finite number";
const OVERFLOW: &str = "ERR resulting weight is not a finite number";
const COUNT_RANGE: &str = "ERR COUNT must be between 1 and 2147483647";
const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

fn too_long(most: usize) -> String {
    format!("ERR content must be at most {most} characters")
}

fn bad_expire(command: &str) -> String {
    format!("ERR invalid expire time in '{command}' command")
}

/// A bulk string reply's text.
fn bulk(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).expect("UTF-8"),
        other => panic!("not a bulk string: {other:?}"),
    }
}

/// `AUTOCOMPLETE.HINT key prefix [COUNT n]`: the contents.
fn hint(con: &mut Connection, key: &str, prefix: &str) -> Vec<String> {
    query(con, &["AUTOCOMPLETE.HINT", key, prefix])
}

/// `AUTOCOMPLETE.HINT … WITHWEIGHTS` as (content, weight text), RESP2.
fn hint_weights(con: &mut Connection, key: &str, prefix: &str) -> Vec<(String, String)> {
    query(
        con,
        &[
            "AUTOCOMPLETE.HINT",
            key,
            prefix,
            "COUNT",
            "1000",
            "WITHWEIGHTS",
        ],
    )
}

/// A FEED's reply (RESP2: the weight as the server formats a double).
fn feed(con: &mut Connection, words: &[&str]) -> String {
    let mut all = vec!["AUTOCOMPLETE.FEED"];
    all.extend_from_slice(words);
    bulk(&value(con, &all))
}

/// `AUTOCOMPLETE.WEIGHT`: the weight text, or `None`.
fn weight(con: &mut Connection, key: &str, content: &str) -> Option<String> {
    query(con, &["AUTOCOMPLETE.WEIGHT", key, content])
}

fn card(con: &mut Connection, key: &str) -> i64 {
    int(con, &["AUTOCOMPLETE.CARD", key])
}

/// `AUTOCOMPLETE.INFO` (RESP2) as (entries, memory, next_fade).
fn info(con: &mut Connection, key: &str) -> (i64, i64, Option<i64>) {
    let reply = value(con, &["AUTOCOMPLETE.INFO", key]);
    match &reply {
        Value::Array(items) => match &items[..] {
            [name1, Value::Int(entries), name2, Value::Int(memory), name3, fade] => {
                assert_eq!(
                    [bulk(name1), bulk(name2), bulk(name3)],
                    ["entries", "memory", "next_fade"]
                );
                let fade = match fade {
                    Value::Nil => None,
                    Value::Int(at) => Some(*at),
                    other => panic!("next_fade {other:?}"),
                };
                (*entries, *memory, fade)
            }
            _ => panic!("AUTOCOMPLETE.INFO {reply:?}"),
        },
        _ => panic!("AUTOCOMPLETE.INFO {reply:?}"),
    }
}

fn faded_count(con: &mut Connection) -> i64 {
    recipes_figures(con, "recipes")["autocomplete_entries_faded"]
}

/// A RESP3 connection.
fn resp3(server: &Server) -> Connection {
    redis::Client::open(format!("{}?protocol=resp3", server.url()))
        .unwrap()
        .get_connection()
        .unwrap()
}

/// Entries with weights that print and parse back only if kept bit-exact,
/// contents short (inside their node) and long (a block of their own),
/// Chinese, with and without fade times far ahead.
fn workload(con: &mut Connection) -> Vec<&'static str> {
    let in_an_hour = (server_ms(con) + 3_600_000).to_string();
    let steps: &[&[&str]] = &[
        &["AUTOCOMPLETE.SET", "ac:main", "redis", "0.1"],
        &["AUTOCOMPLETE.FEED", "ac:main", "redis", "0.2"],
        &["AUTOCOMPLETE.SET", "ac:main", "redis module", "1e-300"],
        &["AUTOCOMPLETE.SET", "ac:main", "red", "-5"],
        &["AUTOCOMPLETE.SET", "ac:main", "tiny", "5e-324"],
        &[
            "AUTOCOMPLETE.SET",
            "ac:main",
            "huge",
            "1.7976931348623157e308",
        ],
        &[
            "AUTOCOMPLETE.FEED",
            "ac:main",
            "一个很长很长的中文句子，超过二十二个字节",
        ],
        &[
            "AUTOCOMPLETE.FEED",
            "ac:main",
            "自动补全",
            "0.3333333333333333",
        ],
        &["AUTOCOMPLETE.FEED", "ac:main", "自动", "3", "PX", "3600000"],
        &[
            "AUTOCOMPLETE.SET",
            "ac:main",
            "a much longer content than twenty-two bytes",
            "7",
            "PXAT",
            &in_an_hour,
        ],
        &["AUTOCOMPLETE.FEED", "ac:main", "emoji 😀", "-0.0"],
        &[
            "AUTOCOMPLETE.FEED",
            "ac:other",
            "only",
            "123456789.125",
            "EX",
            "86400",
        ],
    ];
    for step in steps {
        let _: Value = query(con, step);
    }
    vec!["ac:main", "ac:other"]
}

/// What [`workload`] leaves, as the commands read it: every hint with its
/// weight, each count and the digest of each value.
fn workload_state(con: &mut Connection) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["ac:main", "ac:other"] {
        out.push(format!("{:?}", hint_weights(con, key, "")));
        out.push(format!("{:?}", info(con, key).2));
        out.push(card(con, key).to_string());
        out.push(format!("{:?}", digest_value(con, key)));
    }
    out
}

/// The book's way (chapter 16): one sorted set per prefix, each entry in
/// the set of each of its prefixes (here also `book:` for the empty one).
struct Book {
    pipe: redis::Pipeline,
}

impl Book {
    fn new() -> Book {
        Book {
            pipe: redis::pipe(),
        }
    }

    fn prefixes(content: &str) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut prefix = String::new();
        for c in content.chars() {
            prefix.push(c);
            out.push(prefix.clone());
        }
        out
    }

    fn feed(&mut self, content: &str, increment: &str) {
        for prefix in Book::prefixes(content) {
            self.pipe
                .cmd("ZINCRBY")
                .arg(format!("book:{prefix}"))
                .arg(increment)
                .arg(content)
                .ignore();
        }
    }

    fn set(&mut self, content: &str, weight: &str) {
        for prefix in Book::prefixes(content) {
            self.pipe
                .cmd("ZADD")
                .arg(format!("book:{prefix}"))
                .arg(weight)
                .arg(content)
                .ignore();
        }
    }

    fn remove(&mut self, content: &str) {
        for prefix in Book::prefixes(content) {
            self.pipe
                .cmd("ZREM")
                .arg(format!("book:{prefix}"))
                .arg(content)
                .ignore();
        }
    }
}

/// A random content of 1 to 6 characters from a small alphabet (so that
/// prefixes are shared), ASCII, accented, Chinese and emoji.
fn random_content(rng: &mut StdRng) -> String {
    const ALPHABET: &[char] = &['a', 'b', 'c', 'é', '中', '文', '😀', ' '];
    let len = rng.random_range(1..=6);
    (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
        .collect()
}

server_tests! {
    fn replies_of_every_command(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // A missing key: no hints, no weight, no entries, no info.
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.HINT", "k", "r"]), Value::Array(vec![]));
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.HINT", "k", "", "WITHWEIGHTS"]), Value::Array(vec![]));
        assert_eq!(weight(&mut con, "k", "redis"), None);
        assert_eq!(card(&mut con, "k"), 0);
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.INFO", "k"]), Value::Nil);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k", "redis"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "a read or a removal creates nothing");
        // FEED: the weight after it, by 1 or the increment.
        assert_eq!(feed(&mut con, &["k", "redis"]), "1");
        assert_eq!(feed(&mut con, &["k", "redis"]), "2");
        assert_eq!(feed(&mut con, &["k", "redis", "2.5"]), "4.5");
        assert_eq!(feed(&mut con, &["k", "redis", "-10"]), "-5.5");
        assert_eq!(feed(&mut con, &["k", "red"]), "1");
        assert_eq!(text(&value(&mut con, &["TYPE", "k"])), "rr-autocp");
        // SET: 1 for a new entry, 0 for one that had a weight.
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "redis", "10"]), 0);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "rediscover", "3"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "ruby", "3"]), 1);
        assert_eq!(weight(&mut con, "k", "redis").as_deref(), Some("10"));
        assert_eq!(weight(&mut con, "k", "rediscover").as_deref(), Some("3"));
        assert_eq!(weight(&mut con, "k", "re"), None);
        // HINT: weight descending, equal weights content descending.
        assert_eq!(hint(&mut con, "k", "r"), ["redis", "ruby", "rediscover", "red"]);
        assert_eq!(hint(&mut con, "k", "red"), ["redis", "rediscover", "red"]);
        assert_eq!(hint(&mut con, "k", "redis"), ["redis", "rediscover"]);
        assert_eq!(hint(&mut con, "k", "rediscovery"), Vec::<String>::new());
        assert_eq!(hint(&mut con, "k", "x"), Vec::<String>::new());
        assert_eq!(hint(&mut con, "k", ""), ["redis", "ruby", "rediscover", "red"]);
        let two: Vec<String> = query(&mut con, &["AUTOCOMPLETE.HINT", "k", "r", "count", "2"]);
        assert_eq!(two, ["redis", "ruby"]);
        let big: Vec<String> = query(&mut con, &["AUTOCOMPLETE.HINT", "k", "r", "COUNT", "2147483647"]);
        assert_eq!(big.len(), 4);
        // WITHWEIGHTS (RESP2): content, weight, content, weight… as ZRANGE
        // … WITHSCORES; in either order with COUNT.
        let flat = value(&mut con, &["AUTOCOMPLETE.HINT", "k", "red", "WITHWEIGHTS", "COUNT", "2"]);
        assert_eq!(flat, Value::Array(["redis", "10", "rediscover", "3"].map(|w| Value::BulkString(w.as_bytes().to_vec())).to_vec()));
        let same = value(&mut con, &["AUTOCOMPLETE.HINT", "k", "red", "COUNT", "2", "withweights"]);
        assert_eq!(same, flat);
        // Ten by default.
        for n in 0..15 {
            assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "many", &format!("w{n:02}"), "1"]), 1);
        }
        let ten = hint(&mut con, "many", "w");
        assert_eq!(ten, (5..15).rev().map(|n| format!("w{n:02}")).collect::<Vec<_>>());
        // CARD and INFO.
        assert_eq!(card(&mut con, "k"), 4);
        let (entries, memory, next_fade) = info(&mut con, "k");
        assert_eq!((entries, next_fade), (4, None));
        assert!(memory > 0);
        assert_info_memory(&mut con, "k");
        // An entry with a lifetime gives INFO its fade time.
        let before = server_ms(&mut con);
        assert_eq!(feed(&mut con, &["k", "rust", "PX", "60000"]), "1");
        let after = server_ms(&mut con);
        let at = info(&mut con, "k").2.expect("a fade time");
        assert!((before + 60_000..=after + 60_000).contains(&at), "{at} not 60 s after [{before}, {after}]");
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "rust", "2", "EX", "100"]), 0);
        let at = info(&mut con, "k").2.unwrap();
        assert!((after + 100_000..=server_ms(&mut con) + 100_000).contains(&at), "EX: {at}");
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "rust", "2", "PXAT", "99999999999999"]), 0);
        assert_eq!(info(&mut con, "k").2, Some(99_999_999_999_999));
        // REMOVE: how many were there; the emptied key goes.
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k", "ruby", "nothing", "ruby"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k", "ruby"]), 0);
        assert_eq!(card(&mut con, "k"), 4);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k", "redis", "red", "rediscover", "rust"]), 4);
        assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "the emptied key is deleted");
        assert_eq!(card(&mut con, "k"), 0);
        // Options are case-insensitive; a time token alone is no increment.
        assert_eq!(feed(&mut con, &["k", "x", "px", "60000"]), "1");
        assert_eq!(feed(&mut con, &["k", "x", "2", "ex", "60"]), "3");
        assert_eq!(feed(&mut con, &["k", "x", "pxat", "99999999999999"]), "4");
    }

    fn resp3_answers_doubles_and_pairs_as_zrange_withscores(flavor) {
        let server = Server::start(flavor);
        let mut con = resp3(&server);
        for (content, weight) in [("a", "1.5"), ("b", "0.1"), ("c", "-2"), ("d", "1.5")] {
            let _: Value = query(&mut con, &["AUTOCOMPLETE.SET", "k", content, weight]);
            let _: Value = query(&mut con, &["ZADD", "z", weight, content]);
        }
        let hints = value(&mut con, &["AUTOCOMPLETE.HINT", "k", "", "WITHWEIGHTS"]);
        let zrange = value(&mut con, &["ZRANGE", "z", "0", "-1", "REV", "WITHSCORES"]);
        assert_eq!(hints, zrange);
        let Value::Array(pairs) = &hints else { panic!("{hints:?}") };
        assert_eq!(pairs[0], Value::Array(vec![Value::BulkString(b"d".to_vec()), Value::Double(1.5)]));
        // Without weights: a flat array of contents.
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.HINT", "k", "", "COUNT", "2"]), value(&mut con, &["ZRANGE", "z", "0", "1", "REV"]));
        // FEED and WEIGHT answer doubles, as ZINCRBY and ZSCORE do.
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.FEED", "k", "a", "0.25"]), value(&mut con, &["ZINCRBY", "z", "0.25", "a"]));
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.WEIGHT", "k", "a"]), Value::Double(1.75));
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.WEIGHT", "k", "a"]), value(&mut con, &["ZSCORE", "z", "a"]));
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.WEIGHT", "k", "zz"]), Value::Nil);
        // INFO: a map.
        let info = value(&mut con, &["AUTOCOMPLETE.INFO", "k"]);
        let Value::Map(fields) = &info else { panic!("{info:?}") };
        let names: Vec<String> = fields.iter().map(|(name, _)| text(name)).collect();
        assert_eq!(names, ["entries", "memory", "next_fade"]);
        assert_eq!(fields[0].1, Value::Int(4));
        assert_eq!(fields[2].1, Value::Nil);
    }

    fn hints_are_the_books_sorted_sets_read_in_reverse(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut rng = StdRng::seed_from_u64(0xac_2026);
        let mut book = Book::new();
        let mut ours = redis::pipe();
        let mut contents: Vec<String> = Vec::new();
        // Integer and half weights make many ties, which order by content.
        let increments = ["1", "2", "0.5", "-1", "3.25", "1", "1"];
        for _ in 0..1_500 {
            let content = if !contents.is_empty() && rng.random_bool(0.3) {
                contents[rng.random_range(0..contents.len())].clone()
            } else {
                random_content(&mut rng)
            };
            match rng.random_range(0..10) {
                0 => {
                    let weight = increments[rng.random_range(0..increments.len())];
                    book.set(&content, weight);
                    ours.cmd("AUTOCOMPLETE.SET").arg("k").arg(&content).arg(weight).ignore();
                }
                1 => {
                    book.remove(&content);
                    ours.cmd("AUTOCOMPLETE.REMOVE").arg("k").arg(&content).ignore();
                }
                2..=4 => {
                    book.feed(&content, "1");
                    ours.cmd("AUTOCOMPLETE.FEED").arg("k").arg(&content).ignore();
                }
                _ => {
                    let increment = increments[rng.random_range(0..increments.len())];
                    book.feed(&content, increment);
                    ours.cmd("AUTOCOMPLETE.FEED").arg("k").arg(&content).arg(increment).ignore();
                }
            }
            contents.push(content);
        }
        let _: () = book.pipe.query(&mut con).unwrap();
        let _: () = ours.query(&mut con).unwrap();
        assert_eq!(card(&mut con, "k"), int(&mut con, &["ZCARD", "book:"]));
        assert!(card(&mut con, "k") > 300, "{} entries", card(&mut con, "k"));
        // Every prefix of some entries, the empty one, and ones of nothing.
        let mut prefixes: Vec<String> = vec![String::new(), "zzz".into(), "中文中文中文中文".into(), "a".repeat(7)];
        for content in contents.iter().step_by(37) {
            prefixes.extend(Book::prefixes(content));
        }
        prefixes.sort();
        prefixes.dedup();
        let mut compared = 0;
        for prefix in &prefixes {
            for count in [1, 2, 3, 10, 50, 2_147_483_647_i64] {
                let count = count.to_string();
                let last = (count.parse::<i64>().unwrap() - 1).to_string();
                let book_key = format!("book:{prefix}");
                let expected = value(&mut con, &["ZRANGE", &book_key, "0", &last, "REV", "WITHSCORES"]);
                let got = value(&mut con, &["AUTOCOMPLETE.HINT", "k", prefix, "COUNT", &count, "WITHWEIGHTS"]);
                assert_eq!(got, expected, "prefix {prefix:?} COUNT {count}");
                let expected = value(&mut con, &["ZRANGE", &book_key, "0", &last, "REV"]);
                let got = value(&mut con, &["AUTOCOMPLETE.HINT", "k", prefix, "COUNT", &count]);
                assert_eq!(got, expected, "prefix {prefix:?} COUNT {count}");
                compared += 1;
            }
            // The default COUNT is 10.
            let expected = value(&mut con, &["ZRANGE", &format!("book:{prefix}"), "0", "9", "REV"]);
            assert_eq!(value(&mut con, &["AUTOCOMPLETE.HINT", "k", prefix]), expected, "prefix {prefix:?}");
        }
        assert!(compared > 300, "{compared} comparisons");
        // Every weight is the sorted set's score, as text.
        let all: Vec<(String, String)> = query(&mut con, &["ZRANGE", "book:", "0", "-1", "WITHSCORES"]);
        for (content, score) in all {
            assert_eq!(weight(&mut con, "k", &content), Some(score), "{content:?}");
        }
    }

    fn prefixes_are_characters(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for content in ["中文", "中国", "中", "丫", "é", "e"] {
            assert_eq!(feed(&mut con, &["k", content]), "1");
        }
        // 中 is E4 B8 AD, 丫 is E4 B8 AB: a prefix of the bytes E4 B8 is
        // part of a character, and is refused rather than matching both.
        for partial in [&b"\xe4"[..], b"\xe4\xb8", b"\xc3", b"\xe4\xb8\xad\xe6"] {
            let got = error(&mut con, redis::cmd("AUTOCOMPLETE.HINT").arg("k").arg(partial));
            assert_eq!(got, NOT_UTF8, "{partial:?}");
        }
        assert_eq!(hint(&mut con, "k", "中"), ["中文", "中国", "中"]);
        assert_eq!(hint(&mut con, "k", "中文"), ["中文"]);
        assert_eq!(hint(&mut con, "k", "丫"), ["丫"]);
        assert_eq!(hint(&mut con, "k", "e"), ["e"]);
        assert_eq!(hint(&mut con, "k", "é"), ["é"]);
        // Contents are counted in characters: 256 Chinese characters (768
        // bytes) are taken, 257 ASCII ones are not.
        let chinese = "中".repeat(256);
        assert_eq!(feed(&mut con, &["k", &chinese]), "1");
        assert_eq!(hint(&mut con, "k", &"中".repeat(100)), [chinese.as_str()]);
        assert_eq!(error(&mut con, &cmd(&["AUTOCOMPLETE.FEED", "k", &"a".repeat(257)])), too_long(256));
        assert_eq!(error(&mut con, &cmd(&["AUTOCOMPLETE.FEED", "k", &"中".repeat(257)])), too_long(256));
        // Any bytes of valid UTF-8, NUL included.
        assert_eq!(feed(&mut con, &["k", "a\0b"]), "1");
        assert_eq!(hint(&mut con, "k", "a\0"), ["a\0b"]);
    }

    fn weights_are_formatted_as_zincrby_replies(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut con3 = resp3(&server);
        // Each a new entry fed once; then sums.
        let cases: &[&[&str]] = &[
            &["0.1"],
            &["1e308"],
            &["0.3333333333333333"],
            &["1e-300"],
            &["5e-324"],
            &["-5"],
            &["123456789012345678"],
            &["0.1", "0.2"],
            &["1e308", "-1e308"],
            &["2.5", "-2.5"],
            &["1.7976931348623157e308"],
            &["-1.7976931348623157e308"],
            &["3"],
            &["+4"],
            &["1E3"],
            &["  "], // no increment: replaced below by the default 1
        ];
        for (n, increments) in cases.iter().enumerate() {
            let content = format!("c{n}");
            for increment in increments.iter() {
                let (ours, theirs) = if increment.trim().is_empty() {
                    (value(&mut con, &["AUTOCOMPLETE.FEED", "k", &content]), value(&mut con, &["ZINCRBY", "z", "1", &content]))
                } else {
                    (value(&mut con, &["AUTOCOMPLETE.FEED", "k", &content, increment]), value(&mut con, &["ZINCRBY", "z", increment, &content]))
                };
                assert_eq!(ours, theirs, "FEED {increment} of {increments:?}");
            }
            assert_eq!(value(&mut con, &["AUTOCOMPLETE.WEIGHT", "k", &content]), value(&mut con, &["ZSCORE", "z", &content]), "{increments:?}");
            assert_eq!(value(&mut con3, &["AUTOCOMPLETE.WEIGHT", "k", &content]), value(&mut con3, &["ZSCORE", "z", &content]), "{increments:?}");
        }
        // -0: ZINCRBY answers the new member's increment (-0), yet stores
        // 0 (ZSCORE); FEED answers and stores 0, as SET does.
        let ours = value(&mut con, &["AUTOCOMPLETE.FEED", "k", "zero", "-0.0"]);
        let _: Value = query(&mut con, &["ZINCRBY", "z", "-0.0", "zero"]);
        assert_eq!(ours, value(&mut con, &["ZSCORE", "z", "zero"]));
        assert_eq!(bulk(&ours), "0");
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "zero2", "-0"]), 1);
        let _: i64 = query(&mut con, &["ZADD", "z", "-0", "zero2"]);
        assert_eq!(weight(&mut con, "k", "zero2").as_deref(), Some("0"));
        assert_eq!(value(&mut con3, &["AUTOCOMPLETE.WEIGHT", "k", "zero2"]), Value::Double(0.0));
        // The weights of HINT are the same text.
        let all: Vec<(String, String)> = query(&mut con, &["ZRANGE", "z", "0", "-1", "REV", "WITHSCORES"]);
        assert_eq!(hint_weights(&mut con, "k", ""), all);
    }

    fn every_error_is_exact_and_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let big = formatted(&mut con, "1e308");
        assert_eq!(feed(&mut con, &["k", "redis", "1e308"]), big);
        assert_eq!(feed(&mut con, &["k", "low", "-1e308"]), formatted(&mut con, "-1e308"));
        assert_eq!(feed(&mut con, &["k", "fading", "1", "PX", "600000"]), "1");
        let _: () = cmd(&["SET", "text", "hello"]).query(&mut con).unwrap();
        let long = "a".repeat(257);
        let before = harness::dataset(&mut con);
        let feed_expire = bad_expire("autocomplete.feed");
        let set_expire = bad_expire("autocomplete.set");
        let cases: Vec<(Vec<&str>, String)> = vec![
            (vec!["AUTOCOMPLETE.FEED", "k", ""], EMPTY.into()),
            (vec!["AUTOCOMPLETE.SET", "k", "", "1"], EMPTY.into()),
            (vec!["AUTOCOMPLETE.FEED", "new", ""], EMPTY.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", &long], too_long(256)),
            (vec!["AUTOCOMPLETE.SET", "k", &long, "1"], too_long(256)),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "abc"], NOT_FLOAT.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", ""], NOT_FLOAT.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "1e"], NOT_FLOAT.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "0x10"], NOT_FLOAT.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", " 1"], NOT_FLOAT.into()),
            (vec!["AUTOCOMPLETE.SET", "k", "x", "abc"], NOT_FLOAT.into()),
            (vec!["AUTOCOMPLETE.SET", "k", "x", "1.5.5"], NOT_FLOAT.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "inf"], NOT_FINITE.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "-inf"], NOT_FINITE.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "nan"], NOT_FINITE.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "1e400"], NOT_FINITE.into()),
            (vec!["AUTOCOMPLETE.SET", "k", "x", "inf"], NOT_FINITE.into()),
            (vec!["AUTOCOMPLETE.SET", "k", "x", "NaN"], NOT_FINITE.into()),
            (vec!["AUTOCOMPLETE.SET", "k", "redis", "-inf"], NOT_FINITE.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "redis", "1e308"], OVERFLOW.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "redis", "1.7976931348623157e308"], OVERFLOW.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "low", "-1e308"], OVERFLOW.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "redis", "1e308", "PX", "100"], OVERFLOW.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "PX", "100", "EX", "100"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "1", "PX", "100", "PXAT", "99999999999999"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "1", "PX", "100", "PX", "100"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "1", "PX"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "1", "2"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "1", "FOREVER"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.SET", "k", "x", "1", "EX", "5", "PX", "5"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "PXAT", "0"], feed_expire.clone()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "PXAT", "-1"], feed_expire.clone()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "PX", "0"], feed_expire.clone()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "PX", "-5"], feed_expire.clone()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "EX", "0"], feed_expire.clone()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "EX", "9223372036854775807"], feed_expire.clone()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "PX", "9223372036854775807"], feed_expire.clone()),
            (vec!["AUTOCOMPLETE.SET", "k", "x", "1", "PXAT", "0"], set_expire.clone()),
            (vec!["AUTOCOMPLETE.SET", "k", "x", "1", "EX", "-1"], set_expire.clone()),
            (vec!["AUTOCOMPLETE.FEED", "k", "x", "PX", "abc"], NOT_INTEGER.into()),
            (vec!["AUTOCOMPLETE.SET", "k", "x", "1", "PXAT", "1.5"], NOT_INTEGER.into()),
            (vec!["AUTOCOMPLETE.HINT", "k", "r", "COUNT", "0"], COUNT_RANGE.into()),
            (vec!["AUTOCOMPLETE.HINT", "k", "r", "COUNT", "-1"], COUNT_RANGE.into()),
            (vec!["AUTOCOMPLETE.HINT", "k", "r", "COUNT", "2147483648"], COUNT_RANGE.into()),
            (vec!["AUTOCOMPLETE.HINT", "missing", "r", "COUNT", "0"], COUNT_RANGE.into()),
            (vec!["AUTOCOMPLETE.HINT", "k", "r", "COUNT", "abc"], NOT_INTEGER.into()),
            (vec!["AUTOCOMPLETE.HINT", "k", "r", "COUNT"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.HINT", "k", "r", "COUNT", "1", "COUNT", "2"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.HINT", "k", "r", "WITHWEIGHTS", "WITHWEIGHTS"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.HINT", "k", "r", "WITHSCORES"], SYNTAX.into()),
            (vec!["AUTOCOMPLETE.FEED", "text", "x"], WRONGTYPE.into()),
            (vec!["AUTOCOMPLETE.SET", "text", "x", "1"], WRONGTYPE.into()),
            (vec!["AUTOCOMPLETE.HINT", "text", "x"], WRONGTYPE.into()),
            (vec!["AUTOCOMPLETE.REMOVE", "text", "x"], WRONGTYPE.into()),
            (vec!["AUTOCOMPLETE.WEIGHT", "text", "x"], WRONGTYPE.into()),
            (vec!["AUTOCOMPLETE.CARD", "text"], WRONGTYPE.into()),
            (vec!["AUTOCOMPLETE.INFO", "text"], WRONGTYPE.into()),
            (vec!["AUTOCOMPLETE.FEED", "k"], arity("autocomplete.feed")),
            (vec!["AUTOCOMPLETE.SET", "k", "x"], arity("autocomplete.set")),
            (vec!["AUTOCOMPLETE.HINT", "k"], arity("autocomplete.hint")),
            (vec!["AUTOCOMPLETE.REMOVE", "k"], arity("autocomplete.remove")),
            (vec!["AUTOCOMPLETE.WEIGHT", "k"], arity("autocomplete.weight")),
            (vec!["AUTOCOMPLETE.WEIGHT", "k", "a", "b"], arity("autocomplete.weight")),
            (vec!["AUTOCOMPLETE.CARD", "k", "x"], arity("autocomplete.card")),
            (vec!["AUTOCOMPLETE.INFO"], arity("autocomplete.info")),
        ];
        for (words, expected) in &cases {
            let got = error(&mut con, &cmd(words));
            assert_eq!(&got, expected, "{words:?}");
            assert!(in_error_catalogue(&got) || got.starts_with("WRONGTYPE") || got.contains("wrong number"), "{got}");
            assert_eq!(harness::dataset(&mut con), before, "{words:?} changed data");
        }
        // Invalid UTF-8 in a content or a prefix.
        for (command, args) in [
            ("AUTOCOMPLETE.FEED", vec![&b"k"[..], b"caf\xe9"]),
            ("AUTOCOMPLETE.SET", vec![&b"k"[..], b"\xff", b"1"]),
            ("AUTOCOMPLETE.HINT", vec![&b"k"[..], b"\xe4\xb8"]),
            ("AUTOCOMPLETE.HINT", vec![&b"missing"[..], b"\xed\xa0\x80"]),
            ("AUTOCOMPLETE.FEED", vec![&b"k"[..], b"\xc0\xaf"]),
        ] {
            let mut call = redis::cmd(command);
            for arg in &args {
                call.arg(*arg);
            }
            assert_eq!(error(&mut con, &call), NOT_UTF8, "{command} {args:?}");
            assert_eq!(harness::dataset(&mut con), before);
        }
        // The setting binds clients: a lower cap refuses what was taken.
        harness::ok(&mut con, &["CONFIG", "SET", "recipes.autocomplete-max-chars", "5"]);
        let before = harness::dataset(&mut con);
        for words in [vec!["AUTOCOMPLETE.FEED", "k", "abcdef"], vec!["AUTOCOMPLETE.SET", "k", "中文中文中文", "1"]] {
            assert_eq!(error(&mut con, &cmd(&words)), too_long(5), "{words:?}");
        }
        assert_eq!(harness::dataset(&mut con), before);
        assert_eq!(feed(&mut con, &["k", "中文中文中"]), "1");
        // What was stored stays and is read; a write naming it is refused
        // as any other, but for REMOVE.
        assert_eq!(weight(&mut con, "k", "fading").as_deref(), Some("1"));
        assert_eq!(hint(&mut con, "k", "fad"), ["fading"]);
        assert_eq!(error(&mut con, &cmd(&["AUTOCOMPLETE.FEED", "k", "fading"])), too_long(5));
        assert_eq!(weight(&mut con, "k", "redis"), Some(big));
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k", "fading"]), 1);
    }

    fn fading_on_the_primary_and_its_replica(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let mut replica = pair.replica.con();
        assert_eq!(feed(&mut con, &["k", "short", "5", "PX", "400"]), "5");
        assert_eq!(feed(&mut con, &["k", "stays", "1"]), "1");
        assert_eq!(feed(&mut con, &["k", "later", "2", "PX", "600000"]), "2");
        pair.sync();
        for side in [&mut con, &mut replica] {
            assert_eq!(hint(side, "k", ""), ["short", "later", "stays"]);
            assert_eq!(card(side, "k"), 3);
            assert_eq!(weight(side, "k", "short").as_deref(), Some("5"));
        }
        let fade_at = info(&mut con, "k").2.unwrap();
        // A FEED without a time keeps the fade time; with one it moves it.
        assert_eq!(feed(&mut con, &["k", "later", "1"]), "3");
        assert_eq!(info(&mut con, "k").2, Some(fade_at), "the earliest is still the short one");
        thread::sleep(Duration::from_millis(450));
        // Faded: gone from every read, on both, before any write.
        for (side, name) in [(&mut con, "primary"), (&mut replica, "replica")] {
            assert_eq!(hint(side, "k", ""), ["later", "stays"], "{name}");
            assert_eq!(hint(side, "k", "s"), ["stays"], "{name}");
            assert_eq!(card(side, "k"), 2, "{name}");
            assert_eq!(weight(side, "k", "short"), None, "{name}");
            // Still stored until the primary's next write.
            assert_eq!(info(side, "k"), (2, info(side, "k").1, Some(fade_at)), "{name}");
        }
        let stored = digest_value(&mut con, "k");
        assert_eq!(digest_value(&mut replica, "k"), stored);
        assert_eq!(faded_count(&mut con), 0);
        // The primary's next write removes it, and sends the removal.
        assert_eq!(feed(&mut con, &["k", "stays"]), "2");
        assert_eq!(faded_count(&mut con), 1);
        pair.sync();
        assert_eq!(digest_value(&mut replica, "k"), digest_value(&mut con, "k"));
        assert_ne!(digest_value(&mut con, "k"), stored);
        let received: Vec<String> = commands_run(&mut replica).into_iter().map(|(c, _)| c).collect();
        assert!(received.iter().any(|c| c == "autocomplete.remove"), "{received:?}");
        let next = info(&mut con, "k").2.unwrap();
        assert!(next > fade_at + 500_000, "the later entry's fade time {next}");
        let (entries, _, fade) = info(&mut con, "k");
        assert_eq!((info(&mut replica, "k").0, info(&mut replica, "k").2), (entries, fade));
        // A FEED with a time refreshes it; refeeding a faded entry starts
        // it again from its increment.
        assert_eq!(feed(&mut con, &["k", "later", "1", "PX", "300"]), "4");
        let refreshed = info(&mut con, "k").2.unwrap();
        assert!(refreshed < next, "{refreshed} moved before {next}");
        thread::sleep(Duration::from_millis(350));
        assert_eq!(weight(&mut con, "k", "later"), None);
        assert_eq!(feed(&mut con, &["k", "later", "1"]), "1", "a faded entry starts again");
        assert_eq!(info(&mut con, "k").2, None, "refed without a time, it never fades");
        assert_eq!(faded_count(&mut con), 2);
        // SET of a faded entry is a new entry.
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "s2", "1", "PX", "1"]), 1);
        thread::sleep(Duration::from_millis(10));
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "s2", "1"]), 1);
        // REMOVE counts live entries only, and the key emptied by fading goes.
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "e", "a", "1", "PX", "1"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "e", "b", "1", "PX", "1"]), 1);
        thread::sleep(Duration::from_millis(10));
        assert_eq!(card(&mut con, "e"), 0);
        assert_eq!(int(&mut con, &["EXISTS", "e"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "e", "a"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "e"]), 0, "the key emptied by fading is deleted");
        assert_eq!(faded_count(&mut con), 5);
        pair.sync();
        assert_eq!(int(&mut replica, &["EXISTS", "e"]), 0);
        assert_eq!(digest(&mut replica), digest(&mut con));
    }

    fn a_write_into_a_key_fading_emptied_keeps_its_expiry(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let mut replica = pair.replica.con();
        assert_eq!(feed(&mut con, &["k", "gone", "1", "PX", "50"]), "1");
        assert_eq!(int(&mut con, &["PEXPIRE", "k", "600000"]), 1);
        let expiry = int(&mut con, &["PEXPIRETIME", "k"]);
        thread::sleep(Duration::from_millis(80));
        // The fade empties the key on the way; FEED and SET refill it with
        // the expiry it had, on the replica too.
        assert_eq!(feed(&mut con, &["k", "new", "2"]), "2");
        assert_eq!(int(&mut con, &["PEXPIRETIME", "k"]), expiry);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "gone2", "1", "PX", "50"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k", "new"]), 1);
        thread::sleep(Duration::from_millis(80));
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "set", "3"]), 1);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "k"]), expiry);
        assert_eq!(hint(&mut con, "k", ""), ["set"]);
        pair.sync();
        assert_eq!(int(&mut replica, &["PEXPIRETIME", "k"]), expiry);
        assert_eq!(digest(&mut replica), digest(&mut con));
        // A key without one gets none.
        assert_eq!(feed(&mut con, &["p", "gone", "1", "PX", "50"]), "1");
        thread::sleep(Duration::from_millis(80));
        assert_eq!(feed(&mut con, &["p", "new"]), "1");
        assert_eq!(int(&mut con, &["PEXPIRETIME", "p"]), -1);
    }

    fn many_faded_entries_go_over_several_writes(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let at = (server_ms(&mut con) + 300).to_string();
        let mut pipe = redis::pipe();
        for n in 0..300 {
            pipe.cmd("AUTOCOMPLETE.SET").arg("k").arg(format!("f{n:03}")).arg(n).arg("PXAT").arg(&at).ignore();
        }
        let _: () = pipe.query(&mut con).unwrap();
        assert_eq!(feed(&mut con, &["k", "live"]), "1");
        assert_eq!(card(&mut con, "k"), 301);
        thread::sleep(Duration::from_millis(350));
        assert_eq!(card(&mut con, "k"), 1);
        assert_eq!(hint(&mut con, "k", "f"), Vec::<String>::new());
        let stored = |con: &mut Connection| int(con, &["MEMORY", "USAGE", "k"]);
        let mut memory = stored(&mut con);
        for (write, removed) in [(1, 128), (2, 256), (3, 300), (4, 300)] {
            assert_eq!(feed(&mut con, &["k", "live"]), (write + 1).to_string());
            assert_eq!(faded_count(&mut con), removed, "after write {write}");
            let now = stored(&mut con);
            assert!(now <= memory, "{now} > {memory}");
            memory = now;
        }
        assert_eq!(info(&mut con, "k").0, 1);
        assert_eq!(info(&mut con, "k").2, None);
        pair.sync();
        let mut replica = pair.replica.con();
        assert_eq!(digest_value(&mut replica, "k"), digest_value(&mut con, "k"));
        assert_eq!(hint_weights(&mut replica, "k", ""), [("live".to_string(), "5".to_string())]);
        let removes = commands_run(&mut replica).into_iter().find(|(c, _)| c == "autocomplete.remove").map(|(_, n)| n);
        assert_eq!(removes, Some(3), "three writes sent removals");
    }

    fn relative_times_reach_replicas_and_the_aof_as_absolute(flavor) {
        let mut pair = Replicated::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut con = pair.primary.con();
        // The replica applies what comes meanwhile a second late: a time
        // sent as PX would fade a second later there.
        let held = pair.hold_replica(1_000);
        assert_eq!(feed(&mut con, &["k", "viapx", "1", "PX", "600000"]), "1");
        assert_eq!(feed(&mut con, &["k", "viaex", "2", "EX", "600"]), "2");
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "setpx", "3", "PX", "500000"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "setex", "4", "EX", "700"]), 1);
        assert_eq!(feed(&mut con, &["k", "viapx", "1", "PXAT", "99999999999999"]), "2");
        assert_eq!(feed(&mut con, &["k", "none", "5"]), "5");
        held.join().unwrap();
        pair.sync();
        let mut replica = pair.replica.con();
        let primary_state = (info(&mut con, "k").2, digest_value(&mut con, "k"), hint_weights(&mut con, "k", ""));
        assert_eq!((info(&mut replica, "k").2, digest_value(&mut replica, "k"), hint_weights(&mut replica, "k", "")), primary_state);
        let aof = aof_text(pair.primary.dir());
        assert!(aof.contains("PXAT"), "{aof}");
        assert!(!aof.contains("\r\nPX\r\n") && !aof.contains("\r\nEX\r\n"), "{aof}");
        drop(con);
        drop(replica);
        pair.primary.restart();
        let mut con = pair.primary.con();
        assert_eq!((info(&mut con, "k").2, digest_value(&mut con, "k"), hint_weights(&mut con, "k", "")), primary_state);
    }

    fn rdb_and_aof_rewrite_keep_every_weight_bit_exact(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        workload(&mut con);
        let sum = formatted(&mut con, "0.30000000000000004");
        assert_eq!(weight(&mut con, "ac:main", "redis"), Some(sum));
        let before = workload_state(&mut con);
        let _: () = cmd(&["DEBUG", "RELOAD"]).query(&mut con).unwrap();
        assert_eq!(workload_state(&mut con), before, "DEBUG RELOAD");
        drop(con);
        drop(server);
        // With and without an RDB preamble: without, the rewrite is one
        // AUTOCOMPLETE.SET per entry.
        for preamble in ["yes", "no"] {
            let mut expected = Vec::new();
            let server = harness::aof_round_trip_with(flavor, &["--aof-use-rdb-preamble", preamble], |_, con| {
                let keys = workload(con);
                harness::rewrite_aof(con);
                // Written after the rewrite: replayed from the AOF's tail.
                let fed = feed(con, &["ac:main", "tail", "0.7"]);
                assert_eq!(fed, formatted(con, "0.7"));
                expected = workload_state(con);
                keys
            });
            let mut con = server.con();
            assert_eq!(workload_state(&mut con), expected, "preamble {preamble}");
            if preamble == "no" {
                let aof = aof_text(server.dir());
                assert!(aof.contains("AUTOCOMPLETE.SET"), "the rewrite is the type's own commands");
            }
        }
    }

    fn dump_restore_round_trip_and_hostile_payloads(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        workload(&mut con);
        let payload: Vec<u8> = query(&mut con, &["DUMP", "ac:main"]);
        assert_eq!(redis::cmd("RESTORE").arg("copy").arg(0).arg(&payload[..]).query::<Value>(&mut con).unwrap(), Value::Okay);
        assert_eq!(digest_value(&mut con, "copy"), digest_value(&mut con, "ac:main"));
        assert_eq!(hint_weights(&mut con, "copy", ""), hint_weights(&mut con, "ac:main", ""));
        // (Entries and fade time; the memory of a loaded key is less than
        // that of one grown write by write, its arena never having grown.)
        let (entries, _, fade) = info(&mut con, "ac:main");
        assert_eq!((info(&mut con, "copy").0, info(&mut con, "copy").2), (entries, fade));
        // COPY makes an independent key.
        assert_eq!(int(&mut con, &["COPY", "ac:main", "twin"]), 1);
        assert_eq!(digest_value(&mut con, "twin"), digest_value(&mut con, "ac:main"));
        assert_eq!(feed(&mut con, &["twin", "red"]), "-4");
        assert_eq!(weight(&mut con, "ac:main", "red").as_deref(), Some("-5"));
        assert_eq!(recipes_figures(&mut con, "recipes")["autocomplete_keys"], 4);

        let before = digest(&mut con);
        refused_restore(&mut con, &payload[..payload.len() - 3], "ERR DUMP payload version or checksum are wrong");
        use harness::Field::{Bytes as B, Num as N};
        let one = 1f64.to_bits();
        let refused = "ERR Bad data format";
        let hostile: Vec<(&str, Vec<harness::Field>)> = vec![
            ("no entries", vec![N(0)]),
            ("a content twice", vec![N(2), B(b"a"), N(one), N(0), B(b"a"), N(one), N(0)]),
            ("a content twice, out of order", vec![N(3), B(b"b"), N(one), N(0), B(b"a"), N(one), N(0), B(b"b"), N(one), N(0)]),
            ("a NaN weight", vec![N(1), B(b"a"), N(f64::NAN.to_bits()), N(0)]),
            ("another NaN", vec![N(1), B(b"a"), N(0x7ff0_0000_0000_0001), N(0)]),
            ("an infinite weight", vec![N(1), B(b"a"), N(f64::INFINITY.to_bits()), N(0)]),
            ("a -inf weight", vec![N(1), B(b"a"), N(f64::NEG_INFINITY.to_bits()), N(0)]),
            ("invalid UTF-8", vec![N(1), B(b"caf\xe9"), N(one), N(0)]),
            ("a cut character", vec![N(1), B(b"\xe4\xb8"), N(one), N(0)]),
            ("empty content", vec![N(1), B(b""), N(one), N(0)]),
            ("a fade time past i64", vec![N(1), B(b"a"), N(one), N(1 << 63)]),
            ("truncated", vec![N(2), B(b"a"), N(one), N(0)]),
            ("truncated in an entry", vec![N(1), B(b"a"), N(one)]),
            ("a huge count", vec![N(u64::MAX), B(b"a"), N(one), N(0)]),
            ("a number for a content", vec![N(1), N(5), N(one), N(0)]),
            ("a string for a weight", vec![N(1), B(b"a"), B(b"1"), N(0)]),
            ("a value too many", vec![N(1), B(b"a"), N(one), N(0), N(7)]),
        ];
        for (what, fields) in &hostile {
            let got = error(&mut con, redis::cmd("RESTORE").arg("refused").arg(0).arg(harness::forge(&payload, fields, 1)));
            assert_eq!(got, refused, "{what}");
            assert_eq!(int(&mut con, &["EXISTS", "refused"]), 0, "{what}");
        }
        refused_restore(&mut con, &harness::forge(&payload, &[N(1), B(b"a"), N(one), N(0)], 2), refused);
        assert_eq!(digest(&mut con), before);
        // The forger itself is right: a valid forged key loads, in any order.
        let forged = harness::forge(&payload, &[N(3), B("中".as_bytes()), N(2.5f64.to_bits()), N(0), B(b"b"), N((-0.0f64).to_bits()), N(0), B(b"a"), N(one), N(99_999_999_999_999)], 1);
        assert_eq!(redis::cmd("RESTORE").arg("forged").arg(0).arg(forged).query::<Value>(&mut con).unwrap(), Value::Okay);
        assert_eq!(hint_weights(&mut con, "forged", ""), [("中".into(), "2.5".into()), ("a".into(), "1".into()), ("b".into(), "0".into())]);
        assert_eq!(info(&mut con, "forged").2, Some(99_999_999_999_999));
        assert!(!server.log().contains("panic"), "{}", server.log());
    }

    /// A content longer than the widest `recipes.autocomplete-max-chars`
    /// (65,536 characters) could not be replayed from an AOF rewrite
    /// (`AUTOCOMPLETE.SET` refuses it there too), so no load takes it; the
    /// longest content loads, and survives the rewrite and a restart.
    fn no_load_takes_a_content_an_aof_rewrite_would_lose(flavor) {
        let mut server = Server::start_with(flavor, &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
        let mut con = server.con();
        assert_eq!(feed(&mut con, &["template", "x"]), "1");
        let template: Vec<u8> = query(&mut con, &["DUMP", "template"]);
        use harness::Field::{Bytes as B, Num as N};
        let one = 1f64.to_bits();
        let too_long = "a".repeat(65_537);
        let payload = harness::forge(&template, &[N(2), B(too_long.as_bytes()), N(one), N(0), B(b"short"), N(one), N(0)], 1);
        refused_restore(&mut con, &payload, "ERR Bad data format");
        let longest = "中".repeat(65_536);
        let payload = harness::forge(&template, &[N(2), B(longest.as_bytes()), N(one), N(0), B(b"short"), N(one), N(0)], 1);
        assert_eq!(redis::cmd("RESTORE").arg("long").arg(0).arg(payload).query::<Value>(&mut con).unwrap(), Value::Okay);
        let before = (card(&mut con, "long"), digest_value(&mut con, "long"));
        harness::rewrite_aof(&mut con);
        drop(con);
        server.restart();
        let mut con = server.con();
        assert_eq!((card(&mut con, "long"), digest_value(&mut con, "long")), before, "the AOF rewrite lost an entry");
    }

    fn a_hundred_thousand_entries_load_in_any_order(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(feed(&mut con, &["template", "x"]), "1");
        let template: Vec<u8> = query(&mut con, &["DUMP", "template"]);
        let contents: Vec<Vec<u8>> = (0..100_000u64).map(|n| format!("e{n:06}").into_bytes()).collect();
        let weight = |n: u64| ((n * 7919) % 1000) as f64 / 4.0;
        let payload = |order: &[u64]| {
            let mut fields = vec![harness::Field::Num(order.len() as u64)];
            for &n in order {
                fields.push(harness::Field::Bytes(&contents[n as usize]));
                fields.push(harness::Field::Num(weight(n).to_bits()));
                fields.push(harness::Field::Num(0));
            }
            harness::forge(&template, &fields, 1)
        };
        let sorted: Vec<u64> = (0..100_000).collect();
        let reversed: Vec<u64> = sorted.iter().rev().copied().collect();
        let mut shuffled = sorted.clone();
        let mut rng = StdRng::seed_from_u64(7);
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.random_range(0..=i));
        }
        let mut digests = Vec::new();
        for (name, order) in [("sorted", &sorted), ("reversed", &reversed), ("shuffled", &shuffled)] {
            let forged = payload(order);
            let started = Instant::now();
            let restored: Value = redis::cmd("RESTORE").arg(name).arg(0).arg(&forged[..]).query(&mut con).unwrap();
            let took = started.elapsed();
            assert_eq!(restored, Value::Okay);
            assert!(took < Duration::from_secs(2) || harness::under_valgrind(), "RESTORE of 100,000 {name} entries took {took:?}");
            assert_eq!(card(&mut con, name), 100_000);
            digests.push(digest_value(&mut con, name));
            // The heaviest: 249.75, contents descending.
            let top: Vec<String> = query(&mut con, &["AUTOCOMPLETE.HINT", name, "e", "COUNT", "3"]);
            let mut best: Vec<u64> = (0..100_000).filter(|&n| weight(n) == 249.75).collect();
            best.reverse();
            assert_eq!(top, best[..3].iter().map(|n| format!("e{n:06}")).collect::<Vec<_>>(), "{name}");
            assert_eq!(weight_of(&mut con, name, "e050000"), Some(weight(50_000)));
        }
        assert!(digests.windows(2).all(|pair| pair[0] == pair[1]), "the three orders load the same key");
        // With a repeated content far from its twin, the sort finds it.
        let mut repeated = shuffled.clone();
        repeated[99_999] = repeated[0];
        refused_restore(&mut con, &payload(&repeated), "ERR Bad data format");
    }

    fn memory_usage_follows_used_memory(flavor) {
        if harness::under_valgrind() {
            return;
        }
        let server = Server::start(flavor);
        let mut con = server.con();
        let used = |con: &mut Connection| -> i64 {
            harness::info_field(con, "memory", "used_memory").unwrap().parse().unwrap()
        };
        let mut rng = StdRng::seed_from_u64(20_000);
        let before = used(&mut con);
        for batch in 0..20 {
            let mut pipe = redis::pipe();
            for n in 0..1_000 {
                // Short contents (inside their node) and long ones.
                let content = if rng.random_bool(0.3) {
                    format!("a rather long suggestion of several words, number {batch}-{n}")
                } else {
                    format!("{}{batch}-{n}", random_content(&mut rng))
                };
                pipe.cmd("AUTOCOMPLETE.FEED").arg("k").arg(content).arg(rng.random_range(1..100)).ignore();
            }
            let _: () = pipe.query(&mut con).unwrap();
        }
        let _: Value = query(&mut con, &["PING"]);
        let grown = used(&mut con) - before;
        let usage = int(&mut con, &["MEMORY", "USAGE", "k", "SAMPLES", "0"]);
        let entries = card(&mut con, "k");
        assert!(entries > 19_900, "{entries}");
        let off = (usage - grown).abs() as f64 / grown as f64;
        assert!(off < 0.10, "MEMORY USAGE {usage}, used_memory grew {grown}: {:.1}% off", off * 100.0);
        assert_info_memory(&mut con, "k");
        // Removing all but one gives the memory back.
        let all: Vec<String> = query(&mut con, &["AUTOCOMPLETE.HINT", "k", "", "COUNT", "100000"]);
        let mut pipe = redis::pipe();
        for content in &all[1..] {
            pipe.cmd("AUTOCOMPLETE.REMOVE").arg("k").arg(content).ignore();
        }
        let _: () = pipe.query(&mut con).unwrap();
        let left = int(&mut con, &["MEMORY", "USAGE", "k"]);
        assert!(left < 1_024, "{left} bytes for one entry");
        assert!(used(&mut con) - before < grown / 5, "the memory went back");
    }

    fn kept_hints_answer_afresh_after_every_write(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut con3 = resp3(&server);
        for (content, weight) in [("apple", "5"), ("apricot", "4"), ("avocado", "3"), ("banana", "2")] {
            assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", content, weight]), 1);
        }
        let usage = |con: &mut Connection| int(con, &["MEMORY", "USAGE", "k"]);
        let bare = usage(&mut con);
        let top = |con: &mut Connection| -> Vec<String> { query(con, &["AUTOCOMPLETE.HINT", "k", "a", "COUNT", "2"]) };
        assert_eq!(top(&mut con), ["apple", "apricot"]);
        // The answer is kept, and MEMORY USAGE counts it.
        let kept = usage(&mut con);
        assert!(kept > bare, "{kept} after a hint, {bare} before");
        assert_eq!(top(&mut con), ["apple", "apricot"]);
        // Each kind of write: the next hint is the new answer.
        assert_eq!(feed(&mut con, &["k", "avocado", "10"]), "13");
        assert_eq!(top(&mut con), ["avocado", "apple"], "after FEED");
        assert_eq!(feed(&mut con, &["k", "apricot", "20", "PX", "600000"]), "24");
        assert_eq!(top(&mut con), ["apricot", "avocado"], "after FEED … PX");
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "apple", "100"]), 0);
        assert_eq!(top(&mut con), ["apple", "apricot"], "after SET");
        let later = (server_ms(&mut con) + 600_000).to_string();
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "almond", "50", "PXAT", &later]), 1);
        assert_eq!(top(&mut con), ["apple", "almond"], "after SET … PXAT");
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k", "apple", "nothing"]), 1);
        assert_eq!(top(&mut con), ["almond", "apricot"], "after REMOVE");
        // A refused write changes nothing, the answer neither.
        assert_eq!(error(&mut con, &cmd(&["AUTOCOMPLETE.FEED", "k", "almond", "inf"])), NOT_FINITE);
        assert_eq!(top(&mut con), ["almond", "apricot"], "after a refused FEED");
        // An entry that fades: gone from the kept answer once its time
        // passes (no write), and the primary's next write removes it.
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "ace", "1000", "PX", "150"]), 1);
        assert_eq!(top(&mut con), ["ace", "almond"]);
        thread::sleep(Duration::from_millis(200));
        assert_eq!(top(&mut con), ["almond", "apricot"], "after the fade time");
        assert_eq!(feed(&mut con, &["k", "banana"]), "3");
        assert_eq!(faded_count(&mut con), 1);
        assert_eq!(top(&mut con), ["almond", "apricot"], "after the fade was removed");
        // COUNT smaller and larger than the answer kept (searched for 10).
        let count = |con: &mut Connection, n: &str| -> Vec<String> { query(con, &["AUTOCOMPLETE.HINT", "k", "a", "COUNT", n]) };
        assert_eq!(count(&mut con, "1"), ["almond"]);
        assert_eq!(count(&mut con, "3"), ["almond", "apricot", "avocado"]);
        assert_eq!(count(&mut con, "10"), ["almond", "apricot", "avocado"]);
        assert_eq!(count(&mut con, "1000"), ["almond", "apricot", "avocado"]);
        for n in 0..20 {
            assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", &format!("a{n:02}"), &n.to_string()]), 1);
        }
        // Weight descending, then content descending.
        let mut weighed: Vec<(f64, String)> = vec![(50.0, "almond".into()), (24.0, "apricot".into()), (13.0, "avocado".into())];
        weighed.extend((0..20).map(|n| (n as f64, format!("a{n:02}"))));
        weighed.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        let all: Vec<String> = weighed.into_iter().map(|(_, content)| content).collect();
        assert_eq!(all[7..10], ["a14", "avocado", "a13"]);
        assert_eq!(count(&mut con, "2"), all[..2]);
        assert_eq!(count(&mut con, "11"), all[..11], "more than the 10 kept");
        assert_eq!(count(&mut con, "10"), all[..10]);
        assert_eq!(count(&mut con, "64"), all);
        assert_eq!(count(&mut con, "65"), all, "more than any answer kept");
        assert_eq!(count(&mut con, "5"), all[..5]);
        // WITHWEIGHTS from a kept answer, RESP2 and RESP3.
        assert_eq!(count(&mut con, "2"), all[..2]);
        let pairs: Vec<(String, String)> = query(&mut con, &["AUTOCOMPLETE.HINT", "k", "a", "COUNT", "2", "WITHWEIGHTS"]);
        assert_eq!(pairs, [("almond".to_string(), "50".to_string()), ("apricot".to_string(), "24".to_string())]);
        let pairs = value(&mut con3, &["AUTOCOMPLETE.HINT", "k", "a", "COUNT", "2", "WITHWEIGHTS"]);
        let pair = |content: &str, weight: f64| Value::Array(vec![Value::BulkString(content.into()), Value::Double(weight)]);
        assert_eq!(pairs, Value::Array(vec![pair("almond", 50.0), pair("apricot", 24.0)]));
        // A copy answers the same, and its writes are its own.
        assert_eq!(int(&mut con, &["COPY", "k", "k2"]), 1);
        assert_eq!(count(&mut con, "2"), all[..2]);
        assert_eq!(query::<Vec<String>>(&mut con, &["AUTOCOMPLETE.HINT", "k2", "a", "COUNT", "2"]), all[..2]);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k2", "almond"]), 1);
        assert_eq!(query::<Vec<String>>(&mut con, &["AUTOCOMPLETE.HINT", "k2", "a", "COUNT", "2"]), all[1..3]);
        assert_eq!(count(&mut con, "2"), all[..2]);
        // recipes.autocomplete-hint-cache bounds the prefixes kept; 0 keeps
        // none and gives their memory back.
        harness::ok(&mut con, &["CONFIG", "SET", "recipes.autocomplete-hint-cache", "0"]);
        assert_eq!(count(&mut con, "2"), all[..2]);
        let none = usage(&mut con);
        assert_eq!(count(&mut con, "2"), all[..2]);
        assert_eq!(usage(&mut con), none, "nothing kept");
        harness::ok(&mut con, &["CONFIG", "SET", "recipes.autocomplete-hint-cache", "2"]);
        for prefix in ["a", "b", "c", "al", "ap", "a0", "a1"] {
            let _: Vec<String> = query(&mut con, &["AUTOCOMPLETE.HINT", "k", prefix]);
        }
        let two = usage(&mut con);
        // Two answers of 10 entries: the slots, their nodes, contents and
        // lengths (a slot keeps the blocks of the answers it held before).
        assert!(two > none && two < none + 1_536, "{two} bytes with two prefixes kept, {none} with none");
        harness::ok(&mut con, &["CONFIG", "SET", "recipes.autocomplete-hint-cache", "64"]);
        assert_eq!(count(&mut con, "3"), all[..3]);
        // Nothing of it is stored: RDB and DUMP are those of the entries.
        let stored = digest_value(&mut con, "k");
        let dump: Vec<u8> = redis::cmd("DUMP").arg("k").query(&mut con).unwrap();
        harness::ok(&mut con, &["CONFIG", "SET", "recipes.autocomplete-hint-cache", "0"]);
        let _: Vec<String> = query(&mut con, &["AUTOCOMPLETE.HINT", "k", "a"]);
        let bare_dump: Vec<u8> = redis::cmd("DUMP").arg("k").query(&mut con).unwrap();
        assert_eq!(dump, bare_dump);
        assert_eq!(digest_value(&mut con, "k"), stored);
    }

    fn kept_hints_outlive_writes_that_cannot_change_them(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for (content, weight) in [("apple", "5"), ("apricot", "4"), ("banana", "2"), ("cherry", "1")] {
            assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", content, weight]), 1);
        }
        for n in 0..12 {
            assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", &format!("c{n:02}"), "0"]), 1);
        }
        let searched = |con: &mut Connection| recipes_figures(con, "recipes")["autocomplete_hints_searched"];
        let top = |con: &mut Connection, prefix: &str| -> Vec<String> { query(con, &["AUTOCOMPLETE.HINT", "k", prefix, "COUNT", "2"]) };
        let base = searched(&mut con);
        // Searched once, then answered from what the key kept.
        assert_eq!(top(&mut con, "a"), ["apple", "apricot"]);
        assert_eq!(top(&mut con, "b"), ["banana"]);
        assert_eq!(top(&mut con, "c"), ["cherry", "c11"]);
        assert_eq!(searched(&mut con) - base, 3);
        assert_eq!(top(&mut con, "a"), ["apple", "apricot"]);
        assert_eq!(searched(&mut con) - base, 3);
        // Writes under other prefixes; a new entry, and a feed, below the
        // top 10 that "c" keeps: every answer stays.
        assert_eq!(feed(&mut con, &["k", "cherry", "1"]), "2");
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "c99", "-1"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", "k", "c00"]), 1);
        assert_eq!((top(&mut con, "a"), top(&mut con, "b")), (vec!["apple".to_string(), "apricot".into()], vec!["banana".to_string()]));
        assert_eq!(searched(&mut con) - base, 3, "no answer searched again");
        // A write into an answer ("b" held every entry under it, "c" gets
        // a new top): those are searched again, the others not.
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "blueberry", "0.5"]), 1);
        assert_eq!(feed(&mut con, &["k", "c05", "10"]), "10");
        assert_eq!(top(&mut con, "a"), ["apple", "apricot"]);
        assert_eq!(top(&mut con, "b"), ["banana", "blueberry"]);
        assert_eq!(top(&mut con, "c"), ["c05", "cherry"]);
        assert_eq!(searched(&mut con) - base, 5);
        // COUNT over 64 is never kept.
        assert_eq!(query::<Vec<String>>(&mut con, &["AUTOCOMPLETE.HINT", "k", "a", "COUNT", "65"]), ["apple", "apricot"]);
        assert_eq!(searched(&mut con) - base, 6);
    }

    fn kept_hints_lose_entries_as_they_fade_on_the_primary_and_its_replica(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let mut replica = pair.replica.con();
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "heavy", "100", "PX", "400"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "mid", "50"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "light", "10", "PX", "600000"]), 1);
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "k", "least", "1"]), 1);
        pair.sync();
        let top = |con: &mut Connection, count: &str| -> Vec<String> { query(con, &["AUTOCOMPLETE.HINT", "k", "", "COUNT", count]) };
        for (side, name) in [(&mut con, "primary"), (&mut replica, "replica")] {
            assert_eq!(top(side, "1"), ["heavy"], "{name}");
            assert_eq!(top(side, "10"), ["heavy", "mid", "light", "least"], "{name}");
            assert_eq!(hint_weights(side, "k", "")[0], ("heavy".to_string(), "100".to_string()), "{name}");
        }
        thread::sleep(Duration::from_millis(450));
        // No write since: each side's kept answer loses the faded entry.
        for (side, name) in [(&mut con, "primary"), (&mut replica, "replica")] {
            assert_eq!(top(side, "1"), ["mid"], "{name}");
            assert_eq!(top(side, "10"), ["mid", "light", "least"], "{name}");
            assert_eq!(top(side, "2"), ["mid", "light"], "{name}");
            assert_eq!(info(side, "k").0, 3, "{name}: still stored, not counted");
        }
        assert_eq!(faded_count(&mut con), 0);
        // The primary's next write removes it, and both answer the same.
        assert_eq!(feed(&mut con, &["k", "least", "100"]), "101");
        pair.sync();
        for (side, name) in [(&mut con, "primary"), (&mut replica, "replica")] {
            assert_eq!(top(side, "10"), ["least", "mid", "light"], "{name}");
        }
        assert_eq!(faded_count(&mut con), 1);
        assert_eq!(digest(&mut replica), digest(&mut con));
    }

    fn kept_hints_match_the_book_through_interleaved_writes(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut rng = StdRng::seed_from_u64(0xac_4ee7);
        let mut contents: Vec<String> = Vec::new();
        // A few hot prefixes, asked again and again between writes.
        let hot = ["", "a", "b", "中", "ab", "é", "a中", "😀"];
        let increments = ["1", "2", "0.5", "-1", "3.25"];
        let (mut hints, mut writes) = (0, 0);
        for step in 0..4_000 {
            let content = if !contents.is_empty() && rng.random_bool(0.5) {
                contents[rng.random_range(0..contents.len())].clone()
            } else {
                random_content(&mut rng)
            };
            let mut book = Book::new();
            match rng.random_range(0..20) {
                0..=11 => {
                    let prefix = if rng.random_bool(0.8) {
                        hot[rng.random_range(0..hot.len())].to_string()
                    } else {
                        content.chars().take(rng.random_range(0..4)).collect()
                    };
                    let count = [1, 2, 3, 10, 11, 64, 65][rng.random_range(0..7)];
                    let last = (count - 1).to_string();
                    let count = count.to_string();
                    let book_key = format!("book:{prefix}");
                    let (expected, got) = if rng.random_bool(0.3) {
                        (value(&mut con, &["ZRANGE", &book_key, "0", &last, "REV", "WITHSCORES"]),
                         value(&mut con, &["AUTOCOMPLETE.HINT", "k", &prefix, "COUNT", &count, "WITHWEIGHTS"]))
                    } else {
                        (value(&mut con, &["ZRANGE", &book_key, "0", &last, "REV"]),
                         value(&mut con, &["AUTOCOMPLETE.HINT", "k", &prefix, "COUNT", &count]))
                    };
                    assert_eq!(got, expected, "step {step}: prefix {prefix:?} COUNT {count}");
                    hints += 1;
                    continue;
                }
                12..=15 => {
                    let increment = increments[rng.random_range(0..increments.len())];
                    book.feed(&content, increment);
                    book.pipe.cmd("AUTOCOMPLETE.FEED").arg("k").arg(&content).arg(increment).ignore();
                }
                16..=17 => {
                    let weight = increments[rng.random_range(0..increments.len())];
                    book.set(&content, weight);
                    book.pipe.cmd("AUTOCOMPLETE.SET").arg("k").arg(&content).arg(weight).ignore();
                }
                18 => {
                    book.remove(&content);
                    book.pipe.cmd("AUTOCOMPLETE.REMOVE").arg("k").arg(&content).ignore();
                }
                _ => {
                    // Fewer prefixes kept than are hot, or none, for a while.
                    let keep = ["0", "1", "3", "64"][rng.random_range(0..4)];
                    harness::ok(&mut con, &["CONFIG", "SET", "recipes.autocomplete-hint-cache", keep]);
                    continue;
                }
            }
            let _: () = book.pipe.query(&mut con).unwrap();
            contents.push(content);
            writes += 1;
        }
        assert!(hints > 2_000 && writes > 1_000, "{hints} hints, {writes} writes");
        assert_eq!(card(&mut con, "k"), int(&mut con, &["ZCARD", "book:"]));
    }

    fn writes_fire_events_and_abort_watch(flavor) {
        let server = Server::start(flavor);
        let events = harness::keyspace_events(&server, 8, |con| {
            assert_eq!(feed(con, &["k", "a"]), "1");
            assert_eq!(int(con, &["AUTOCOMPLETE.SET", "k", "b", "2", "PX", "1"]), 1);
            assert_eq!(int(con, &["AUTOCOMPLETE.REMOVE", "k", "zz"]), 0); // nothing: no event
            let _: Value = query(con, &["AUTOCOMPLETE.HINT", "k", ""]); // a read: no event
            assert!(error(con, &cmd(&["AUTOCOMPLETE.FEED", "k", ""])).starts_with("ERR")); // an error: none
            thread::sleep(Duration::from_millis(5));
            assert_eq!(feed(con, &["k", "c"]), "1");
            assert_eq!(int(con, &["AUTOCOMPLETE.REMOVE", "k", "a"]), 1);
            assert_eq!(int(con, &["AUTOCOMPLETE.REMOVE", "k", "c"]), 1);
            assert_eq!(int(con, &["AUTOCOMPLETE.SET", "k", "d", "1"]), 1);
        });
        assert_eq!(
            events,
            [
                "k autocomplete.feed",
                "k autocomplete.set",
                "k autocomplete.fade",
                "k autocomplete.feed",
                "k autocomplete.remove",
                "k autocomplete.remove",
                "k del",
                "k autocomplete.set",
            ]
        );
        let mut con = server.con();
        let mut other = server.con();
        let _: () = cmd(&["WATCH", "k"]).query(&mut con).unwrap();
        let _: Value = query(&mut other, &["AUTOCOMPLETE.HINT", "k", ""]);
        let _: Value = query(&mut other, &["AUTOCOMPLETE.REMOVE", "k", "nothing"]);
        let mut transaction = redis::pipe();
        transaction.atomic().cmd("AUTOCOMPLETE.FEED").arg("k").arg("x");
        let done: Option<Vec<String>> = transaction.query(&mut con).unwrap();
        assert_eq!(done, Some(vec!["1".to_string()]), "a read and a no-op keep the WATCH");
        let _: () = cmd(&["WATCH", "k"]).query(&mut con).unwrap();
        assert_eq!(feed(&mut other, &["k", "x"]), "2");
        let aborted: Option<Vec<String>> = transaction.query(&mut con).unwrap();
        assert_eq!(aborted, None);
    }

    fn random_arguments_never_crash_and_errors_change_nothing(flavor) {
        let server = Server::start(flavor);
        let commands: &[&[u8]] = &[
            b"AUTOCOMPLETE.FEED", b"AUTOCOMPLETE.SET", b"AUTOCOMPLETE.HINT", b"AUTOCOMPLETE.REMOVE",
            b"AUTOCOMPLETE.WEIGHT", b"AUTOCOMPLETE.CARD", b"AUTOCOMPLETE.INFO", b"autocomplete.feed",
        ];
        let words: &[&[u8]] = &[
            b"ac", b"str", b"absent", b"a", b"ab", b"abc", "中".as_bytes(), b"\xe4\xb8", b"", b"\xff",
            b"PX", b"EX", b"PXAT", b"px", b"COUNT", b"WITHWEIGHTS", b"1", b"0", b"-1", b"1.5", b"1e308",
            b"-1e308", b"inf", b"nan", b"-0", b"5e-324", b"2147483647", b"2147483648", b"9223372036854775807",
        ];
        let setup = |con: &mut Connection| {
            let _: () = cmd(&["SET", "str", "x"]).query(con).unwrap();
            let _: Value = cmd(&["AUTOCOMPLETE.FEED", "ac", "abc", "1", "PX", "30"]).query(con).unwrap();
        };
        harness::fuzz(&server, 0xac01, 2_000, setup, |rng| harness::random_command(rng, commands, words, 6));
    }

    fn command_metadata_and_cluster_routing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let calls = [
            vec!["AUTOCOMPLETE.FEED", "k", "c", "1", "PX", "5"],
            vec!["AUTOCOMPLETE.SET", "k", "c", "1"],
            vec!["AUTOCOMPLETE.HINT", "k", "c", "COUNT", "5", "WITHWEIGHTS"],
            vec!["AUTOCOMPLETE.REMOVE", "k", "c", "d"],
            vec!["AUTOCOMPLETE.WEIGHT", "k", "c"],
            vec!["AUTOCOMPLETE.CARD", "k"],
            vec!["AUTOCOMPLETE.INFO", "k"],
        ];
        harness::check_keys_and_docs(&mut con, &calls, "k", "AUTOCOMPLETE.FEED", module_docs(
            "Adds to an entry's weight (creating it), optionally with a lifetime after which it fades; returns the new weight",
            "0.6.0",
            "O(log M) for M entries, plus O(log M) per faded entry removed",
            &[
                "- name=key type=key key_spec_index=0",
                "- name=content type=string",
                "- name=increment type=double flags=optional",
                "- name=lifetime type=oneof flags=optional",
                "  - name=milliseconds type=integer token=PX",
                "  - name=seconds type=integer token=EX",
                "  - name=unix-time-milliseconds type=integer token=PXAT",
            ],
        ));
        harness::check_keys_and_docs(&mut con, &calls[2..3], "k", "AUTOCOMPLETE.HINT", module_docs(
            "The heaviest entries starting with a prefix, weight descending",
            "0.6.0",
            "O((N + F) log M) for N entries returned, F faded entries passed over and M entries in the key; O(N) for a prefix whose answer the key keeps (hinted since its last write)",
            &[
                "- name=key type=key key_spec_index=0",
                "- name=prefix type=string",
                "- name=count type=integer token=COUNT flags=optional",
                "- name=withweights type=pure-token token=WITHWEIGHTS flags=optional",
            ],
        ));
        for (command, flags) in [
            ("autocomplete.feed", &["write", "denyoom", "fast"][..]),
            ("autocomplete.set", &["write", "denyoom", "fast"]),
            ("autocomplete.remove", &["write", "fast"]),
            ("autocomplete.hint", &["readonly", "fast"]),
            ("autocomplete.weight", &["readonly", "fast"]),
            ("autocomplete.card", &["readonly", "fast"]),
            ("autocomplete.info", &["readonly"]),
        ] {
            let got = harness::command_flags(&mut con, command);
            for flag in flags {
                assert!(got.iter().any(|f| f == flag), "{command}: {got:?} lacks {flag}");
            }
        }
        drop(con);
        drop(server);

        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        for n in 0..20 {
            let key = format!("suggest:{n}");
            let fed: String = query(&mut con, &["AUTOCOMPLETE.FEED", &key, "redis", "2"]);
            assert_eq!(fed, "2");
            assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", &key, "rust", "1"]), 1);
            let hints: Vec<String> = query(&mut con, &["AUTOCOMPLETE.HINT", &key, "r"]);
            assert_eq!(hints, ["redis", "rust"]);
            assert_eq!(int(&mut con, &["AUTOCOMPLETE.CARD", &key]), 2);
            assert_eq!(int(&mut con, &["AUTOCOMPLETE.REMOVE", &key, "redis", "rust"]), 2);
        }
        // A node that does not own the key's slot redirects every command.
        let key = "suggest:moved";
        let other = (cluster.owner(key) + 1) % 3;
        let mut node = cluster.nodes[other].con();
        for words in [
            vec!["AUTOCOMPLETE.FEED", key, "x"],
            vec!["AUTOCOMPLETE.SET", key, "x", "1"],
            vec!["AUTOCOMPLETE.HINT", key, "x"],
            vec!["AUTOCOMPLETE.REMOVE", key, "x"],
            vec!["AUTOCOMPLETE.WEIGHT", key, "x"],
            vec!["AUTOCOMPLETE.CARD", key],
            vec!["AUTOCOMPLETE.INFO", key],
        ] {
            assert_eq!(error(&mut node, &cmd(&words)), cluster.moved(key), "{words:?}");
        }
    }
}

/// A WEIGHT reply parsed.
fn weight_of(con: &mut Connection, key: &str, content: &str) -> Option<f64> {
    weight(con, key, content).map(|w| w.parse().unwrap())
}

/// Checks that `AUTOCOMPLETE.INFO`'s memory is the value's part of `MEMORY
/// USAGE` (which adds the key's name and the server's object for it).
fn assert_info_memory(con: &mut Connection, key: &str) {
    let usage = int(con, &["MEMORY", "USAGE", key]);
    let memory = info(con, key).1;
    assert!(
        memory <= usage && usage - memory < 256,
        "INFO memory {memory}, MEMORY USAGE {usage}"
    );
}

/// How the server formats a double reply (as `ZSCORE` gives it, RESP2):
/// `%.17g` on Redis 7.0, the shortest text that reads back on later servers.
fn formatted(con: &mut Connection, weight: &str) -> String {
    let _: i64 = query(con, &["ZADD", "formatted:scratch", weight, "m"]);
    let text: String = query(con, &["ZSCORE", "formatted:scratch", "m"]);
    let _: i64 = query(con, &["DEL", "formatted:scratch"]);
    text
}

/// A reply's text (bulk or simple string).
fn text(value: &Value) -> String {
    harness::text(value)
}

/// Everything the AOF files of a server directory hold, as text.
fn aof_text(dir: &std::path::Path) -> String {
    let mut files = vec![];
    for entry in std::fs::read_dir(dir).unwrap().chain(
        std::fs::read_dir(dir.join("appendonlydir"))
            .into_iter()
            .flatten(),
    ) {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains(".aof") && path.is_file() {
            files.push(String::from_utf8_lossy(&std::fs::read(path).unwrap()).to_uppercase());
        }
    }
    files.join("\n")
}
