//! POOL on real servers: the book's scenario, owner checks, every error, the
//! first-come-first-served wait and its hand-offs (release, add, lease end),
//! 16 clients on 4 resources with a ledger, persistence (RDB, AOF,
//! DUMP/RESTORE, hostile payloads), replication, COPY, MEMORY USAGE, command
//! metadata and cluster routing.

use crate::harness;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use harness::{
    arity, blocked_clients, cmd, digest, error, info_field, int, module_docs, pool_holders,
    pool_info, query, refused_restore, server_ms, Cluster, Connection, Replicated, Server, Value,
    Waiter, WRONGTYPE,
};

/// `POOL.ACQUIRE`'s answer: the resource, or `None` for nil.
fn acquire(con: &mut impl redis::ConnectionLike, words: &[&str]) -> Option<String> {
    query(con, words)
}

server_tests! {
    fn the_books_scenario(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // Associate three resources; the fourth acquisition finds none.
        assert_eq!(int(&mut con, &["POOL.ADD", "browsers", "b1", "b2", "b3"]), 3);
        assert_eq!(int(&mut con, &["POOL.ADD", "browsers", "b2", "b4"]), 1, "b2 is there already");
        assert_eq!(int(&mut con, &["POOL.REMOVE", "browsers", "b4", "nope"]), 1);
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "browsers", "w1"]).as_deref(), Some("b1"));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "browsers", "w2"]).as_deref(), Some("b2"));
        // w3 crashes while holding b3: its lease ends after 200 ms.
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "browsers", "w3", "PX", "200"]).as_deref(), Some("b3"));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "browsers", "w4"]), None);
        assert_eq!(pool_info(&mut con, "browsers"), (3, 0, 3, 0));
        // Release one and acquire it again.
        assert_eq!(int(&mut con, &["POOL.RELEASE", "browsers", "b2", "w2"]), 1);
        assert_eq!(pool_info(&mut con, "browsers"), (3, 1, 2, 0));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "browsers", "w4"]).as_deref(), Some("b2"));
        let rows = pool_holders(&mut con, "browsers");
        assert_eq!(rows.len(), 3);
        assert_eq!((rows[0].0.as_str(), rows[0].1.as_str(), rows[0].2), ("b1", "w1", -1));
        assert_eq!((rows[1].0.as_str(), rows[1].1.as_str(), rows[1].2), ("b2", "w4", -1));
        let end = rows[2].2;
        assert_eq!((rows[2].0.as_str(), rows[2].1.as_str()), ("b3", "w3"));
        assert!((0..=200).contains(&(end - server_ms(&mut con))), "b3's lease ends at {end}");
        // The crashed holder's lease ends: b3 is free again, with nobody's help.
        thread::sleep(Duration::from_millis(250));
        assert_eq!(pool_info(&mut con, "browsers"), (3, 1, 2, 0));
        assert_eq!(pool_holders(&mut con, "browsers").len(), 2);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "browsers", "b3", "w3"]), 0, "w3's lease ended");
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "browsers", "w5"]).as_deref(), Some("b3"));
        // Removing every resource deletes the key, as SREM does a set's.
        assert_eq!(int(&mut con, &["POOL.REMOVE", "browsers", "b1", "b2", "b3"]), 3);
        assert_eq!(int(&mut con, &["EXISTS", "browsers"]), 0);
        assert_eq!(pool_info(&mut con, "browsers"), (0, 0, 0, 0));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "browsers", "w6"]), None);
    }

    fn the_resource_free_the_longest_goes_first(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "a", "b", "c"]), 3);
        for (owner, expected) in [("x", "a"), ("y", "b")] {
            assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", owner]).as_deref(), Some(expected));
        }
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "a", "x"]), 1);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "b", "y"]), 1);
        let order: Vec<String> = ["1", "2", "3"]
            .iter()
            .map(|owner| acquire(&mut con, &["POOL.ACQUIRE", "p", owner]).unwrap())
            .collect();
        assert_eq!(order, ["c", "a", "b"]);
    }

    /// `POOL.STATUS`: the book's `is_available`/`is_occupied`/`has` in one
    /// read, an ended lease free as `POOL.ACQUIRE` would find it, on the
    /// primary and on a replica alike, changing nothing.
    fn status_tells_free_held_or_missing(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let status = |con: &mut Connection, resource: &str| -> Option<String> {
            query(con, &["POOL.STATUS", "p", resource])
        };
        assert_eq!(status(&mut con, "a"), None, "a missing pool has nothing");
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "a", "b", "c"]), 3);
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "w1"]).as_deref(), Some("a"));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "w2", "PX", "100"]).as_deref(), Some("b"));
        assert_eq!(status(&mut con, "a").as_deref(), Some("held"));
        assert_eq!(status(&mut con, "b").as_deref(), Some("held"));
        assert_eq!(status(&mut con, "c").as_deref(), Some("free"));
        assert_eq!(status(&mut con, "d"), None);
        // A status reply, as TYPE's.
        assert_eq!(cmd(&["POOL.STATUS", "p", "c"]).query::<Value>(&mut con).unwrap(), Value::SimpleString("free".into()));
        // b's lease ends: free at once, though not reclaimed yet.
        pair.sync();
        thread::sleep(Duration::from_millis(150));
        let before = digest(&mut con);
        assert_eq!(status(&mut con, "b").as_deref(), Some("free"));
        assert_eq!(pool_holders(&mut con, "p").len(), 1);
        assert_eq!(digest(&mut con), before, "a read reclaims nothing");
        let mut replica = pair.replica.con();
        for (resource, expected) in [("a", Some("held")), ("b", Some("free")), ("c", Some("free")), ("d", None)] {
            assert_eq!(status(&mut replica, resource).as_deref(), expected, "{resource} on the replica");
        }
        harness::check_keys_and_docs(&mut con, &[vec!["POOL.STATUS", "p", "a"]], "p", "POOL.STATUS", module_docs(
            "Tells whether a pool's resource is free or held; nil when the pool lacks it",
            "0.6.0",
            "O(log M) for M resources in the pool",
            &["- name=key type=key key_spec_index=0", "- name=resource type=string"],
        ));
        // Released, removed; the pool emptied is no key.
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "a", "w1"]), 1);
        assert_eq!(status(&mut con, "a").as_deref(), Some("free"));
        assert_eq!(int(&mut con, &["POOL.REMOVE", "p", "a", "b"]), 2);
        assert_eq!(status(&mut con, "a"), None);
        assert_eq!(int(&mut con, &["POOL.REMOVE", "p", "c"]), 1);
        assert_eq!(status(&mut con, "c"), None);
        // Binary-safe names.
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "\u{0}x\r\n"]), 1);
        assert_eq!(status(&mut con, "\u{0}x\r\n").as_deref(), Some("free"));
        assert_eq!(status(&mut con, "\u{0}x"), None);
    }

    fn only_the_owner_releases_or_renews(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "r"]), 1);
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "me", "PX", "60000"]).as_deref(), Some("r"));
        let before = digest(&mut con);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "r", "you"]), 0);
        assert_eq!(int(&mut con, &["POOL.RENEW", "p", "r", "you", "PX", "90000"]), 0);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "nope", "me"]), 0);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "missing", "r", "me"]), 0);
        assert_eq!(digest(&mut con), before, "refusals change nothing");
        assert_eq!(int(&mut con, &["POOL.RENEW", "p", "r", "me", "EX", "90"]), 1);
        let end = pool_holders(&mut con, "p")[0].2 - server_ms(&mut con);
        assert!((89_000..=90_000).contains(&end), "the lease now ends in {end} ms");
        // Removing a held resource is allowed; its holder's release and
        // renew then answer 0.
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "other"]), 1);
        assert_eq!(int(&mut con, &["POOL.REMOVE", "p", "r"]), 1);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "r", "me"]), 0);
        assert_eq!(int(&mut con, &["POOL.RENEW", "p", "r", "me", "PX", "100"]), 0);
        assert_eq!(pool_info(&mut con, "p"), (1, 1, 0, 0));
    }

    fn every_error_is_exact_and_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "r"]), 1);
        let _: () = cmd(&["SET", "str", "x"]).query(&mut con).unwrap();
        let before = digest(&mut con);
        for (words, expected) in [
            (vec!["POOL.ADD", "p"], arity("pool.add")),
            (vec!["POOL.REMOVE", "p"], arity("pool.remove")),
            (vec!["POOL.ACQUIRE", "p"], arity("pool.acquire")),
            (vec!["POOL.RELEASE", "p", "r"], arity("pool.release")),
            (vec!["POOL.RENEW", "p", "r", "o"], arity("pool.renew")),
            (vec!["POOL.INFO"], arity("pool.info")),
            (vec!["POOL.STATUS", "p"], arity("pool.status")),
            (vec!["POOL.STATUS", "p", "r", "x"], arity("pool.status")),
            (vec!["POOL.STATUS", "str", "r"], WRONGTYPE.to_string()),
            (vec!["POOL.ADD", "str", "r"], WRONGTYPE.to_string()),
            (vec!["POOL.REMOVE", "str", "r"], WRONGTYPE.to_string()),
            (vec!["POOL.ACQUIRE", "str", "o"], WRONGTYPE.to_string()),
            (vec!["POOL.RELEASE", "str", "r", "o"], WRONGTYPE.to_string()),
            (vec!["POOL.RENEW", "str", "r", "o", "PX", "5"], WRONGTYPE.to_string()),
            (vec!["POOL.INFO", "str"], WRONGTYPE.to_string()),
            (vec!["POOL.HOLDERS", "str"], WRONGTYPE.to_string()),
            (vec!["POOL.ACQUIRE", "p", ""], "ERR owner must not be empty".into()),
            (vec!["POOL.RELEASE", "p", "r", ""], "ERR owner must not be empty".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "PX", "0"], "ERR invalid expire time in 'pool.acquire' command".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "EX", "-1"], "ERR invalid expire time in 'pool.acquire' command".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "PX", "1", "EX", "1"], "ERR syntax error".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "PX"], "ERR syntax error".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "WAIT", "5", "WAIT", "5"], "ERR syntax error".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "NOPE", "1"], "ERR syntax error".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "PX", "x"], "ERR value is not an integer or out of range".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "WAIT", "0"], "ERR invalid WAIT time in 'pool.acquire' command".into()),
            (vec!["POOL.ACQUIRE", "p", "o", "WAIT", "9223372036854775807"], "ERR invalid WAIT time in 'pool.acquire' command".into()),
            (vec!["POOL.RENEW", "p", "r", "o"], arity("pool.renew")),
            (vec!["POOL.RENEW", "p", "r", "o", "PX", "5", "EX", "5"], arity("pool.renew")),
            (vec!["POOL.RENEW", "p", "r", "o", "WAIT", "5"], "ERR syntax error".into()),
            (vec!["POOL.RENEW", "p", "r", "o", "PX", "-5"], "ERR invalid expire time in 'pool.renew' command".into()),
            (vec!["POOL.APPLY", "p", "FREE", "r"], "ERR POOL.APPLY only carries a primary's effects to replicas and the AOF; use POOL.ACQUIRE, POOL.RELEASE or POOL.RENEW".into()),
        ] {
            assert_eq!(error(&mut con, &cmd(&words)), expected, "{words:?}");
            assert_eq!(digest(&mut con), before, "{words:?} changed data");
        }
        // Hostile text in an error never reaches the reply raw.
        let got = error(&mut con, &cmd(&["POOL.ACQUIRE", "p", "o", "가\r\n", "1"]));
        assert_eq!(got, "ERR syntax error");
    }

    fn waiters_are_served_first_come_first_served(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "r1", "r2"]), 2);
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "h1"]).as_deref(), Some("r1"));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "h2"]).as_deref(), Some("r2"));
        let a = Waiter::start(&server, &["POOL.ACQUIRE", "p", "A", "WAIT", "60000", "PX", "60000"]);
        let b = Waiter::start(&server, &["POOL.ACQUIRE", "p", "B", "WAIT", "60000"]);
        let c = Waiter::start(&server, &["POOL.ACQUIRE", "p", "C", "WAIT", "60000"]);
        assert_eq!(pool_info(&mut con, "p"), (2, 0, 2, 3));
        // A newcomer cannot barge in.
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "D"]), None);
        // The release hands r2 to A inside the same command.
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "r2", "h2"]), 1);
        assert_eq!(pool_holders(&mut con, "p")[1].1, "A");
        assert_eq!(a.answer_as::<Option<String>>().as_deref(), Some("r2"));
        let end = pool_holders(&mut con, "p")[1].2 - server_ms(&mut con);
        assert!((59_000..=60_000).contains(&end), "A's lease counts from the hand-off: {end}");
        // An added resource goes to the next waiter.
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "r3"]), 1);
        assert_eq!(b.answer_as::<Option<String>>().as_deref(), Some("r3"));
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "r1", "h1"]), 1);
        assert_eq!(c.answer_as::<Option<String>>().as_deref(), Some("r1"));
        assert_eq!(pool_info(&mut con, "p"), (3, 0, 3, 0));
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn a_lease_end_hands_the_resource_over(flavor) {
        let server = Server::start_with(flavor, &["--hz", "1"]);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "r"]), 1);
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "crashed", "PX", "300"]).as_deref(), Some("r"));
        let started = Instant::now();
        let w = Waiter::start(&server, &["POOL.ACQUIRE", "p", "next", "WAIT", "10000"]);
        assert_eq!(w.answer_as::<Option<String>>().as_deref(), Some("r"));
        let waited = started.elapsed();
        assert!(waited < Duration::from_millis(1000), "served {waited:?} after the lease ended");
        assert_eq!(pool_holders(&mut con, "p")[0].1, "next");
    }

    fn waiting_on_a_missing_pool_ends_with_an_add(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let w = Waiter::start(&server, &["POOL.ACQUIRE", "later", "me", "WAIT", "60000"]);
        assert_eq!(pool_info(&mut con, "later"), (0, 0, 0, 1));
        assert_eq!(int(&mut con, &["POOL.ADD", "later", "x", "y"]), 2);
        assert_eq!(w.answer_as::<Option<String>>().as_deref(), Some("x"));
        assert_eq!(pool_info(&mut con, "later"), (2, 1, 1, 0));
    }

    fn timeouts_disconnects_and_unblock_leave_the_queue(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "r"]), 1);
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "holder"]).as_deref(), Some("r"));
        let quick = Waiter::start(&server, &["POOL.ACQUIRE", "p", "quick", "WAIT", "100"]);
        assert_eq!(quick.answer_as::<Option<String>>(), None);
        let gone = Waiter::start(&server, &["POOL.ACQUIRE", "p", "gone", "WAIT", "60000"]);
        let unblocked = Waiter::start(&server, &["POOL.ACQUIRE", "p", "unblocked", "WAIT", "60000"]);
        let last = Waiter::start(&server, &["POOL.ACQUIRE", "p", "last", "WAIT", "60000"]);
        assert_eq!(int(&mut con, &["CLIENT", "KILL", "ID", &gone.id.to_string()]), 1);
        assert!(gone.answer().is_err());
        assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &unblocked.id.to_string()]), 1);
        assert_eq!(unblocked.answer(), Ok(Value::Nil));
        assert_eq!(pool_info(&mut con, "p").3, 1);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", "r", "holder"]), 1);
        assert_eq!(last.answer_as::<Option<String>>().as_deref(), Some("r"));
        assert!(!server.log().contains("panic"));
    }

    fn wait_never_blocks_in_multi_or_scripts(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "r"]), 1);
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "p", "holder"]).as_deref(), Some("r"));
        let replies: Value = redis::pipe()
            .atomic()
            .cmd("POOL.ACQUIRE").arg("p").arg("me").arg("WAIT").arg(60000)
            .cmd("POOL.RELEASE").arg("p").arg("r").arg("holder")
            .cmd("POOL.ACQUIRE").arg("p").arg("me").arg("WAIT").arg(60000)
            .query(&mut con)
            .unwrap();
        assert_eq!(replies, Value::Array(vec![Value::Nil, Value::Int(1), Value::BulkString(b"r".to_vec())]));
        let script = "return redis.call('POOL.ACQUIRE', KEYS[1], ARGV[1], 'WAIT', 60000)";
        let got: Value = cmd(&["EVAL", script, "1", "p", "other"]).query(&mut con).unwrap();
        assert_eq!(got, Value::Nil);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn sixteen_clients_on_four_resources_never_share_one(flavor) {
        const CLIENTS: usize = 16;
        const ROUNDS: usize = 60;
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "p", "r1", "r2", "r3", "r4"]), 4);
        // The ledger: who holds each resource, as the clients saw it.
        let ledger: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let served: Arc<Mutex<Vec<usize>>> = Arc::new(Mutex::new(vec![0; CLIENTS]));
        let workers: Vec<_> = (0..CLIENTS)
            .map(|n| {
                let mut con = server.con();
                let (ledger, served) = (ledger.clone(), served.clone());
                thread::spawn(move || {
                    let owner = format!("client-{n}");
                    for _ in 0..ROUNDS {
                        let resource = acquire(&mut con, &["POOL.ACQUIRE", "p", &owner, "WAIT", "60000", "PX", "60000"])
                            .expect("a wait of a minute is always served");
                        if let Some(other) = ledger.lock().unwrap().insert(resource.clone(), n) {
                            panic!("{resource} held by client-{other} and client-{n}");
                        }
                        served.lock().unwrap()[n] += 1;
                        thread::sleep(Duration::from_millis(1));
                        ledger.lock().unwrap().remove(&resource);
                        assert_eq!(int(&mut con, &["POOL.RELEASE", "p", &resource, &owner]), 1);
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        assert_eq!(*served.lock().unwrap(), vec![ROUNDS; CLIENTS]);
        assert_eq!(pool_info(&mut con, "p"), (4, 4, 0, 0));
        let waits: i64 = info_field(&mut con, "recipes", "recipes_resource_waits").unwrap().parse().unwrap();
        assert!(waits > 0, "16 clients on 4 resources never waited");
    }

    fn survives_reload_restart_aof_rewrite_and_dump(flavor) {
        let mut server = Server::start(flavor);
        let mut con = server.con();
        pool_workload(&mut con);
        let before = harness::state(&mut con, &KEYS);
        let _: () = cmd(&["DEBUG", "RELOAD"]).query(&mut con).unwrap();
        assert_eq!(harness::state(&mut con, &KEYS), before, "DEBUG RELOAD");
        let _: () = cmd(&["SAVE"]).query(&mut con).unwrap();
        drop(con);
        server.restart();
        let mut con = server.con();
        assert_eq!(harness::state(&mut con, &KEYS), before, "restart from the RDB file");
        // The free order survived: the one free the longest comes first.
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "pool:main", "z"]).as_deref(), Some("a"));
        drop(con);
        for preamble in ["yes", "no"] {
            let server = harness::aof_round_trip_with(flavor, &["--aof-use-rdb-preamble", preamble], |_, con| {
                pool_workload(con);
                harness::rewrite_aof(con);
                // Written after the rewrite: replayed from the AOF's tail.
                assert_eq!(acquire(con, &["POOL.ACQUIRE", "pool:main", "tail", "PX", "600000"]).as_deref(), Some("a"));
                KEYS.to_vec()
            });
            let mut con = server.con();
            assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "pool:main", "z"]).as_deref(), Some("c"));
        }
        // DUMP/RESTORE and COPY hold the same pool.
        let server = Server::start(flavor);
        let mut con = server.con();
        pool_workload(&mut con);
        let payload: Vec<u8> = cmd(&["DUMP", "pool:main"]).query(&mut con).unwrap();
        let restored: Value = redis::cmd("RESTORE").arg("restored").arg(0).arg(&payload[..]).query(&mut con).unwrap();
        assert_eq!(restored, Value::Okay);
        assert_eq!(int(&mut con, &["COPY", "pool:main", "copied"]), 1);
        for key in ["restored", "copied"] {
            assert_eq!(harness::snapshot(&mut con, key).0, harness::snapshot(&mut con, "pool:main").0, "{key}");
            assert_eq!(pool_holders(&mut con, key), pool_holders(&mut con, "pool:main"), "{key}");
        }
        assert_eq!(int(&mut con, &["DEL", "copied"]), 1);
        assert_eq!(pool_info(&mut con, "pool:main"), (4, 2, 2, 0), "the copy was deep");
        let usage = int(&mut con, &["MEMORY", "USAGE", "pool:main"]);
        assert!((100..4096).contains(&usage), "MEMORY USAGE {usage}");
        let kind: String = cmd(&["TYPE", "pool:main"]).query(&mut con).unwrap();
        assert_eq!(kind, "rr-rspool");
    }

    fn two_hundred_thousand_resources_load_in_any_order(flavor) {
        // A stored pool's resources go into its B-tree maps as they are read,
        // each in O(log n) whatever the order: 100,000 free resources and
        // 100,000 holders, listed in decreasing name order (a pool is saved
        // with its holders in increasing name order), load at once. Measured
        // before this test: 50 ms for 200,000 free resources and 80 ms for
        // 200,000 holders in decreasing order (85 and 130 ms in increasing
        // order, 120 to 240 ms shuffled).
        use harness::Field::{Bytes as B, Num as N};
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["POOL.ADD", "template", "x"]), 1);
        let template: Vec<u8> = query(&mut con, &["DUMP", "template"]);
        let until = server_ms(&mut con) as u64 + 3_600_000;
        let names: Vec<Vec<u8>> = (0..200_000).map(|n| format!("r{n:06}").into_bytes()).collect();
        let owners: Vec<Vec<u8>> = (0..10).map(|n| format!("owner-{n}").into_bytes()).collect();
        // Free: r199999 (free the longest) down to r100000. Held: r099999
        // down to r000000, by owner-(n % 10), every fourth forever.
        let lease_end = |n: usize| if n.is_multiple_of(4) { u64::MAX } else { until + n as u64 };
        let mut fields = vec![N(100_000)];
        fields.extend(names[100_000..].iter().rev().map(|name| B(name)));
        fields.push(N(100_000));
        for n in (0..100_000).rev() {
            fields.extend([B(&names[n]), B(&owners[n % 10]), N(lease_end(n))]);
        }
        let payload = harness::forge(&template, &fields, 1);

        let started = Instant::now();
        let restored: Value = redis::cmd("RESTORE").arg("big").arg(0).arg(&payload[..]).query(&mut con).unwrap();
        let took = started.elapsed();
        assert_eq!(restored, Value::Okay);
        assert!(took < Duration::from_secs(3) || harness::under_valgrind(), "RESTORE of 200,000 resources took {took:?}");
        assert_eq!(pool_info(&mut con, "big"), (200_000, 100_000, 100_000, 0));
        let holders = pool_holders(&mut con, "big");
        assert_eq!(holders.len(), 100_000);
        for n in [0usize, 1, 2, 3, 4, 50_001, 99_999] {
            let end = if n.is_multiple_of(4) { -1 } else { lease_end(n) as i64 };
            assert_eq!(holders[n], (format!("r{n:06}"), format!("owner-{}", n % 10), end));
        }
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "big", "me"]).as_deref(), Some("r199999"));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "big", "me"]).as_deref(), Some("r199998"));
        assert_eq!(int(&mut con, &["POOL.RELEASE", "big", "r050001", "owner-1"]), 1);
        assert_eq!(int(&mut con, &["POOL.RENEW", "big", "r050002", "owner-2", "PX", "60000"]), 1);
        assert_eq!(pool_info(&mut con, "big"), (200_000, 99_999, 100_001, 0));
        // Saved again (holders in name order), it loads the same.
        let saved: Vec<u8> = query(&mut con, &["DUMP", "big"]);
        let restored: Value = redis::cmd("RESTORE").arg("again").arg(0).arg(&saved[..]).query(&mut con).unwrap();
        assert_eq!(restored, Value::Okay);
        assert_eq!(harness::digest_value(&mut con, "again"), harness::digest_value(&mut con, "big"));
    }

    fn hostile_restore_payloads_are_refused(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        pool_workload(&mut con);
        let payload: Vec<u8> = cmd(&["DUMP", "pool:main"]).query(&mut con).unwrap();
        let before = digest(&mut con);
        let refused = "ERR Bad data format";
        refused_restore(&mut con, &payload[..payload.len() - 3], "ERR DUMP payload version or checksum are wrong");
        use harness::Field::{Bytes as B, Num as N};
        let never = u64::MAX;
        let hostile: &[&[harness::Field]] = &[
            &[N(0), N(0)],                                    // no resources
            &[N(2), B(b"a"), B(b"a"), N(0)],                  // a resource twice
            &[N(1), B(b"a"), N(1), B(b"a"), B(b"o"), N(never)], // free and held
            &[N(0), N(1), B(b"a"), B(b""), N(never)],         // no owner
            &[N(0), N(1), B(b"a"), B(b"o"), N(0)],            // lease end 0
            &[N(0), N(1), B(b"a"), B(b"o"), N(1 << 63)],      // lease end too large
            &[N(3), B(b"a")],                                 // truncated
            &[N(u64::MAX - 1), B(b"a")],                      // a huge count
            &[N(1), N(5)],                                    // a number for a name
            &[N(1), B(b"a"), N(0), N(7)],                     // a value too many
        ];
        for fields in hostile {
            refused_restore(&mut con, &harness::forge(&payload, fields, 1), refused);
        }
        refused_restore(&mut con, &harness::forge(&payload, &[N(1), B(b"a"), N(0)], 2), refused);
        assert_eq!(digest(&mut con), before);
        // The forger itself is right: a valid forged pool loads.
        let forged: Value = redis::cmd("RESTORE")
            .arg("forged")
            .arg(0)
            .arg(harness::forge(&payload, &[N(1), B(b"x"), N(1), B(b"y"), B(b"o"), N(never)], 1))
            .query(&mut con)
            .unwrap();
        assert_eq!(forged, Value::Okay);
        assert_eq!(pool_info(&mut con, "forged"), (2, 1, 1, 0));
        assert!(!server.log().contains("panic"), "{}", server.log());
    }

    fn replica_holds_exactly_the_primary_pools(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        pool_workload(&mut con);
        // Ended leases are moved back by the primary only, and replicated.
        assert_eq!(int(&mut con, &["POOL.ADD", "pool:ended", "e1", "e2"]), 2);
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "pool:ended", "o", "PX", "50"]).as_deref(), Some("e1"));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "pool:ended", "o", "PX", "50"]).as_deref(), Some("e2"));
        pair.sync();
        thread::sleep(Duration::from_millis(150));
        assert_eq!(pool_info(&mut pair.replica.con(), "pool:ended"), (2, 2, 0, 0), "the replica reads ended leases as free");
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "pool:ended", "p"]).as_deref(), Some("e1"));
        assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", "pool:ended", "q", "PX", "600000"]).as_deref(), Some("e2"));
        // A hand-off to a waiter reaches the replica as its effect.
        let w = Waiter::start(&pair.primary, &["POOL.ACQUIRE", "pool:ended", "w", "WAIT", "60000", "PX", "600000"]);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "pool:ended", "e1", "p"]), 1);
        assert_eq!(w.answer_as::<Option<String>>().as_deref(), Some("e1"));
        pair.sync();
        let mut replica = pair.replica.con();
        let keys = ["pool:main", "pool:forever", "pool:ended"];
        assert_eq!(harness::state(&mut con, &keys), harness::state(&mut replica, &keys));
        assert_eq!(pool_holders(&mut con, "pool:ended"), pool_holders(&mut replica, "pool:ended"));
        let refused = error(&mut replica, &cmd(&["POOL.ACQUIRE", "pool:ended", "x"]));
        assert_eq!(refused, "READONLY You can't write against a read only replica.");
    }

    fn command_metadata_and_cluster_routing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let calls = [
            vec!["POOL.ADD", "k", "a", "b"],
            vec!["POOL.REMOVE", "k", "a"],
            vec!["POOL.ACQUIRE", "k", "o", "PX", "5", "WAIT", "5"],
            vec!["POOL.RELEASE", "k", "a", "o"],
            vec!["POOL.RENEW", "k", "a", "o", "PX", "5"],
            vec!["POOL.INFO", "k"],
            vec!["POOL.HOLDERS", "k"],
            vec!["POOL.STATUS", "k", "a"],
            vec!["POOL.APPLY", "k", "FREE", "a", "HOLD", "b", "o", "0"],
        ];
        harness::check_keys_and_docs(&mut con, &calls, "k", "POOL.ACQUIRE", module_docs(
            "Hands the resource free the longest to an owner (with a lease and a first-come-first-served wait); nil when none is free",
            "0.3.0",
            "O(log M) for M resources in the pool, plus O(log M) per ended lease reclaimed",
            &[
                "- name=key type=key key_spec_index=0",
                "- name=owner type=string",
                "- name=lease type=oneof flags=optional",
                "  - name=milliseconds type=integer token=PX",
                "  - name=seconds type=integer token=EX",
                "- name=wait type=integer token=WAIT flags=optional",
            ],
        ));
        // The ACL categories COMMAND INFO gives (servers that let modules set them).
        if flavor.has_module_acl_categories(&mut con) {
            for (category, expected) in [
                ("write", &["pool.add", "pool.remove", "pool.acquire", "pool.release", "pool.renew"][..]),
                ("read", &["pool.info", "pool.holders", "pool.status"][..]),
                ("fast", &["pool.release", "pool.renew", "pool.info", "pool.status", "idpool.next"][..]),
                ("slow", &["pool.acquire", "pool.holders"][..]),
                ("blocking", &["pool.acquire", "idpool.next"][..]),
            ] {
                let found: Vec<String> = cmd(&["ACL", "CAT", category]).query(&mut con).unwrap();
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
            let key = format!("pool:{n}");
            assert_eq!(int(&mut con, &["POOL.ADD", &key, "r"]), 1);
            assert_eq!(acquire(&mut con, &["POOL.ACQUIRE", &key, "o", "PX", "60000"]).as_deref(), Some("r"));
            assert_eq!(int(&mut con, &["POOL.RELEASE", &key, "r", "o"]), 1);
        }
    }

    fn random_arguments_never_crash_and_errors_change_nothing(flavor) {
        let server = Server::start(flavor);
        let commands: &[&[u8]] = &[
            b"POOL.ADD", b"POOL.REMOVE", b"POOL.ACQUIRE", b"POOL.RELEASE", b"POOL.RENEW",
            b"POOL.INFO", b"POOL.HOLDERS", b"POOL.STATUS", b"POOL.APPLY", b"pool.acquire",
        ];
        let words: &[&[u8]] = &[
            b"pool", b"str", b"absent", b"r", b"s", b"o", b"PX", b"EX", b"WAIT", b"px", b"1", b"5", b"0",
            b"-1", b"9223372036854775807", b"", b"\xff", b"\xea\xb0\x80", b"1.5", b"FREE", b"HOLD",
        ];
        let setup = |con: &mut Connection| {
            let _: () = cmd(&["SET", "str", "x"]).query(con).unwrap();
            let _: i64 = cmd(&["POOL.ADD", "pool", "r", "s"]).query(con).unwrap();
        };
        harness::fuzz(&server, 0x9001, 2_000, setup, |rng| harness::random_command(rng, commands, words, 6));
    }
}

