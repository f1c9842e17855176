//! LOCK on real servers: the seed transcripts, leases, fencing, the FIFO wait
//! and its hand-offs, every error, mutual exclusion under contention,
//! replication, AOF, command metadata and cluster routing.

use crate::harness;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use harness::{
    blocked_clients, cmd, command_categories, command_docs, command_flags, digest, error, getkeys,
    has_command, int, module_docs, pick, pttl, snapshot, value, wait_blocked, wait_until, Cluster,
    Connection, Replicated, Server, Value, Waiter, CROSSSLOT, NOT_INTEGER, SYNTAX, WRONGTYPE,
};

fn get(con: &mut Connection, key: &str) -> Option<String> {
    cmd(&["GET", key]).query(con).unwrap()
}

server_tests! {
    fn seed_transcripts(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // Basic lock: acquire, fail, release, acquire again.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "Lock:10086", "me"]), 1);
        assert_eq!(value(&mut con, &["LOCK.ACQUIRE", "Lock:10086", "you"]), Value::Nil);
        assert_eq!(pttl(&mut con, "Lock:10086"), -1);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "Lock:10086", "me"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "Lock:10086"]), 0);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "Lock:10086", "you"]), 1);
        // Auto-release after the lease.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "Lock:auto", "me", "PX", "100"]), 1);
        assert_eq!(value(&mut con, &["LOCK.ACQUIRE", "Lock:auto", "you"]), Value::Nil);
        wait_until("the lease ran out", || int(&mut con, &["EXISTS", "Lock:auto"]) == 0);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "Lock:auto", "you", "EX", "5"]), 1);
        // Identity lock: only the right token releases it.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "Lock:id", "top_secret"]), 1);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "Lock:id", "wrong"]), 0);
        assert_eq!(get(&mut con, "Lock:id").as_deref(), Some("top_secret"));
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "Lock:id", "top_secret"]), 1);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "Lock:id", "top_secret"]), 0);
        // A lock taken with the classic SET NX PX, released by the module.
        let _: () = cmd(&["SET", "Lock:set", "tok", "NX", "PX", "60000"]).query(&mut con).unwrap();
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "Lock:set", "other"]), 0);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "Lock:set", "tok"]), 1);
        // And one taken by the module is an ordinary SET NX lock to others.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "Lock:mod", "tok", "PX", "60000"]), 1);
        let taken: Option<String> = cmd(&["SET", "Lock:mod", "x", "NX", "PX", "100"]).query(&mut con).unwrap();
        assert_eq!(taken, None);
        if has_command(&mut con, "DELIFEQ") {
            assert_eq!(int(&mut con, &["DELIFEQ", "Lock:mod", "other"]), 0);
            assert_eq!(int(&mut con, &["DELIFEQ", "Lock:mod", "tok"]), 1);
            assert_eq!(int(&mut con, &["EXISTS", "Lock:mod"]), 0);
        } else {
            assert_ne!(flavor, harness::Flavor::Valkey, "Valkey 9 has DELIFEQ");
        }
        if has_command(&mut con, "DELEX") {
            // Redis 8.4+: DELEX key IFEQ value.
            assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "Lock:mod", "tok", "PX", "60000"]), 1);
            assert_eq!(int(&mut con, &["DELEX", "Lock:mod", "IFEQ", "other"]), 0);
            assert_eq!(int(&mut con, &["DELEX", "Lock:mod", "IFEQ", "tok"]), 1);
            assert_eq!(int(&mut con, &["EXISTS", "Lock:mod"]), 0);
        } else {
            assert_ne!(flavor, harness::Flavor::Redis8, "Redis 8.6 has DELEX");
        }
    }

    fn leases_and_extend(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l", "a", "PX", "60000"]), 1);
        let ttl = pttl(&mut con, "l");
        assert!((59_000..=60_000).contains(&ttl), "{ttl}");
        // The same token again succeeds and resets the lease…
        assert_eq!(int(&mut con, &["PEXPIRE", "l", "5000"]), 1);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l", "a", "ex", "100"]), 1);
        let ttl = pttl(&mut con, "l");
        assert!((99_000..=100_000).contains(&ttl), "{ttl}");
        // …to no TTL at all when none is given.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l", "a"]), 1);
        assert_eq!(pttl(&mut con, "l"), -1);
        // EXTEND: only the holder; the lease then ends that long from now.
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "l", "b", "PX", "30000"]), 0);
        assert_eq!(pttl(&mut con, "l"), -1);
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "l", "a", "PX", "30000"]), 1);
        let ttl = pttl(&mut con, "l");
        assert!((29_000..=30_000).contains(&ttl), "{ttl}");
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "l", "a", "EX", "7"]), 1);
        let ttl = pttl(&mut con, "l");
        assert!((6_000..=7_000).contains(&ttl), "{ttl}");
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "free", "a", "PX", "100"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "free"]), 0);
        // An expired lease cannot be extended.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "short", "a", "PX", "20"]), 1);
        wait_until("the lease ran out", || int(&mut con, &["EXISTS", "short"]) == 0);
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "short", "a", "PX", "1000"]), 0);
    }

    fn nx_refuses_the_holder_asking_again(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l", "a", "PX", "60000", "NX"]), 1);
        let end = int(&mut con, &["PEXPIRETIME", "l"]);
        // Held, even by the same token: refused, and the lease stays.
        assert_eq!(value(&mut con, &["LOCK.ACQUIRE", "l", "a", "nx", "PX", "90000"]), Value::Nil);
        assert_eq!(value(&mut con, &["LOCK.ACQUIRE", "l", "b", "NX"]), Value::Nil);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "l"]), end);
        // Without NX the holder asking again succeeds, as before.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l", "a", "PX", "90000"]), 1);
        // With WAIT, the holder waits for its own lock like anyone else.
        let waiter = Waiter::start(&server, &["LOCK.ACQUIRE", "l", "a", "NX", "WAIT", "60000", "FENCE", "f"]);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "l", "a"]), 1);
        assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        assert_eq!(error(&mut con, &cmd(&["LOCK.ACQUIRE", "l", "a", "NX", "NX"])), "ERR syntax error");
        assert_eq!(getkeys(&mut con, &["LOCK.ACQUIRE", "l", "a", "NX", "FENCE", "f"]), ["l", "f"]);
    }

    fn extend_add_lengthens_the_remaining_lease(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l", "a", "PX", "10000"]), 1);
        let end = int(&mut con, &["PEXPIRETIME", "l"]);
        // ADD: the lease ends that much after its current end.
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "l", "a", "PX", "5000", "ADD"]), 1);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "l"]), end + 5000);
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "l", "a", "add", "EX", "2"]), 1);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "l"]), end + 7000);
        // Only the holder.
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "l", "b", "PX", "5000", "ADD"]), 0);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "l"]), end + 7000);
        // A lock without a lease keeps none: 0, as redis-py's extend answers.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "forever", "a"]), 1);
        assert_eq!(int(&mut con, &["LOCK.EXTEND", "forever", "a", "PX", "5000", "ADD"]), 0);
        assert_eq!(pttl(&mut con, "forever"), -1);
        // ADD needs a lease length, once.
        assert_eq!(error(&mut con, &cmd(&["LOCK.EXTEND", "l", "a", "ADD"])), "ERR wrong number of arguments for 'lock.extend' command");
        assert_eq!(error(&mut con, &cmd(&["LOCK.EXTEND", "l", "a", "PX", "1", "ADD", "ADD"])), "ERR syntax error");
        assert_eq!(int(&mut con, &["PEXPIRETIME", "l"]), end + 7000);
    }

    fn fencing_tokens_increase_across_acquisitions(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{r}lock", "a", "FENCE", "{r}fence"]), 1);
        // A retry by the holder gets its own token back, not a new one.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{r}lock", "a", "FENCE", "{r}fence"]), 1);
        assert_eq!(value(&mut con, &["LOCK.ACQUIRE", "{r}lock", "b", "FENCE", "{r}fence"]), Value::Nil);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "{r}lock", "a"]), 1);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{r}lock", "b", "fence", "{r}fence", "PX", "50"]), 2);
        wait_until("the lease ran out", || int(&mut con, &["EXISTS", "{r}lock"]) == 0);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{r}lock", "c", "FENCE", "{r}fence"]), 3);
        // The counter is a plain INCR counter, kept after release.
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "{r}lock", "c"]), 1);
        assert_eq!(get(&mut con, "{r}fence").as_deref(), Some("3"));
        assert_eq!(int(&mut con, &["INCR", "{r}fence"]), 4);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{r}lock", "d", "FENCE", "{r}fence"]), 5);
        // A holder without a fencing token (its fence key was deleted) gets a new one.
        assert_eq!(int(&mut con, &["DEL", "{r}fence"]), 1);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{r}lock", "d", "FENCE", "{r}fence"]), 1);
    }

    fn every_error_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: () = cmd(&["RPUSH", "list", "x"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "held", "owner", "PX", "600000"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "text", "abc"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "top", "9223372036854775807"]).query(&mut con).unwrap();
        let keys = ["list", "held", "text", "top", "free"];
        let before: Vec<_> = keys.iter().map(|key| snapshot(&mut con, key)).collect();
        let digest_before = digest(&mut con);

        let bad_expire = "ERR invalid expire time in 'lock.acquire' command";
        let bad_extend = "ERR invalid expire time in 'lock.extend' command";
        let bad_wait = "ERR invalid WAIT time in 'lock.acquire' command";
        let empty = "ERR token must not be empty";
        let cases: &[(&[&str], &str)] = &[
            (&["LOCK.ACQUIRE", "list", "a"], WRONGTYPE),
            (&["LOCK.RELEASEIF", "list", "a"], WRONGTYPE),
            (&["LOCK.EXTEND", "list", "a", "PX", "10"], WRONGTYPE),
            (&["LOCK.ACQUIRE", "free", "a", "FENCE", "list"], WRONGTYPE),
            (&["LOCK.ACQUIRE", "free", "a", "FENCE", "text"], NOT_INTEGER),
            (&["LOCK.ACQUIRE", "held", "a", "FENCE", "text"], NOT_INTEGER),
            (&["LOCK.ACQUIRE", "free", "a", "FENCE", "top"], "ERR increment or decrement would overflow"),
            (&["LOCK.ACQUIRE", "free", "a", "FENCE", "free"], "ERR FENCE key must differ from the lock key"),
            (&["LOCK.ACQUIRE", "free", ""], empty),
            (&["LOCK.RELEASEIF", "held", ""], empty),
            (&["LOCK.EXTEND", "held", "", "PX", "10"], empty),
            (&["LOCK.ACQUIRE", "free", "a", "PX", "0"], bad_expire),
            (&["LOCK.ACQUIRE", "free", "a", "PX", "-5"], bad_expire),
            (&["LOCK.ACQUIRE", "free", "a", "EX", "0"], bad_expire),
            (&["LOCK.ACQUIRE", "free", "a", "EX", "9223372036854775"], bad_expire),
            (&["LOCK.ACQUIRE", "free", "a", "PX", "9223372036854775807"], bad_expire),
            (&["LOCK.ACQUIRE", "free", "a", "PX", "1.5"], NOT_INTEGER),
            (&["LOCK.ACQUIRE", "free", "a", "PX", "99999999999999999999"], NOT_INTEGER),
            (&["LOCK.EXTEND", "held", "owner", "PX", "0"], bad_extend),
            (&["LOCK.EXTEND", "held", "owner", "EX", "-1"], bad_extend),
            (&["LOCK.ACQUIRE", "held", "a", "WAIT", "0"], bad_wait),
            (&["LOCK.ACQUIRE", "held", "a", "WAIT", "-1"], bad_wait),
            (&["LOCK.ACQUIRE", "held", "a", "WAIT", "9223372036854775807"], bad_wait),
            (&["LOCK.ACQUIRE", "held", "a", "WAIT", "soon"], NOT_INTEGER),
            (&["LOCK.ACQUIRE", "free", "a", "PX", "10", "EX", "1"], SYNTAX),
            (&["LOCK.ACQUIRE", "free", "a", "PX", "10", "PX", "10"], SYNTAX),
            (&["LOCK.ACQUIRE", "free", "a", "WAIT", "10", "wait", "10"], SYNTAX),
            (&["LOCK.ACQUIRE", "free", "a", "XX"], SYNTAX),
            (&["LOCK.ACQUIRE", "free", "a", "PX"], SYNTAX),
            (&["LOCK.ACQUIRE", "free", "a", "FENCE"], SYNTAX),
            (&["LOCK.EXTEND", "held", "owner", "PX", "10x"], NOT_INTEGER),
            (&["LOCK.EXTEND", "held", "owner", "WAIT", "10"], SYNTAX),
            (&["LOCK.EXTEND", "held", "owner", "TTL", "10"], SYNTAX),
            (&["LOCK.ACQUIRE", "free"], "ERR wrong number of arguments for 'lock.acquire' command"),
            (&["LOCK.RELEASEIF", "held"], "ERR wrong number of arguments for 'lock.releaseif' command"),
            (&["LOCK.RELEASEIF", "held", "owner", "x"], "ERR wrong number of arguments for 'lock.releaseif' command"),
            (&["LOCK.EXTEND", "held", "owner", "PX"], "ERR wrong number of arguments for 'lock.extend' command"),
            (&["LOCK.EXTEND", "held", "owner", "PX", "10", "EX"], SYNTAX),
        ];
        for (words, expected) in cases {
            assert_eq!(error(&mut con, &cmd(words)), *expected, "{words:?}");
        }
        let after: Vec<_> = keys.iter().map(|key| snapshot(&mut con, key)).collect();
        assert_eq!(before, after);
        assert_eq!(digest_before, digest(&mut con));
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn waiters_are_served_first_come_first_served(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "q", "holder"]), 1);
        let a = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "A", "WAIT", "60000", "PX", "60000"]);
        let b = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "B", "WAIT", "60000"]);
        let c = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "C", "WAIT", "60000"]);
        // A newcomer without WAIT cannot barge in, nor can one with WAIT.
        assert_eq!(value(&mut con, &["LOCK.ACQUIRE", "q", "D"]), Value::Nil);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "q", "holder"]), 1);
        // The release handed the lock over inside the same command.
        assert_eq!(get(&mut con, "q").as_deref(), Some("A"));
        assert_eq!(a.answer(), Ok(Value::Int(1)));
        let ttl = pttl(&mut con, "q");
        assert!((59_000..=60_000).contains(&ttl), "A's lease counts from the hand-off: {ttl}");
        assert_eq!(value(&mut con, &["LOCK.ACQUIRE", "q", "D"]), Value::Nil);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "q", "A"]), 1);
        assert_eq!(get(&mut con, "q").as_deref(), Some("B"));
        assert_eq!(b.answer(), Ok(Value::Int(1)));
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "q", "B"]), 1);
        assert_eq!(get(&mut con, "q").as_deref(), Some("C"));
        assert_eq!(c.answer(), Ok(Value::Int(1)));
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "q", "C"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "q"]), 0);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn timeout_and_disconnect_leave_the_queue(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "q", "holder"]), 1);
        let quick = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "quick", "WAIT", "100"]);
        let gone = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "gone", "WAIT", "60000"]);
        let last = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "last", "WAIT", "9000000000000000000"]);
        // The short wait runs out: nil, and it leaves the queue.
        assert_eq!(quick.answer(), Ok(Value::Nil));
        wait_blocked(&mut con, 2);
        // A killed client leaves it too.
        assert_eq!(int(&mut con, &["CLIENT", "KILL", "ID", &gone.id.to_string()]), 1);
        assert!(gone.answer().is_err());
        wait_blocked(&mut con, 1);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "q", "holder"]), 1);
        assert_eq!(get(&mut con, "q").as_deref(), Some("last"));
        assert_eq!(last.answer(), Ok(Value::Int(1)));
        assert!(server.log().find("panic").is_none());
    }

    fn client_unblock_ends_a_wait(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "q", "holder"]), 1);
        let first = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "first", "WAIT", "60000"]);
        let second = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "second", "WAIT", "60000"]);
        let third = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "third", "WAIT", "60000"]);
        assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &first.id.to_string()]), 1);
        assert_eq!(first.answer(), Ok(Value::Nil));
        assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &second.id.to_string(), "ERROR"]), 1);
        let unblocked = second.answer().unwrap_err();
        assert_eq!(unblocked, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
        wait_blocked(&mut con, 1);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "q", "holder"]), 1);
        assert_eq!(get(&mut con, "q").as_deref(), Some("third"));
        assert_eq!(third.answer(), Ok(Value::Int(1)));
    }

    fn expiry_hands_the_lock_over_without_the_expire_cycle(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // With the server's active expiry off, only the module's own timer at
        // the expiry time can notice the lease ran out.
        let _: () = cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).query(&mut con).unwrap();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{x}q", "holder", "PX", "300", "FENCE", "{x}f"]), 1);
        let started = Instant::now();
        let next = Waiter::start(&server, &["LOCK.ACQUIRE", "{x}q", "next", "WAIT", "30000", "FENCE", "{x}f", "PX", "60000"]);
        assert_eq!(next.answer(), Ok(Value::Int(2)));
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(25), "handed over only after {waited:?}");
        assert_eq!(get(&mut con, "{x}q").as_deref(), Some("next"));
        eprintln!("{flavor:?}: the waiter got the expired lock after {waited:?} (lease 300 ms)");
    }

    fn a_deletion_after_a_hand_off_serves_the_next_waiter(flavor) {
        // The hand-off's own write (a lease) fires an event while the queue is
        // being served; the check it schedules must survive, or a later
        // deletion waits for the lease to run out (seen on Redis 7.0).
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "q", "holder"]), 1);
        let first = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "first", "PX", "60000", "WAIT", "30000"]);
        let second = Waiter::start(&server, &["LOCK.ACQUIRE", "q", "second", "PX", "60000", "WAIT", "30000"]);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "q", "holder"]), 1);
        assert_eq!(first.answer(), Ok(Value::Int(1)));
        let started = Instant::now();
        assert_eq!(int(&mut con, &["DEL", "q"]), 1);
        assert_eq!(second.answer(), Ok(Value::Int(1)));
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(5), "handed over only after {waited:?}");
        assert_eq!(get(&mut con, "q").as_deref(), Some("second"));
    }

    fn any_deletion_hands_the_lock_over(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for (i, deletion) in [
            vec!["DEL", "q"],
            vec!["UNLINK", "q"],
            vec!["GETDEL", "q"],
            vec!["RENAME", "q", "elsewhere"],
            vec!["PEXPIRE", "q", "1"],
            vec!["FLUSHALL"],
            vec!["SWAPDB", "0", "1"],
        ]
        .into_iter()
        .enumerate()
        {
            let token = format!("w{i}");
            assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "q", "holder"]), 1);
            let next = Waiter::start(&server, &["LOCK.ACQUIRE", "q", &token, "WAIT", "30000"]);
            let _: Value = cmd(&deletion).query(&mut con).unwrap();
            assert_eq!(next.answer(), Ok(Value::Int(1)), "after {deletion:?}");
            assert_eq!(get(&mut con, "q"), Some(token), "after {deletion:?}");
            assert_eq!(int(&mut con, &["DEL", "q"]), 1);
        }
    }

    fn wait_never_blocks_in_multi_or_scripts(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l", "holder"]), 1);
        let replies: Value = redis::pipe()
            .atomic()
            .cmd("LOCK.ACQUIRE").arg("l").arg("me").arg("WAIT").arg(60000)
            .cmd("LOCK.ACQUIRE").arg("free").arg("me").arg("WAIT").arg(60000)
            .query(&mut con)
            .unwrap();
        assert_eq!(replies, Value::Array(vec![Value::Nil, Value::Int(1)]));
        let script = "return redis.call('LOCK.ACQUIRE', KEYS[1], ARGV[1], 'WAIT', 60000)";
        let got: Value = cmd(&["EVAL", script, "1", "l", "me"]).query(&mut con).unwrap();
        assert_eq!(got, Value::Nil);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn mutual_exclusion_under_contention(flavor) {
        const CLIENTS: usize = 16;
        const ROUNDS: usize = 500;
        let server = Server::start(flavor);
        let inside = Arc::new(AtomicBool::new(false));
        let handed_out = Arc::new(Mutex::new(Vec::with_capacity(CLIENTS * ROUNDS)));
        let workers: Vec<_> = (0..CLIENTS)
            .map(|n| {
                let mut con = server.con();
                let (inside, handed_out) = (inside.clone(), handed_out.clone());
                thread::spawn(move || {
                    let token = format!("worker-{n}");
                    for _ in 0..ROUNDS {
                        let fence = int(&mut con, &["LOCK.ACQUIRE", "{c}lock", &token, "WAIT", "60000", "PX", "60000", "FENCE", "{c}fence"]);
                        assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                        handed_out.lock().unwrap().push(fence);
                        let count: i64 = get(&mut con, "{c}counter").map_or(0, |v| v.parse().unwrap());
                        let _: () = cmd(&["SET", "{c}counter", &(count + 1).to_string()]).query(&mut con).unwrap();
                        inside.store(false, Ordering::SeqCst);
                        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "{c}lock", &token]), 1);
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        let mut con = server.con();
        assert_eq!(get(&mut con, "{c}counter").as_deref(), Some("8000"));
        let handed_out = handed_out.lock().unwrap();
        let expected: Vec<i64> = (1..=(CLIENTS * ROUNDS) as i64).collect();
        assert_eq!(*handed_out, expected, "fencing tokens in hand-out order");
        assert_eq!(int(&mut con, &["EXISTS", "{c}lock"]), 0);
    }

    fn replica_and_aof_hold_exactly_the_primary_state(flavor) {
        harness::replica_converges(flavor, |server, con| {
            lock_workload(server, con);
            WORKLOAD_KEYS.to_vec()
        });
    }

    fn a_replica_refuses_the_commands(flavor) {
        let pair = Replicated::start(flavor);
        let refused = error(&mut pair.replica.con(), &cmd(&["LOCK.ACQUIRE", "{w}a", "t"]));
        assert_eq!(refused, "READONLY You can't write against a read only replica.");
    }

    fn aof_restart_restores_every_lock(flavor) {
        let server = harness::aof_round_trip(flavor, |server, con| {
            lock_workload(server, con);
            WORKLOAD_KEYS.to_vec()
        });
        // Locks restored from the AOF still belong to their holders.
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "{w}b", "t2"]), 1);
    }

    fn command_metadata_is_complete(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let keys = harness::getkeys;
        assert_eq!(keys(&mut con, &["LOCK.ACQUIRE", "l", "t"]), ["l"]);
        assert_eq!(keys(&mut con, &["LOCK.ACQUIRE", "l", "t", "PX", "5", "WAIT", "9", "FENCE", "f"]), ["l", "f"]);
        assert_eq!(keys(&mut con, &["LOCK.ACQUIRE", "l", "FENCE", "fence", "f"]), ["l", "f"]);
        assert_eq!(keys(&mut con, &["LOCK.RELEASEIF", "l", "t"]), ["l"]);
        assert_eq!(keys(&mut con, &["LOCK.EXTEND", "l", "t", "PX", "5"]), ["l"]);
        assert_eq!(
            command_docs(&mut con, "LOCK.ACQUIRE"),
            module_docs(
                "Takes a lock for a token (with a lease, an optional first-come-first-served wait and a fencing token); nil if another token holds it",
                "0.1.0",
                "O(1), plus O(N) over the N clients waiting for this lock when it is handed on",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=token type=string",
                    "- name=lease type=oneof flags=optional",
                    "  - name=milliseconds type=integer token=PX",
                    "  - name=seconds type=integer token=EX",
                    "- name=wait type=integer token=WAIT flags=optional",
                    "- name=fencekey type=key key_spec_index=1 token=FENCE flags=optional",
                    "- name=nx type=pure-token token=NX flags=optional",
                ],
            )
        );
        assert_eq!(
            command_docs(&mut con, "LOCK.RELEASEIF"),
            module_docs(
                "Releases a lock only if the token holds it; the oldest waiter gets it next",
                "0.1.0",
                "O(1), plus O(N) over the N clients waiting for this lock",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=token type=string",
                ],
            )
        );
        assert_eq!(
            command_docs(&mut con, "LOCK.EXTEND"),
            module_docs(
                "Sets a held lock's lease to end the given time from now (with ADD, after its current end), only if the token holds it",
                "0.1.0",
                "O(1)",
                &[
                    "- name=key type=key key_spec_index=0",
                    "- name=token type=string",
                    "- name=lease type=oneof",
                    "  - name=milliseconds type=integer token=PX",
                    "  - name=seconds type=integer token=EX",
                    "- name=add type=pure-token token=ADD flags=optional",
                ],
            )
        );
        let categories = flavor.has_module_acl_categories(&mut con);
        for (name, flags, acl) in [
            ("LOCK.ACQUIRE", &["write", "denyoom", "module", "blocking", "movablekeys"][..], &["@write", "@slow", "@blocking"][..]),
            ("LOCK.RELEASEIF", &["write", "module", "fast"], &["@write", "@fast"]),
            ("LOCK.EXTEND", &["write", "module", "fast"], &["@write", "@fast"]),
        ] {
            assert_eq!(command_flags(&mut con, name), flags, "{name}");
            let expected: &[&str] = if categories { acl } else { &[] };
            assert_eq!(command_categories(&mut con, name), expected, "{name}");
        }
    }

    fn release_aborts_a_watching_transaction(flavor) {
        let server = Server::start(flavor);
        let (mut watcher, mut other) = (server.con(), server.con());
        assert_eq!(int(&mut other, &["LOCK.ACQUIRE", "l", "t"]), 1);
        let _: () = cmd(&["WATCH", "l"]).query(&mut watcher).unwrap();
        assert_eq!(int(&mut other, &["LOCK.RELEASEIF", "l", "t"]), 1);
        let _: () = cmd(&["MULTI"]).query(&mut watcher).unwrap();
        let _: () = cmd(&["DEL", "l"]).query(&mut watcher).unwrap();
        assert_eq!(value(&mut watcher, &["EXEC"]), Value::Nil);
        // A release that changed nothing does not abort.
        let _: () = cmd(&["WATCH", "l"]).query(&mut watcher).unwrap();
        assert_eq!(int(&mut other, &["LOCK.RELEASEIF", "l", "t"]), 0);
        let _: () = cmd(&["MULTI"]).query(&mut watcher).unwrap();
        let _: () = cmd(&["GET", "l"]).query(&mut watcher).unwrap();
        assert_ne!(value(&mut watcher, &["EXEC"]), Value::Nil);
    }

    fn writes_fire_the_events_of_the_built_ins(flavor) {
        let server = Server::start(flavor);
        let expected = [
            "l set", "l expire", "f incrby", // acquire with a lease and a fence
            "l expire",                      // extend
            "l del",                         // release; the failed calls fired nothing
            "l set",                         // acquire without a lease
        ];
        let events = harness::keyspace_events(&server, expected.len(), |con| {
            assert_eq!(int(con, &["LOCK.ACQUIRE", "l", "t", "PX", "60000", "FENCE", "f"]), 1);
            assert_eq!(value(con, &["LOCK.ACQUIRE", "l", "other"]), Value::Nil);
            assert_eq!(int(con, &["LOCK.EXTEND", "l", "t", "PX", "90000"]), 1);
            assert_eq!(int(con, &["LOCK.RELEASEIF", "l", "t"]), 1);
            assert_eq!(int(con, &["LOCK.RELEASEIF", "l", "t"]), 0);
            assert_eq!(int(con, &["LOCK.ACQUIRE", "l", "t"]), 1);
        });
        assert_eq!(events, expected);
    }

    fn cluster_needs_key_and_fencekey_in_one_slot(flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        for i in 0..20 {
            let lock = format!("{{job{i}}}:lock");
            let fence = format!("{{job{i}}}:fence");
            let got: i64 = cmd(&["LOCK.ACQUIRE", &lock, "t", "PX", "60000", "FENCE", &fence]).query(&mut con).unwrap();
            assert_eq!(got, 1);
            let got: i64 = cmd(&["LOCK.RELEASEIF", &lock, "t"]).query(&mut con).unwrap();
            assert_eq!(got, 1);
        }
        let mut nodes: Vec<_> = cluster.nodes.iter().map(|node| node.con()).collect();
        // Keys in different slots: the server refuses, on whichever node.
        let owner = cluster.owner("a");
        let refused = error(&mut nodes[owner], &cmd(&["LOCK.ACQUIRE", "a", "t", "FENCE", "b"]));
        assert_eq!(refused, CROSSSLOT);
        let other = (owner + 1) % nodes.len();
        let moved = error(&mut nodes[other], &cmd(&["LOCK.RELEASEIF", "a", "t"]));
        assert_eq!(moved, cluster.moved("a"));
    }
}

