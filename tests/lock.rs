//! LOCK on real servers: the seed transcripts, leases, fencing, the FIFO wait
//! and its hand-offs, every error, mutual exclusion under contention,
//! replication, AOF, command metadata and cluster routing.

mod harness;

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