/// Pools with free and held resources, leases that end and that never do.
fn pool_workload(con: &mut Connection) {
    assert_eq!(int(con, &["POOL.ADD", "pool:main", "a", "b", "c", "d"]), 4);
    assert_eq!(
        acquire(con, &["POOL.ACQUIRE", "pool:main", "o1", "PX", "600000"]).as_deref(),
        Some("a")
    );
    assert_eq!(
        acquire(con, &["POOL.ACQUIRE", "pool:main", "o2"]).as_deref(),
        Some("b")
    );
    assert_eq!(int(con, &["POOL.RELEASE", "pool:main", "a", "o1"]), 1);
    assert_eq!(
        acquire(con, &["POOL.ACQUIRE", "pool:main", "o3", "EX", "3600"]).as_deref(),
        Some("c")
    );
    assert_eq!(int(con, &["POOL.RELEASE", "pool:main", "c", "o3"]), 1);
    assert_eq!(
        acquire(con, &["POOL.ACQUIRE", "pool:main", "o4", "PX", "600000"]).as_deref(),
        Some("d")
    );
    // Free now: a, then c (the one free the longest first).
    assert_eq!(int(con, &["POOL.ADD", "pool:forever", "x\u{0}y", "가"]), 2);
    assert_eq!(
        acquire(con, &["POOL.ACQUIRE", "pool:forever", "\u{ff}owner"]).as_deref(),
        Some("x\u{0}y")
    );
}

