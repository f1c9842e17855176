//! IDGEN on real servers: replies, errors, concurrency, replication, AOF,
//! command metadata, WATCH, notifications, client tracking and cluster.

use crate::harness;

use std::collections::HashSet;

use harness::{
    cmd, command_docs, command_flags, error, int, module_docs, pick, snapshot, text, value,
    Cluster, Replicated, Server, Value, NOT_INTEGER, SYNTAX, WRONGTYPE,
};

server_tests! {
    fn module_is_listed_as_recipes(flavor) {
        let server = Server::start(flavor);
        let modules: Vec<Vec<Value>> = redis::cmd("MODULE").arg("LIST").query(&mut server.con()).unwrap();
        let names: Vec<String> = modules
            .iter()
            .filter_map(|module| match module.get(1) {
                Some(Value::BulkString(name)) => Some(String::from_utf8_lossy(name).into_owned()),
                _ => None,
            })
            .collect();
        assert!(names.contains(&"recipes".to_string()), "{names:?}");
    }

    fn classic_transcript(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "user::id"]), 0);
        assert_eq!(int(&mut con, &["IDGEN.RESERVE", "user::id", "1000000"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "user::id"]), 1_000_001);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "user::id"]), 1_000_002);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "user::id"]), 1_000_003);
        assert_eq!(int(&mut con, &["IDGEN.RESERVE", "user::id", "9999"]), 0);
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "user::id"]), 1_000_003);
        // The key stays a plain counter for the built-ins.
        let value: String = cmd(&["GET", "user::id"]).query(&mut con).unwrap();
        assert_eq!(value, "1000003");
        assert_eq!(int(&mut con, &["INCR", "user::id"]), 1_000_004);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "user::id"]), 1_000_005);
        // A generator that INCR started.
        assert_eq!(int(&mut con, &["INCR", "by-incr"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "by-incr"]), 2);
    }

    fn hash_variant(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "ids", "FIELD", "post"]), 0);
        assert_eq!(int(&mut con, &["IDGEN.RESERVE", "ids", "1000000", "FIELD", "post"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "ids", "field", "post"]), 1_000_001);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "ids", "FIELD", "user"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.RESERVE", "ids", "9999", "FIELD", "post"]), 0);
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "ids", "FIELD", "post"]), 1_000_001);
        assert_eq!(int(&mut con, &["HINCRBY", "ids", "post", "1"]), 1_000_002);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "ids", "FIELD", "post", "COUNT", "10"]), 1_000_003);
        let post: String = cmd(&["HGET", "ids", "post"]).query(&mut con).unwrap();
        assert_eq!(post, "1000012");
        // Binary field names work.
        let mut binary = redis::cmd("IDGEN.NEXT");
        binary.arg("ids").arg("FIELD").arg(&b"\x00\xff\n"[..]);
        assert_eq!(binary.query::<i64>(&mut con).unwrap(), 1);
        let stored: i64 = redis::cmd("HGET").arg("ids").arg(&b"\x00\xff\n"[..]).query(&mut con).unwrap();
        assert_eq!(stored, 1);
    }

    fn count_takes_a_block_and_returns_its_first_id(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "g", "COUNT", "1000"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "g"]), 1000);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "g", "count", "1"]), 1001);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "g", "COUNT", "2147483648"]), 1002);
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "g"]), 1001 + 2_147_483_648);
        // Options in either order.
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "h", "COUNT", "5", "FIELD", "f"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "h", "FIELD", "f", "COUNT", "5"]), 6);
        // Up to the very last ID, then a clear error.
        let _: () = cmd(&["SET", "top", "9223372036854775805"]).query(&mut con).unwrap();
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "top", "COUNT", "2"]), 9_223_372_036_854_775_806);
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "top"]), i64::MAX);
    }

    fn next_keeps_the_ttl_like_incr(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: () = cmd(&["SET", "g", "41", "EX", "1000"]).query(&mut con).unwrap();
        let expiry = int(&mut con, &["PEXPIRETIME", "g"]);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "g"]), 42);
        assert_eq!(int(&mut con, &["IDGEN.RESERVE", "g", "100"]), 1);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "g"]), expiry);
    }

    fn every_error_leaves_the_key_untouched(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: () = cmd(&["SET", "text", "hello"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "padded", "007"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "top", "9223372036854775807"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "nearly", "9223372036854775806", "EX", "1000"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "g", "5"]).query(&mut con).unwrap();
        let _: () = cmd(&["HSET", "h", "f", "5", "bad", "1.5"]).query(&mut con).unwrap();
        let _: () = cmd(&["RPUSH", "list", "a"]).query(&mut con).unwrap();
        let keys = ["text", "padded", "top", "nearly", "g", "h", "list", "absent"];
        let before: Vec<_> = keys.iter().map(|key| snapshot(&mut con, key)).collect();

        let exhausted = "EXHAUSTED taking 1 more ID(s) after 9223372036854775807 would pass 9223372036854775807";
        let cases: &[(&[&str], &str)] = &[
            // Values that are not base-10 64-bit integers, as INCR sees them.
            (&["IDGEN.NEXT", "text"], NOT_INTEGER),
            (&["IDGEN.NEXT", "padded"], NOT_INTEGER),
            (&["IDGEN.RESERVE", "text", "10"], NOT_INTEGER),
            (&["IDGEN.CURRENT", "text"], NOT_INTEGER),
            (&["IDGEN.NEXT", "h", "FIELD", "bad"], "ERR hash value is not an integer"),
            (&["IDGEN.CURRENT", "h", "FIELD", "bad"], "ERR hash value is not an integer"),
            // Keys of another type.
            (&["IDGEN.NEXT", "list"], WRONGTYPE),
            (&["IDGEN.NEXT", "list", "FIELD", "f"], WRONGTYPE),
            (&["IDGEN.RESERVE", "list", "1"], WRONGTYPE),
            (&["IDGEN.CURRENT", "list"], WRONGTYPE),
            (&["IDGEN.NEXT", "h"], WRONGTYPE),
            (&["IDGEN.NEXT", "g", "FIELD", "f"], WRONGTYPE),
            (&["IDGEN.RESERVE", "g", "10", "FIELD", "f"], WRONGTYPE),
            (&["IDGEN.CURRENT", "g", "FIELD", "f"], WRONGTYPE),
            // Counts and floors out of range or not integers.
            (&["IDGEN.NEXT", "g", "COUNT", "0"], "ERR COUNT must be between 1 and 2147483648"),
            (&["IDGEN.NEXT", "g", "COUNT", "-1"], "ERR COUNT must be between 1 and 2147483648"),
            (&["IDGEN.NEXT", "g", "COUNT", "2147483649"], "ERR COUNT must be between 1 and 2147483648"),
            (&["IDGEN.NEXT", "g", "COUNT", "abc"], NOT_INTEGER),
            (&["IDGEN.NEXT", "g", "COUNT", "+5"], NOT_INTEGER),
            (&["IDGEN.NEXT", "g", "COUNT", "99999999999999999999"], NOT_INTEGER),
            (&["IDGEN.RESERVE", "g", "-1"], "ERR floor must be a non-negative integer"),
            (&["IDGEN.RESERVE", "g", "1.5"], NOT_INTEGER),
            (&["IDGEN.RESERVE", "absent", "x"], NOT_INTEGER),
            // Exhaustion, never a wrap.
            (&["IDGEN.NEXT", "top"], exhausted),
            (&["IDGEN.NEXT", "nearly", "COUNT", "2"], "EXHAUSTED taking 2 more ID(s) after 9223372036854775806 would pass 9223372036854775807"),
            (&["IDGEN.NEXT", "absent", "COUNT", "2"], ""),
            // Unknown, repeated or incomplete options.
            (&["IDGEN.NEXT", "g", "LIMIT", "1"], SYNTAX),
            (&["IDGEN.NEXT", "g", "COUNT"], SYNTAX),
            (&["IDGEN.NEXT", "g", "FIELD"], SYNTAX),
            (&["IDGEN.NEXT", "g", "COUNT", "1", "COUNT", "1"], SYNTAX),
            (&["IDGEN.NEXT", "h", "FIELD", "f", "field", "f"], SYNTAX),
            (&["IDGEN.RESERVE", "g", "10", "COUNT", "1"], SYNTAX),
            (&["IDGEN.CURRENT", "g", "COUNT", "1"], SYNTAX),
            (&["IDGEN.CURRENT", "h", "FIELD", "f", "extra"], SYNTAX),
            // Wrong arity.
            (&["IDGEN.NEXT"], "ERR wrong number of arguments for 'idgen.next' command"),
            (&["IDGEN.RESERVE", "g"], "ERR wrong number of arguments for 'idgen.reserve' command"),
            (&["IDGEN.CURRENT"], "ERR wrong number of arguments for 'idgen.current' command"),
        ];
        for (words, expected) in cases {
            if expected.is_empty() {
                continue; // a success listed for contrast, run below
            }
            assert_eq!(error(&mut con, &cmd(words)), *expected, "{words:?}");
        }
        let after: Vec<_> = keys.iter().map(|key| snapshot(&mut con, key)).collect();
        assert_eq!(before, after, "an error changed a key");
        // The exhausted generator still answers CURRENT, and a block that fits is taken.
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "top"]), i64::MAX);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "absent", "COUNT", "2"]), 1);
    }

    fn concurrent_clients_get_unique_ids_without_gaps(flavor) {
        let server = Server::start(flavor);
        let clients = 8;
        let calls = 5_000;
        let threads: Vec<_> = (0..clients)
            .map(|client| {
                let mut con = server.con();
                std::thread::spawn(move || {
                    let mut ids = Vec::new();
                    for call in 0..calls {
                        // Every fifth call of odd clients takes a block of 3.
                        let count: i64 = if client % 2 == 1 && call % 5 == 0 { 3 } else { 1 };
                        let first = int(&mut con, &["IDGEN.NEXT", "shared", "COUNT", &count.to_string()]);
                        ids.extend(first..first + count);
                    }
                    ids
                })
            })
            .collect();
        let mut all = Vec::new();
        for thread in threads {
            all.extend(thread.join().expect("client thread"));
        }
        let unique: HashSet<i64> = all.iter().copied().collect();
        assert_eq!(unique.len(), all.len(), "an ID was handed out twice");
        let max = *all.iter().max().unwrap();
        assert_eq!(max as usize, all.len(), "the IDs have gaps");
        assert_eq!(int(&mut server.con(), &["IDGEN.CURRENT", "shared"]), max);
    }

    fn replica_holds_exactly_the_primary_values(flavor) {
        harness::replica_converges(flavor, |_, con| mixed_workload(con));
    }

    fn aof_restart_restores_exactly_the_same_values(flavor) {
        let server = harness::aof_round_trip(flavor, |_, con| mixed_workload(con));
        let mut con = server.con();
        // And the generators continue where they were.
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "gen:0"]), int(&mut con, &["GET", "gen:0"]));
    }

    fn command_metadata_is_complete(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for words in [
            &["IDGEN.NEXT", "gen", "FIELD", "f", "COUNT", "3"][..],
            &["IDGEN.RESERVE", "gen", "5"],
            &["IDGEN.CURRENT", "gen"],
        ] {
            assert_eq!(harness::getkeys(&mut con, words), ["gen"], "{words:?}");
        }

        assert_eq!(
            command_docs(&mut con, "IDGEN.NEXT"),
            module_docs(
                "Takes the next ID (or COUNT consecutive IDs) from a generator and returns the first",
                "0.1.0",
                "O(1)",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=field type=string token=FIELD flags=optional",
                    "- name=count type=integer token=COUNT flags=optional",
                ],
            )
        );
        assert_eq!(
            command_docs(&mut con, "IDGEN.RESERVE"),
            module_docs(
                "Raises a generator so that IDs up to floor are never handed out; never lowers it",
                "0.1.0",
                "O(1)",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=floor type=integer",
                    "- name=field type=string token=FIELD flags=optional",
                ],
            )
        );

        let info: Vec<Value> = cmd(&["COMMAND", "INFO", "IDGEN.NEXT", "IDGEN.RESERVE", "IDGEN.CURRENT"]).query(&mut con).unwrap();
        let arities: Vec<i64> = info
            .iter()
            .map(|command| match command {
                Value::Array(fields) => match fields.get(1) {
                    Some(Value::Int(arity)) => *arity,
                    other => panic!("no arity: {other:?}"),
                },
                other => panic!("no command info: {other:?}"),
            })
            .collect();
        assert_eq!(arities, [-2, -3, -2]);
        assert_eq!(command_flags(&mut con, "IDGEN.NEXT"), ["write", "denyoom", "module", "fast"]);
        assert_eq!(command_flags(&mut con, "IDGEN.RESERVE"), ["write", "denyoom", "module", "fast"]);
        assert_eq!(command_flags(&mut con, "IDGEN.CURRENT"), ["readonly", "module", "fast"]);

        if flavor.has_module_acl_categories(&mut con) {
            let write: Vec<String> = cmd(&["ACL", "CAT", "write"]).query(&mut con).unwrap();
            let read: Vec<String> = cmd(&["ACL", "CAT", "read"]).query(&mut con).unwrap();
            let lower = |names: Vec<String>| names.into_iter().map(|n| n.to_lowercase()).collect::<HashSet<_>>();
            let (write, read) = (lower(write), lower(read));
            assert!(write.contains("idgen.next") && write.contains("idgen.reserve"));
            assert!(read.contains("idgen.current") && !read.contains("idgen.next"));
        }
    }

    fn acl_key_patterns_apply_to_module_commands(flavor) {
        let server = Server::start(flavor);
        let mut admin = server.con();
        let _: () = cmd(&["ACL", "SETUSER", "app", "on", ">pw", "~app:*", "+idgen.next", "+idgen.current"])
            .query(&mut admin)
            .unwrap();
        let client = redis::Client::open(format!("redis://app:pw@127.0.0.1:{}/", server.port)).unwrap();
        let mut app = client.get_connection().unwrap();
        assert_eq!(int(&mut app, &["IDGEN.NEXT", "app:orders"]), 1);
        let denied = error(&mut app, &cmd(&["IDGEN.NEXT", "other:orders"]));
        let expected = if harness::server_version(&mut admin) < (7, 2) {
            "NOPERM this user has no permissions to access one of the keys used as arguments"
        } else {
            "NOPERM No permissions to access a key"
        };
        assert_eq!(denied, expected);
        assert_eq!(int(&mut admin, &["EXISTS", "other:orders"]), 0);
    }

    fn watch_sees_module_writes(flavor) {
        let server = Server::start(flavor);
        let (mut watcher, mut other) = (server.con(), server.con());
        let exec = |con: &mut harness::Connection| -> Value {
            let _: () = cmd(&["MULTI"]).query(con).unwrap();
            assert_eq!(text(&value(con, &["GET", "gen"])), "QUEUED");
            cmd(&["EXEC"]).query(con).unwrap()
        };
        // A write by the module aborts the transaction…
        let _: () = cmd(&["WATCH", "gen"]).query(&mut watcher).unwrap();
        int(&mut other, &["IDGEN.NEXT", "gen"]);
        assert_eq!(exec(&mut watcher), Value::Nil);
        let _: () = cmd(&["WATCH", "gen"]).query(&mut watcher).unwrap();
        assert_eq!(int(&mut other, &["IDGEN.RESERVE", "gen", "100"]), 1);
        assert_eq!(exec(&mut watcher), Value::Nil);
        // …and a command that changed nothing does not.
        let _: () = cmd(&["WATCH", "gen"]).query(&mut watcher).unwrap();
        assert_eq!(int(&mut other, &["IDGEN.RESERVE", "gen", "5"]), 0);
        assert_eq!(int(&mut other, &["IDGEN.CURRENT", "gen"]), 100);
        assert_eq!(exec(&mut watcher), Value::Array(vec![Value::BulkString(b"100".to_vec())]));
    }

    fn writes_fire_keyspace_notifications(flavor) {
        let server = Server::start(flavor);
        let events = harness::keyspace_events(&server, 2, |con| {
            int(con, &["IDGEN.NEXT", "gen"]);
            int(con, &["IDGEN.NEXT", "ids", "FIELD", "f"]);
        });
        assert_eq!(events, ["gen incrby", "ids hincrby"]);
    }

    fn client_tracking_is_invalidated(flavor) {
        let server = Server::start(flavor);
        let keys = harness::invalidated_keys(
            &server,
            |reader| {
                let _: Option<String> = cmd(&["GET", "gen"]).query(reader).unwrap();
            },
            |writer| {
                int(writer, &["IDGEN.NEXT", "gen"]);
            },
        );
        assert_eq!(keys, ["gen"]);
    }

    fn cluster_routes_each_key_to_its_slot_owner(flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        let keys: Vec<String> = (0..30).map(|i| format!("orders:{i}")).collect();
        for key in &keys {
            let first: i64 = redis::cmd("IDGEN.NEXT").arg(key).arg("COUNT").arg(10).query(&mut con).unwrap();
            assert_eq!(first, 1);
            let first: i64 = redis::cmd("IDGEN.NEXT").arg(key).query(&mut con).unwrap();
            assert_eq!(first, 11);
        }
        let mut nodes: Vec<_> = cluster.nodes.iter().map(|node| node.con()).collect();
        let mut used = HashSet::new();
        for key in &keys {
            let slot = int(&mut nodes[0], &["CLUSTER", "KEYSLOT", key]);
            let holders: Vec<usize> = (0..nodes.len())
                .filter(|&n| int(&mut nodes[n], &["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]) > 0)
                .collect();
            assert_eq!(holders.len(), 1, "{key} is on {holders:?}");
            let owner = holders[0];
            used.insert(owner);
            assert_eq!(int(&mut nodes[owner], &["IDGEN.CURRENT", key]), 11);
            // Any other node redirects: the server found the key through the key spec.
            let other = (owner + 1) % nodes.len();
            let moved = error(&mut nodes[other], &cmd(&["IDGEN.NEXT", key]));
            assert_eq!(moved, cluster.moved(key));
        }
        assert_eq!(used.len(), 3, "30 keys should spread over all three primaries");
    }
}

/// A mix of every IDGEN write, on string and hash generators, with and
/// without TTLs; returns the keys it touched.
fn mixed_workload(con: &mut harness::Connection) -> Vec<String> {
    let _: () = cmd(&["SET", "gen:ttl", "10", "PX", "3600000"])
        .query(con)
        .unwrap();
    for round in 0..200 {
        let gen = format!("gen:{}", round % 5);
        int(con, &["IDGEN.NEXT", &gen]);
        int(con, &["IDGEN.NEXT", &gen, "COUNT", "7"]);
        int(
            con,
            &["IDGEN.NEXT", "ids", "FIELD", &format!("f{}", round % 3)],
        );
        int(
            con,
            &[
                "IDGEN.RESERVE",
                "ids",
                &(round * 10).to_string(),
                "FIELD",
                "floor",
            ],
        );
        int(con, &["IDGEN.RESERVE", "gen:ttl", &(round * 3).to_string()]);
        int(con, &["IDGEN.NEXT", "gen:ttl"]);
    }
    let mut keys: Vec<String> = (0..5).map(|i| format!("gen:{i}")).collect();
    keys.extend(["gen:ttl".to_string(), "ids".to_string()]);
    keys
}

server_tests! {
    fn random_arguments_never_crash_and_errors_change_nothing(flavor) {
        use rand::Rng;
        let server = Server::start(flavor);
        let words: &[&[u8]] = &[
            b"FIELD", b"field", b"COUNT", b"count", b"f", b"", b"0", b"1", b"-1", b"007", b"+1",
            b"2147483648", b"2147483649", b"9223372036854775807", b"9223372036854775808",
            b"-9223372036854775808", b"\x00\xff", b"1.5", b"KEEPTTL",
        ];
        let keys: &[&[u8]] = &[b"g", b"h", b"list", b"text", b"top", b"absent"];
        let commands: &[&[u8]] = &[b"IDGEN.NEXT", b"IDGEN.RESERVE", b"IDGEN.CURRENT", b"idgen.next"];
        let setup = |con: &mut harness::Connection| {
            let _: () = cmd(&["SET", "text", "hello"]).query(con).unwrap();
            let _: () = cmd(&["SET", "top", "9223372036854775806"]).query(con).unwrap();
            let _: i64 = cmd(&["RPUSH", "list", "x"]).query(con).unwrap();
        };
        harness::fuzz(&server, 0x1d6e, 3_000, setup, |rng| {
            let mut argv = vec![pick(rng, commands)];
            if rng.random_ratio(9, 10) {
                argv.push(pick(rng, keys));
            }
            for _ in 0..rng.random_range(0..5) {
                argv.push(pick(rng, words));
            }
            argv
        });
    }
}

server_tests! {
    fn works_inside_transactions_and_scripts_and_replicates_them(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let _: () = cmd(&["MULTI"]).query(&mut con).unwrap();
        for words in [
            &["IDGEN.NEXT", "g"][..],
            &["IDGEN.NEXT", "g", "COUNT", "5"],
            &["IDGEN.RESERVE", "h", "100", "FIELD", "x"],
        ] {
            assert_eq!(text(&value(&mut con, words)), "QUEUED", "{words:?}");
        }
        let replies: Vec<i64> = cmd(&["EXEC"]).query(&mut con).unwrap();
        assert_eq!(replies, [1, 2, 1]);
        let script = "return redis.call('IDGEN.NEXT', KEYS[1], 'COUNT', ARGV[1])";
        assert_eq!(int(&mut con, &["EVAL", script, "1", "g", "3"]), 7);
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "g"]), 9);
        pair.sync();
        let mut replica = pair.replica.con();
        assert_eq!(snapshot(&mut con, "g"), snapshot(&mut replica, "g"));
        assert_eq!(snapshot(&mut con, "h"), snapshot(&mut replica, "h"));
        assert_eq!(int(&mut replica, &["IDGEN.CURRENT", "g"]), 9);
        assert_eq!(int(&mut replica, &["IDGEN.CURRENT", "h", "FIELD", "x"]), 100);
        // A replica refuses writes, as for INCR, and still answers reads.
        let refused = error(&mut replica, &cmd(&["IDGEN.NEXT", "g"]));
        assert_eq!(refused, "READONLY You can't write against a read only replica.");
    }
}

