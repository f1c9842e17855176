//! ARTICLE on real servers: the seed transcript, RESP2/RESP3/JSON replies,
//! slug races and moves, nothing created by a miss, every error, replication,
//! AOF, command metadata and cluster routing.

use crate::harness;

use std::sync::{Arc, Barrier};
use std::thread;

use harness::{
    arity, cmd, command_docs, digest, error, int, module_docs, server_ms, text, value, Cluster,
    Connection, Server, Value, CROSSSLOT, SYNTAX, WRONGTYPE,
};

/// `ARTICLE.GET` (RESP2) as field/value pairs, in reply order.
fn article(con: &mut Connection, key: &str) -> Option<Vec<(String, String)>> {
    match value(con, &["ARTICLE.GET", key]) {
        Value::Nil => None,
        Value::Array(items) => Some(
            items
                .chunks(2)
                .map(|pair| (text(&pair[0]), text(&pair[1])))
                .collect(),
        ),
        other => panic!("unexpected reply {other:?}"),
    }
}

fn field(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(f, _)| f == name)
        .map(|(_, v)| v.clone())
}

server_tests! {
    fn seed_transcript(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let before = server_ms(&mut con);
        assert_eq!(int(&mut con, &["ARTICLE.CREATE", "article:10086", "message", "hello world", "peter"]), 1);
        let after = server_ms(&mut con);
        let got = article(&mut con, "article:10086").unwrap();
        let names: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(names, ["title", "content", "author", "created_at"]);
        assert_eq!(field(&got, "title").as_deref(), Some("message"));
        assert_eq!(field(&got, "content").as_deref(), Some("hello world"));
        assert_eq!(field(&got, "author").as_deref(), Some("peter"));
        let created: i64 = field(&got, "created_at").unwrap().parse().unwrap();
        assert!((before..=after).contains(&created), "created_at {created} is the server's clock");
        let before = server_ms(&mut con);
        assert_eq!(int(&mut con, &["ARTICLE.UPDATE", "article:10086", "AUTHOR", "john"]), 1);
        let after = server_ms(&mut con);
        let got = article(&mut con, "article:10086").unwrap();
        assert_eq!(field(&got, "author").as_deref(), Some("john"));
        assert_eq!(field(&got, "title").as_deref(), Some("message"));
        let updated: i64 = field(&got, "updated_at").unwrap().parse().unwrap();
        assert!((before..=after).contains(&updated), "updated_at {updated} is the server's clock");
        // Creating it again changes nothing.
        let snapshot = digest(&mut con);
        assert_eq!(int(&mut con, &["ARTICLE.CREATE", "article:10086", "other", "text", "mallory"]), 0);
        assert_eq!(digest(&mut con), snapshot);
        // It is a plain hash to the built-ins.
        let author: String = cmd(&["HGET", "article:10086", "author"]).query(&mut con).unwrap();
        assert_eq!(author, "john");
        assert_eq!(value(&mut con, &["ARTICLE.GET", "absent"]), Value::Nil);
        assert_eq!(value(&mut con, &["ARTICLE.GET", "absent", "JSON"]), Value::Nil);
    }

    fn a_hangul_slug_taken_twice_is_quoted_and_the_server_lives(flavor) {
        // `가` (U+AC00) once became a NUL byte in the error line and aborted
        // the server; any code point that is a multiple of 256 did.
        let server = Server::start(flavor);
        let mut con = server.con();
        for (n, slug) in ["가", "一", "Ā", "café", "日本語-1"].into_iter().enumerate() {
            let (first, second) = (format!("{{a}}{n}a"), format!("{{a}}{n}b"));
            assert_eq!(int(&mut con, &["ARTICLE.CREATE", &first, "t", "c", "au", "SLUG", "{a}idx", slug]), 1);
            let taken = format!("SLUGTAKEN slug '{slug}' belongs to another article");
            let before = digest(&mut con);
            let create = cmd(&["ARTICLE.CREATE", &second, "t", "c", "au", "SLUG", "{a}idx", slug]);
            assert_eq!(error(&mut con, &create), taken);
            assert_eq!(before, digest(&mut con), "a refused create changed data");
            assert_eq!(int(&mut con, &["ARTICLE.CREATE", &second, "t", "c", "au"]), 1);
            let before = digest(&mut con);
            assert_eq!(error(&mut con, &cmd(&["ARTICLE.SETSLUG", &second, "{a}idx", slug])), taken);
            assert_eq!(before, digest(&mut con), "a refused SETSLUG changed data");
            let pong: String = cmd(&["PING"]).query(&mut con).unwrap();
            assert_eq!(pong, "PONG");
        }
        assert!(!server.log().contains("panic"), "{}", server.log());
    }

    fn resp3_gets_a_map(flavor) {
        let server = Server::start(flavor);
        let client = redis::Client::open(format!("{}?protocol=resp3", server.url())).unwrap();
        let mut con = client.get_connection().unwrap();
        assert_eq!(int(&mut con, &["ARTICLE.CREATE", "a", "t", "c", "au"]), 1);
        match value(&mut con, &["ARTICLE.GET", "a"]) {
            Value::Map(pairs) => {
                let names: Vec<String> = pairs.iter().map(|(k, _)| text(k)).collect();
                assert_eq!(names, ["title", "content", "author", "created_at"]);
                assert_eq!(text(&pairs[0].1), "t");
            }
            other => panic!("expected a map, got {other:?}"),
        }
        assert_eq!(value(&mut con, &["ARTICLE.GET", "absent"]), Value::Nil);
    }

    fn json_round_trips_hostile_text(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let title = "\"quoted\" \\ back\nslash\r\n\t\u{0} nul";
        let content: &[u8] = b"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 and bad \xff\xfe bytes";
        let created: i64 = redis::cmd("ARTICLE.CREATE")
            .arg("a").arg(title).arg(content).arg("</script>")
            .query(&mut con)
            .unwrap();
        assert_eq!(created, 1);
        assert_eq!(int(&mut con, &["ARTICLE.VIEW", "a"]), 1);
        assert_eq!(int(&mut con, &["ARTICLE.VIEW", "a"]), 2);
        let json: Vec<u8> = cmd(&["ARTICLE.GET", "a", "json"]).query(&mut con).unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
        assert_eq!(parsed["title"], title);
        assert_eq!(parsed["content"], "café 日本 😀 and bad \u{fffd}\u{fffd} bytes");
        assert_eq!(parsed["author"], "</script>");
        assert_eq!(parsed["views"], 2);
        assert!(parsed["created_at"].is_i64(), "{parsed}");
        assert_eq!(parsed.as_object().unwrap().len(), 5);
    }

    fn racing_creates_for_one_slug_have_one_winner(flavor) {
        const CLIENTS: usize = 16;
        let server = Server::start(flavor);
        let start = Arc::new(Barrier::new(CLIENTS));
        let racers: Vec<_> = (0..CLIENTS)
            .map(|n| {
                let mut con = server.con();
                let start = start.clone();
                thread::spawn(move || {
                    let key = format!("{{blog}}:article:{n}");
                    start.wait();
                    match cmd(&["ARTICLE.CREATE", &key, "title", "body", "me", "SLUG", "{blog}:slugs", "hello-world"]).query::<i64>(&mut con) {
                        Ok(1) => Ok(key),
                        Ok(other) => panic!("unexpected {other}"),
                        Err(e) => Err(e.code().unwrap_or("").to_string()),
                    }
                })
            })
            .collect();
        let outcomes: Vec<Result<String, String>> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        let winners: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "{outcomes:?}");
        assert!(outcomes.iter().filter_map(|o| o.as_ref().err()).all(|code| code == "SLUGTAKEN"), "{outcomes:?}");
        let mut con = server.con();
        // No orphan article, no stray mapping.
        let mut keys: Vec<String> = cmd(&["KEYS", "*"]).query(&mut con).unwrap();
        keys.sort();
        let mut expected = vec!["{blog}:slugs".to_string(), winners[0].clone()];
        expected.sort();
        assert_eq!(keys, expected);
        let index: Vec<String> = cmd(&["HGETALL", "{blog}:slugs"]).query(&mut con).unwrap();
        assert_eq!(index, ["hello-world".to_string(), winners[0].clone()]);
        let by_slug: String = cmd(&["ARTICLE.BYSLUG", "{blog}:slugs", "hello-world"]).query(&mut con).unwrap();
        assert_eq!(&by_slug, winners[0]);
        let got = article(&mut con, winners[0]).unwrap();
        assert_eq!(field(&got, "slug").as_deref(), Some("hello-world"));
    }

    fn slugs_move_swap_and_are_freed(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let slug_of = |con: &mut Connection, key: &str| field(&article(con, key).unwrap(), "slug");
        let owner = |con: &mut Connection, slug: &str| -> Option<String> {
            cmd(&["ARTICLE.BYSLUG", "{b}s", slug]).query(con).unwrap()
        };
        assert_eq!(int(&mut con, &["ARTICLE.CREATE", "{b}a", "A", "x", "me", "SLUG", "{b}s", "first"]), 1);
        assert_eq!(int(&mut con, &["ARTICLE.CREATE", "{b}b", "B", "x", "me", "SLUG", "{b}s", "second"]), 1);
        // Taking a held slug fails and changes nothing.
        let snapshot = digest(&mut con);
        let got = error(&mut con, &cmd(&["ARTICLE.SETSLUG", "{b}a", "{b}s", "second"]));
        assert_eq!(got, "SLUGTAKEN slug 'second' belongs to another article");
        assert_eq!(digest(&mut con), snapshot);
        // The slug it already has: 1, no change.
        assert_eq!(int(&mut con, &["ARTICLE.SETSLUG", "{b}a", "{b}s", "first"]), 1);
        assert_eq!(digest(&mut con), snapshot);
        // Swap through a spare slug.
        assert_eq!(int(&mut con, &["ARTICLE.SETSLUG", "{b}a", "{b}s", "spare"]), 1);
        assert_eq!(owner(&mut con, "first"), None);
        assert_eq!(int(&mut con, &["ARTICLE.SETSLUG", "{b}b", "{b}s", "first"]), 1);
        assert_eq!(int(&mut con, &["ARTICLE.SETSLUG", "{b}a", "{b}s", "second"]), 1);
        assert_eq!(slug_of(&mut con, "{b}a").as_deref(), Some("second"));
        assert_eq!(slug_of(&mut con, "{b}b").as_deref(), Some("first"));
        assert_eq!(owner(&mut con, "second").as_deref(), Some("{b}a"));
        assert_eq!(owner(&mut con, "first").as_deref(), Some("{b}b"));
        assert_eq!(owner(&mut con, "spare"), None);
        assert_eq!(int(&mut con, &["HLEN", "{b}s"]), 2);
        // SETSLUG on a missing article creates nothing.
        assert_eq!(int(&mut con, &["ARTICLE.SETSLUG", "{b}none", "{b}s", "third"]), 0);
        assert_eq!(owner(&mut con, "third"), None);
        // DELETE frees the slug for another article.
        assert_eq!(int(&mut con, &["ARTICLE.DELETE", "{b}a", "SLUG", "{b}s"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "{b}a"]), 0);
        assert_eq!(owner(&mut con, "second"), None);
        assert_eq!(int(&mut con, &["ARTICLE.DELETE", "{b}a", "SLUG", "{b}s"]), 0);
        assert_eq!(int(&mut con, &["ARTICLE.CREATE", "{b}c", "C", "x", "me", "SLUG", "{b}s", "second"]), 1);
        // Deleting the last article with a slug removes the emptied index.
        assert_eq!(int(&mut con, &["ARTICLE.DELETE", "{b}b", "SLUG", "{b}s"]), 1);
        assert_eq!(int(&mut con, &["ARTICLE.DELETE", "{b}c", "slug", "{b}s"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "{b}s"]), 0);
        // A Unicode slug.
        assert_eq!(int(&mut con, &["ARTICLE.CREATE", "{b}d", "D", "x", "me", "SLUG", "{b}s", "café_日本-2"]), 1);
        assert_eq!(owner(&mut con, "café_日本-2").as_deref(), Some("{b}d"));
    }

    fn misses_create_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let snapshot = digest(&mut con);
        assert_eq!(int(&mut con, &["ARTICLE.UPDATE", "none", "TITLE", "t"]), 0);
        assert_eq!(value(&mut con, &["ARTICLE.VIEW", "none"]), Value::Nil);
        assert_eq!(int(&mut con, &["ARTICLE.DELETE", "none", "SLUG", "idx"]), 0);
        assert_eq!(int(&mut con, &["ARTICLE.SETSLUG", "none", "idx", "s"]), 0);
        assert_eq!(value(&mut con, &["ARTICLE.BYSLUG", "idx", "s"]), Value::Nil);
        assert_eq!(int(&mut con, &["DBSIZE"]), 0);
        assert_eq!(digest(&mut con), snapshot);
    }

    fn every_error_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: () = cmd(&["SET", "str", "x"]).query(&mut con).unwrap();
        let _: () = cmd(&["HSET", "art", "title", "t", "views", "lots"]).query(&mut con).unwrap();
        let _: () = cmd(&["HSET", "top", "title", "t", "views", "9223372036854775807"]).query(&mut con).unwrap();
        let _: () = cmd(&["HSET", "idx", "taken", "other"]).query(&mut con).unwrap();
        let snapshot = digest(&mut con);
        let bad_slug = "BADSLUG invalid slug: use 1 to 200 Unicode letters, digits, '-' or '_'";
        // A read takes any slug a write may ever have stored (the setting's
        // highest value), whatever `recipes.article-slug-max-chars` is now.
        let bad_read_slug = "BADSLUG invalid slug: use 1 to 4096 Unicode letters, digits, '-' or '_'";
        let same = "ERR the slug index must be another key than the article";
        let long = "x".repeat(201);
        let cases: Vec<(Vec<&str>, String)> = vec![
            (vec!["ARTICLE.CREATE", "str", "t", "c", "a"], WRONGTYPE.into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "SLUG", "str", "s"], WRONGTYPE.into()),
            (vec!["ARTICLE.GET", "str"], WRONGTYPE.into()),
            (vec!["ARTICLE.UPDATE", "str", "TITLE", "t"], WRONGTYPE.into()),
            (vec!["ARTICLE.SETSLUG", "str", "idx", "s"], WRONGTYPE.into()),
            (vec!["ARTICLE.SETSLUG", "art", "str", "s"], WRONGTYPE.into()),
            (vec!["ARTICLE.BYSLUG", "str", "s"], WRONGTYPE.into()),
            (vec!["ARTICLE.VIEW", "str"], WRONGTYPE.into()),
            (vec!["ARTICLE.DELETE", "str"], WRONGTYPE.into()),
            (vec!["ARTICLE.DELETE", "art", "SLUG", "str"], WRONGTYPE.into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "SLUG", "idx", "taken"], "SLUGTAKEN slug 'taken' belongs to another article".into()),
            (vec!["ARTICLE.SETSLUG", "art", "idx", "taken"], "SLUGTAKEN slug 'taken' belongs to another article".into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "SLUG", "idx", ""], bad_slug.into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "SLUG", "idx", "a b"], bad_slug.into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "SLUG", "idx", &long], bad_slug.into()),
            (vec!["ARTICLE.SETSLUG", "art", "idx", "a.b"], bad_slug.into()),
            (vec!["ARTICLE.BYSLUG", "idx", "a/b"], bad_read_slug.into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "SLUG", "new", "s"], same.into()),
            (vec!["ARTICLE.SETSLUG", "art", "art", "s"], same.into()),
            (vec!["ARTICLE.DELETE", "art", "SLUG", "art"], same.into()),
            (vec!["ARTICLE.VIEW", "art"], "ERR hash value is not an integer".into()),
            (vec!["ARTICLE.VIEW", "top"], "ERR increment or decrement would overflow".into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "SLUG", "idx"], SYNTAX.into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "SLUG", "idx", "s", "SLUG", "idx", "s"], SYNTAX.into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c", "a", "EX", "10"], SYNTAX.into()),
            (vec!["ARTICLE.GET", "art", "XML"], SYNTAX.into()),
            (vec!["ARTICLE.GET", "art", "JSON", "JSON"], SYNTAX.into()),
            (vec!["ARTICLE.UPDATE", "art", "TITLE"], arity("article.update")),
            (vec!["ARTICLE.UPDATE", "art", "TITLE", "a", "AUTHOR"], SYNTAX.into()),
            (vec!["ARTICLE.UPDATE", "art", "TITLE", "a", "title", "b"], SYNTAX.into()),
            (vec!["ARTICLE.UPDATE", "art", "SLUG", "x"], SYNTAX.into()),
            (vec!["ARTICLE.DELETE", "art", "SLUG"], SYNTAX.into()),
            (vec!["ARTICLE.CREATE", "new", "t", "c"], arity("article.create")),
            (vec!["ARTICLE.GET"], arity("article.get")),
            (vec!["ARTICLE.UPDATE", "art"], arity("article.update")),
            (vec!["ARTICLE.SETSLUG", "art", "idx"], arity("article.setslug")),
            (vec!["ARTICLE.BYSLUG", "idx"], arity("article.byslug")),
            (vec!["ARTICLE.VIEW", "art", "x"], arity("article.view")),
            (vec!["ARTICLE.DELETE"], arity("article.delete")),
        ];
        for (words, expected) in &cases {
            assert_eq!(&error(&mut con, &cmd(words)), expected, "{words:?}");
        }
        // Invalid UTF-8 in a slug.
        let got = error(&mut con, redis::cmd("ARTICLE.BYSLUG").arg("idx").arg(&b"\xff"[..]));
        assert_eq!(got, bad_read_slug);
        assert_eq!(digest(&mut con), snapshot);
    }

    fn random_arguments_never_crash_and_errors_change_nothing(flavor) {
        let server = Server::start(flavor);
        let commands: &[&[u8]] = &[
            b"ARTICLE.CREATE", b"ARTICLE.GET", b"ARTICLE.UPDATE", b"ARTICLE.SETSLUG",
            b"ARTICLE.BYSLUG", b"ARTICLE.VIEW", b"ARTICLE.DELETE", b"article.create",
        ];
        let words: &[&[u8]] = &[
            b"art", b"idx", b"str", b"absent", b"SLUG", b"slug", b"JSON", b"TITLE", b"CONTENT",
            b"AUTHOR", b"taken", b"fresh", b"", b"a b", b"\xff", b"\xc3\xa9t\xc3\xa9", b"-_-", b"0",
        ];
        let setup = |con: &mut Connection| {
            let _: () = cmd(&["SET", "str", "x"]).query(con).unwrap();
            let _: () = cmd(&["HSET", "idx", "taken", "other"]).query(con).unwrap();
        };
        harness::fuzz(&server, 0xa271, 2_000, setup, |rng| harness::random_command(rng, commands, words, 8));
    }

    fn replica_and_aof_hold_exactly_the_primary_data(flavor) {
        harness::replica_converges(flavor, |_, con| article_workload(con));
        let server = harness::aof_round_trip(flavor, |_, con| article_workload(con));
        let mut con = server.con();
        assert_eq!(int(&mut con, &["ARTICLE.VIEW", "{w}:1"]), 4);
    }

    fn command_metadata_is_complete(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let keys = harness::getkeys;
        assert_eq!(keys(&mut con, &["ARTICLE.CREATE", "a", "t", "c", "au"]), ["a"]);
        assert_eq!(keys(&mut con, &["ARTICLE.CREATE", "a", "t", "c", "au", "SLUG", "s", "x"]), ["a", "s"]);
        assert_eq!(keys(&mut con, &["ARTICLE.CREATE", "a", "SLUG", "c", "au", "SLUG", "s", "x"]), ["a", "s"]);
        assert_eq!(keys(&mut con, &["ARTICLE.SETSLUG", "a", "s", "x"]), ["a", "s"]);
        assert_eq!(keys(&mut con, &["ARTICLE.DELETE", "a", "SLUG", "s"]), ["a", "s"]);
        assert_eq!(keys(&mut con, &["ARTICLE.DELETE", "a"]), ["a"]);
        assert_eq!(keys(&mut con, &["ARTICLE.BYSLUG", "s", "x"]), ["s"]);
        for name in ["GET", "UPDATE", "VIEW"] {
            assert_eq!(keys(&mut con, &[&format!("ARTICLE.{name}"), "a", "TITLE", "t"][..if name == "UPDATE" { 4 } else { 2 }]), ["a"]);
        }
        assert_eq!(
            command_docs(&mut con, "ARTICLE.CREATE"),
            module_docs(
                "Creates an article (a hash with created_at), only if absent, optionally claiming a unique slug",
                "0.1.0",
                "O(1)",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=title type=string",
                    "- name=content type=string",
                    "- name=author type=string",
                    "- name=slug-claim type=block token=SLUG flags=optional",
                    "  - name=slugkey type=key key_spec_index=1",
                    "  - name=slug type=string",
                ],
            )
        );
        assert_eq!(
            command_docs(&mut con, "ARTICLE.GET"),
            module_docs(
                "Returns an article's fields (a map), or with JSON one JSON object; nil if absent",
                "0.1.0",
                "O(1)",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=json type=pure-token token=JSON flags=optional",
                ],
            )
        );
    }

    fn cluster_needs_both_keys_in_one_slot(flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        for i in 0..10 {
            let article = format!("{{blog{i}}}:article:1");
            let index = format!("{{blog{i}}}:slugs");
            assert_eq!(int(&mut con, &["ARTICLE.CREATE", &article, "t", "c", "a", "SLUG", &index, "post"]), 1);
            assert_eq!(int(&mut con, &["ARTICLE.SETSLUG", &article, &index, "moved"]), 1);
            assert_eq!(int(&mut con, &["ARTICLE.DELETE", &article, "SLUG", &index]), 1);
        }
        let mut nodes: Vec<_> = cluster.nodes.iter().map(|node| node.con()).collect();
        let owner = cluster.owner("a");
        for words in [
            vec!["ARTICLE.CREATE", "a", "t", "c", "au", "SLUG", "b", "s"],
            vec!["ARTICLE.SETSLUG", "a", "b", "s"],
            vec!["ARTICLE.DELETE", "a", "SLUG", "b"],
        ] {
            let refused = error(&mut nodes[owner], &cmd(&words));
            assert_eq!(refused, CROSSSLOT, "{words:?}");
        }
        assert_eq!(int(&mut nodes[owner], &["DBSIZE"]), 0);
        let other = (owner + 1) % nodes.len();
        let moved = error(&mut nodes[other], &cmd(&["ARTICLE.VIEW", "a"]));
        assert_eq!(moved, cluster.moved("a"));
    }

    fn writes_fire_the_events_of_the_built_ins(flavor) {
        let server = Server::start(flavor);
        let expected = [
            "a hset", "s hset",     // create with a slug
            "a hset",               // update
            "s hset", "s hdel", "a hset", // move the slug
            "a hincrby",            // view
            "a del", "s hdel", "s del", // delete with its slug
        ];
        let events = harness::keyspace_events(&server, expected.len(), |con| {
            assert_eq!(int(con, &["ARTICLE.CREATE", "a", "t", "c", "au", "SLUG", "s", "one"]), 1);
            assert_eq!(int(con, &["ARTICLE.UPDATE", "a", "TITLE", "u"]), 1);
            assert_eq!(int(con, &["ARTICLE.SETSLUG", "a", "s", "two"]), 1);
            assert_eq!(int(con, &["ARTICLE.VIEW", "a"]), 1);
            assert_eq!(int(con, &["ARTICLE.DELETE", "a", "SLUG", "s"]), 1);
        });
        assert_eq!(events, expected);
    }
}

