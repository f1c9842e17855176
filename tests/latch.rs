//! LATCH on real servers: every reply and every error (each changing
//! nothing), counting down to 0 (the key goes, every waiter is answered 1),
//! never below 0, the TTL kept, LATCH.SET on an existing latch changing
//! nothing, waits (at once on an open latch, timing out, inside MULTI and
//! scripts, opened by the TTL running out or by a plain write to 0 or below,
//! not by one that keeps the count positive, a deadline answered from the
//! count, on a replica), `INFO recipes`, replication (a TTL sent as an
//! absolute time) and the AOF.

use crate::harness;

use std::collections::BTreeSet;
use std::thread;
use std::time::{Duration, Instant};

use harness::{
    arity, blocked_clients, cmd, commands_run, dataset, error, int, query, recipes_figures, reply,
    server_ms, state, text, value, values, wait_blocked, Connection, Replicated, Server, Value,
    Waiter, NOT_INTEGER, SYNTAX, WRONGTYPE,
};

const POSITIVE: &str = "ERR count must be a positive integer";
const DECREMENT: &str = "ERR decrement must be a positive integer";
const BAD_EXPIRE: &str = "ERR invalid expire time in 'latch.set' command";
const BAD_TIMEOUT: &str = "ERR invalid timeout in 'latch.wait' command";

fn get(con: &mut Connection, key: &str) -> Option<String> {
    query(con, &["GET", key])
}

fn pexpiretime(con: &mut Connection, key: &str) -> i64 {
    int(con, &["PEXPIRETIME", key])
}

/// The latch figures of `INFO recipes`: (latch_waits,
/// latch_waits_timed_out, latches_with_waiters).
fn figures(con: &mut Connection) -> (i64, i64, i64) {
    let all = recipes_figures(con, "recipes");
    let figure = |name: &str| {
        *all.get(name)
            .unwrap_or_else(|| panic!("no {name} in {all:?}"))
    };
    (
        figure("latch_waits"),
        figure("latch_waits_timed_out"),
        figure("latches_with_waiters"),
    )
}

/// A waiter on a latch at 1 is answered 1, at once, by the plain write
/// `words` (which leaves the count at 0 or below).
fn a_plain_write_opens(flavor: harness::Flavor, words: &[&str]) {
    let server = Server::start(flavor);
    let mut con = server.con();
    let _: () = cmd(&["SET", "l", "1"]).query(&mut con).unwrap();
    let waiter = Waiter::start(&server, &["LATCH.WAIT", "l", "10000"]);
    let started = Instant::now();
    let _: Value = cmd(words).query(&mut con).unwrap();
    assert_eq!(waiter.answer(), Ok(Value::Int(1)), "{words:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{words:?}: answered after {:?}",
        started.elapsed()
    );
    assert_eq!(int(&mut con, &["LATCH.COUNT", "l"]), 0);
    assert_eq!(figures(&mut con), (1, 0, 0));
    assert_eq!(blocked_clients(&mut con), 0);
}