const KEYS: [&str; 2] = ["pool:main", "pool:forever"];

server_tests! {
    // `MEMORY USAGE` of pools against what the server really allocated for
    // them: `used_memory` (`INFO memory`) before and after creating them on
    // a fresh server, where nothing else allocates meanwhile.
    //
    // Compared per key: the growth of `used_memory` against `MEMORY USAGE`.
    // Both hold the module's value and the key, which `MEMORY USAGE`
    // measures itself (Redis 7.0: the name and the table entry; Redis 8.6
    // and Valkey: the key's object with the name in it). Only the growth
    // holds the rest of the server's bookkeeping: the 16-byte wrapper of a
    // module value, the table slot and, on Redis 7.0, the 16-byte object:
    // 30 to 60 bytes a key, under 5% of a small pool and nothing of a large
    // one. So the 20% bound is in effect a bound on the module's own count.
    // The large pool's names are numbered with leading zeros, so they come
    // in name order and leave its trees as full as adding in order does (7
    // entries a node; about 9 in random order).
    fn memory_usage_matches_the_memory_used(flavor) {
        const POOLS: usize = 20_000;
        const RESOURCES: usize = 200_000;
        const LEASED: usize = 10_000;
        let server = Server::start(flavor);
        let mut con = server.con();
        let used = |con: &mut Connection| -> f64 {
            info_field(con, "memory", "used_memory").unwrap().parse().unwrap()
        };
        let within = |what: &str, usage: f64, growth: f64| {
            eprintln!("{}: {what}: MEMORY USAGE {usage:.0}, used_memory grew {growth:.0}", flavor.name());
            assert!(
                (usage - growth).abs() <= 0.2 * growth,
                "{what}: MEMORY USAGE {usage:.0} is not within 20% of the {growth:.0} bytes used_memory grew"
            );
        };

        // Small pools: 3 resources, one held with a lease.
        let before = used(&mut con);
        for first in (0..POOLS).step_by(500) {
            let mut pipe = redis::pipe();
            for n in first..first + 500 {
                let key = format!("pool:{n}");
                pipe.cmd("POOL.ADD").arg(&key).arg("r1").arg("r2").arg("r3").ignore();
                pipe.cmd("POOL.ACQUIRE").arg(&key).arg("worker").arg("PX").arg(600_000).ignore();
            }
            let _: () = pipe.query(&mut con).unwrap();
        }
        let growth = (used(&mut con) - before) / POOLS as f64;
        assert_eq!(int(&mut con, &["DBSIZE"]), POOLS as i64);
        assert_eq!(pool_info(&mut con, "pool:0"), (3, 2, 1, 0));
        let mut usage = 0;
        for first in (0..POOLS).step_by(500) {
            let mut pipe = redis::pipe();
            for n in first..first + 500 {
                pipe.cmd("MEMORY").arg("USAGE").arg(format!("pool:{n}")).arg("SAMPLES").arg(0);
            }
            let sizes: Vec<i64> = pipe.query(&mut con).unwrap();
            usage += sizes.iter().sum::<i64>();
        }
        within("a pool of 3 resources, 1 leased", usage as f64 / POOLS as f64, growth);

        // One large pool, added in batches, 5% of it leased.
        let before = used(&mut con);
        for first in (0..RESOURCES).step_by(1_000) {
            let mut add = redis::cmd("POOL.ADD");
            add.arg("big");
            for n in first..first + 1_000 {
                add.arg(format!("resource-{n:06}"));
            }
            let added: i64 = add.query(&mut con).unwrap();
            assert_eq!(added, 1_000);
        }
        let mut pipe = redis::pipe();
        for _ in 0..LEASED {
            pipe.cmd("POOL.ACQUIRE").arg("big").arg("worker").arg("PX").arg(600_000).ignore();
        }
        let _: () = pipe.query(&mut con).unwrap();
        let growth = used(&mut con) - before;
        assert_eq!(pool_info(&mut con, "big"), (RESOURCES as i64, (RESOURCES - LEASED) as i64, LEASED as i64, 0));
        let usage = int(&mut con, &["MEMORY", "USAGE", "big", "SAMPLES", "0"]);
        within("a pool of 200000 resources, 10000 leased", usage as f64, growth);
    }
}