server_tests! {
    fn random_arguments_never_crash_and_errors_change_nothing(flavor) {
        use rand::Rng;
        let server = Server::start(flavor);
        let commands: &[&[u8]] = &[b"LOCK.ACQUIRE", b"LOCK.RELEASEIF", b"LOCK.EXTEND", b"lock.acquire"];
        let keys: &[&[u8]] = &[b"lock", b"held", b"list", b"text", b"top", b"fence", b"absent"];
        let tokens: &[&[u8]] = &[b"owner", b"me", b"", b"\x00\xff", b"PX", b"FENCE"];
        // Leases long enough not to expire during a round; waits of at most
        // a millisecond, so no round blocks for long.
        let options: &[(&[u8], &[&[u8]])] = &[
            (b"PX", &[b"60000", b"0", b"-1", b"1.5", b"9223372036854775807", b"99999999999999999999", b""]),
            (b"EX", &[b"60", b"0", b"-1", b"9223372036854775", b"x"]),
            (b"WAIT", &[b"1", b"0", b"-5", b"soon", b"9223372036854775807"]),
            (b"FENCE", &[b"fence", b"text", b"list", b"top", b"lock", b"held"]),
            (b"px", &[b"60000"]),
            (b"NX", &[]),
        ];
        let setup = |con: &mut Connection| {
            let _: () = cmd(&["SET", "text", "hello"]).query(con).unwrap();
            let _: () = cmd(&["SET", "top", "9223372036854775807"]).query(con).unwrap();
            let _: () = cmd(&["SET", "held", "owner", "PX", "600000"]).query(con).unwrap();
            let _: i64 = cmd(&["RPUSH", "list", "x"]).query(con).unwrap();
        };
        harness::fuzz(&server, 0x10c6, 2_000, setup, |rng| {
            let mut argv = vec![pick(rng, commands)];
            for _ in 0..rng.random_range(0..=2) {
                argv.push(if argv.len() == 1 { pick(rng, keys) } else { pick(rng, tokens) });
            }
            for _ in 0..rng.random_range(0..4) {
                let (token, values) = options[rng.random_range(0..options.len())];
                argv.push(token.to_vec());
                if !values.is_empty() && rng.random_ratio(9, 10) {
                    argv.push(pick(rng, values));
                }
            }
            argv
        });
        assert_eq!(blocked_clients(&mut server.con()), 0);
    }
}