// IDGEN.ASSIGN: the same name always gets the same ID.

const DIFFER: &str = "ERR the counter, index and REVERSE keys must differ";

/// `HGET key field` (any bytes).
fn hget(con: &mut harness::Connection, key: &str, field: &[u8]) -> Option<String> {
    redis::cmd("HGET").arg(key).arg(field).query(con).unwrap()
}

/// Field-value pairs as [`hgetall`] gives them.
fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(field, value)| (field.to_string(), value.to_string()))
        .collect()
}

/// `HGETALL key`, sorted by field.
fn hgetall(con: &mut harness::Connection, key: &str) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = redis::cmd("HGETALL")
        .arg(key)
        .query::<std::collections::HashMap<String, String>>(con)
        .unwrap()
        .into_iter()
        .collect();
    pairs.sort();
    pairs
}

server_tests! {
    fn assign_gives_a_name_the_same_id_every_time(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // New names: consecutive IDs from the counter, from 1.
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "alice"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "bob"]), 2);
        // The same name: the same ID, nothing written.
        let before = harness::digest(&mut con);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "alice"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "bob"]), 2);
        assert_eq!(harness::digest(&mut con), before);
        // The counter is IDGEN.NEXT's: shared, in both directions.
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "c"]), 3);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "carol"]), 4);
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "c"]), 4);
        assert_eq!(text(&value(&mut con, &["GET", "c"])), "4");
        assert_eq!(hget(&mut con, "idx", b"alice").as_deref(), Some("1"));
        assert_eq!(hget(&mut con, "idx", b"bob").as_deref(), Some("2"));
        assert_eq!(hget(&mut con, "idx", b"carol").as_deref(), Some("4"));
        assert_eq!(int(&mut con, &["HLEN", "idx"]), 3);
        // REVERSE: id → name, written with the assignment.
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "dave", "REVERSE", "rev"]), 5);
        assert_eq!(hget(&mut con, "rev", b"5").as_deref(), Some("dave"));
        assert_eq!(hget(&mut con, "idx", b"dave").as_deref(), Some("5"));
        // A name with its ID and its reverse entry: its ID, nothing written.
        let before = harness::digest(&mut con);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "dave", "reverse", "rev"]), 5);
        assert_eq!(harness::digest(&mut con), before);
        // A name assigned without REVERSE: its ID, and now its reverse entry
        // (the counter and the index stay as they were).
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "alice", "REVERSE", "rev"]), 1);
        assert_eq!(hgetall(&mut con, "rev"), fields(&[("1", "alice"), ("5", "dave")]));
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "c"]), 5);
        assert_eq!(int(&mut con, &["HLEN", "idx"]), 4);
        // Any bytes, the empty name included, and a name like the keyword.
        let mut binary = redis::cmd("IDGEN.ASSIGN");
        binary.arg("c").arg("idx").arg(&b"\x00\xff\r\n"[..]).arg("REVERSE").arg("rev");
        assert_eq!(binary.query::<i64>(&mut con).unwrap(), 6);
        assert_eq!(redis::cmd("HGET").arg("rev").arg("6").query::<Vec<u8>>(&mut con).unwrap(), b"\x00\xff\r\n");
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", ""]), 7);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", ""]), 7);
        assert_eq!(hget(&mut con, "idx", b"").as_deref(), Some("7"));
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "REVERSE"]), 8);
        assert_eq!(hget(&mut con, "idx", b"REVERSE").as_deref(), Some("8"));
        // A counter set by others, with a TTL that stays (as INCR keeps it).
        let _: () = cmd(&["SET", "c2", "100", "PX", "600000"]).query(&mut con).unwrap();
        let expiry = int(&mut con, &["PEXPIRETIME", "c2"]);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c2", "idx2", "x", "REVERSE", "rev2"]), 101);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "c2"]), expiry);
        // An ID put in the index by other means is the name's ID.
        let _: () = cmd(&["HSET", "idx2", "preset", "42"]).query(&mut con).unwrap();
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c2", "idx2", "preset", "REVERSE", "rev2"]), 42);
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "c2"]), 101);
        assert_eq!(hgetall(&mut con, "rev2"), fields(&[("101", "x"), ("42", "preset")]));
        // An exhausted counter still answers the names it assigned.
        let _: () = cmd(&["SET", "c2", "9223372036854775807"]).query(&mut con).unwrap();
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c2", "idx2", "x"]), 101);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c2", "idx2", "x", "REVERSE", "rev2"]), 101);
    }

    fn assign_errors_are_exact_and_change_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for words in [
            &["SET", "c", "5"][..],
            &["SET", "text", "hello"],
            &["SET", "top", "9223372036854775807"],
            &["SET", "str", "x"],
            &["HSET", "idx", "alice", "1", "bad", "1.5", "word", "abc"],
            &["HSET", "rev", "1", "alice"],
            &["RPUSH", "list", "x"],
        ] {
            value(&mut con, words);
        }
        let before = harness::dataset(&mut con);
        let exhausted = "EXHAUSTED taking 1 more ID(s) after 9223372036854775807 would pass 9223372036854775807";
        let arity = harness::arity("idgen.assign");
        let cases: &[(&[&str], &str)] = &[
            // Any two of the keys the same.
            (&["IDGEN.ASSIGN", "c", "c", "n"], DIFFER),
            (&["IDGEN.ASSIGN", "new", "new", "n"], DIFFER),
            (&["IDGEN.ASSIGN", "c", "idx", "n", "REVERSE", "c"], DIFFER),
            (&["IDGEN.ASSIGN", "c", "idx", "n", "REVERSE", "idx"], DIFFER),
            (&["IDGEN.ASSIGN", "c", "c", "n", "REVERSE", "c"], DIFFER),
            (&["IDGEN.ASSIGN", "c", "idx", "alice", "REVERSE", "idx"], DIFFER),
            // A counter that is not an integer.
            (&["IDGEN.ASSIGN", "text", "idx", "n"], NOT_INTEGER),
            (&["IDGEN.ASSIGN", "text", "idx", "n", "REVERSE", "rev"], NOT_INTEGER),
            // A field in the index that is not an integer.
            (&["IDGEN.ASSIGN", "c", "idx", "bad"], "ERR hash value is not an integer"),
            (&["IDGEN.ASSIGN", "c", "idx", "word", "REVERSE", "rev"], "ERR hash value is not an integer"),
            // Keys of another type.
            (&["IDGEN.ASSIGN", "list", "idx", "n"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "idx", "other", "n"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "c", "str", "n"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "c", "list", "n"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "c", "idx", "n", "REVERSE", "str"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "c", "idx", "n", "REVERSE", "list"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "absent", "idx", "n", "REVERSE", "str"], WRONGTYPE),
            // A reverse index of another type, for a name that has its ID
            // too (even one whose counter is of no use any more).
            (&["IDGEN.ASSIGN", "c", "idx", "alice", "REVERSE", "str"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "c", "idx", "alice", "REVERSE", "list"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "top", "idx", "alice", "REVERSE", "list"], WRONGTYPE),
            (&["IDGEN.ASSIGN", "text", "idx", "alice", "REVERSE", "str"], WRONGTYPE),
            // The index is read first.
            (&["IDGEN.ASSIGN", "c", "idx", "word", "REVERSE", "str"], "ERR hash value is not an integer"),
            // The counter at its top.
            (&["IDGEN.ASSIGN", "top", "idx", "n"], exhausted),
            (&["IDGEN.ASSIGN", "top", "fresh", "n", "REVERSE", "rev"], exhausted),
            // Too few words.
            (&["IDGEN.ASSIGN", "c", "idx"], &arity),
        ];
        for (words, expected) in cases {
            assert_eq!(error(&mut con, &cmd(words)), *expected, "{words:?}");
            assert_eq!(harness::dataset(&mut con), before, "{words:?} changed data");
        }
        // Errors whose text the contract leaves open: errors all the same,
        // changing nothing.
        for words in [
            &["IDGEN.ASSIGN", "c", "idx", "n", "REVERSE"][..],
            &["IDGEN.ASSIGN", "c", "idx", "n", "REVERSE", "r1", "REVERSE", "r2"],
            &["IDGEN.ASSIGN", "c", "idx", "n", "NX"],
        ] {
            assert!(harness::reply(&mut con, words).is_err(), "{words:?} succeeded");
            assert_eq!(harness::dataset(&mut con), before, "{words:?} changed data");
        }
    }

    fn assign_replicates_verbatim(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let mut replica = pair.replica.con();
        let _: () = cmd(&["SET", "{u}c", "10", "PX", "600000"]).query(&mut con).unwrap();
        pair.sync();
        let _: () = cmd(&["CONFIG", "RESETSTAT"]).query(&mut replica).unwrap();
        // Both indexes draw from one counter; a model says what each gets.
        let mut counter = 10;
        let mut model: std::collections::HashMap<(&str, String), i64> = Default::default();
        for round in 0..50 {
            let name = format!("user-{}", round % 20);
            for (index, reverse) in [("{u}idx", true), ("{u}plain", false)] {
                let expected = *model.entry((index, name.clone())).or_insert_with(|| {
                    counter += 1;
                    counter
                });
                let mut words = vec!["IDGEN.ASSIGN", "{u}c", index, name.as_str()];
                if reverse {
                    words.extend(["REVERSE", "{u}rev"]);
                }
                assert_eq!(int(&mut con, &words), expected, "{words:?}");
            }
        }
        assert_eq!(counter, 50);
        pair.sync();
        let keys = ["{u}c", "{u}idx", "{u}rev", "{u}plain"];
        assert_eq!(harness::values(&mut con, &keys), harness::values(&mut replica, &keys));
        assert_eq!(harness::state(&mut con, &keys), harness::state(&mut replica, &keys));
        let received: HashSet<String> = harness::commands_run(&mut replica)
            .into_iter()
            .map(|(command, _)| command)
            .filter(|command| command.contains('.') || matches!(command.as_str(), "hset" | "incr" | "incrby" | "set"))
            .collect();
        assert_eq!(received, HashSet::from(["idgen.assign".to_string()]));
        let refused = error(&mut replica, &cmd(&["IDGEN.ASSIGN", "{u}c", "{u}idx", "new"]));
        assert_eq!(refused, "READONLY You can't write against a read only replica.");
    }

    /// `REVERSE` for a name that has its ID (assigned without `REVERSE`, or
    /// put in the index by other means) adds its reverse entry where the
    /// reverse index has none for the ID, as `HSETNX`: an entry there, even
    /// another name's, is left as it is. The reverse index is the only key
    /// written, and fires the only event (`hset`).
    fn assign_reverse_of_a_known_name(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "alice"]), 1);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "bob"]), 2);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "carol"]), 3);
        let index = hgetall(&mut con, "idx");
        // No reverse index yet: one is made for the entry.
        let events = harness::keyspace_events(&server, 2, |con| {
            assert_eq!(int(con, &["IDGEN.ASSIGN", "c", "idx", "alice", "REVERSE", "rev"]), 1);
            value(con, &["SET", "after", "1"]);
        });
        assert_eq!(events, ["rev hset", "after set"]);
        assert_eq!(hgetall(&mut con, "rev"), fields(&[("1", "alice")]));
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "bob", "REVERSE", "rev"]), 2);
        assert_eq!(hgetall(&mut con, "rev"), fields(&[("1", "alice"), ("2", "bob")]));
        // An entry for the ID already there: nothing written.
        value(&mut con, &["HSET", "rev", "3", "someone-else"]);
        let before = harness::dataset(&mut con);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "carol", "REVERSE", "rev"]), 3);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "alice", "REVERSE", "rev"]), 1);
        assert_eq!(harness::dataset(&mut con), before);
        assert_eq!(
            hgetall(&mut con, "rev"), fields(&[("1", "alice"), ("2", "bob"), ("3", "someone-else")]));
        // An ID put in the index by other means.
        value(&mut con, &["HSET", "idx", "dave", "42"]);
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "dave", "REVERSE", "rev"]), 42);
        assert_eq!(hget(&mut con, "rev", b"42").as_deref(), Some("dave"));
        // The counter and the index were never written.
        assert_eq!(int(&mut con, &["IDGEN.CURRENT", "c"]), 3);
        let mut with_dave = index.clone();
        with_dave.push(("dave".to_string(), "42".to_string()));
        with_dave.sort();
        assert_eq!(hgetall(&mut con, "idx"), with_dave);
        // A new name still takes the counter's next.
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "c", "idx", "erin", "REVERSE", "rev"]), 4);
        assert_eq!(hget(&mut con, "rev", b"4").as_deref(), Some("erin"));
    }

    /// The reverse entries of known names reach a replica with the command,
    /// which it applies to the same keys with the same outcome; a call that
    /// wrote nothing sends nothing.
    fn assign_reverse_of_a_known_name_replicates(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let mut replica = pair.replica.con();
        let _: () = cmd(&["CONFIG", "RESETSTAT"]).query(&mut replica).unwrap();
        for (name, id) in [("a", 1), ("b", 2), ("c", 3)] {
            assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "{r}c", "{r}idx", name]), id);
        }
        value(&mut con, &["HSET", "{r}rev", "3", "other"]);
        // a and b get their entries; c's ID has one, and a's the second time.
        for (name, id) in [("a", 1), ("b", 2), ("c", 3), ("a", 1)] {
            assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "{r}c", "{r}idx", name, "REVERSE", "{r}rev"]), id);
        }
        assert_eq!(int(&mut con, &["IDGEN.ASSIGN", "{r}c", "{r}idx", "last"]), 4);
        pair.sync();
        let received = |replica: &mut harness::Connection| -> std::collections::BTreeMap<String, u64> {
            harness::commands_run(replica)
                .into_iter()
                .filter(|(command, _)| command.contains('.') || matches!(command.as_str(), "hset" | "hsetnx" | "set" | "incrby"))
                .collect()
        };
        // Right after the initial sync, Redis 7.0's WAIT may answer before
        // the replica has applied the writes (assign_replicates_verbatim
        // fails now and then for it): wait until the last one is in.
        harness::wait_until("the replica applied the writes", || {
            int(&mut replica, &["HEXISTS", "{r}idx", "last"]) == 1
        });
        let keys = ["{r}c", "{r}idx", "{r}rev"];
        assert_eq!(harness::state(&mut con, &keys), harness::state(&mut replica, &keys));
        assert_eq!(hgetall(&mut replica, "{r}rev"), fields(&[("1", "a"), ("2", "b"), ("3", "other")]));
        assert_eq!(
            received(&mut replica),
            std::collections::BTreeMap::from([("hset".to_string(), 1), ("idgen.assign".to_string(), 6)])
        );
    }

    fn assign_needs_its_keys_in_one_slot(flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        for i in 0..20 {
            let (counter, index, reverse) = (format!("{{t{i}}}:c"), format!("{{t{i}}}:idx"), format!("{{t{i}}}:rev"));
            for (name, id) in [("a", 1), ("b", 2), ("a", 1)] {
                let got: i64 = cmd(&["IDGEN.ASSIGN", &counter, &index, name, "REVERSE", &reverse]).query(&mut con).unwrap();
                assert_eq!(got, id, "{counter} {name}");
            }
            let got: i64 = cmd(&["IDGEN.ASSIGN", &counter, &index, "c"]).query(&mut con).unwrap();
            assert_eq!(got, 3);
            let owner = cluster.owner(&counter);
            assert_eq!(int(&mut cluster.nodes[owner].con(), &["EXISTS", &counter, &index, &reverse]), 3);
        }
        let mut nodes: Vec<_> = cluster.nodes.iter().map(|node| node.con()).collect();
        let owner = cluster.owner("{a}c");
        for words in [
            &["IDGEN.ASSIGN", "{a}c", "{b}idx", "n"][..],
            &["IDGEN.ASSIGN", "{a}c", "{a}idx", "n", "REVERSE", "{b}rev"],
        ] {
            assert_eq!(error(&mut nodes[owner], &cmd(words)), harness::CROSSSLOT, "{words:?}");
        }
        let other = (owner + 1) % nodes.len();
        let moved = error(&mut nodes[other], &cmd(&["IDGEN.ASSIGN", "{a}c", "{a}idx", "n"]));
        assert_eq!(moved, cluster.moved("{a}c"));
        // The keys the server finds: REVERSE's by its keyword, after the name.
        let con = &mut nodes[0];
        assert_eq!(harness::getkeys(con, &["IDGEN.ASSIGN", "c", "idx", "n"]), ["c", "idx"]);
        assert_eq!(harness::getkeys(con, &["IDGEN.ASSIGN", "c", "idx", "n", "REVERSE", "r"]), ["c", "idx", "r"]);
        assert_eq!(harness::getkeys(con, &["IDGEN.ASSIGN", "c", "idx", "REVERSE"]), ["c", "idx"]);
        assert_eq!(harness::getkeys(con, &["IDGEN.ASSIGN", "c", "idx", "REVERSE", "REVERSE", "r"]), ["c", "idx", "r"]);
    }
}
