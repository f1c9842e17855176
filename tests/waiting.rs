//! Waiting under operators' routines, for every family whose waiters take
//! something (LOCK, POOL, IDPOOL, RWLOCK; a test checks none is missing): a
//! lease ending while the server accepts no writes (`CLIENT
//! PAUSE … WRITE`, `FAILOVER`, `SHUTDOWN` waiting for a lagging replica), a
//! waiter unblocked or killed at the moment of its hand-off, and waits that
//! end leaving nothing behind.

use crate::harness;

use std::thread::sleep;
use std::time::{Duration, Instant};

use harness::{
    cmd, digest, digest_value, idpool_info, info_field, int, pool_holders, query, recipes_figures,
    reply, value, wait_blocked, wait_until, Connection, Replicated, Server, Value, Waiter,
};

/// `used_memory` less what the clients' buffers take, the least of a few
/// readings 50 ms apart (what the server frees a little later, such as the
/// clients that just went, is not counted).
fn memory_less_clients(con: &mut Connection) -> i64 {
    let field = |con: &mut Connection, name| -> i64 {
        info_field(con, "memory", name)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (0..5)
        .map(|_| {
            sleep(Duration::from_millis(50));
            field(con, "used_memory") - field(con, "mem_clients_normal")
        })
        .min()
        .unwrap_or(0)
}

/// A family's waiting command, set up with its only unit (a lock, a
/// resource, an ID) held by a short lease, and how to read who holds it.
struct Family {
    name: &'static str,
    /// Its `INFO recipes` gauge of keys with waiters.
    with_waiters: &'static str,
    /// Commands that leave the key held by a lease of `PX`/`TTL` 300 ms.
    hold_briefly: &'static [&'static [&'static str]],
    /// Commands that leave the key held with no lease end.
    hold: &'static [&'static [&'static str]],
    /// A waiter's command; `{who}` is its owner or token.
    wait: &'static [&'static str],
    /// What a served waiter is answered.
    granted: fn() -> Value,
    /// The holder's release command (held by `holder`).
    release: &'static [&'static str],
    /// Who holds the key now, as the family's reads say (`None`: nobody).
    holder: fn(&mut Connection) -> Option<String>,
}

const LOCK: Family = Family {
    name: "lock",
    with_waiters: "locks_with_waiters",
    hold_briefly: &[&["LOCK.ACQUIRE", "k", "holder", "PX", "300"]],
    hold: &[&["LOCK.ACQUIRE", "k", "holder"]],
    wait: &[
        "LOCK.ACQUIRE",
        "k",
        "{who}",
        "WAIT",
        "{wait}",
        "PX",
        "60000",
    ],
    granted: || Value::Int(1),
    release: &["LOCK.RELEASEIF", "k", "holder"],
    holder: |con| cmd(&["GET", "k"]).query(con).unwrap(),
};

const POOL: Family = Family {
    name: "pool",
    with_waiters: "resource_pools_with_waiters",
    hold_briefly: &[
        &["POOL.ADD", "k", "r1"],
        &["POOL.ACQUIRE", "k", "holder", "PX", "300"],
    ],
    hold: &[&["POOL.ADD", "k", "r1"], &["POOL.ACQUIRE", "k", "holder"]],
    wait: &[
        "POOL.ACQUIRE",
        "k",
        "{who}",
        "WAIT",
        "{wait}",
        "PX",
        "60000",
    ],
    granted: || Value::BulkString(b"r1".to_vec()),
    release: &["POOL.RELEASE", "k", "r1", "holder"],
    holder: |con| {
        pool_holders(con, "k")
            .first()
            .map(|(_, owner, _)| owner.clone())
    },
};

const IDPOOL: Family = Family {
    name: "idpool",
    with_waiters: "idpools_with_waiters",
    hold_briefly: &[
        &["IDPOOL.CREATE", "k", "1"],
        &["IDPOOL.NEXT", "k", "TTL", "300"],
    ],
    hold: &[&["IDPOOL.CREATE", "k", "1"], &["IDPOOL.NEXT", "k"]],
    wait: &["IDPOOL.NEXT", "k", "WAIT", "{wait}", "TTL", "60000"],
    granted: || Value::Int(1),
    release: &["IDPOOL.RELEASE", "k", "1"],
    // An ID pool has no owners: "leased" or nobody.
    holder: |con| (idpool_info(con, "k").1 == 1).then(|| "leased".to_string()),
};

const RWLOCK: Family = Family {
    name: "rwlock",
    with_waiters: "rwlocks_with_waiters",
    hold_briefly: &[&["RWLOCK.ACQUIRE", "k", "WRITE", "holder", "PX", "300"]],
    hold: &[&["RWLOCK.ACQUIRE", "k", "WRITE", "holder"]],
    wait: &[
        "RWLOCK.ACQUIRE",
        "k",
        "WRITE",
        "{who}",
        "WAIT",
        "{wait}",
        "PX",
        "60000",
    ],
    granted: || Value::Int(1),
    release: &["RWLOCK.RELEASE", "k", "holder"],
    // The first holder's token in `RWLOCK.INFO` (`mode`, `holders`, `waiting`).
    holder: |con| match value(con, &["RWLOCK.INFO", "k"]) {
        Value::Array(fields) => match fields.get(3) {
            Some(Value::Array(holders)) => match holders.first() {
                Some(Value::Array(holder)) => match holder.first() {
                    Some(Value::BulkString(token)) => {
                        Some(String::from_utf8_lossy(token).into_owned())
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        },
        _ => None,
    },
};

/// Every family whose waiters take something. LATCH's waiters take nothing
/// (they watch a count), so what these tests check of a hand-off does not
/// apply to it; `tests/latch.rs` tests its waits.
const FAMILIES: [&Family; 4] = [&LOCK, &POOL, &IDPOOL, &RWLOCK];
const WAITERS_TAKING_NOTHING: &[&str] = &["latch"];
/// Families whose waiters wait for an item rather than for a holder to let
/// go (no lease, no holder), so [`Family`] does not fit them: their waits are
/// tested in their own suite (`tests/uqueue.rs`: first come first served,
/// timeouts, disconnects, MULTI and scripts, replication of a hand-off;
/// `tests/rate.rs`: `RATE.FIXED … WAIT` waits for room in a counter, which no
/// holder gives back).
const WAITERS_TESTED_IN_THEIR_SUITE: &[&str] = &["uqueue", "rate"];

impl Family {
    /// The waiting command for `who`, waiting up to `wait_ms`.
    fn wait_words(&self, who: &str, wait_ms: u64) -> Vec<String> {
        let wait = wait_ms.to_string();
        self.wait
            .iter()
            .map(|word| word.replace("{who}", who).replace("{wait}", &wait))
            .collect()
    }

    fn waiter(&self, server: &Server, who: &str, wait_ms: u64) -> Waiter {
        let words = self.wait_words(who, wait_ms);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        Waiter::start(server, &words)
    }

    /// The holder as [`Family::holder`] names it, for a waiter `who`.
    fn named(&self, who: &str) -> Option<String> {
        if self.name == "idpool" {
            Some("leased".to_string())
        } else {
            Some(who.to_string())
        }
    }

    fn run(&self, con: &mut Connection, commands: &[&[&str]]) {
        for words in commands {
            let answer = value(con, words);
            assert!(!matches!(answer, Value::Nil), "{words:?} answered nil");
        }
    }
}

/// One family's key held by a 300 ms lease with a waiter, and another key
/// whose waiter gives up after 600 ms, during a 1.5 s `CLIENT PAUSE …
/// WRITE`: nothing is handed out (nor written, nor propagated) until writes
/// resume; then the waiter is served. The other waiter is answered nil at
/// its deadline, inside the pause.
fn lease_ends_in_a_pause(server: &Server, family: &Family) {
    let mut con = server.con();
    let _: () = cmd(&["FLUSHALL"]).query(&mut con).unwrap();
    family.run(&mut con, family.hold_briefly);
    let next = family.waiter(server, "next", 8000);
    // A second key whose only waiter gives up during the pause.
    let quick_words: Vec<String> = family
        .wait_words("quick", 600)
        .into_iter()
        .map(|w| if w == "k" { "other".to_string() } else { w })
        .collect();
    for words in family.hold_briefly {
        let words: Vec<&str> = words
            .iter()
            .map(|w| if *w == "k" { "other" } else { w })
            .collect();
        value(&mut con, &words);
    }
    let quick_words: Vec<&str> = quick_words.iter().map(String::as_str).collect();
    let quick = Waiter::start(server, &quick_words);
    let paused_at = Instant::now();
    let _: () = cmd(&["CLIENT", "PAUSE", "1500", "WRITE"])
        .query(&mut con)
        .unwrap();
    // The lease ends at 300 ms, inside the pause: nothing is handed on.
    sleep(Duration::from_millis(900));
    assert!(
        !next.handle.is_finished(),
        "{}: served during the pause",
        family.name
    );
    // The waiter whose wait ran out was answered at its deadline.
    assert!(
        quick.handle.is_finished(),
        "{}: the quick waiter still waits",
        family.name
    );
    assert_eq!(quick.answer(), Ok(Value::Nil), "{}", family.name);
    // Writes resume: the waiter is served.
    let answer = next.answer();
    assert!(
        paused_at.elapsed() >= Duration::from_millis(1400),
        "{}",
        family.name
    );
    assert_eq!(answer, Ok((family.granted)()), "{}", family.name);
    assert_eq!(
        (family.holder)(&mut con),
        family.named("next"),
        "{}",
        family.name
    );
}

server_tests! {
    /// On a server alone (Redis 7.0 and 8.6 aborted here: the grant re-added
    /// a key the pause kept from expiring).
    fn a_lease_ending_in_a_write_pause_is_handed_on_when_writes_resume(flavor) {
        let server = Server::start(flavor);
        for family in FAMILIES {
            lease_ends_in_a_pause(&server, family);
        }
        assert_eq!(value(&mut server.con(), &["PING"]), Value::SimpleString("PONG".into()));
        assert!(!server.log().contains("panic"));
    }

    /// On a primary with an AOF and a replica (every server aborted here on
    /// its "no propagation while paused" check): the replica and the AOF
    /// then hold exactly the primary's state.
    fn a_lease_ending_in_a_write_pause_with_aof_and_replica(flavor) {
        let pair = Replicated::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        for family in FAMILIES {
            lease_ends_in_a_pause(&pair.primary, family);
            let mut con = pair.primary.con();
            wait_until("the ended lock is gone", || int(&mut con, &["EXISTS", "other"]) == 0 || family.name != "lock");
            pair.sync();
            assert_eq!(digest(&mut con), digest(&mut pair.replica.con()), "{}", family.name);
        }
        assert!(!pair.primary.log().contains("panic"));
        // The AOF restores the same state.
        let mut primary = pair.primary;
        let before = digest(&mut primary.con());
        primary.restart();
        assert_eq!(before, digest(&mut primary.con()));
    }
}

/// How the client about to be served is taken away at its hand-off.
#[derive(Clone, Copy, Debug)]
enum Away {
    Unblock,
    UnblockError,
    Kill,
}

server_tests! {
    /// The holder releases and, in the same pipeline (so before the server
    /// sends the hand-off's reply), the first waiter is unblocked, unblocked
    /// with an error, or killed. Whatever that waiter is told is the truth:
    /// told nil or an error, it holds nothing, and the next waiter is served.
    fn a_waiter_taken_away_at_its_hand_off_holds_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let redis70 = harness::server_version(&mut con) < (7, 2) && flavor == harness::Flavor::Redis;
        for family in FAMILIES {
            for away in [Away::Unblock, Away::UnblockError, Away::Kill] {
                let what = format!("{} {away:?}", family.name);
                let _: () = cmd(&["FLUSHALL"]).query(&mut con).unwrap();
                family.run(&mut con, family.hold);
                let first = family.waiter(&server, "first", 60_000);
                let second = family.waiter(&server, "second", 60_000);
                let id = first.id.to_string();
                let mut pipe = redis::pipe();
                pipe.cmd(family.release[0]).arg(&family.release[1..]);
                match away {
                    Away::Unblock => pipe.cmd("CLIENT").arg(&["UNBLOCK", &id][..]),
                    Away::UnblockError => pipe.cmd("CLIENT").arg(&["UNBLOCK", &id, "ERROR"][..]),
                    Away::Kill => pipe.cmd("CLIENT").arg(&["KILL", "ID", &id][..]),
                };
                let answers: Vec<Value> = pipe.query(&mut con).unwrap();
                assert_eq!(answers[0], Value::Int(1), "{what}");
                let granted = (family.granted)();
                let first_answer = match away {
                    // Redis 7.0 sends a client unblocked at its hand-off no
                    // reply at all (its own handling of module clients).
                    Away::Unblock if redis70 => None,
                    _ => Some(first.answer()),
                };
                if first_answer == Some(Ok(granted.clone())) {
                    // Told it holds it (the unblock came too late to matter,
                    // as on Redis 8.6 and Valkey): it does, and the next
                    // waiter still waits.
                    assert_eq!((family.holder)(&mut con), family.named("first"), "{what}");
                    assert!(!second.handle.is_finished(), "{what}");
                    let _: Value = cmd(&["CLIENT", "UNBLOCK", &second.id.to_string()]).query(&mut con).unwrap();
                    assert_eq!(second.answer(), Ok(Value::Nil), "{what}");
                    continue;
                }
                if let Some(answer) = first_answer {
                    match away {
                        Away::Unblock => assert_eq!(answer, Ok(Value::Nil), "{what}"),
                        Away::UnblockError => assert_eq!(answer, Err("UNBLOCKED client unblocked via CLIENT UNBLOCK".to_string()), "{what}"),
                        Away::Kill => assert!(answer.is_err(), "{what}: {answer:?}"),
                    }
                }
                // What the first waiter was handed went back, to the next.
                assert_eq!(second.answer(), Ok(granted), "{what}");
                assert_eq!((family.holder)(&mut con), family.named("second"), "{what}");
                assert_eq!(int(&mut con, &["DBSIZE"]), 1, "{what}");
            }
        }
        assert!(!server.log().contains("panic"));
    }
}

server_tests! {
    /// Waits ended by `CLIENT UNBLOCK`, `CLIENT KILL` and disconnects leave
    /// no queue, no timer and no memory behind: the gauges return to 0, and
    /// rounds of such waits on new keys leave `used_memory` where it was
    /// (before, each key kept about 650 bytes for the length of the wait).
    fn waits_that_end_leave_nothing_behind(flavor) {
        const WAITERS: usize = 300;
        const ROUNDS: usize = 8;
        let server = Server::start(flavor);
        let mut con = server.con();
        for family in FAMILIES {
            let mut after_rounds = Vec::new();
            for round in 0..ROUNDS {
                let keys: Vec<String> = (0..WAITERS).map(|i| format!("k{round}-{i}")).collect();
                for key in &keys {
                    for words in family.hold {
                        let words: Vec<&str> = words.iter().map(|w| if *w == "k" { key.as_str() } else { w }).collect();
                        value(&mut con, &words);
                    }
                }
                let mut clients: Vec<Connection> = (0..WAITERS).map(|_| server.con()).collect();
                let ids: Vec<i64> = clients.iter_mut().map(|c| int(c, &["CLIENT", "ID"])).collect();
                // Every wait sent without reading its reply.
                for (client, key) in clients.iter_mut().zip(&keys) {
                    let words = family.wait_words("w", 86_400_000);
                    let words: Vec<&str> = words.iter().map(|w| if w == "k" { key.as_str() } else { w }).collect();
                    client.send_packed_command(&cmd(&words).get_packed_command()).unwrap();
                }
                wait_blocked(&mut con, WAITERS as i64);
                let gauge = family.with_waiters;
                assert_eq!(recipes_figures(&mut con, "recipes")[gauge], WAITERS as i64, "{}", family.name);
                // A third unblocked, a third killed, a third disconnected.
                for (i, id) in ids.iter().enumerate() {
                    match i % 3 {
                        0 => assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &id.to_string()]), 1),
                        1 => assert_eq!(int(&mut con, &["CLIENT", "KILL", "ID", &id.to_string()]), 1),
                        _ => {}
                    }
                }
                let unblocked: Vec<Connection> = clients.into_iter().step_by(3).collect();
                wait_blocked(&mut con, 0);
                assert_eq!(recipes_figures(&mut con, "recipes")[gauge], 0, "{}", family.name);
                assert_eq!(recipes_figures(&mut con, "recipes")["clients_waiting"], 0, "{}", family.name);
                drop(unblocked);
                // Freed now, not by a background thread (Valkey's default).
                let _: () = cmd(&["FLUSHALL", "SYNC"]).query(&mut con).unwrap();
                wait_until("the clients are gone", || {
                    info_field(&mut con, "clients", "connected_clients").as_deref() == Some("1")
                });
                after_rounds.push(memory_less_clients(&mut con));
            }
            // The first round warms the server's own structures up. After it,
            // a round leaves nothing: the usual growth from one round to the
            // next (the lower median) is about 0, where the old queues kept
            // 195 KB more every round. The server's own allocations move now
            // and then by some 900 KB, once (a table of its own growing) or,
            // under valgrind, back and forth between rounds.
            let mut growth: Vec<i64> = after_rounds[1..].windows(2).map(|w| w[1] - w[0]).collect();
            growth.sort_unstable();
            let usual = growth[(growth.len() - 1) / 2];
            assert!(
                usual < (WAITERS as i64) * 150,
                "{}: used_memory after each round {after_rounds:?}",
                family.name
            );
        }
    }
}