const WORKLOAD_KEYS: [&str; 8] = [
    "{w}a", "{w}b", "{w}c", "{w}d", "{w}fence", "{w}e", "{w}q", "{w}gone",
];

/// Every kind of LOCK write, hand-offs included; leaves locks with and
/// without leases, a fence counter and released locks behind.
fn lock_workload(server: &Server, con: &mut Connection) {
    assert_eq!(
        int(
            con,
            &[
                "LOCK.ACQUIRE",
                "{w}a",
                "t1",
                "PX",
                "600000",
                "FENCE",
                "{w}fence"
            ]
        ),
        1
    );
    assert_eq!(
        int(con, &["LOCK.ACQUIRE", "{w}b", "t2", "FENCE", "{w}fence"]),
        2
    );
    assert_eq!(int(con, &["LOCK.ACQUIRE", "{w}c", "t3", "EX", "900"]), 1);
    assert_eq!(int(con, &["LOCK.ACQUIRE", "{w}c", "t3", "PX", "700000"]), 1);
    assert_eq!(int(con, &["LOCK.EXTEND", "{w}a", "t1", "PX", "800000"]), 1);
    assert_eq!(int(con, &["LOCK.ACQUIRE", "{w}d", "t4", "PX", "600000"]), 1);
    assert_eq!(int(con, &["LOCK.RELEASEIF", "{w}d", "t4"]), 1);
    assert_eq!(int(con, &["LOCK.ACQUIRE", "{w}e", "t5", "PX", "60"]), 1);
    // A release that hands over, and an expiry that hands over.
    assert_eq!(
        int(con, &["LOCK.ACQUIRE", "{w}q", "first", "PX", "600000"]),
        1
    );
    let second = Waiter::start(
        server,
        &[
            "LOCK.ACQUIRE",
            "{w}q",
            "second",
            "WAIT",
            "60000",
            "PX",
            "100",
            "FENCE",
            "{w}fence",
        ],
    );
    assert_eq!(int(con, &["LOCK.RELEASEIF", "{w}q", "first"]), 1);
    assert_eq!(second.answer(), Ok(Value::Int(3)));
    let third = Waiter::start(
        server,
        &[
            "LOCK.ACQUIRE",
            "{w}q",
            "third",
            "WAIT",
            "60000",
            "PX",
            "500000",
            "FENCE",
            "{w}fence",
        ],
    );
    assert_eq!(third.answer(), Ok(Value::Int(4)));
    wait_until("the short lease ran out", || {
        int(con, &["EXISTS", "{w}e"]) == 0
    });
    assert_eq!(int(con, &["EXISTS", "{w}gone"]), 0);
}