server_tests! {
    /// `POOL.APPLY` comes only from a primary or the AOF. One that leaves a
    /// pool without a resource (`FREE` of a resource it lacks, on a missing
    /// key) leaves no key, as `POOL.REMOVE` does: an empty pool would not
    /// load back, and the server could not restart.
    fn an_apply_leaving_no_resource_leaves_no_key(flavor) {
        let mut server = Server::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let _: () = cmd(&["SET", "marker", "1"]).query(&mut server.con()).unwrap();
        server.kill9();
        let aofs = server.dir().join("appendonlydir");
        let incr = std::fs::read_dir(&aofs)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.to_string_lossy().ends_with(".incr.aof"))
            .expect("an incremental AOF");
        let mut logged = std::fs::read(&incr).unwrap();
        logged.extend_from_slice(b"*4\r\n$10\r\nPOOL.APPLY\r\n$5\r\nempty\r\n$4\r\nFREE\r\n$1\r\nx\r\n");
        std::fs::write(&incr, logged).unwrap();
        server.start_again();
        let mut con = server.con();
        assert_eq!(int(&mut con, &["EXISTS", "empty"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "marker"]), 1);
        let reloaded: Value = cmd(&["DEBUG", "RELOAD"]).query(&mut con).unwrap();
        assert_eq!(reloaded, Value::Okay);
    }
}