/// How a slot leaves its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotMove {
    /// `CLUSTER SETSLOT … IMPORTING/MIGRATING`, `MIGRATE`, `SETSLOT … NODE`:
    /// what `redis-cli --cluster reshard` does.
    Migrate,
    /// The server's atomic slot migration (Redis 8.4+, Valkey 9).
    Atomic,
}

/// The node's own slot ranges, from `CLUSTER NODES`.
fn owns_slot_0(con: &mut Connection) -> bool {
    let nodes: String = cmd(&["CLUSTER", "NODES"]).query(con).unwrap();
    let myself = nodes
        .lines()
        .find(|line| line.contains("myself"))
        .unwrap_or_default();
    myself
        .split(' ')
        .skip(8)
        .any(|range| range == "0" || range.starts_with("0-"))
}

fn move_slot_0(how: SlotMove, flavor: harness::Flavor, nodes: &[Server], keys: &[&str]) {
    let (source, target) = (&nodes[0], &nodes[1]);
    let mut src = source.con();
    let mut tgt = target.con();
    let source_id: String = cmd(&["CLUSTER", "MYID"]).query(&mut src).unwrap();
    let target_id: String = cmd(&["CLUSTER", "MYID"]).query(&mut tgt).unwrap();
    match how {
        SlotMove::Migrate => {
            value(
                &mut tgt,
                &["CLUSTER", "SETSLOT", "0", "IMPORTING", &source_id],
            );
            value(
                &mut src,
                &["CLUSTER", "SETSLOT", "0", "MIGRATING", &target_id],
            );
            let port = target.port.to_string();
            let mut migrate = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
            migrate.extend_from_slice(keys);
            assert_eq!(value(&mut src, &migrate), Value::Okay);
            for node in nodes {
                value(
                    &mut node.con(),
                    &["CLUSTER", "SETSLOT", "0", "NODE", &target_id],
                );
            }
        }
        SlotMove::Atomic if flavor == harness::Flavor::Valkey => {
            value(
                &mut src,
                &[
                    "CLUSTER",
                    "MIGRATESLOTS",
                    "SLOTSRANGE",
                    "0",
                    "0",
                    "NODE",
                    &target_id,
                ],
            );
        }
        SlotMove::Atomic => {
            value(&mut tgt, &["CLUSTER", "MIGRATION", "IMPORT", "0", "0"]);
        }
    }
    wait_until("slot 0 moved", || {
        !owns_slot_0(&mut src) && owns_slot_0(&mut tgt)
    });
}