/// Every ARTICLE write; returns the keys it touched.
fn article_workload(con: &mut Connection) -> Vec<String> {
    for i in 1..=5 {
        let key = format!("{{w}}:{i}");
        let slug = format!("post-{i}");
        assert_eq!(
            int(
                con,
                &[
                    "ARTICLE.CREATE",
                    &key,
                    "title",
                    "body",
                    "author",
                    "SLUG",
                    "{w}:slugs",
                    &slug
                ]
            ),
            1
        );
    }
    assert_eq!(int(con, &["ARTICLE.CREATE", "{w}:plain", "t", "c", "a"]), 1);
    assert_eq!(
        int(
            con,
            &[
                "ARTICLE.UPDATE",
                "{w}:1",
                "TITLE",
                "new title",
                "CONTENT",
                "new body"
            ]
        ),
        1
    );
    assert_eq!(
        int(con, &["ARTICLE.UPDATE", "{w}:plain", "AUTHOR", "someone"]),
        1
    );
    for _ in 0..3 {
        int(con, &["ARTICLE.VIEW", "{w}:1"]);
    }
    assert_eq!(
        int(con, &["ARTICLE.SETSLUG", "{w}:2", "{w}:slugs", "renamed"]),
        1
    );
    assert_eq!(
        int(con, &["ARTICLE.SETSLUG", "{w}:plain", "{w}:slugs", "plain"]),
        1
    );
    assert_eq!(
        int(con, &["ARTICLE.DELETE", "{w}:3", "SLUG", "{w}:slugs"]),
        1
    );
    assert_eq!(int(con, &["ARTICLE.DELETE", "{w}:4"]), 1);
    [
        "{w}:1",
        "{w}:2",
        "{w}:3",
        "{w}:4",
        "{w}:5",
        "{w}:plain",
        "{w}:slugs",
    ]
    .iter()
    .map(|key| key.to_string())
    .collect()
}
