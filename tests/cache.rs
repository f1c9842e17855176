//! CACHE on real servers: the seed recipes (plain SET/GET where the built-ins
//! suffice), JSON checked, minified and projected, hashes written with their
//! TTL, expiry, every error, replication and AOF.

use crate::harness;

use harness::{
    arity, cmd, command_docs, digest, error, int, module_docs, ok, pttl, query, value, wait_until,
    Connection, Server, Value, SYNTAX, WRONGTYPE,
};

const USER: &str = r#"{"id":10086,"name":"Peter","gender":"male","age":56}"#;

fn text(con: &mut Connection, words: &[&str]) -> Option<String> {
    query::<Option<Vec<u8>>>(con, words).map(|bytes| String::from_utf8(bytes).unwrap())
}

server_tests! {
    fn seed_recipes(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // A rendered page: the built-ins are the recipe.
        let page = "<html><body><h1>Hello</h1>\n<p>rendered at 10:00</p></body></html>";
        let _: () = cmd(&["SET", "page:/home", page, "EX", "60"]).query(&mut con).unwrap();
        for _ in 0..5 {
            assert_eq!(text(&mut con, &["GET", "page:/home"]).as_deref(), Some(page));
        }
        assert!((59_000..=60_000).contains(&pttl(&mut con, "page:/home")));
        // A user as JSON…
        ok(&mut con, &["CACHE.SETJSON", "user:10086", USER, "EX", "60"]);
        assert_eq!(text(&mut con, &["CACHE.GETJSON", "user:10086"]).as_deref(), Some(USER));
        assert_eq!(text(&mut con, &["GET", "user:10086"]).as_deref(), Some(USER));
        assert_eq!(
            text(&mut con, &["CACHE.GETJSON", "user:10086", "FIELD", "name", "age", "missing"]).as_deref(),
            Some(r#"{"name":"Peter","age":56}"#)
        );
        assert!((59_000..=60_000).contains(&pttl(&mut con, "user:10086")));
        // …and as a hash, with its TTL in the same command.
        assert_eq!(int(&mut con, &["CACHE.HSET", "user:10086:h", "EX", "60", "id", "10086", "name", "Peter", "gender", "male", "age", "56"]), 4);
        let fields: Vec<String> = cmd(&["HGETALL", "user:10086:h"]).query(&mut con).unwrap();
        assert_eq!(fields, ["id", "10086", "name", "Peter", "gender", "male", "age", "56"]);
        assert!((59_000..=60_000).contains(&pttl(&mut con, "user:10086:h")));
        // A binary file, byte-exact, with the built-ins.
        let mut file = b"\x89PNG\r\n\x1a\n".to_vec();
        file.extend(0..=255u8);
        let _: () = redis::cmd("SET").arg("file:logo").arg(&file).arg("EX").arg(60).query(&mut con).unwrap();
        assert_eq!(query::<Option<Vec<u8>>>(&mut con, &["GET", "file:logo"]), Some(file));
        assert_eq!(text(&mut con, &["CACHE.GETJSON", "absent"]), None);
    }

    fn json_is_checked_minified_and_kept_exactly(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let document = "{ \"z\" : 1,\n \"big\": 123456789012345678901234567890.000, \"small\": 1e-400,\n \"text\": \"caf\u{e9} \\u65e5\u{672c} \\\"q\\\" \u{1F600}\", \"a\": [ true, null, -0 ] }";
        ok(&mut con, &["CACHE.SETJSON", "doc", document]);
        let stored = text(&mut con, &["GET", "doc"]).unwrap();
        assert_eq!(
            stored,
            "{\"z\":1,\"big\":123456789012345678901234567890.000,\"small\":1e-400,\"text\":\"caf\u{e9} \u{65e5}\u{672c} \\\"q\\\" \u{1F600}\",\"a\":[true,null,-0]}"
        );
        assert_eq!(pttl(&mut con, "doc"), -1);
        // Projection keeps the order asked for and the values as written.
        assert_eq!(
            text(&mut con, &["CACHE.GETJSON", "doc", "field", "text", "big"]).as_deref(),
            Some("{\"text\":\"caf\u{e9} \u{65e5}\u{672c} \\\"q\\\" \u{1F600}\",\"big\":123456789012345678901234567890.000}")
        );
        // Any JSON value may be stored; only objects can be projected.
        ok(&mut con, &["CACHE.SETJSON", "list", "[1, 2]"]);
        assert_eq!(text(&mut con, &["CACHE.GETJSON", "list"]).as_deref(), Some("[1,2]"));
        let got = error(&mut con, &cmd(&["CACHE.GETJSON", "list", "FIELD", "a"]));
        assert_eq!(got, "ERR the value is not a JSON object");
    }

    fn nx_xx_and_ttl_behave_like_set(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["CACHE.SETJSON", "k", "1", "XX"]), Value::Nil);
        assert_eq!(int(&mut con, &["EXISTS", "k"]), 0);
        ok(&mut con, &["CACHE.SETJSON", "k", "1", "NX", "PX", "60000"]);
        assert_eq!(value(&mut con, &["CACHE.SETJSON", "k", "2", "nx"]), Value::Nil);
        assert_eq!(text(&mut con, &["GET", "k"]).as_deref(), Some("1"));
        // XX replaces the value and, like SET, drops the old TTL.
        ok(&mut con, &["CACHE.SETJSON", "k", "2", "XX"]);
        assert_eq!(text(&mut con, &["GET", "k"]).as_deref(), Some("2"));
        assert_eq!(pttl(&mut con, "k"), -1);
        // Like SET, it replaces a value of another type.
        let _: i64 = cmd(&["RPUSH", "l", "x"]).query(&mut con).unwrap();
        ok(&mut con, &["CACHE.SETJSON", "l", "{}", "EX", "100"]);
        assert_eq!(text(&mut con, &["GET", "l"]).as_deref(), Some("{}"));
        // Expiry.
        ok(&mut con, &["CACHE.SETJSON", "short", "true", "PX", "50"]);
        assert_eq!(int(&mut con, &["CACHE.HSET", "shorth", "PX", "50", "f", "v"]), 1);
        wait_until("the short entries expired", || int(&mut con, &["EXISTS", "short", "shorth"]) == 0);
    }

    fn cache_hset_counts_like_hset_and_resets_the_ttl(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["CACHE.HSET", "h", "EX", "100", "a", "1", "b", "2"]), 2);
        assert!((99_000..=100_000).contains(&pttl(&mut con, "h")));
        // Existing fields are replaced, not counted; a repeated field counts once.
        assert_eq!(int(&mut con, &["CACHE.HSET", "h", "px", "5000", "a", "9", "c", "3", "c", "4"]), 1);
        let fields: Vec<String> = cmd(&["HGETALL", "h"]).query(&mut con).unwrap();
        assert_eq!(fields, ["a", "9", "b", "2", "c", "4"]);
        assert!((4_000..=5_000).contains(&pttl(&mut con, "h")));
        assert_eq!(int(&mut con, &["HSET", "h2", "a", "1", "a", "2"]), int(&mut con, &["CACHE.HSET", "h3", "EX", "9", "a", "1", "a", "2"]));
    }

    fn every_error_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: i64 = cmd(&["RPUSH", "list", "x"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "text", "not json"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "json", "{\"a\":1}", "EX", "1000"]).query(&mut con).unwrap();
        let snapshot = digest(&mut con);
        let cases: Vec<(Vec<&str>, String)> = vec![
            (vec!["CACHE.SETJSON", "json", "{\"a\": [1, 2,, 3]}"], "BADJSON invalid JSON: expected value at line 1 column 13".into()),
            (vec!["CACHE.SETJSON", "json", "{\"a\":1"], "BADJSON invalid JSON: EOF while parsing an object at line 1 column 6".into()),
            (vec!["CACHE.SETJSON", "json", "{\"a\":1}\n}"], "BADJSON invalid JSON: trailing characters at line 2 column 1".into()),
            (vec!["CACHE.SETJSON", "json", ""], "BADJSON invalid JSON: EOF while parsing a value at line 1 column 0".into()),
            (vec!["CACHE.SETJSON", "json", "1", "EX", "0"], "ERR invalid expire time in 'cache.setjson' command".into()),
            (vec!["CACHE.SETJSON", "json", "1", "PX", "-1"], "ERR invalid expire time in 'cache.setjson' command".into()),
            (vec!["CACHE.SETJSON", "json", "1", "EX", "ten"], "ERR value is not an integer or out of range".into()),
            (vec!["CACHE.SETJSON", "json", "1", "EX", "1", "PX", "1"], SYNTAX.into()),
            (vec!["CACHE.SETJSON", "json", "1", "NX", "XX"], SYNTAX.into()),
            (vec!["CACHE.SETJSON", "json", "1", "NX", "NX"], SYNTAX.into()),
            (vec!["CACHE.SETJSON", "json", "1", "KEEPTTL"], SYNTAX.into()),
            (vec!["CACHE.SETJSON", "json"], arity("cache.setjson")),
            (vec!["CACHE.GETJSON", "list"], WRONGTYPE.into()),
            (vec!["CACHE.GETJSON", "text"], "ERR the value is not JSON".into()),
            (vec!["CACHE.GETJSON", "text", "FIELD", "a"], "ERR the value is not JSON".into()),
            (vec!["CACHE.GETJSON", "json", "FIELD"], SYNTAX.into()),
            (vec!["CACHE.GETJSON", "json", "FIELDS", "a"], SYNTAX.into()),
            (vec!["CACHE.GETJSON"], arity("cache.getjson")),
            (vec!["CACHE.HSET", "list", "EX", "10", "f", "v"], WRONGTYPE.into()),
            (vec!["CACHE.HSET", "text", "EX", "10", "f", "v"], WRONGTYPE.into()),
            (vec!["CACHE.HSET", "h", "EX", "10", "f", "v", "g"], arity("cache.hset")),
            (vec!["CACHE.HSET", "h", "EX", "10", "f"], arity("cache.hset")),
            (vec!["CACHE.HSET", "h", "TTL", "10", "f", "v"], SYNTAX.into()),
            (vec!["CACHE.HSET", "h", "f", "v", "g", "w"], SYNTAX.into()),
            (vec!["CACHE.HSET", "h", "EX", "10", "PX", "10", "f", "v"], SYNTAX.into()),
            (vec!["CACHE.HSET", "h", "PX", "10", "ex", "10"], SYNTAX.into()),
            (vec!["CACHE.HSET", "h", "EX", "0", "f", "v"], "ERR invalid expire time in 'cache.hset' command".into()),
            (vec!["CACHE.HSET", "h", "PX", "9223372036854775807", "f", "v"], "ERR invalid expire time in 'cache.hset' command".into()),
            (vec!["CACHE.HSET", "h", "PX", "1.5", "f", "v"], "ERR value is not an integer or out of range".into()),
        ];
        for (words, expected) in &cases {
            assert_eq!(&error(&mut con, &cmd(words)), expected, "{words:?}");
        }
        assert_eq!(digest(&mut con), snapshot);
    }

    fn random_arguments_never_crash_and_errors_change_nothing(flavor) {
        let server = Server::start(flavor);
        let commands: &[&[u8]] = &[b"CACHE.SETJSON", b"CACHE.GETJSON", b"CACHE.HSET", b"cache.hset"];
        let words: &[&[u8]] = &[
            b"k", b"list", b"text", b"h", b"EX", b"PX", b"NX", b"XX", b"FIELD", b"60", b"0", b"-1",
            b"{\"a\":1}", b"[1,", b"\xff", b"", b"9223372036854775807", b"a", b"null",
        ];
        let setup = |con: &mut Connection| {
            let _: i64 = cmd(&["RPUSH", "list", "x"]).query(con).unwrap();
            let _: () = cmd(&["SET", "text", "{\"a\":[1,2]}"]).query(con).unwrap();
        };
        harness::fuzz(&server, 0xcac4e, 2_000, setup, |rng| harness::random_command(rng, commands, words, 7));
    }

    fn replica_and_aof_hold_exactly_the_primary_data(flavor) {
        harness::replica_converges(flavor, |_, con| cache_workload(con));
        harness::aof_round_trip(flavor, |_, con| cache_workload(con));
    }

    fn command_metadata_is_complete(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for words in [
            vec!["CACHE.SETJSON", "k", "{}", "EX", "5", "NX"],
            vec!["CACHE.GETJSON", "k", "FIELD", "a", "b"],
            vec!["CACHE.HSET", "k", "EX", "5", "f", "v"],
        ] {
            assert_eq!(harness::getkeys(&mut con, &words), ["k"], "{words:?}");
        }
        assert_eq!(
            command_docs(&mut con, "CACHE.HSET"),
            module_docs(
                "Sets hash fields and the key's TTL in one step; returns the number of fields added",
                "0.1.0",
                "O(N) where N is the number of fields",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=expiration type=oneof",
                    "  - name=seconds type=integer token=EX",
                    "  - name=milliseconds type=integer token=PX",
                    "- name=data type=block flags=multiple",
                    "  - name=field type=string",
                    "  - name=value type=string",
                ],
            )
        );
        assert_eq!(
            command_docs(&mut con, "CACHE.SETJSON"),
            module_docs(
                "Stores a JSON document (checked, minified) as a string, with SET's EX/PX and NX/XX",
                "0.1.0",
                "O(N) where N is the size of the document",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=json type=string",
                    "- name=expiration type=oneof flags=optional",
                    "  - name=seconds type=integer token=EX",
                    "  - name=milliseconds type=integer token=PX",
                    "- name=condition type=oneof flags=optional",
                    "  - name=nx type=pure-token token=NX",
                    "  - name=xx type=pure-token token=XX",
                ],
            )
        );
    }
}

/// Every CACHE write, with and without TTLs; returns the keys it touched.
fn cache_workload(con: &mut Connection) -> Vec<String> {
    ok(con, &["CACHE.SETJSON", "c:user", USER, "EX", "600"]);
    ok(con, &["CACHE.SETJSON", "c:forever", "[1, 2.50, \"x\"]"]);
    ok(con, &["CACHE.SETJSON", "c:forever", "{\"b\": 2}", "XX"]);
    ok(
        con,
        &[
            "CACHE.SETJSON",
            "c:ms",
            "123456789012345678901234567890",
            "PX",
            "700000",
        ],
    );
    assert_eq!(
        int(
            con,
            &[
                "CACHE.HSET",
                "c:hash",
                "EX",
                "600",
                "id",
                "10086",
                "name",
                "Peter"
            ]
        ),
        2
    );
    assert_eq!(
        int(
            con,
            &[
                "CACHE.HSET",
                "c:hash",
                "PX",
                "900000",
                "name",
                "Paul",
                "age",
                "56"
            ]
        ),
        1
    );
    ["c:user", "c:forever", "c:ms", "c:hash"]
        .iter()
        .map(|k| k.to_string())
        .collect()
}