/// A client waiting for the lock on slot 0; its retry after the slot moved.
const LOCK_WAITER: &[&str] = &[
    "LOCK.ACQUIRE",
    "{06S}lock",
    "B",
    "PX",
    "30000",
    "WAIT",
    "15000",
    "FENCE",
    "{06S}fence",
];

/// Leases on slot 0 with a waiter each, then the slot moves: no waiter is
/// granted on the node the keys left (told `TRYAGAIN`, which a cluster
/// client retries where the slot lives now); the keys arrive as they were,
/// fence included; a retry there is served when the lease ends, and the
/// fence rises.
fn slot_moves_under_leases_and_waiters(flavor: harness::Flavor, how: SlotMove) {
    let cluster = harness::Cluster::start(flavor);
    let nodes = &cluster.nodes;
    let mut src = nodes[0].con();
    assert_eq!(int(&mut src, &["CLUSTER", "KEYSLOT", "{06S}"]), 0);
    assert!(owns_slot_0(&mut src));
    for _ in 0..4 {
        int(
            &mut src,
            &["LOCK.ACQUIRE", "{06S}lock", "A", "FENCE", "{06S}fence"],
        );
        int(&mut src, &["LOCK.RELEASEIF", "{06S}lock", "A"]);
    }
    assert_eq!(
        int(
            &mut src,
            &[
                "LOCK.ACQUIRE",
                "{06S}lock",
                "A",
                "PX",
                "4000",
                "FENCE",
                "{06S}fence"
            ]
        ),
        5
    );
    value(&mut src, &["POOL.ADD", "{06S}pool", "r1"]);
    value(&mut src, &["POOL.ACQUIRE", "{06S}pool", "o1", "PX", "4000"]);
    let holders = pool_holders(&mut src, "{06S}pool");
    value(&mut src, &["IDPOOL.CREATE", "{06S}ids", "1"]);
    value(&mut src, &["IDPOOL.NEXT", "{06S}ids", "TTL", "4000"]);
    let waiters = [
        Waiter::start(&nodes[0], LOCK_WAITER),
        Waiter::start(
            &nodes[0],
            &["POOL.ACQUIRE", "{06S}pool", "o2", "WAIT", "15000"],
        ),
        Waiter::start(
            &nodes[0],
            &["IDPOOL.NEXT", "{06S}ids", "WAIT", "15000", "TTL", "30000"],
        ),
    ];
    let started = Instant::now();
    move_slot_0(
        how,
        flavor,
        nodes,
        &["{06S}lock", "{06S}fence", "{06S}pool", "{06S}ids"],
    );
    for waiter in waiters {
        assert_eq!(
            waiter.answer(),
            Err(
                "TRYAGAIN the key's slot moved to another node while waiting; retry the command"
                    .to_string()
            ),
            "{how:?}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the waiters were answered at their deadline"
    );
    // Nothing was handed on where the keys were.
    assert_eq!(int(&mut src, &["DBSIZE"]), 0, "{how:?}");
    // The keys arrived as they were.
    let mut tgt = nodes[1].con();
    let get = |con: &mut Connection, key: &str| -> Option<String> {
        cmd(&["GET", key]).query(con).unwrap()
    };
    assert_eq!(get(&mut tgt, "{06S}lock").as_deref(), Some("A"), "{how:?}");
    assert_eq!(get(&mut tgt, "{06S}fence").as_deref(), Some("5"), "{how:?}");
    assert_eq!(pool_holders(&mut tgt, "{06S}pool"), holders, "{how:?}");
    // The retry, where the slot lives now, gets the lock at A's lease end
    // and the next fencing token.
    assert_eq!(int(&mut tgt, LOCK_WAITER), 6, "{how:?}");
    assert_eq!(
        query::<Option<String>>(
            &mut tgt,
            &["POOL.ACQUIRE", "{06S}pool", "o2", "WAIT", "15000"]
        ),
        Some("r1".to_string())
    );
    assert_eq!(
        int(&mut tgt, &["IDPOOL.NEXT", "{06S}ids", "WAIT", "15000"]),
        1
    );
    for node in nodes {
        assert!(!node.log().contains("panic"));
    }
}

server_tests! {
    /// A family with a command that waits (`blocking` in `COMMAND INFO`) is
    /// in [`FAMILIES`], or named in [`WAITERS_TAKING_NOTHING`].
    fn every_family_that_waits_is_tested_here(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut missing = Vec::new();
        for command in harness::module_commands(&mut con) {
            if !harness::command_flags(&mut con, &command).iter().any(|f| f == "blocking") {
                continue;
            }
            let family = command.split('.').next().unwrap_or_default().to_string();
            let listed = FAMILIES.iter().any(|f| f.name == family) || WAITERS_TAKING_NOTHING.contains(&family.as_str())
                || WAITERS_TESTED_IN_THEIR_SUITE.contains(&family.as_str());
            if !listed {
                missing.push(format!("{command}: its family '{family}' is not in tests/waiting.rs's FAMILIES"));
            }
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }

    fn a_slot_moved_by_migrate_takes_its_waiters_along(flavor) {
        slot_moves_under_leases_and_waiters(flavor, SlotMove::Migrate);
    }

    fn a_slot_moved_atomically_takes_its_waiters_along(flavor) {
        if flavor == harness::Flavor::Redis {
            // Redis 7.0 has no atomic slot migration.
            let cluster = harness::Cluster::start(flavor);
            let answer = reply(&mut cluster.nodes[1].con(), &["CLUSTER", "MIGRATION", "IMPORT", "0", "0"]);
            assert_eq!(answer, Err("ERR unknown subcommand 'MIGRATION'. Try CLUSTER HELP.".to_string()));
            return;
        }
        slot_moves_under_leases_and_waiters(flavor, SlotMove::Atomic);
    }
}

/// Makes the replica stop reading for `ms` (`DEBUG SLEEP`), then writes on
/// the primary, so that the replica lags behind it.
fn lag(pair: &Replicated, ms: u64) -> std::thread::JoinHandle<()> {
    let mut replica = pair.replica.con();
    let seconds = format!("{:.3}", ms as f64 / 1000.0);
    let sleeper = std::thread::spawn(move || {
        let _: Value = cmd(&["DEBUG", "SLEEP", &seconds])
            .query(&mut replica)
            .unwrap();
    });
    sleep(Duration::from_millis(100));
    let _: () = cmd(&["SET", "written-while-lagging", "1"])
        .query(&mut pair.primary.con())
        .unwrap();
    sleeper
}

/// Leaves each family's key held by a 300 ms lease, with a waiter on it,
/// and other keys held by long leases; returns the waiters.
fn leases_with_waiters(server: &Server) -> Vec<Waiter> {
    let mut con = server.con();
    for words in [
        &["LOCK.ACQUIRE", "lock", "a", "PX", "300"][..],
        &["POOL.ADD", "pool", "r1", "r2"],
        &["POOL.ACQUIRE", "pool", "o1", "PX", "300"],
        &["POOL.ACQUIRE", "pool", "long", "PX", "6000000"],
        &["IDPOOL.CREATE", "ids", "2"],
        &["IDPOOL.NEXT", "ids", "TTL", "300"],
        &["IDPOOL.NEXT", "ids", "TTL", "6000000"],
        &["IDGEN.NEXT", "counter"],
    ] {
        value(&mut con, words);
    }
    vec![
        Waiter::start(
            server,
            &["LOCK.ACQUIRE", "lock", "b", "WAIT", "8000", "PX", "60000"],
        ),
        Waiter::start(
            server,
            &["POOL.ACQUIRE", "pool", "o2", "WAIT", "8000", "PX", "60000"],
        ),
        Waiter::start(
            server,
            &["IDPOOL.NEXT", "ids", "WAIT", "8000", "TTL", "60000"],
        ),
    ]
}

server_tests! {
    /// `FAILOVER` pauses writes until the lagging replica catches up; the
    /// leases end during that pause. Nothing is handed out then; the old
    /// primary turns replica, its waiters are let go (the server's
    /// `-UNBLOCKED` for every blocked client) holding nothing, and both
    /// servers end with the same data.
    fn failover_with_a_lagging_replica_and_waiters(flavor) {
        let pair = Replicated::start(flavor);
        let waiters = leases_with_waiters(&pair.primary);
        let sleeper = lag(&pair, 1500);
        let mut primary = pair.primary.con();
        assert_eq!(value(&mut primary, &["FAILOVER", "TIMEOUT", "20000"]), Value::Okay);
        // Let go, or (should the pause outlast a wait) timed out: never served.
        let let_go = Err("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)".to_string());
        for waiter in waiters {
            let answer = waiter.answer();
            assert!(answer == let_go || answer == Ok(Value::Nil), "{answer:?}");
        }
        sleeper.join().unwrap();
        let mut new_primary = pair.replica.con();
        wait_until("the failover is done", || {
            info_field(&mut new_primary, "replication", "role").as_deref() == Some("master")
                && info_field(&mut primary, "replication", "master_link_status").as_deref() == Some("up")
        });
        // The old primary keeps no queue of the waiters it let go.
        assert_eq!(recipes_figures(&mut primary, "recipes")["clients_waiting"], 0);
        assert_eq!(recipes_figures(&mut primary, "recipes")["locks_with_waiters"], 0);
        // Nobody holds what ended during the pause: the waiters were let go.
        assert_eq!(value(&mut new_primary, &["GET", "lock"]), Value::Nil);
        let holders: Vec<(String, String)> = pool_holders(&mut new_primary, "pool")
            .into_iter()
            .map(|(resource, owner, _)| (resource, owner))
            .collect();
        assert_eq!(holders, [("r2".to_string(), "long".to_string())]);
        wait_until("the ended lock expired", || int(&mut new_primary, &["EXISTS", "lock"]) == 0);
        let _: i64 = cmd(&["WAIT", "1", "10000"]).query(&mut new_primary).unwrap();
        assert_eq!(digest(&mut new_primary), digest(&mut primary));
        assert!(!pair.primary.log().contains("panic"));
    }

    /// `SHUTDOWN` waits for a lagging replica with writes paused; the leases
    /// end then. The server still saves and exits cleanly (it aborted
    /// before, writing no RDB), and restarts with exactly what it held.
    fn shutdown_with_a_lagging_replica_and_waiters(flavor) {
        let mut pair = Replicated::start(flavor);
        let waiters = leases_with_waiters(&pair.primary);
        let mut con = pair.primary.con();
        let before: Vec<Value> = ["pool", "ids", "counter"]
            .iter()
            .map(|key| digest_value(&mut con, key))
            .collect();
        let sleeper = lag(&pair, 1500);
        let started = Instant::now();
        assert!(pair.primary.shutdown(&["SHUTDOWN", "SAVE"]), "the server did not exit cleanly:\n{}", pair.primary.log());
        // It waited for the replica, past the leases' end.
        assert!(started.elapsed() > Duration::from_millis(1000));
        sleeper.join().unwrap();
        for waiter in waiters {
            let answer = waiter.answer();
            assert!(answer.is_err(), "a waiter was answered {answer:?} by a server shutting down");
        }
        assert!(pair.primary.log().contains("DB saved on disk"), "{}", pair.primary.log());
        pair.primary.start_again();
        let mut con = pair.primary.con();
        let after: Vec<Value> = ["pool", "ids", "counter"]
            .iter()
            .map(|key| digest_value(&mut con, key))
            .collect();
        assert_eq!(before, after);
        assert_eq!(value(&mut con, &["GET", "lock"]), Value::Nil);
    }
}