/// `GET` of each key.
fn holders(con: &mut Connection, keys: &[&str]) -> Vec<Option<String>> {
    keys.iter().map(|key| get(con, key)).collect()
}

fn some(tokens: &[&str]) -> Vec<Option<String>> {
    tokens
        .iter()
        .map(|token| (!token.is_empty()).then(|| token.to_string()))
        .collect()
}

server_tests! {
    fn several_locks_are_taken_all_or_none(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let keys = ["{m}a", "{m}b", "{m}c"];
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "2", "{m}a", "{m}b", "t1", "PX", "60000"]), 2);
        assert_eq!(holders(&mut con, &keys), some(&["t1", "t1", ""]));
        let end_a = int(&mut con, &["PEXPIRETIME", "{m}a"]);
        assert_eq!(end_a, int(&mut con, &["PEXPIRETIME", "{m}b"]), "one lease end for all");
        // One key held by another token: nil, and the free key stays free.
        assert_eq!(value(&mut con, &["LOCK.MACQUIRE", "2", "{m}c", "{m}b", "t2", "PX", "60000"]), Value::Nil);
        assert_eq!(holders(&mut con, &keys), some(&["t1", "t1", ""]));
        // The holder asking again, with a free key more: all three, the
        // leases reset; without a lease, no TTL at all.
        assert_eq!(int(&mut con, &["PEXPIRE", "{m}a", "5000"]), 1);
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "3", "{m}a", "{m}b", "{m}c", "t1", "EX", "100"]), 3);
        for key in keys {
            let ttl = pttl(&mut con, key);
            assert!((99_000..=100_000).contains(&ttl), "{key}: {ttl}");
        }
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "1", "{m}c", "t1"]), 1);
        assert_eq!(pttl(&mut con, "{m}c"), -1);
        // NX: nil when any key exists, even the caller's own (redlock's lock
        // script), and nothing changes.
        let before: Vec<_> = keys.iter().map(|key| snapshot(&mut con, key)).collect();
        assert_eq!(value(&mut con, &["LOCK.MACQUIRE", "2", "{m}d", "{m}a", "t1", "NX", "PX", "9000"]), Value::Nil);
        assert_eq!(int(&mut con, &["EXISTS", "{m}d"]), 0);
        let after: Vec<_> = keys.iter().map(|key| snapshot(&mut con, key)).collect();
        assert_eq!(before, after);
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "2", "{m}d", "{m}e", "t1", "NX", "PX", "9000"]), 2);
        // A key of another type exists too: with NX, nil; without, WRONGTYPE.
        let _: i64 = cmd(&["RPUSH", "{m}list", "x"]).query(&mut con).unwrap();
        assert_eq!(value(&mut con, &["LOCK.MACQUIRE", "2", "{m}free", "{m}list", "t1", "NX"]), Value::Nil);
        assert_eq!(error(&mut con, &cmd(&["LOCK.MACQUIRE", "2", "{m}free", "{m}list", "t1"])), WRONGTYPE);
        assert_eq!(int(&mut con, &["EXISTS", "{m}free"]), 0);
        // Waiting with NX for the list to go.
        let waiter = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "{m}free", "{m}list", "t1", "NX", "WAIT", "30000"]);
        assert_eq!(int(&mut con, &["DEL", "{m}list"]), 1);
        assert_eq!(waiter.answer(), Ok(Value::Int(2)));
        assert_eq!(holders(&mut con, &["{m}free", "{m}list"]), some(&["t1", "t1"]));
        // A plain SET holds a key as any token would.
        let _: () = cmd(&["SET", "{m}f", "t1"]).query(&mut con).unwrap();
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "1", "{m}f", "t1"]), 1);
        let _: () = cmd(&["SET", "{m}f", "other"]).query(&mut con).unwrap();
        assert_eq!(value(&mut con, &["LOCK.MACQUIRE", "1", "{m}f", "t1"]), Value::Nil);
        // A key named twice is one key; the reply counts numkeys as given
        // (redlock's #KEYS).
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "3", "{m}g", "{m}g", "{m}h", "t3"]), 3);
        assert_eq!(holders(&mut con, &["{m}g", "{m}h"]), some(&["t3", "t3"]));
        assert_eq!(int(&mut con, &["LOCK.MRELEASEIF", "3", "{m}g", "{m}h", "{m}g", "t3"]), 2);
        assert_eq!(int(&mut con, &["EXISTS", "{m}g", "{m}h"]), 0);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn several_locks_are_released_and_extended(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "2", "{x}a", "{x}b", "t1", "PX", "60000"]), 2);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{x}c", "t2", "PX", "60000"]), 1);
        // MEXTEND: every key the token's, or nothing changes.
        let ends = |con: &mut Connection| -> Vec<i64> {
            ["{x}a", "{x}b", "{x}c"].iter().map(|key| int(con, &["PEXPIRETIME", key])).collect()
        };
        let before = ends(&mut con);
        assert_eq!(int(&mut con, &["LOCK.MEXTEND", "3", "{x}a", "{x}b", "{x}c", "t1", "PX", "90000"]), 0);
        assert_eq!(int(&mut con, &["LOCK.MEXTEND", "2", "{x}a", "{x}free", "t1", "PX", "90000"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "{x}free"]), 0);
        assert_eq!(ends(&mut con), before);
        assert_eq!(int(&mut con, &["LOCK.MEXTEND", "2", "{x}a", "{x}b", "t1", "PX", "90000"]), 2);
        for key in ["{x}a", "{x}b"] {
            let ttl = pttl(&mut con, key);
            assert!((89_000..=90_000).contains(&ttl), "{key}: {ttl}");
        }
        // ADD: each lease that much after its own end.
        let end_b = int(&mut con, &["PEXPIRETIME", "{x}b"]);
        assert_eq!(int(&mut con, &["PEXPIRE", "{x}a", "30000"]), 1);
        let end_a = int(&mut con, &["PEXPIRETIME", "{x}a"]);
        assert_eq!(int(&mut con, &["LOCK.MEXTEND", "2", "{x}a", "{x}b", "t1", "EX", "10", "ADD"]), 2);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "{x}a"]), end_a + 10_000);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "{x}b"]), end_b + 10_000);
        // ADD with a key without a lease: 0, and the other keeps its end.
        assert_eq!(int(&mut con, &["PERSIST", "{x}b"]), 1);
        assert_eq!(int(&mut con, &["LOCK.MEXTEND", "2", "{x}a", "{x}b", "t1", "PX", "5000", "ADD"]), 0);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "{x}a"]), end_a + 10_000);
        assert_eq!(pttl(&mut con, "{x}b"), -1);
        // Without ADD a lease is given to it.
        assert_eq!(int(&mut con, &["LOCK.MEXTEND", "1", "{x}b", "t1", "PX", "5000"]), 1);
        assert!(pttl(&mut con, "{x}b") > 0);
        // MRELEASEIF: each key the token holds; the others stay.
        assert_eq!(int(&mut con, &["LOCK.MRELEASEIF", "4", "{x}a", "{x}b", "{x}c", "{x}free", "t2"]), 1);
        assert_eq!(holders(&mut con, &["{x}a", "{x}b", "{x}c"]), some(&["t1", "t1", ""]));
        assert_eq!(int(&mut con, &["LOCK.MRELEASEIF", "3", "{x}a", "{x}b", "{x}c", "t1"]), 2);
        assert_eq!(int(&mut con, &["LOCK.MRELEASEIF", "3", "{x}a", "{x}b", "{x}c", "t1"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "{x}a", "{x}b", "{x}c"]), 0);
    }

    fn multi_key_errors_change_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: () = cmd(&["RPUSH", "list", "x"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "held", "owner", "PX", "600000"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "mine", "me", "PX", "600000"]).query(&mut con).unwrap();
        let keys = ["list", "held", "mine", "free"];
        let before: Vec<_> = keys.iter().map(|key| snapshot(&mut con, key)).collect();
        let digest_before = digest(&mut con);
        let range = "ERR numkeys must be between 1 and 1024";
        let mismatch = "ERR numkeys does not match the arguments: numkeys keys, then the token";
        let fence = "ERR LOCK.MACQUIRE takes no FENCE (its reply is the number of keys): take a fencing token with LOCK.ACQUIRE … FENCE";
        let empty = "ERR token must not be empty";
        let many: Vec<String> = (0..1025).map(|i| format!("k{i}")).collect();
        let mut too_many = vec!["LOCK.MACQUIRE", "1025"];
        too_many.extend(many.iter().map(String::as_str));
        too_many.push("me");
        let cases: &[(&[&str], &str)] = &[
            (&["LOCK.MACQUIRE", "0", "free", "me"], range),
            (&["LOCK.MACQUIRE", "-1", "free", "me"], range),
            (&["LOCK.MACQUIRE", "1025", "free", "me"], range),
            (&["LOCK.MRELEASEIF", "0", "mine", "me"], range),
            (&["LOCK.MEXTEND", "0", "mine", "me", "PX", "10"], range),
            (&["LOCK.MACQUIRE", "x", "free", "me"], NOT_INTEGER),
            (&["LOCK.MACQUIRE", "1.0", "free", "me"], NOT_INTEGER),
            (&["LOCK.MACQUIRE", "3", "free", "me"], mismatch),
            (&["LOCK.MACQUIRE", "2", "free", "me"], mismatch),
            (&["LOCK.MRELEASEIF", "2", "mine", "me"], mismatch),
            (&["LOCK.MRELEASEIF", "1", "mine", "held", "me"], mismatch),
            (&["LOCK.MEXTEND", "5", "mine", "me", "PX", "10"], mismatch),
            // numkeys too small: a key read as the token, the token as an option.
            (&["LOCK.MEXTEND", "1", "mine", "held", "me", "PX", "10"], SYNTAX),
            (&["LOCK.MACQUIRE", "1", "free", "me", "FENCE", "f"], fence),
            (&["LOCK.MACQUIRE", "1", "free", "me", "FENCE"], SYNTAX),
            (&["LOCK.MACQUIRE", "1", "free", ""], empty),
            (&["LOCK.MRELEASEIF", "1", "mine", ""], empty),
            (&["LOCK.MEXTEND", "1", "mine", "", "PX", "10"], empty),
            // A key of another type anywhere: nothing taken, released or extended.
            (&["LOCK.MACQUIRE", "2", "free", "list", "me"], WRONGTYPE),
            (&["LOCK.MRELEASEIF", "2", "mine", "list", "me"], WRONGTYPE),
            (&["LOCK.MEXTEND", "2", "mine", "list", "me", "PX", "10"], WRONGTYPE),
            (&["LOCK.MACQUIRE", "1", "free", "me", "PX", "0"], "ERR invalid expire time in 'lock.macquire' command"),
            (&["LOCK.MACQUIRE", "1", "free", "me", "EX", "9223372036854775"], "ERR invalid expire time in 'lock.macquire' command"),
            (&["LOCK.MEXTEND", "1", "mine", "me", "PX", "-1"], "ERR invalid expire time in 'lock.mextend' command"),
            (&["LOCK.MEXTEND", "1", "mine", "me", "PX", "9223372036854775000", "ADD"], "ERR invalid expire time in 'lock.mextend' command"),
            (&["LOCK.MACQUIRE", "1", "held", "me", "WAIT", "0"], "ERR invalid WAIT time in 'lock.macquire' command"),
            (&["LOCK.MACQUIRE", "1", "free", "me", "PX", "10", "EX", "1"], SYNTAX),
            (&["LOCK.MACQUIRE", "1", "free", "me", "NX", "NX"], SYNTAX),
            (&["LOCK.MACQUIRE", "1", "free", "me", "ADD"], SYNTAX),
            (&["LOCK.MEXTEND", "1", "mine", "me", "ADD", "NX"], SYNTAX),
            (&["LOCK.MEXTEND", "1", "mine", "me", "PX", "10", "EX", "1"], SYNTAX),
            (&["LOCK.MEXTEND", "1", "mine", "me", "PX", "10", "NX"], SYNTAX),
            (&["LOCK.MACQUIRE", "1", "free"], "ERR wrong number of arguments for 'lock.macquire' command"),
            (&["LOCK.MRELEASEIF", "1", "mine"], "ERR wrong number of arguments for 'lock.mreleaseif' command"),
            (&["LOCK.MEXTEND", "1", "mine", "me", "PX"], "ERR wrong number of arguments for 'lock.mextend' command"),
            (&too_many, range),
        ];
        for (words, expected) in cases {
            assert_eq!(error(&mut con, &cmd(words)), *expected, "{:?}", &words[..words.len().min(6)]);
        }
        let after: Vec<_> = keys.iter().map(|key| snapshot(&mut con, key)).collect();
        assert_eq!(before, after);
        assert_eq!(digest_before, digest(&mut con));
        assert_eq!(int(&mut con, &["EXISTS", "k0", "k1024"]), 0);
        assert_eq!(blocked_clients(&mut con), 0);
        // 1024 keys is the bound, not past it.
        let mut most = vec!["LOCK.MACQUIRE", "1024"];
        most.extend(many[..1024].iter().map(String::as_str));
        most.push("me");
        assert_eq!(int(&mut con, &most), 1024);
        most[0] = "LOCK.MRELEASEIF";
        assert_eq!(int(&mut con, &most), 1024);
    }

    fn a_multi_key_waiter_waits_its_turn_on_each_key(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "2", "a", "b", "h", "PX", "600000"]), 2);
        // The multi-key waiter queues on a (the first busy key); a
        // single-key waiter then queues on b, behind it in age.
        let multi = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "a", "b", "W", "WAIT", "60000", "PX", "60000"]);
        let single = Waiter::start(&server, &["LOCK.ACQUIRE", "b", "S", "WAIT", "60000"]);
        // a frees: b is still held, so W moves to b's queue, ahead of the
        // younger S; a is free meanwhile (nobody else waits for it).
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "a", "h"]), 1);
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["", "h"]));
        assert_eq!(blocked_clients(&mut con), 2);
        // b frees: W, the older, gets both keys at once; S waits on.
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "b", "h"]), 1);
        assert_eq!(multi.answer(), Ok(Value::Int(2)));
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["W", "W"]));
        for key in ["a", "b"] {
            let ttl = pttl(&mut con, key);
            assert!((59_000..=60_000).contains(&ttl), "{key}: the lease counts from the grant: {ttl}");
        }
        assert_eq!(blocked_clients(&mut con), 1);
        // W releases both: b goes to S.
        assert_eq!(int(&mut con, &["LOCK.MRELEASEIF", "2", "a", "b", "W"]), 2);
        assert_eq!(single.answer(), Ok(Value::Int(1)));
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["", "S"]));
        let figures = harness::recipes_figures(&mut con, "recipes");
        assert_eq!(figures["lock_waits"], 2);
        assert_eq!(figures["lock_handoffs_release"], 2);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn a_single_key_waiter_ahead_keeps_its_turn(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.MACQUIRE", "2", "a", "b", "h"]), 2);
        // S waits on b first; W (a and b) queues on a.
        let single = Waiter::start(&server, &["LOCK.ACQUIRE", "b", "S", "WAIT", "60000"]);
        let multi = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "a", "b", "W", "WAIT", "60000"]);
        // b frees: S gets it (W is not in b's queue).
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "b", "h"]), 1);
        assert_eq!(single.answer(), Ok(Value::Int(1)));
        // a frees: W cannot have b, moves to b's queue; a stays free.
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "a", "h"]), 1);
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["", "S"]));
        // The fairness limit: a newcomer takes the free a.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "a", "N"]), 1);
        // b frees: W now waits for a, in a's queue.
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "b", "S"]), 1);
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["N", ""]));
        assert_eq!(blocked_clients(&mut con), 1);
        // a frees by a DEL (a keyspace event): W gets both.
        assert_eq!(int(&mut con, &["DEL", "a"]), 1);
        assert_eq!(multi.answer(), Ok(Value::Int(2)));
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["W", "W"]));
        assert_eq!(pttl(&mut con, "a"), -1);
    }

    fn a_multi_key_wait_is_woken_by_deletes_and_expiry(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // Only the module's timer can notice a lease's end here.
        let _: () = cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).query(&mut con).unwrap();
        for (i, deletion) in [
            vec!["DEL", "{d}a"],
            vec!["UNLINK", "{d}a"],
            vec!["RENAME", "{d}a", "{d}elsewhere"],
            vec!["PEXPIRE", "{d}a", "1"],
            vec!["FLUSHALL"],
        ]
        .into_iter()
        .enumerate()
        {
            let token = format!("w{i}");
            assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{d}a", "holder"]), 1);
            let next = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "{d}a", "{d}b", &token, "WAIT", "30000"]);
            let _: Value = cmd(&deletion).query(&mut con).unwrap();
            assert_eq!(next.answer(), Ok(Value::Int(2)), "after {deletion:?}");
            assert_eq!(holders(&mut con, &["{d}a", "{d}b"]), some(&[&token, &token]), "after {deletion:?}");
            let _: i64 = cmd(&["DEL", "{d}a", "{d}b", "{d}elsewhere"]).query(&mut con).unwrap();
        }
        // Two leases ending one after the other: the waiter moves from the
        // first key's queue to the second's, and gets both at its end.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{d}a", "h1", "PX", "200"]), 1);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "{d}b", "h2", "PX", "600"]), 1);
        let started = Instant::now();
        let next = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "{d}a", "{d}b", "late", "WAIT", "30000", "PX", "60000"]);
        assert_eq!(next.answer(), Ok(Value::Int(2)));
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(20), "handed over only after {waited:?}");
        assert_eq!(holders(&mut con, &["{d}a", "{d}b"]), some(&["late", "late"]));
        let figures = harness::recipes_figures(&mut con, "recipes");
        assert!(figures["lock_handoffs_expiry"] >= 2, "{figures:?}");
    }

    fn multi_key_waits_time_out_and_leave_every_queue(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "a", "h"]), 1);
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "b", "h"]), 1);
        let before: Vec<_> = ["a", "b", "c"].iter().map(|key| snapshot(&mut con, key)).collect();
        let quick = Waiter::start(&server, &["LOCK.MACQUIRE", "3", "c", "a", "b", "q", "WAIT", "150"]);
        assert_eq!(quick.answer(), Ok(Value::Nil));
        let after: Vec<_> = ["a", "b", "c"].iter().map(|key| snapshot(&mut con, key)).collect();
        assert_eq!(before, after, "nothing taken, c left free");
        // A wait that runs out after it moved to another key's queue.
        let moved = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "a", "b", "m", "WAIT", "400"]);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "a", "h"]), 1);
        assert_eq!(moved.answer(), Ok(Value::Nil));
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["", "h"]));
        // A killed waiter in a queue it moved to leaves it.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "a", "h"]), 1);
        let gone = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "a", "b", "g", "WAIT", "60000"]);
        let last = Waiter::start(&server, &["LOCK.ACQUIRE", "b", "last", "WAIT", "60000"]);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "a", "h"]), 1);
        assert_eq!(int(&mut con, &["CLIENT", "KILL", "ID", &gone.id.to_string()]), 1);
        assert!(gone.answer().is_err());
        wait_blocked(&mut con, 1);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", "b", "h"]), 1);
        assert_eq!(last.answer(), Ok(Value::Int(1)));
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["", "last"]));
        let figures = harness::recipes_figures(&mut con, "recipes");
        assert_eq!(figures["lock_waits_timed_out"], 2);
        assert_eq!(figures["locks_with_waiters"], 0);
        assert_eq!(blocked_clients(&mut con), 0);
        assert!(server.log().find("panic").is_none());
    }

    fn a_multi_key_grant_never_received_is_given_back(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "a", "h"]), 1);
        let first = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "a", "b", "first", "WAIT", "60000", "PX", "60000"]);
        // b is free: these queue on a too.
        let second = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "b", "a", "second", "WAIT", "60000"]);
        let third = Waiter::start(&server, &["LOCK.ACQUIRE", "a", "third", "WAIT", "60000"]);
        // The release hands both keys to `first`, killed before its reply:
        // both come back, and go to `second` (the oldest left on a).
        let mut pipe = redis::pipe();
        pipe.cmd("LOCK.RELEASEIF").arg("a").arg("h");
        pipe.cmd("CLIENT").arg("KILL").arg("ID").arg(first.id);
        let answers: Vec<Value> = pipe.query(&mut con).unwrap();
        assert_eq!(answers, [Value::Int(1), Value::Int(1)]);
        assert!(first.answer().is_err());
        assert_eq!(second.answer(), Ok(Value::Int(2)));
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["second", "second"]));
        assert_eq!(pttl(&mut con, "a"), -1);
        assert_eq!(int(&mut con, &["LOCK.MRELEASEIF", "2", "a", "b", "second"]), 2);
        assert_eq!(third.answer(), Ok(Value::Int(1)));
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["third", ""]));
        // A key the waiter's token held already is not given back (the
        // grant only set its lease); the key it took free is.
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "b", "mine"]), 1);
        let mine = Waiter::start(&server, &["LOCK.MACQUIRE", "2", "a", "b", "mine", "WAIT", "60000", "PX", "60000"]);
        let mut pipe = redis::pipe();
        pipe.cmd("LOCK.RELEASEIF").arg("a").arg("third");
        pipe.cmd("CLIENT").arg("KILL").arg("ID").arg(mine.id);
        let answers: Vec<Value> = pipe.query(&mut con).unwrap();
        assert_eq!(answers, [Value::Int(1), Value::Int(1)]);
        assert!(mine.answer().is_err());
        wait_until("a is given back", || int(&mut con, &["EXISTS", "a"]) == 0);
        assert_eq!(holders(&mut con, &["a", "b"]), some(&["", "mine"]));
        let ttl = pttl(&mut con, "b");
        assert!((0..=60_000).contains(&ttl), "b keeps the grant's lease: {ttl}");
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn multi_key_waits_never_block_in_multi_or_scripts(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.ACQUIRE", "l", "holder"]), 1);
        let replies: Value = redis::pipe()
            .atomic()
            .cmd("LOCK.MACQUIRE").arg(2).arg("free").arg("l").arg("me").arg("WAIT").arg(60000)
            .cmd("LOCK.MACQUIRE").arg(1).arg("free").arg("me").arg("WAIT").arg(60000)
            .query(&mut con)
            .unwrap();
        assert_eq!(replies, Value::Array(vec![Value::Nil, Value::Int(1)]));
        let script = "return redis.call('LOCK.MACQUIRE', 2, KEYS[1], KEYS[2], ARGV[1], 'WAIT', 60000)";
        let got: Value = cmd(&["EVAL", script, "2", "l", "other", "me"]).query(&mut con).unwrap();
        assert_eq!(got, Value::Nil);
        assert_eq!(int(&mut con, &["EXISTS", "other"]), 0);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn several_keys_stay_exclusive_under_contention(flavor) {
        // Clients take overlapping sets of keys (some one key, some several,
        // in any order) with WAIT: no key ever has two holders, every round
        // ends (no deadlock), and each key's counter counts its holders.
        const CLIENTS: usize = 12;
        const ROUNDS: usize = 150;
        const KEYS: [&str; 4] = ["{k}a", "{k}b", "{k}c", "{k}d"];
        let server = Server::start(flavor);
        let held: Arc<Vec<AtomicBool>> = Arc::new(KEYS.iter().map(|_| AtomicBool::new(false)).collect());
        let workers: Vec<_> = (0..CLIENTS)
            .map(|n| {
                let mut con = server.con();
                let held = held.clone();
                thread::spawn(move || {
                    let token = format!("worker-{n}");
                    let mut taken = [0i64; 4];
                    for round in 0..ROUNDS {
                        // A set of 1 to 4 keys, varying with the worker and the round.
                        let mask = 1 + (n * 7 + round * 5) % 15;
                        let mut set: Vec<usize> = (0..4).filter(|i| mask & (1 << i) != 0).collect();
                        if (n + round) % 2 == 1 {
                            set.reverse();
                        }
                        let mut words = vec!["LOCK.MACQUIRE".to_string(), set.len().to_string()];
                        words.extend(set.iter().map(|&i| KEYS[i].to_string()));
                        words.extend([token.clone(), "WAIT".into(), "60000".into(), "PX".into(), "60000".into()]);
                        let words: Vec<&str> = words.iter().map(String::as_str).collect();
                        assert_eq!(int(&mut con, &words), set.len() as i64, "{words:?}");
                        for &i in &set {
                            assert!(!held[i].swap(true, Ordering::SeqCst), "two holders of {}", KEYS[i]);
                            taken[i] += 1;
                            let counter = format!("{}:count", KEYS[i]);
                            let _: i64 = cmd(&["INCR", &counter]).query(&mut con).unwrap();
                        }
                        for &i in &set {
                            held[i].store(false, Ordering::SeqCst);
                        }
                        let mut release = vec!["LOCK.MRELEASEIF".to_string(), set.len().to_string()];
                        release.extend(set.iter().map(|&i| KEYS[i].to_string()));
                        release.push(token.clone());
                        let release: Vec<&str> = release.iter().map(String::as_str).collect();
                        assert_eq!(int(&mut con, &release), set.len() as i64);
                    }
                    taken
                })
            })
            .collect();
        let mut taken = [0i64; 4];
        for worker in workers {
            for (total, mine) in taken.iter_mut().zip(worker.join().unwrap()) {
                *total += mine;
            }
        }
        let mut con = server.con();
        for (i, key) in KEYS.iter().enumerate() {
            assert_eq!(int(&mut con, &["GET", &format!("{key}:count")]), taken[i], "{key}");
            assert_eq!(int(&mut con, &["EXISTS", key]), 0);
        }
        assert_eq!(blocked_clients(&mut con), 0);
        let figures = harness::recipes_figures(&mut con, "recipes");
        eprintln!("{flavor:?}: {} waits, {} hand-offs on release", figures["lock_waits"], figures["lock_handoffs_release"]);
        assert!(figures["lock_waits"] > 0, "the clients contended");
    }

    fn multi_key_command_metadata_is_complete(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let keys = harness::getkeys;
        assert_eq!(keys(&mut con, &["LOCK.MACQUIRE", "1", "a", "t"]), ["a"]);
        assert_eq!(keys(&mut con, &["LOCK.MACQUIRE", "3", "a", "b", "c", "t", "PX", "5", "WAIT", "9", "NX"]), ["a", "b", "c"]);
        // Keys named like options or like numbers are keys still.
        assert_eq!(keys(&mut con, &["LOCK.MACQUIRE", "2", "PX", "2", "t", "PX", "5"]), ["PX", "2"]);
        assert_eq!(keys(&mut con, &["LOCK.MRELEASEIF", "2", "a", "b", "t"]), ["a", "b"]);
        assert_eq!(keys(&mut con, &["LOCK.MEXTEND", "2", "a", "b", "t", "PX", "5", "ADD"]), ["a", "b"]);
        // No keys in a call the command refuses.
        for words in [
            &["LOCK.MACQUIRE", "0", "a", "t"][..],
            &["LOCK.MACQUIRE", "x", "a", "t"],
            &["LOCK.MACQUIRE", "-1", "a", "t"],
            &["LOCK.MACQUIRE", "5", "a", "t"],
        ] {
            let refused = error(&mut con, redis::cmd("COMMAND").arg("GETKEYS").arg(words));
            assert!(refused.starts_with("ERR "), "{words:?}: {refused}");
        }
        let info: Vec<Value> = harness::query(&mut con, &["COMMAND", "INFO", "LOCK.MACQUIRE"]);
        let Some(Value::Array(entry)) = info.first() else { panic!("{info:?}") };
        assert_eq!(&entry[3..6], [Value::Int(0), Value::Int(0), Value::Int(0)], "no legacy key range");
        assert_eq!(
            command_docs(&mut con, "LOCK.MACQUIRE"),
            module_docs(
                "Takes several locks for a token, all or none (with a lease and an optional first-come-first-served wait); nil if another token holds any",
                "0.7.0",
                "O(N) for N keys, plus O(M) over the M clients waiting for a lock when it is handed on",
                &[
                    "- name=numkeys type=integer",
                    "- name=key type=key key_spec_index=0 flags=multiple",
                    "- name=token type=string",
                    "- name=lease type=oneof flags=optional",
                    "  - name=milliseconds type=integer token=PX",
                    "  - name=seconds type=integer token=EX",
                    "- name=wait type=integer token=WAIT flags=optional",
                    "- name=nx type=pure-token token=NX flags=optional",
                ],
            )
        );
        assert_eq!(
            command_docs(&mut con, "LOCK.MRELEASEIF"),
            module_docs(
                "Releases each of several locks the token holds; each goes to its oldest waiter next",
                "0.7.0",
                "O(N) for N keys, plus O(M) over the M clients waiting for the released locks",
                &[
                    "- name=numkeys type=integer",
                    "- name=key type=key key_spec_index=0 flags=multiple",
                    "- name=token type=string",
                ],
            )
        );
        assert_eq!(
            command_docs(&mut con, "LOCK.MEXTEND"),
            module_docs(
                "Sets the leases of several locks to end the given time from now (with ADD, after their current ends), only if the token holds every one",
                "0.7.0",
                "O(N) for N keys",
                &[
                    "- name=numkeys type=integer",
                    "- name=key type=key key_spec_index=0 flags=multiple",
                    "- name=token type=string",
                    "- name=lease type=oneof",
                    "  - name=milliseconds type=integer token=PX",
                    "  - name=seconds type=integer token=EX",
                    "- name=add type=pure-token token=ADD flags=optional",
                ],
            )
        );
        let categories = flavor.has_module_acl_categories(&mut con);
        for (name, flags, acl) in [
            ("LOCK.MACQUIRE", &["write", "denyoom", "module", "blocking", "movablekeys"][..], &["@write", "@slow", "@blocking"][..]),
            ("LOCK.MRELEASEIF", &["write", "module", "movablekeys"], &["@write", "@slow"]),
            ("LOCK.MEXTEND", &["write", "module", "movablekeys"], &["@write", "@slow"]),
        ] {
            assert_eq!(command_flags(&mut con, name), flags, "{name}");
            let expected: &[&str] = if categories { acl } else { &[] };
            assert_eq!(command_categories(&mut con, name), expected, "{name}");
        }
    }

    fn multi_key_writes_reach_replicas_and_the_aof(flavor) {
        harness::replica_converges(flavor, |server, con| {
            multi_workload(server, con);
            MULTI_KEYS.to_vec()
        });
        let server = harness::aof_round_trip(flavor, |server, con| {
            multi_workload(server, con);
            MULTI_KEYS.to_vec()
        });
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LOCK.MRELEASEIF", "2", "{v}a", "{v}b", "w"]), 2);
    }

    fn cluster_routes_several_keys_of_one_slot(flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        for i in 0..20 {
            let (a, b) = (format!("{{job{i}}}:a"), format!("{{job{i}}}:b"));
            let got: i64 = cmd(&["LOCK.MACQUIRE", "2", &a, &b, "t", "PX", "60000"]).query(&mut con).unwrap();
            assert_eq!(got, 2);
            let got: i64 = cmd(&["LOCK.MEXTEND", "2", &a, &b, "t", "PX", "90000"]).query(&mut con).unwrap();
            assert_eq!(got, 2);
            let got: i64 = cmd(&["LOCK.MRELEASEIF", "2", &a, &b, "t"]).query(&mut con).unwrap();
            assert_eq!(got, 2);
        }
        let mut nodes: Vec<_> = cluster.nodes.iter().map(|node| node.con()).collect();
        let owner = cluster.owner("a");
        let other = (owner + 1) % nodes.len();
        for words in [
            &["LOCK.MACQUIRE", "2", "a", "b", "t"][..],
            &["LOCK.MRELEASEIF", "2", "a", "b", "t"],
            &["LOCK.MEXTEND", "2", "a", "b", "t", "PX", "10"],
        ] {
            assert_eq!(error(&mut nodes[owner], &cmd(words)), CROSSSLOT, "{words:?}");
        }
        assert_eq!(int(&mut nodes[owner], &["EXISTS", "a"]), 0);
        assert_eq!(error(&mut nodes[other], &cmd(&["LOCK.MACQUIRE", "1", "a", "t"])), cluster.moved("a"));
        assert_eq!(error(&mut nodes[other], &cmd(&["LOCK.MRELEASEIF", "1", "a", "t"])), cluster.moved("a"));
    }

    fn multi_key_calls_fire_the_events_of_the_built_ins(flavor) {
        let server = Server::start(flavor);
        let expected = [
            "a set", "a expire", "b set", "b expire", // macquire with a lease
            "a expire", "b expire",                  // mextend
            "b del",                                 // mreleaseif of one; the failed calls fired nothing
        ];
        let events = harness::keyspace_events(&server, expected.len(), |con| {
            assert_eq!(int(con, &["LOCK.MACQUIRE", "2", "a", "b", "t", "PX", "60000"]), 2);
            assert_eq!(value(con, &["LOCK.MACQUIRE", "2", "c", "b", "other"]), Value::Nil);
            assert_eq!(int(con, &["LOCK.MEXTEND", "2", "a", "b", "t", "PX", "90000"]), 2);
            assert_eq!(int(con, &["LOCK.MEXTEND", "2", "a", "c", "t", "PX", "90000"]), 0);
            assert_eq!(int(con, &["LOCK.MRELEASEIF", "2", "b", "c", "t"]), 1);
        });
        assert_eq!(events, expected);
    }
}

