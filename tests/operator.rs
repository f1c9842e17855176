//! What operators see, on real servers: `INFO recipes` (each figure after
//! known operations, counters that `CONFIG RESETSTAT` leaves, the section
//! inside `INFO modules` and `INFO everything`), the
//! module's version, and a load refused for a stray argument.

use crate::harness;

use std::collections::HashMap;
use std::thread;
use std::time::Duration;

use harness::{
    cmd, decide, info_field, int, module_commands, ok, recipes_figures, value, Server, Value,
    Waiter,
};

server_tests! {
    fn info_counts_what_happened(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let text: String = cmd(&["INFO", "recipes"]).query(&mut con).unwrap();
        assert!(text.starts_with("# recipes\r\n"), "{text}");
        let zero = recipes_figures(&mut con, "recipes");
        // Every field the module's spec lists, and no other.
        let names = harness::spec_info_fields();
        assert!(names.len() > 40, "{names:?}");
        for name in &names {
            assert_eq!(zero.get(name.as_str()), Some(&0), "{name} in {zero:?}");
        }
        assert_eq!(zero.len(), names.len(), "{zero:?}");

        // Locks: a waiter handed the lock by a release, one by a delete, one
        // by expiry, one that times out; two waiting while we look.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l1", "a", "PX", "60000"]), 1);
        let waiters: Vec<_> = ["b", "c"]
            .into_iter()
            .map(|token| Waiter::start(&server, &["LOCK.ACQUIRE", "l1", token, "PX", "60000", "WAIT", "10000"]))
            .collect();
        assert_eq!(recipes_figures(&mut con, "recipes")["clients_waiting"], 2);
        let now = recipes_figures(&mut con, "recipes");
        assert_eq!((now["locks_with_waiters"], now["lock_waits"]), (1, 2));
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "l1", "a"]), 1);
        harness::wait_until("one hand-off by release", || recipes_figures(&mut con, "recipes")["lock_handoffs_release"] == 1);
        // The first waiter got it; deleting it hands it to the second.
        assert_eq!(value(&mut con, &["GET", "l1"]), Value::BulkString(b"b".to_vec()));
        assert_eq!(int(&mut con, &["DEL", "l1"]), 1);
        harness::wait_until("one hand-off by delete", || recipes_figures(&mut con, "recipes")["lock_handoffs_delete"] == 1);
        assert_eq!(value(&mut con, &["GET", "l1"]), Value::BulkString(b"c".to_vec()));
        for waiter in waiters {
            assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        }
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l2", "a", "PX", "200"]), 1);
        let expiring = Waiter::start(&server, &["LOCK.ACQUIRE", "l2", "b", "PX", "60000", "WAIT", "10000"]);
        assert_eq!(expiring.answer(), Ok(Value::Int(1)));
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l3", "a", "PX", "60000"]), 1);
        let nil: Value = cmd(&["LOCK.ACQUIRE", "l3", "b", "WAIT", "50"]).query(&mut server.con()).unwrap();
        assert_eq!(nil, Value::Nil);

        // Pools: two pools, three leases, one of them ended and reclaimed.
        ok(&mut con, &["IDPOOL.CREATE", "p1", "10"]);
        ok(&mut con, &["IDPOOL.CREATE", "p2", "10"]);
        assert_eq!(int(&mut con, &["IDPOOL.NEXT", "p1"]), 1);
        assert_eq!(int(&mut con, &["IDPOOL.NEXT", "p1", "TTL", "1"]), 2);
        assert_eq!(int(&mut con, &["IDPOOL.NEXT", "p2"]), 1);
        thread::sleep(Duration::from_millis(5));
        assert_eq!(int(&mut con, &["IDPOOL.NEXT", "p1"]), 3);
        assert_eq!(int(&mut con, &["COPY", "p2", "p3"]), 1);

        // Waits on an ID pool and a resource pool: one handed over, one
        // timed out each, and two waiting while we look.
        ok(&mut con, &["IDPOOL.CREATE", "p4", "1"]);
        assert_eq!(int(&mut con, &["IDPOOL.NEXT", "p4"]), 1);
        assert_eq!(int(&mut con, &["POOL.ADD", "rp", "r"]), 1);
        assert_eq!(value(&mut con, &["POOL.ACQUIRE", "rp", "a"]), Value::BulkString(b"r".to_vec()));
        let ids = Waiter::start(&server, &["IDPOOL.NEXT", "p4", "WAIT", "10000"]);
        let resources = Waiter::start(&server, &["POOL.ACQUIRE", "rp", "b", "WAIT", "10000"]);
        assert_eq!(recipes_figures(&mut con, "recipes")["clients_waiting"], 2);
        let now = recipes_figures(&mut con, "recipes");
        assert_eq!((now["resource_pools_with_waiters"], now["idpools_with_waiters"], now["locks_with_waiters"]), (1, 1, 0));
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "p4", "1"]), 1);
        assert_eq!(int(&mut con, &["POOL.RELEASE", "rp", "r", "a"]), 1);
        assert_eq!(ids.answer(), Ok(Value::Int(1)));
        assert_eq!(resources.answer(), Ok(Value::BulkString(b"r".to_vec())));
        for words in [["IDPOOL.NEXT", "p4", "WAIT", "20", ""], ["POOL.ACQUIRE", "rp", "c", "WAIT", "20"]] {
            let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
            let nil: Value = cmd(&words).query(&mut con).unwrap();
            assert_eq!(nil, Value::Nil);
        }

        // Rate: 2 allowed, 1 limited.
        let limit = ["RATE.LIMIT", "r", "2", "60000"];
        assert_eq!(decide(&mut con, &limit)[..4], [0, 2, 1, -1]);
        assert_eq!(decide(&mut con, &limit)[..4], [0, 2, 0, -1]);
        assert_eq!(decide(&mut con, &limit)[..3], [1, 2, 0]);

        // Autocomplete: two keys (a copy counts), two faded entries removed
        // by the next write.
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.FEED", "s1", "a", "1", "PX", "1"]), Value::BulkString(b"1".to_vec()));
        assert_eq!(value(&mut con, &["AUTOCOMPLETE.FEED", "s1", "b", "1", "PX", "1"]), Value::BulkString(b"1".to_vec()));
        assert_eq!(int(&mut con, &["COPY", "s1", "s2"]), 1);
        thread::sleep(Duration::from_millis(5));
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "s1", "c", "1"]), 1);

        let after = recipes_figures(&mut con, "recipes");
        let expected = [
            ("locks_with_waiters", 0), ("clients_waiting", 0), ("lock_waits", 4),
            ("lock_waits_timed_out", 1), ("lock_handoffs_release", 1),
            ("lock_handoffs_delete", 1), ("lock_handoffs_expiry", 1),
            ("idpools", 4), ("idpool_leases", 5), ("idpool_leases_reclaimed", 1),
            ("resource_pools_with_waiters", 0), ("idpools_with_waiters", 0), ("idpool_waits", 2),
            ("idpool_waits_timed_out", 1), ("idpool_handoffs", 1), ("resource_pools", 1),
            ("resource_waits", 2), ("resource_waits_timed_out", 1), ("resource_handoffs", 1),
            ("rate_allowed", 2), ("rate_limited", 1), ("autocomplete_keys", 2),
            ("autocomplete_entries_faded", 2), ("panics_caught", 0),
        ];
        for (name, value) in expected {
            assert_eq!(after[name], value, "{name} in {after:?}");
        }

        // The section is part of INFO modules and INFO everything.
        assert_eq!(recipes_figures(&mut con, "modules"), after);
        assert_eq!(recipes_figures(&mut con, "everything"), after);

        // Counters count from the module's load: CONFIG RESETSTAT (which the
        // module could only see through a filter on every command) leaves
        // every figure as it was.
        ok(&mut con, &["CONFIG", "RESETSTAT"]);
        assert_eq!(recipes_figures(&mut con, "recipes"), after);
        // Freed pools leave the gauges.
        assert_eq!(int(&mut con, &["DEL", "p1", "p2"]), 2);
        ok(&mut con, &["FLUSHALL", "SYNC"]);
        let flushed = recipes_figures(&mut con, "recipes");
        assert_eq!((flushed["idpools"], flushed["idpool_leases"]), (0, 0));
        assert_eq!((flushed["autocomplete_keys"], flushed["autocomplete_entries_faded"]), (0, 2));
        assert_eq!(info_field(&mut con, "recipes", "recipes_panics_caught").as_deref(), Some("0"));
    }

    fn the_version_follows_the_crate(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let modules: Vec<HashMap<String, Value>> = cmd(&["MODULE", "LIST"]).query(&mut con).unwrap();
        let recipes = modules
            .iter()
            .find(|module| module.get("name") == Some(&Value::BulkString(b"recipes".to_vec())))
            .expect("recipes in MODULE LIST");
        let [major, minor, patch] = [env!("CARGO_PKG_VERSION_MAJOR"), env!("CARGO_PKG_VERSION_MINOR"), env!("CARGO_PKG_VERSION_PATCH")]
            .map(|part| part.parse::<i64>().unwrap());
        assert_eq!(recipes.get("ver"), Some(&Value::Int(major * 10_000 + minor * 100 + patch)));
        // Each command's `since` is the release that added it (its family's,
        // but for commands added to a family later).
        for name in module_commands(&mut con) {
            let docs: HashMap<String, HashMap<String, Value>> = cmd(&["COMMAND", "DOCS", &name]).query(&mut con).unwrap();
            let since = docs[&name].get("since").cloned();
            let family = name.split('.').next().unwrap();
            let expected = match (family, name.as_str()) {
                (_, "idgen.assign") => "0.5.0",
                (_, "pool.status") => "0.6.0",
                (_, "rate.fixed") => "0.7.0",
                (_, "lock.macquire" | "lock.mreleaseif" | "lock.mextend") => "0.7.0",
                ("idgen" | "lock" | "article" | "cache", _) => "0.1.0",
                ("idpool" | "rate", _) => "0.2.0",
                ("pool", _) => "0.3.0",
                ("autocomplete" | "queue" | "uqueue", _) => "0.6.0",
                ("nearby", _) => "0.8.0",
                _ => "0.5.0",
            };
            assert_eq!(since, Some(Value::BulkString(expected.as_bytes().to_vec())), "{name}");
        }
    }

    fn a_stray_load_argument_refuses_the_load(flavor) {
        let text = harness::refused_start(flavor, &["maxwaiters", "10"], &[], |_| {});
        assert!(
            text.contains("<recipes> refusing to load: unknown module argument 'maxwaiters' (the module takes none)"),
            "{text}"
        );
    }
}
