//! IDPOOL on real servers: the seed scenario, errors, concurrent clients,
//! persistence (RDB, AOF, DUMP/RESTORE, hostile payloads), replication,
//! COPY, MEMORY USAGE, events, command metadata and cluster routing.

use crate::harness;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use harness::{
    cmd, commands_run, digest, digest_value, error, idpool_info, int, module_docs, ok, query,
    refused_restore, Cluster, Connection, IdpoolInfo, Replicated, Server, Value, Waiter,
    NOT_INTEGER, WRONGTYPE,
};

const HOUR: &str = "3600000";

/// `IDPOOL.NEXT`'s answer: the ID, or `None` for nil (pool full).
fn next(con: &mut Connection, words: &[&str]) -> Option<i64> {
    query(con, words)
}

server_tests! {
    fn seed_scenario(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        ok(&mut con, &["IDPOOL.CREATE", "seats", "100", "TTL", HOUR]);
        for expected in 1..=100 {
            assert_eq!(next(&mut con, &["IDPOOL.NEXT", "seats"]), Some(expected));
        }
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "seats"]), None);
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "seats", "37"]), 1);
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "seats", "37"]), 0);
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "seats"]), Some(37));
        // A short lease on 10; the search then continues from 11.
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "seats", "10"]), 1);
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "seats", "TTL", "100"]), Some(10));
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "seats", "50"]), 1);
        thread::sleep(Duration::from_millis(250));
        assert_eq!(idpool_info(&mut con, "seats"), (100, 98, 11, Some(3_600_000)));
        // 10's lease has ended, yet 50 comes first: cyclic order, not before.
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "seats"]), Some(50));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "seats"]), Some(10));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "seats"]), None);
        assert_eq!(idpool_info(&mut con, "seats"), (100, 100, 11, Some(3_600_000)));
    }

    fn next_wait_is_a_semaphore_whose_permits_expire(flavor) {
        let server = Server::start_with(flavor, &["--hz", "1"]);
        let mut con = server.con();
        ok(&mut con, &["IDPOOL.CREATE", "permits", "2"]);
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "permits"]), Some(1));
        // The holder of permit 2 crashes: its lease ends after 300 ms.
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "permits", "TTL", "300"]), Some(2));
        let a = Waiter::start(&server, &["IDPOOL.NEXT", "permits", "WAIT", "60000", "TTL", "60000"]);
        let b = Waiter::start(&server, &["IDPOOL.NEXT", "permits", "WAIT", "60000"]);
        let c = Waiter::start(&server, &["IDPOOL.NEXT", "permits", "WAIT", "60000"]);
        // Nobody barges in, with or without WAIT.
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "permits"]), None);
        // The ended lease goes to the oldest waiter, without a client's help.
        assert_eq!(a.answer_as::<Option<i64>>(), Some(2));
        // A release goes to the next, inside the release.
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "permits", "1"]), 1);
        assert_eq!(b.answer_as::<Option<i64>>(), Some(1));
        assert_eq!(idpool_info(&mut con, "permits").1, 2);
        // Growing the pool serves the last one.
        ok(&mut con, &["IDPOOL.RESIZE", "permits", "3"]);
        assert_eq!(c.answer_as::<Option<i64>>(), Some(3));
        // A wait that runs out answers nil; inside MULTI a wait never blocks.
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "permits", "WAIT", "100"]), None);
        let replies: Value = redis::pipe()
            .atomic()
            .cmd("IDPOOL.NEXT").arg("permits").arg("WAIT").arg(60000)
            .query(&mut con)
            .unwrap();
        assert_eq!(replies, Value::Array(vec![Value::Nil]));
        // A waiter whose pool is deleted gets IDPOOL.NEXT's answer for it.
        let d = Waiter::start(&server, &["IDPOOL.NEXT", "permits", "WAIT", "60000"]);
        assert_eq!(int(&mut con, &["DEL", "permits"]), 1);
        assert_eq!(d.answer(), Err("NOPOOL no ID pool at key 'permits'".to_string()));
        for (words, expected) in [
            (vec!["IDPOOL.NEXT", "x", "WAIT", "0"], "ERR invalid WAIT time in 'idpool.next' command"),
            (vec!["IDPOOL.NEXT", "x", "WAIT", "-5"], "ERR invalid WAIT time in 'idpool.next' command"),
            (vec!["IDPOOL.NEXT", "x", "WAIT"], "ERR syntax error"),
        ] {
            assert_eq!(error(&mut con, &cmd(&words)), expected, "{words:?}");
        }
        let waits = harness::info_field(&mut con, "recipes", "recipes_idpool_handoffs");
        assert_eq!(waits.as_deref(), Some("3"));
    }

    fn renew_resize_and_info(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        ok(&mut con, &["idpool.create", "p", "4"]);
        assert_eq!(idpool_info(&mut con, "p"), (4, 0, 1, None));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p", "ttl", "300"]), Some(1));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p"]), Some(2));
        assert_eq!(int(&mut con, &["IDPOOL.RENEW", "p", "1", HOUR]), 1);
        assert_eq!(int(&mut con, &["IDPOOL.RENEW", "p", "3", HOUR]), 0);
        thread::sleep(Duration::from_millis(400));
        // Renewed: still leased after its first lease would have ended.
        assert_eq!(idpool_info(&mut con, "p").1, 2);
        assert_eq!(int(&mut con, &["IDPOOL.RENEW", "p", "1", "100"]), 1);
        thread::sleep(Duration::from_millis(250));
        assert_eq!(int(&mut con, &["IDPOOL.RENEW", "p", "1", HOUR]), 0);
        assert_eq!(idpool_info(&mut con, "p"), (4, 1, 3, None));
        // Shrinking below a live lease is refused, and changes nothing.
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p"]), Some(3));
        let before = digest(&mut con);
        assert_eq!(
            error(&mut con, &cmd(&["IDPOOL.RESIZE", "p", "2"])),
            "NOSHRINK cannot shrink the pool to 2: ID 3 is leased"
        );
        assert_eq!(digest(&mut con), before);
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "p", "3"]), 1);
        ok(&mut con, &["IDPOOL.RESIZE", "p", "2"]);
        assert_eq!(idpool_info(&mut con, "p"), (2, 1, 1, None));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p"]), Some(1));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p"]), None);
        ok(&mut con, &["IDPOOL.RESIZE", "p", "4294967295"]);
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p"]), Some(3));
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "p", "4294967295"]), 0);
        assert_eq!(idpool_info(&mut con, "p"), (4_294_967_295, 3, 4, None));
    }

    fn errors_are_exact_and_change_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        ok(&mut con, &["IDPOOL.CREATE", "p", "10", "TTL", "60000"]);
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p"]), Some(1));
        let _: () = cmd(&["SET", "s", "text"]).query(&mut con).unwrap();
        let before = digest(&mut con);
        let range = "ERR id must be between 1 and 10";
        let size = "ERR max must be between 1 and 4294967295";
        let cases: &[(&[&str], &str)] = &[
            (&["IDPOOL.NEXT", "s"], WRONGTYPE),
            (&["IDPOOL.RELEASE", "s", "1"], WRONGTYPE),
            (&["IDPOOL.RENEW", "s", "1", "10"], WRONGTYPE),
            (&["IDPOOL.INFO", "s"], WRONGTYPE),
            (&["IDPOOL.RESIZE", "s", "5"], WRONGTYPE),
            (&["IDPOOL.CREATE", "s", "5"], "BUSYKEY Target key name already exists."),
            (&["IDPOOL.CREATE", "p", "5"], "BUSYKEY Target key name already exists."),
            (&["IDPOOL.NEXT", "pool:typo"], "NOPOOL no ID pool at key 'pool:typo'"),
            (&["IDPOOL.INFO", "pool:typo"], "NOPOOL no ID pool at key 'pool:typo'"),
            (&["IDPOOL.RELEASE", "pool:typo", "1"], "NOPOOL no ID pool at key 'pool:typo'"),
            (&["IDPOOL.RELEASE", "p", "0"], range),
            (&["IDPOOL.RELEASE", "p", "11"], range),
            (&["IDPOOL.RELEASE", "p", "-1"], range),
            (&["IDPOOL.RELEASE", "p", "1.0"], NOT_INTEGER),
            (&["IDPOOL.RENEW", "p", "11", "10"], range),
            (&["IDPOOL.RENEW", "p", "1", "0"], "ERR invalid expire time in 'idpool.renew' command"),
            (&["IDPOOL.RENEW", "p", "1", "-5"], "ERR invalid expire time in 'idpool.renew' command"),
            (&["IDPOOL.RENEW", "p", "1", "x"], NOT_INTEGER),
            (&["IDPOOL.NEXT", "p", "TTL", "0"], "ERR invalid expire time in 'idpool.next' command"),
            (&["IDPOOL.NEXT", "p", "TTL", "9223372036854775807"], "ERR invalid expire time in 'idpool.next' command"),
            (&["IDPOOL.NEXT", "p", "TTL"], "ERR syntax error"),
            (&["IDPOOL.NEXT", "p", "TTL", "5", "TTL", "5"], "ERR syntax error"),
            (&["IDPOOL.NEXT", "p", "FOREVER"], "ERR syntax error"),
            (&["IDPOOL.CREATE", "q", "0"], size),
            (&["IDPOOL.CREATE", "q", "4294967296"], size),
            (&["IDPOOL.CREATE", "q", "-3"], size),
            (&["IDPOOL.CREATE", "q", "ten"], NOT_INTEGER),
            (&["IDPOOL.CREATE", "q", "10", "TTL", "-1"], "ERR invalid expire time in 'idpool.create' command"),
            (&["IDPOOL.CREATE", "q", "10", "EX", "1"], "ERR syntax error"),
            (&["IDPOOL.RESIZE", "p", "0"], size),
            (&["IDPOOL.CREATE", "q"], "ERR wrong number of arguments for 'idpool.create' command"),
            (&["IDPOOL.RELEASE", "p"], "ERR wrong number of arguments for 'idpool.release' command"),
            (&["IDPOOL.RELEASE", "p", "1", "2"], "ERR wrong number of arguments for 'idpool.release' command"),
            (&["IDPOOL.RENEW", "p", "1"], "ERR wrong number of arguments for 'idpool.renew' command"),
            (&["IDPOOL.INFO", "p", "extra"], "ERR wrong number of arguments for 'idpool.info' command"),
            (&["IDPOOL.NEXT"], "ERR wrong number of arguments for 'idpool.next' command"),
            (&["IDPOOL.APPLY", "p", "10", "1", "LEASE", "2", "0"], "ERR IDPOOL.APPLY only carries a primary's effects to replicas and the AOF; use IDPOOL.NEXT, IDPOOL.RENEW or IDPOOL.RESIZE"),
        ];
        for (words, expected) in cases {
            assert_eq!(&error(&mut con, &cmd(words)), expected, "{words:?}");
            assert_eq!(digest(&mut con), before, "{words:?} changed data");
        }
        // Nothing was created by the failed CREATEs.
        assert_eq!(int(&mut con, &["EXISTS", "q"]), 0);
        // A key name with a line break cannot break the error line; valid
        // UTF-8 is quoted as it is, the rest escaped, long names cut.
        let got = error(&mut con, redis::cmd("IDPOOL.NEXT").arg(&b"a\r\n\xffb\x00"[..]));
        assert_eq!(got, "NOPOOL no ID pool at key 'a  \\xffb\\x00'");
        assert_eq!(error(&mut con, &cmd(&["IDPOOL.NEXT", "가"])), "NOPOOL no ID pool at key '가'");
        let long = "x".repeat(300);
        let got = error(&mut con, &cmd(&["IDPOOL.NEXT", &long]));
        assert_eq!(got, format!("NOPOOL no ID pool at key '{}...'", "x".repeat(128)));
        assert_eq!(digest(&mut con), before);
    }

    fn eight_clients_never_share_a_live_lease(flavor) {
        let server = Server::start(flavor);
        ok(&mut server.con(), &["IDPOOL.CREATE", "workers", "12", "TTL", HOUR]);
        // The ledger: which client holds which ID. A client removes its entry
        // before it releases, so a second holder here is a real double lease.
        let ledger: Arc<Mutex<HashMap<i64, usize>>> = Arc::default();
        let handed_out = Arc::new(Mutex::new(0usize));
        let clients: Vec<_> = (0..8)
            .map(|client| {
                let ledger = Arc::clone(&ledger);
                let handed_out = Arc::clone(&handed_out);
                let mut con = server.con();
                thread::spawn(move || {
                    let mut held = Vec::new();
                    for round in 0..400 {
                        if let Some(id) = next(&mut con, &["IDPOOL.NEXT", "workers"]) {
                            assert!((1..=12).contains(&id));
                            let previous = ledger.lock().unwrap().insert(id, client);
                            assert_eq!(previous, None, "ID {id} handed to client {client} while held");
                            *handed_out.lock().unwrap() += 1;
                            held.push(id);
                        }
                        if held.len() > 2 || (round % 3 == 0 && !held.is_empty()) {
                            let id = held.remove(0);
                            assert_eq!(ledger.lock().unwrap().remove(&id), Some(client));
                            assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "workers", &id.to_string()]), 1);
                        }
                    }
                    for id in held {
                        ledger.lock().unwrap().remove(&id);
                        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "workers", &id.to_string()]), 1);
                    }
                })
            })
            .collect();
        for client in clients {
            client.join().expect("a client failed");
        }
        assert!(*handed_out.lock().unwrap() > 1_000);
        assert_eq!(idpool_info(&mut server.con(), "workers").1, 0);
    }

    fn survives_reload_restart_and_aof_rewrite(flavor) {
        let mut server = Server::start(flavor);
        let mut con = server.con();
        pool_workload(&mut con);
        let before = pool_state(&mut con);
        let _: () = cmd(&["DEBUG", "RELOAD"]).query(&mut con).unwrap();
        assert_eq!(pool_state(&mut con), before, "DEBUG RELOAD");
        let _: () = cmd(&["SAVE"]).query(&mut con).unwrap();
        drop(con);
        server.restart();
        let mut con = server.con();
        assert_eq!(pool_state(&mut con), before, "restart from the RDB file");
        // Leases keep their absolute ends: the short one still ends on time.
        assert_eq!(int(&mut con, &["IDPOOL.RENEW", "p:short", "1", "60000"]), 1);
        drop(con);

        // With and without an RDB preamble: without, the rewrite is the
        // type's own commands (IDPOOL.CREATE and IDPOOL.APPLY).
        for preamble in ["yes", "no"] {
            let server = harness::aof_round_trip_with(flavor, &["--aof-use-rdb-preamble", preamble], |_, con| {
                pool_workload(con);
                harness::rewrite_aof(con);
                // Written after the rewrite: replayed from the AOF's tail.
                assert_eq!(next(con, &["IDPOOL.NEXT", "p:main"]), Some(7));
                POOL_KEYS.to_vec()
            });
            let mut con = server.con();
            assert_eq!(idpool_info(&mut con, "p:main"), (1000, 6, 8, Some(3_600_000)));
            assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p:main"]), Some(8));
            let rewritten = aof_text(server.dir());
            assert_eq!(rewritten.contains("IDPOOL.CREATE"), preamble == "no", "{rewritten}");
            assert!(rewritten.contains("IDPOOL.APPLY"), "{rewritten}");
            assert!(!rewritten.contains("IDPOOL.NEXT"), "decisions are never logged: {rewritten}");
        }
    }

    fn replica_holds_exactly_the_primary_pools(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        pool_workload(&mut con);
        assert_eq!(int(&mut con, &["IDPOOL.RENEW", "p:main", "2", "7200000"]), 1);
        ok(&mut con, &["IDPOOL.RESIZE", "p:forever", "2"]);
        // Ended leases are removed by the primary only, and replicated: the
        // replica stores exactly what the primary stores.
        ok(&mut con, &["IDPOOL.CREATE", "p:ended", "10"]);
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p:ended", "TTL", "50"]), Some(1));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p:ended", "TTL", "50"]), Some(2));
        pair.sync();
        thread::sleep(Duration::from_millis(150));
        assert_eq!(idpool_info(&mut pair.replica.con(), "p:ended").1, 0, "the replica reads ended leases as free");
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "p:ended"]), Some(3));
        pair.sync();
        let ended = harness::snapshot(&mut con, "p:ended");
        assert_eq!(ended, harness::snapshot(&mut pair.replica.con(), "p:ended"));
        let mut replica = pair.replica.con();
        assert_eq!(pool_state(&mut con), pool_state(&mut replica));
        assert_eq!(digest(&mut con), digest(&mut replica));
        for key in POOL_KEYS {
            assert_eq!(harness::snapshot(&mut con, key), harness::snapshot(&mut replica, key), "{key}");
        }
        // What reads the clock came as effects; a NEXT whose lease never
        // ends may come verbatim (tests/replication.rs has every case).
        // (IDPOOL.INFO is this test's own read of the replica.)
        let mut received: Vec<String> = commands_run(&mut replica)
            .into_iter()
            .map(|(command, _)| command)
            .filter(|command| command.starts_with("idpool."))
            .collect();
        received.sort();
        assert_eq!(received, ["idpool.apply", "idpool.create", "idpool.info", "idpool.next", "idpool.release"]);
    }

    fn dump_restore_round_trip_and_hostile_payloads(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        pool_workload(&mut con);
        let payload: Vec<u8> = cmd(&["DUMP", "p:main"]).query(&mut con).unwrap();
        assert_eq!(redis::cmd("RESTORE").arg("copy").arg(0).arg(&payload[..]).query::<Value>(&mut con).unwrap(), Value::Okay);
        assert_eq!(idpool_info(&mut con, "copy"), idpool_info(&mut con, "p:main"));
        assert_eq!(digest_value(&mut con, "copy"), digest_value(&mut con, "p:main"));

        let before = digest(&mut con);
        let checksum = "ERR DUMP payload version or checksum are wrong";
        let refused = "ERR Bad data format";
        // Truncated, and one byte changed: the checksum refuses them.
        refused_restore(&mut con, &payload[..payload.len() - 3], checksum);
        let mut flipped = payload.clone();
        flipped[14] ^= 0x40;
        refused_restore(&mut con, &flipped, checksum);
        // Checksums valid, contents hostile: the module refuses them.
        let never = u64::MAX;
        let hostile: &[&[u64]] = &[
            &[0, 1, 0, 0],                      // max 0
            &[1 << 32, 1, 0, 0],                // max too large
            &[10, 0, 0, 0],                     // next 0
            &[10, 11, 0, 0],                    // next past max
            &[10, 1, 1 << 63, 0],               // default TTL too large
            &[10, 1, 0, 11],                    // more leases than IDs
            &[10, 1, 0, 1, 11, never],          // ID past max
            &[10, 1, 0, 1, 0, never],           // ID 0
            &[10, 1, 0, 2, 5, never, 5, never], // ID twice
            &[10, 1, 0, 2, 5, never, 4, never], // IDs out of order
            &[10, 1, 0, 1, 5, 0],               // expiry 0
            &[10, 1, 0, 1, 5, 1 << 63],         // expiry too large
            &[10, 1, 0, 3, 5, never],           // leases missing (short read)
            &[4_294_967_295, 1, 0, 4_000_000_000], // a huge count, no leases
            &[10, 1, 0],                        // truncated header
            &[10, 1, 0, 0, 7],                  // a value too many
        ];
        for values in hostile {
            refused_restore(&mut con, &forge(&payload, values, 1), refused);
        }
        // An encoding version this module does not know.
        refused_restore(&mut con, &forge(&payload, &[10, 1, 0, 0], 2), refused);
        assert_eq!(digest(&mut con), before);
        // The forger itself is right: a valid forged pool loads.
        let forged: Value = redis::cmd("RESTORE")
            .arg("forged")
            .arg(0)
            .arg(forge(&payload, &[10, 4, 0, 2, 2, never, 3, never], 1))
            .query(&mut con)
            .unwrap();
        assert_eq!(forged, Value::Okay);
        assert_eq!(idpool_info(&mut con, "forged"), (10, 2, 4, None));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "forged"]), Some(4));
        assert!(!server.log().contains("panic"), "{}", server.log());
    }

    fn two_hundred_thousand_leases_load_in_one_pass_in_the_order_saved_only(flavor) {
        // A pool is saved with its leases in increasing ID order, and loaded
        // in one pass that checks each ID against the one before: 200,000
        // leases load at once; in decreasing order (which no server writes)
        // they are refused as soon as the second is read, nothing stored
        // (not sorted, nor inserted one by one into the lease tree). Measured
        // before this test: 20 ms to load, 10 ms to refuse.
        let server = Server::start(flavor);
        let mut con = server.con();
        ok(&mut con, &["IDPOOL.CREATE", "template", "10"]);
        let template: Vec<u8> = query(&mut con, &["DUMP", "template"]);
        let never = u64::MAX;
        let until = harness::server_ms(&mut con) as u64 + 3_600_000;
        // IDs 1..=200,000 of 400,000, every other lease forever, the next
        // search from 150,000.
        let leases: Vec<[u64; 2]> = (1..=200_000u64)
            .map(|id| [id, if id.is_multiple_of(2) { never } else { until + id }])
            .collect();
        let header = [400_000, 150_000, 0, 200_000];
        let payload = |leases: &mut dyn Iterator<Item = &[u64; 2]>| {
            let values: Vec<u64> = header.iter().copied().chain(leases.flatten().copied()).collect();
            forge(&template, &values, 1)
        };
        let in_order = payload(&mut leases.iter());
        let reversed = payload(&mut leases.iter().rev());

        let started = Instant::now();
        let restored: Value = redis::cmd("RESTORE").arg("big").arg(0).arg(&in_order[..]).query(&mut con).unwrap();
        let took = started.elapsed();
        assert_eq!(restored, Value::Okay);
        assert!(took < Duration::from_secs(3) || harness::under_valgrind(), "RESTORE of 200,000 leases took {took:?}");
        assert_eq!(idpool_info(&mut con, "big"), (400_000, 200_000, 150_000, None));
        // 150,000..=200,000 are leased: the next ID is the first after them.
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "big"]), Some(200_001));
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "big", "199999"]), 1);
        assert_eq!(int(&mut con, &["IDPOOL.RENEW", "big", "2", "60000"]), 1);
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "big", "200002"]), 0);

        let started = Instant::now();
        refused_restore(&mut con, &reversed, "ERR Bad data format");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(3) || harness::under_valgrind(), "refusing 200,000 leases took {took:?}");
        assert!(server.log().contains("refusing a stored ID pool: lease IDs out of order or out of range"));
    }

    fn copy_memory_usage_and_type(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        ok(&mut con, &["IDPOOL.CREATE", "big", "4294967295"]);
        let idle = int(&mut con, &["MEMORY", "USAGE", "big"]);
        assert!(idle < 1024, "an idle pool of 2^32-1 IDs uses {idle} bytes");
        let kind: String = cmd(&["TYPE", "big"]).query(&mut con).unwrap();
        assert_eq!(kind, "rr-idpool");
        let mut pipe = redis::pipe();
        for _ in 0..100_000 {
            pipe.cmd("IDPOOL.NEXT").arg("big").ignore();
        }
        let _: () = pipe.query(&mut con).unwrap();
        let used = int(&mut con, &["MEMORY", "USAGE", "big"]);
        assert!(used > 100_000 * 40, "MEMORY USAGE {used} cannot hold 100000 leases");
        assert!(used <= 100_000 * 48, "{} bytes per lease", used / 100_000);
        // COPY makes an independent pool.
        assert_eq!(int(&mut con, &["COPY", "big", "twin"]), 1);
        assert_eq!(idpool_info(&mut con, "twin"), idpool_info(&mut con, "big"));
        assert_eq!(digest_value(&mut con, "twin"), digest_value(&mut con, "big"));
        assert_eq!(next(&mut con, &["IDPOOL.NEXT", "twin"]), Some(100_001));
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "twin", "5"]), 1);
        assert_eq!(idpool_info(&mut con, "big").1, 100_000);
        assert_eq!(idpool_info(&mut con, "twin").1, 100_000);
        // Releasing everything gives the memory back.
        let mut pipe = redis::pipe();
        for id in 1..=100_000 {
            pipe.cmd("IDPOOL.RELEASE").arg("big").arg(id).ignore();
        }
        let _: () = pipe.query(&mut con).unwrap();
        let after = int(&mut con, &["MEMORY", "USAGE", "big"]);
        assert!(after < 2048, "{after} bytes after every lease was released");
    }

    fn writes_fire_events_and_abort_watch(flavor) {
        let server = Server::start(flavor);
        let events = harness::keyspace_events(&server, 5, |con| {
            ok(con, &["IDPOOL.CREATE", "p", "3"]);
            assert_eq!(next(con, &["IDPOOL.NEXT", "p"]), Some(1));
            assert_eq!(int(con, &["IDPOOL.RENEW", "p", "1", "1000"]), 1);
            assert_eq!(int(con, &["IDPOOL.RELEASE", "p", "2"]), 0); // no change, no event
            assert_eq!(int(con, &["IDPOOL.RELEASE", "p", "1"]), 1);
            ok(con, &["IDPOOL.RESIZE", "p", "5"]);
        });
        assert_eq!(
            events,
            ["p idpool.create", "p idpool.next", "p idpool.renew", "p idpool.release", "p idpool.resize"]
        );
        let mut con = server.con();
        let mut other = server.con();
        let _: () = cmd(&["WATCH", "p"]).query(&mut con).unwrap();
        let _: Value = cmd(&["IDPOOL.INFO", "p"]).query(&mut other).unwrap();
        assert_eq!(next(&mut other, &["IDPOOL.NEXT", "p"]), Some(2));
        let mut transaction = redis::pipe();
        transaction.atomic().cmd("IDPOOL.NEXT").arg("p");
        let aborted: Option<Vec<i64>> = transaction.query(&mut con).unwrap();
        assert_eq!(aborted, None);
    }

    fn writes_invalidate_client_tracking(flavor) {
        let server = Server::start(flavor);
        ok(&mut server.con(), &["IDPOOL.CREATE", "p", "10"]);
        // A reader of the pool is told when a write changes it.
        let keys = harness::invalidated_keys(
            &server,
            |reader| assert_eq!(idpool_info(reader, "p").1, 0),
            |writer| assert_eq!(next(writer, &["IDPOOL.NEXT", "p"]), Some(1)),
        );
        assert_eq!(keys, ["p"]);
    }

    fn random_arguments_never_crash_and_errors_change_nothing(flavor) {
        let server = Server::start(flavor);
        let commands: &[&[u8]] = &[
            b"IDPOOL.CREATE", b"IDPOOL.NEXT", b"IDPOOL.RELEASE", b"IDPOOL.RENEW",
            b"IDPOOL.INFO", b"IDPOOL.RESIZE", b"IDPOOL.APPLY", b"idpool.next",
        ];
        let words: &[&[u8]] = &[
            b"pool", b"str", b"absent", b"TTL", b"ttl", b"1", b"2", b"5", b"0", b"-1", b"100",
            b"4294967295", b"4294967296", b"9223372036854775807", b"-9223372036854775808",
            b"", b"\xff", b"1.5", b"FREE", b"LEASE",
        ];
        let setup = |con: &mut Connection| {
            let _: () = cmd(&["SET", "str", "x"]).query(con).unwrap();
            // BUSYKEY once the pool exists.
            let _ = cmd(&["IDPOOL.CREATE", "pool", "5", "TTL", "50"]).query::<Value>(con);
        };
        harness::fuzz(&server, 0x1d9001, 2_000, setup, |rng| harness::random_command(rng, commands, words, 5));
    }

    fn command_metadata_and_cluster_routing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let calls = [
            vec!["IDPOOL.CREATE", "k", "10", "TTL", "5"],
            vec!["IDPOOL.NEXT", "k", "TTL", "5"],
            vec!["IDPOOL.RELEASE", "k", "1"],
            vec!["IDPOOL.RENEW", "k", "1", "5"],
            vec!["IDPOOL.INFO", "k"],
            vec!["IDPOOL.RESIZE", "k", "5"],
            vec!["IDPOOL.APPLY", "k", "5", "1", "FREE", "2", "LEASE", "3", "0"],
        ];
        harness::check_keys_and_docs(&mut con, &calls, "k", "IDPOOL.NEXT", module_docs(
            "Leases the first free ID after the last one handed out (cyclic), optionally waiting first-come-first-served; nil when all are leased",
            "0.2.0",
            "O(log N) where N is the number of leases, plus O(log N) per ended lease reclaimed",
            &[
                "- name=key type=key key_spec_index=0",
                "- name=ttl type=integer token=TTL flags=optional",
                "- name=wait type=integer token=WAIT flags=optional",
            ],
        ));
        drop(con);
        drop(server);

        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        for n in 0..20 {
            let key = format!("pool:{n}");
            ok(&mut con, &["IDPOOL.CREATE", &key, "3"]);
            assert_eq!(int(&mut con, &["IDPOOL.NEXT", &key]), 1);
            assert_eq!(int(&mut con, &["IDPOOL.RELEASE", &key, "1"]), 1);
        }
    }
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