server_tests! {
    fn random_multi_key_calls_never_crash_and_errors_change_nothing(flavor) {
        use rand::Rng;
        let server = Server::start(flavor);
        let commands: &[&[u8]] = &[b"LOCK.MACQUIRE", b"LOCK.MRELEASEIF", b"LOCK.MEXTEND"];
        let counts: &[&[u8]] = &[b"1", b"2", b"3", b"0", b"-1", b"1025", b"x", b""];
        let keys: &[&[u8]] = &[b"lock", b"held", b"list", b"absent", b"PX"];
        let tokens: &[&[u8]] = &[b"owner", b"me", b"", b"\x00\xff", b"NX"];
        let options: &[(&[u8], &[&[u8]])] = &[
            (b"PX", &[b"60000", b"0", b"-1", b"9223372036854775807", b"x"]),
            (b"EX", &[b"60", b"0", b"9223372036854775"]),
            (b"WAIT", &[b"1", b"0", b"-5", b"soon"]),
            (b"FENCE", &[b"lock"]),
            (b"NX", &[]),
            (b"ADD", &[]),
        ];
        let setup = |con: &mut Connection| {
            let _: () = cmd(&["SET", "held", "owner", "PX", "600000"]).query(con).unwrap();
            let _: i64 = cmd(&["RPUSH", "list", "x"]).query(con).unwrap();
        };
        harness::fuzz(&server, 0x10c7, 1_500, setup, |rng| {
            let mut argv = vec![pick(rng, commands), pick(rng, counts)];
            for _ in 0..rng.random_range(0..=3) {
                argv.push(pick(rng, keys));
            }
            argv.push(pick(rng, tokens));
            for _ in 0..rng.random_range(0..3) {
                let (token, values) = options[rng.random_range(0..options.len())];
                argv.push(token.to_vec());
                if !values.is_empty() && rng.random_ratio(9, 10) {
                    argv.push(pick(rng, values));
                }
            }
            argv
        });
        assert_eq!(blocked_clients(&mut server.con()), 0);
    }
}