server_tests! {
    fn replies_of_every_command(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // A missing latch counts 0 and is open.
        assert_eq!(int(&mut con, &["LATCH.COUNT", "l"]), 0);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l"]), 0);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "3"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0, "a countdown of a missing latch writes nothing");
        assert_eq!(value(&mut con, &["LATCH.WAIT", "l", "60000"]), Value::Int(1));
        // SET: 1 when created, stored as a plain string.
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "3"]), 1);
        assert_eq!(get(&mut con, "l").as_deref(), Some("3"));
        assert_eq!(text(&value(&mut con, &["TYPE", "l"])), "string");
        assert_eq!(int(&mut con, &["PTTL", "l"]), -1);
        assert_eq!(int(&mut con, &["LATCH.COUNT", "l"]), 3);
        // 0 when it exists: nothing changes.
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "9"]), 0);
        assert_eq!(int(&mut con, &["LATCH.COUNT", "l"]), 3);
        // COUNTDOWN: the count after it, by 1 or n, never below 0.
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l"]), 2);
        assert_eq!(get(&mut con, "l").as_deref(), Some("2"));
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "1"]), 1);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "5"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0, "a latch at 0 is deleted");
        assert_eq!(int(&mut con, &["LATCH.COUNT", "l"]), 0);
        assert_eq!(value(&mut con, &["LATCH.WAIT", "l", "60000"]), Value::Int(1));
        // Armed again.
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "2"]), 1);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "2"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);
        // With a lifetime: PX and EX.
        let before = server_ms(&mut con);
        assert_eq!(int(&mut con, &["LATCH.SET", "p", "5", "PX", "60000"]), 1);
        let after = server_ms(&mut con);
        let at = pexpiretime(&mut con, "p");
        assert!((before + 60_000..=after + 60_000).contains(&at), "PX: {at} not 60 s after [{before}, {after}]");
        let before = server_ms(&mut con);
        assert_eq!(int(&mut con, &["LATCH.SET", "e", "1", "ex", "100"]), 1);
        let after = server_ms(&mut con);
        let at = pexpiretime(&mut con, "e");
        assert!((before + 100_000..=after + 100_000).contains(&at), "EX: {at} not 100 s after [{before}, {after}]");
        assert_eq!(int(&mut con, &["LATCH.SET", "big", "9223372036854775807", "px", "1000000"]), 1);
        assert_eq!(int(&mut con, &["LATCH.COUNT", "big"]), i64::MAX);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "big", "9223372036854775807"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "big"]), 0);
        // What SET makes is a latch.
        let _: () = cmd(&["SET", "s", "4"]).query(&mut con).unwrap();
        assert_eq!(int(&mut con, &["LATCH.COUNT", "s"]), 4);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "s", "3"]), 1);
        assert_eq!(int(&mut con, &["LATCH.SET", "s", "7"]), 0);
        assert_eq!(int(&mut con, &["LATCH.COUNT", "s"]), 1);
        // A count of 0 is open: waiting returns at once.
        let _: () = cmd(&["SET", "zero", "0"]).query(&mut con).unwrap();
        assert_eq!(int(&mut con, &["LATCH.COUNT", "zero"]), 0);
        assert_eq!(value(&mut con, &["LATCH.WAIT", "zero", "60000"]), Value::Int(1));
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn every_error_is_exact_and_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "3", "PX", "600000"]), 1);
        assert_eq!(int(&mut con, &["LATCH.SET", "forever", "2"]), 1);
        let _: () = cmd(&["SET", "text", "hello"]).query(&mut con).unwrap();
        let _: () = cmd(&["SET", "half", "1.5"]).query(&mut con).unwrap();
        let _: i64 = cmd(&["RPUSH", "list", "x"]).query(&mut con).unwrap();
        let waiter = Waiter::start(&server, &["LATCH.WAIT", "l", "60000"]);
        let before = dataset(&mut con);
        let cases: &[(&[&str], &str)] = &[
            (&["LATCH.SET", "n", "0"], POSITIVE),
            (&["LATCH.SET", "n", "-3"], POSITIVE),
            (&["LATCH.SET", "l", "0"], POSITIVE),
            (&["LATCH.SET", "n", "0", "PX", "100"], POSITIVE),
            (&["LATCH.SET", "n", "x"], NOT_INTEGER),
            (&["LATCH.SET", "n", "1.5"], NOT_INTEGER),
            (&["LATCH.SET", "n", "99999999999999999999"], NOT_INTEGER),
            (&["LATCH.SET", "n", "3", "PX", "0"], BAD_EXPIRE),
            (&["LATCH.SET", "n", "3", "PX", "-5"], BAD_EXPIRE),
            (&["LATCH.SET", "n", "3", "EX", "0"], BAD_EXPIRE),
            (&["LATCH.SET", "n", "3", "EX", "-1"], BAD_EXPIRE),
            (&["LATCH.SET", "n", "3", "EX", "9223372036854775"], BAD_EXPIRE),
            (&["LATCH.SET", "n", "3", "PX", "9223372036854775807"], BAD_EXPIRE),
            (&["LATCH.SET", "n", "3", "PX", "x"], NOT_INTEGER),
            (&["LATCH.SET", "n", "3", "EX", "2.5"], NOT_INTEGER),
            (&["LATCH.SET", "n", "3", "PX", "10", "EX", "1"], SYNTAX),
            (&["LATCH.SET", "n", "3", "PX", "10", "px", "10"], SYNTAX),
            (&["LATCH.SET", "n", "3", "NX"], SYNTAX),
            (&["LATCH.SET", "n", "3", "KEEPTTL"], SYNTAX),
            (&["LATCH.COUNTDOWN", "l", "0"], DECREMENT),
            (&["LATCH.COUNTDOWN", "l", "-1"], DECREMENT),
            (&["LATCH.COUNTDOWN", "missing", "0"], DECREMENT),
            (&["LATCH.COUNTDOWN", "text"], NOT_INTEGER),
            (&["LATCH.COUNTDOWN", "half", "1"], NOT_INTEGER),
            (&["LATCH.COUNTDOWN", "list"], WRONGTYPE),
            (&["LATCH.COUNTDOWN", "list", "2"], WRONGTYPE),
            (&["LATCH.WAIT", "l", "0"], BAD_TIMEOUT),
            (&["LATCH.WAIT", "l", "-5"], BAD_TIMEOUT),
            (&["LATCH.WAIT", "missing", "0"], BAD_TIMEOUT),
            (&["LATCH.SET", "n"], &arity("latch.set")),
            (&["LATCH.COUNTDOWN"], &arity("latch.countdown")),
            (&["LATCH.WAIT", "l"], &arity("latch.wait")),
            (&["LATCH.COUNT"], &arity("latch.count")),
        ];
        for (words, expected) in cases {
            assert_eq!(error(&mut con, &cmd(words)), *expected, "{words:?}");
            assert_eq!(dataset(&mut con), before, "{words:?} changed data");
        }
        // Errors whose text the contract leaves open: errors all the same,
        // changing nothing.
        for words in [
            &["LATCH.COUNTDOWN", "l", "x"][..],
            &["LATCH.WAIT", "l", "soon"],
            &["LATCH.COUNT", "list"],
            &["LATCH.COUNT", "text"],
        ] {
            assert!(reply(&mut con, words).is_err(), "{words:?} succeeded");
            assert_eq!(dataset(&mut con), before, "{words:?} changed data");
        }
        assert_eq!(blocked_clients(&mut con), 1, "the waiter still waits");
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "3"]), 0);
        assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        assert!(!server.log().contains("panic"));
    }

    fn counting_down_to_zero_deletes_the_latch_and_answers_every_waiter(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "3", "PX", "600000"]), 1);
        let waiters: Vec<Waiter> = (0..3).map(|_| Waiter::start(&server, &["LATCH.WAIT", "l", "30000"])).collect();
        assert_eq!(figures(&mut con), (3, 0, 1));
        // Counting down short of 0 answers nobody.
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l"]), 2);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l"]), 1);
        assert_eq!(blocked_clients(&mut con), 3);
        assert!(waiters.iter().all(|waiter| !waiter.handle.is_finished()));
        // At 0: the key goes and every waiter is answered 1, at once.
        let started = Instant::now();
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "4"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);
        for waiter in waiters {
            assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        }
        assert!(started.elapsed() < Duration::from_secs(2), "answered after {:?}", started.elapsed());
        assert_eq!(figures(&mut con), (3, 0, 0));
        // Counting down an open latch: 0, never below, nothing written.
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "1"]), 1);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "9223372036854775807"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);
    }

    fn countdown_keeps_the_ttl_and_set_on_a_latch_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "5", "PX", "600000"]), 1);
        let at = pexpiretime(&mut con, "l");
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l"]), 4);
        assert_eq!(pexpiretime(&mut con, "l"), at);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "2"]), 2);
        assert_eq!(pexpiretime(&mut con, "l"), at);
        // LATCH.SET on it: 0, count and TTL as they were.
        let before = state(&mut con, &["l"]);
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "9", "EX", "5"]), 0);
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "9"]), 0);
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "2", "PX", "900000"]), 0);
        assert_eq!(state(&mut con, &["l"]), before);
        assert_eq!(pexpiretime(&mut con, "l"), at);
        // A latch without a TTL keeps none.
        assert_eq!(int(&mut con, &["LATCH.SET", "f", "3"]), 1);
        assert_eq!(int(&mut con, &["LATCH.SET", "f", "3", "PX", "1000"]), 0);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "f"]), 2);
        assert_eq!(pexpiretime(&mut con, "f"), -1);
        // A string with a TTL set by SET: kept too.
        let _: () = cmd(&["SET", "s", "3", "PX", "700000"]).query(&mut con).unwrap();
        let at = pexpiretime(&mut con, "s");
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "s"]), 2);
        assert_eq!(pexpiretime(&mut con, "s"), at);
    }

    fn waits_time_out_and_never_block_in_multi_or_scripts(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "1"]), 1);
        // Open at once: no wait at all.
        let started = Instant::now();
        assert_eq!(value(&mut con, &["LATCH.WAIT", "missing", "60000"]), Value::Int(1));
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(figures(&mut con), (0, 0, 0));
        // A wait that runs out: nil.
        let started = Instant::now();
        assert_eq!(value(&mut server.con(), &["LATCH.WAIT", "l", "200"]), Value::Nil);
        let waited = started.elapsed();
        assert!((Duration::from_millis(190)..Duration::from_secs(5)).contains(&waited), "{waited:?}");
        assert_eq!(figures(&mut con), (1, 1, 0));
        assert_eq!(int(&mut con, &["LATCH.COUNT", "l"]), 1);
        // Inside MULTI and scripts: at once.
        let started = Instant::now();
        let replies: Value = redis::pipe()
            .atomic()
            .cmd("LATCH.WAIT").arg("l").arg(60000)
            .cmd("LATCH.WAIT").arg("missing").arg(60000)
            .cmd("LATCH.COUNTDOWN").arg("l")
            .cmd("LATCH.WAIT").arg("l").arg(60000)
            .query(&mut con)
            .unwrap();
        assert_eq!(replies, Value::Array(vec![Value::Nil, Value::Int(1), Value::Int(0), Value::Int(1)]));
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "2"]), 1);
        let script = "return redis.call('LATCH.WAIT', KEYS[1], ARGV[1])";
        let got: Value = cmd(&["EVAL", script, "1", "l", "60000"]).query(&mut con).unwrap();
        assert_eq!(got, Value::Nil);
        let got: Value = cmd(&["EVAL", script, "1", "missing", "60000"]).query(&mut con).unwrap();
        assert_eq!(got, Value::Int(1));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(blocked_clients(&mut con), 0);
        // Unblocked or killed waiters leave; the others are still answered.
        let unblocked = Waiter::start(&server, &["LATCH.WAIT", "l", "60000"]);
        let killed = Waiter::start(&server, &["LATCH.WAIT", "l", "60000"]);
        let stays = Waiter::start(&server, &["LATCH.WAIT", "l", "60000"]);
        assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &unblocked.id.to_string()]), 1);
        assert_eq!(unblocked.answer(), Ok(Value::Nil));
        assert_eq!(int(&mut con, &["CLIENT", "KILL", "ID", &killed.id.to_string()]), 1);
        assert!(killed.answer().is_err());
        wait_blocked(&mut con, 1);
        assert_eq!(int(&mut con, &["LATCH.COUNTDOWN", "l", "2"]), 0);
        assert_eq!(stays.answer(), Ok(Value::Int(1)));
        assert_eq!(figures(&mut con).2, 0);
        assert!(!server.log().contains("panic"));
    }

    fn a_latch_whose_ttl_runs_out_opens_its_waiters(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let started = Instant::now();
        assert_eq!(int(&mut con, &["LATCH.SET", "l", "3", "PX", "300"]), 1);
        let waiters: Vec<Waiter> = (0..2).map(|_| Waiter::start(&server, &["LATCH.WAIT", "l", "10000"])).collect();
        for waiter in waiters {
            assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        }
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(290), "opened after {waited:?}, before the TTL ran out");
        assert!(waited < Duration::from_secs(3), "opened only after {waited:?} (TTL 300 ms)");
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);
        assert_eq!(figures(&mut con), (2, 0, 0));
    }

    fn a_waiter_on_a_replica_opens_when_the_primary_counts_down_to_zero(flavor) {
        let pair = Replicated::start(flavor);
        let mut primary = pair.primary.con();
        let mut replica = pair.replica.con();
        // Open on the replica: at once.
        assert_eq!(value(&mut replica, &["LATCH.WAIT", "l", "60000"]), Value::Int(1));
        assert_eq!(int(&mut primary, &["LATCH.SET", "l", "2", "PX", "600000"]), 1);
        pair.sync();
        assert_eq!(int(&mut replica, &["LATCH.COUNT", "l"]), 2);
        assert_eq!(value(&mut pair.replica.con(), &["LATCH.WAIT", "l", "100"]), Value::Nil);
        let waiter = Waiter::start(&pair.replica, &["LATCH.WAIT", "l", "30000"]);
        assert_eq!(int(&mut primary, &["LATCH.COUNTDOWN", "l"]), 1);
        pair.sync();
        assert_eq!(int(&mut replica, &["LATCH.COUNT", "l"]), 1);
        assert_eq!(blocked_clients(&mut replica), 1, "opened at 1");
        assert_eq!(int(&mut primary, &["LATCH.COUNTDOWN", "l"]), 0);
        assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        assert_eq!(int(&mut replica, &["EXISTS", "l"]), 0);
        let refused = error(&mut replica, &cmd(&["LATCH.COUNTDOWN", "l"]));
        assert_eq!(refused, "READONLY You can't write against a read only replica.");
    }

    fn a_replica_gets_the_ttl_as_an_absolute_time_and_the_rest_verbatim(flavor) {
        let pair = Replicated::start(flavor);
        let mut primary = pair.primary.con();
        let mut replica = pair.replica.con();
        let steps: &[(&[&str], i64, &[&str])] = &[
            (&["LATCH.SET", "{l}a", "3", "PX", "600000"], 1, &["set"]),
            (&["LATCH.SET", "{l}b", "2", "EX", "900"], 1, &["set"]),
            (&["LATCH.SET", "{l}c", "4"], 1, &["latch.set"]),
            (&["LATCH.COUNTDOWN", "{l}a"], 2, &["latch.countdown"]),
            (&["LATCH.COUNTDOWN", "{l}b", "5"], 0, &["latch.countdown"]),
            (&["LATCH.COUNTDOWN", "{l}c", "2"], 2, &["latch.countdown"]),
        ];
        let keys = ["{l}a", "{l}b", "{l}c"];
        for (words, answer, sent) in steps {
            pair.sync();
            let _: () = cmd(&["CONFIG", "RESETSTAT"]).query(&mut replica).unwrap();
            // The replica applies the command 300 ms late, on its own clock.
            let held = pair.hold_replica(300);
            assert_eq!(int(&mut primary, words), *answer, "{words:?}");
            held.join().unwrap();
            pair.sync();
            let received: BTreeSet<String> = commands_run(&mut replica)
                .into_iter()
                .map(|(command, _)| command)
                .filter(|command| command.starts_with("latch.") || matches!(command.as_str(), "set" | "del" | "pexpireat" | "decrby"))
                .collect();
            let expected: BTreeSet<String> = sent.iter().map(|c| c.to_string()).collect();
            assert_eq!(received, expected, "{words:?}");
            assert_eq!(values(&mut primary, &keys), values(&mut replica, &keys), "{words:?}");
            assert_eq!(state(&mut primary, &keys), state(&mut replica, &keys), "{words:?}");
        }
        assert_eq!(int(&mut replica, &["EXISTS", "{l}b"]), 0);
        assert_eq!(pexpiretime(&mut replica, "{l}a"), pexpiretime(&mut primary, "{l}a"));
    }

    fn aof_restart_restores_every_latch(flavor) {
        let server = harness::aof_round_trip(flavor, |_, con| {
            assert_eq!(int(con, &["LATCH.SET", "a", "3", "PX", "600000"]), 1);
            assert_eq!(int(con, &["LATCH.SET", "b", "2"]), 1);
            assert_eq!(int(con, &["LATCH.SET", "c", "5", "EX", "1000"]), 1);
            assert_eq!(int(con, &["LATCH.SET", "d", "1", "PX", "600000"]), 1);
            assert_eq!(int(con, &["LATCH.COUNTDOWN", "a"]), 2);
            assert_eq!(int(con, &["LATCH.COUNTDOWN", "c", "2"]), 3);
            assert_eq!(int(con, &["LATCH.COUNTDOWN", "d"]), 0);
            assert_eq!(int(con, &["LATCH.SET", "a", "7", "PX", "5"]), 0);
            // The replay comes later: a TTL relative to it would differ.
            thread::sleep(Duration::from_millis(300));
            vec!["a", "b", "c", "d"]
        });
        let mut con = server.con();
        assert_eq!(int(&mut con, &["LATCH.COUNT", "a"]), 2);
        assert_eq!(int(&mut con, &["LATCH.COUNT", "c"]), 3);
        assert_eq!(int(&mut con, &["EXISTS", "d"]), 0);
    }

    fn set_0_opens_the_latch(flavor) {
        a_plain_write_opens(flavor, &["SET", "l", "0"]);
    }

    fn decr_opens_the_latch(flavor) {
        a_plain_write_opens(flavor, &["DECR", "l"]);
    }

    fn decrby_opens_the_latch(flavor) {
        a_plain_write_opens(flavor, &["DECRBY", "l", "1"]);
    }

    fn incrby_minus_1_opens_the_latch(flavor) {
        a_plain_write_opens(flavor, &["INCRBY", "l", "-1"]);
    }

    fn set_below_0_opens_the_latch(flavor) {
        a_plain_write_opens(flavor, &["SET", "l", "-3"]);
    }

    fn plain_writes_that_keep_the_count_positive_answer_nobody(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: () = cmd(&["SET", "l", "1"]).query(&mut con).unwrap();
        let waiter = Waiter::start(&server, &["LATCH.WAIT", "l", "10000"]);
        let writes: &[&[&str]] = &[
            &["SET", "l", "2"],
            &["INCR", "l"],
            &["INCRBY", "l", "5"],
            &["DECRBY", "l", "7"],
            &["APPEND", "l", "0"],
            &["SET", "l", "1", "PX", "600000"],
        ];
        for words in writes {
            let _: Value = cmd(words).query(&mut con).unwrap();
            // The check a write schedules runs within the next turn.
            thread::sleep(Duration::from_millis(100));
            assert!(!waiter.handle.is_finished(), "answered after {words:?}");
            assert_eq!(blocked_clients(&mut con), 1, "{words:?}");
            assert_eq!(figures(&mut con), (1, 0, 1), "{words:?}");
        }
        assert_eq!(int(&mut con, &["LATCH.COUNT", "l"]), 1);
        assert_eq!(int(&mut con, &["DECR", "l"]), 0);
        assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        assert_eq!(figures(&mut con), (1, 0, 0));
    }

    fn a_plain_write_that_makes_the_key_no_count_answers_its_error(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: () = cmd(&["SET", "l", "1"]).query(&mut con).unwrap();
        let waiter = Waiter::start(&server, &["LATCH.WAIT", "l", "10000"]);
        let _: () = cmd(&["SET", "l", "done"]).query(&mut con).unwrap();
        assert_eq!(waiter.answer(), Err(NOT_INTEGER.to_string()));
        assert_eq!(error(&mut con, &cmd(&["LATCH.WAIT", "l", "10000"])), NOT_INTEGER);
        assert_eq!(figures(&mut con), (1, 0, 0));
    }

    fn a_deadline_is_answered_from_the_count(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: () = cmd(&["SET", "l", "1"]).query(&mut con).unwrap();
        // Opened, then the server is busy past the deadline (a DEBUG SLEEP in
        // the same MULTI): the waiter is looked at only after its deadline,
        // and the latch is open then.
        let waiter = Waiter::start(&server, &["LATCH.WAIT", "l", "400"]);
        let replies: Value = redis::pipe()
            .atomic()
            .cmd("SET").arg("l").arg("0")
            .cmd("DEBUG").arg("SLEEP").arg("0.8")
            .query(&mut con)
            .unwrap();
        assert_eq!(replies, Value::Array(vec![Value::Okay, Value::Okay]));
        assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        assert_eq!(figures(&mut con), (1, 0, 0));
        // Closed again by the deadline: nil.
        let _: () = cmd(&["SET", "l", "1"]).query(&mut con).unwrap();
        let waiter = Waiter::start(&server, &["LATCH.WAIT", "l", "400"]);
        let _: Value = redis::pipe()
            .atomic()
            .cmd("SET").arg("l").arg("0")
            .cmd("DEBUG").arg("SLEEP").arg("0.8")
            .cmd("SET").arg("l").arg("2")
            .query(&mut con)
            .unwrap();
        assert_eq!(waiter.answer(), Ok(Value::Nil));
        assert_eq!(figures(&mut con), (2, 1, 0));
        // No count at the deadline: LATCH.WAIT's error, as at its start.
        let waiter = Waiter::start(&server, &["LATCH.WAIT", "l", "400"]);
        let _: Value = redis::pipe()
            .atomic()
            .cmd("SET").arg("l").arg("done")
            .cmd("DEBUG").arg("SLEEP").arg("0.8")
            .query(&mut con)
            .unwrap();
        assert_eq!(waiter.answer(), Err(NOT_INTEGER.to_string()));
        assert_eq!(figures(&mut con), (3, 1, 0));
    }

    fn a_waiter_on_a_replica_opens_when_the_primary_sets_0(flavor) {
        let pair = Replicated::start(flavor);
        let mut primary = pair.primary.con();
        let mut replica = pair.replica.con();
        let _: () = cmd(&["SET", "l", "2"]).query(&mut primary).unwrap();
        pair.sync();
        let waiter = Waiter::start(&pair.replica, &["LATCH.WAIT", "l", "10000"]);
        let _: () = cmd(&["SET", "l", "1"]).query(&mut primary).unwrap();
        pair.sync();
        thread::sleep(Duration::from_millis(100));
        assert_eq!(blocked_clients(&mut replica), 1, "opened at 1");
        let started = Instant::now();
        let _: () = cmd(&["SET", "l", "0"]).query(&mut primary).unwrap();
        assert_eq!(waiter.answer(), Ok(Value::Int(1)));
        assert!(started.elapsed() < Duration::from_secs(2), "answered after {:?}", started.elapsed());
        assert_eq!(int(&mut replica, &["LATCH.COUNT", "l"]), 0);
        assert_eq!(blocked_clients(&mut replica), 0);
    }
}