/// Pools with and without default TTLs, short and long leases, releases.
fn pool_workload(con: &mut Connection) {
    ok(con, &["IDPOOL.CREATE", "p:main", "1000", "TTL", HOUR]);
    for expected in 1..=5 {
        assert_eq!(next(con, &["IDPOOL.NEXT", "p:main"]), Some(expected));
    }
    assert_eq!(int(con, &["IDPOOL.RELEASE", "p:main", "3"]), 1);
    assert_eq!(
        next(con, &["IDPOOL.NEXT", "p:main", "TTL", "86400000"]),
        Some(6)
    );
    ok(con, &["IDPOOL.CREATE", "p:forever", "3"]);
    assert_eq!(next(con, &["IDPOOL.NEXT", "p:forever"]), Some(1));
    assert_eq!(next(con, &["IDPOOL.NEXT", "p:forever"]), Some(2));
    ok(con, &["IDPOOL.CREATE", "p:short", "2"]);
    assert_eq!(
        next(con, &["IDPOOL.NEXT", "p:short", "TTL", "120000"]),
        Some(1)
    );
    ok(con, &["IDPOOL.CREATE", "p:empty", "4294967295", "TTL", "5"]);
}

const POOL_KEYS: [&str; 4] = ["p:main", "p:forever", "p:short", "p:empty"];

/// Each pool's INFO and value digest.
fn pool_state(con: &mut Connection) -> Vec<(IdpoolInfo, Value)> {
    POOL_KEYS
        .iter()
        .map(|key| (idpool_info(con, key), digest_value(con, key)))
        .collect()
}

/// A `DUMP` payload of the ID pool type with `values` as its stored form.
fn forge(template: &[u8], values: &[u64], encver: u64) -> Vec<u8> {
    let fields: Vec<harness::Field> = values.iter().map(|&n| harness::Field::Num(n)).collect();
    harness::forge(template, &fields, encver)
}

#[test]
fn crc64_matches_the_check_value() {
    assert_eq!(harness::crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
}