const MULTI_KEYS: [&str; 5] = ["{v}a", "{v}b", "{v}c", "{v}d", "{v}e"];

/// Every kind of multi-key LOCK write, a hand-off of several keys included.
fn multi_workload(server: &Server, con: &mut Connection) {
    assert_eq!(
        int(
            con,
            &[
                "LOCK.MACQUIRE",
                "3",
                "{v}a",
                "{v}b",
                "{v}c",
                "t",
                "PX",
                "600000"
            ]
        ),
        3
    );
    assert_eq!(
        int(
            con,
            &["LOCK.MEXTEND", "2", "{v}a", "{v}b", "t", "PX", "800000"]
        ),
        2
    );
    assert_eq!(
        int(
            con,
            &["LOCK.MEXTEND", "1", "{v}c", "t", "PX", "1000", "ADD"]
        ),
        1
    );
    assert_eq!(int(con, &["LOCK.MACQUIRE", "1", "{v}d", "u"]), 1);
    let waiter = Waiter::start(
        server,
        &[
            "LOCK.MACQUIRE",
            "2",
            "{v}a",
            "{v}b",
            "w",
            "WAIT",
            "60000",
            "PX",
            "700000",
        ],
    );
    assert_eq!(
        int(con, &["LOCK.MRELEASEIF", "3", "{v}a", "{v}b", "{v}d", "t"]),
        2
    );
    assert_eq!(waiter.answer(), Ok(Value::Int(2)));
    assert_eq!(
        int(
            con,
            &["LOCK.MACQUIRE", "2", "{v}d", "{v}e", "u", "EX", "900"]
        ),
        2
    );
    assert_eq!(int(con, &["LOCK.MRELEASEIF", "1", "{v}e", "u"]), 1);
}
