//! RWLOCK on real servers: the exact reply of every command and every error
//! (each changing nothing), readers sharing and a writer excluding, leases
//! (reset, extended, ending one holder at a time by the module's timer, the
//! key's TTL following the latest), downgrades, the fair queue (arrival
//! order, readers at the head admitted together, no writer starvation, the
//! ways a wait ends), hand-offs by deletion, fencing tokens, `RWLOCK.INFO`
//! in RESP2 and RESP3, `INFO recipes`, replication, AOF and RDB, COPY,
//! DUMP/RESTORE and hostile payloads, and cluster routing.

use crate::harness;

use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use harness::{
    arity, blocked_clients, cmd, dataset, digest, digest_value, error, getkeys, int, query,
    recipes_figures, refused_restore, reply, server_ms, snapshot, state, text, value, values,
    wait_blocked, wait_until, Cluster, Connection, Replicated, Server, Value, Waiter, CROSSSLOT,
    NOT_INTEGER, SYNTAX, WRONGTYPE,
};

/// A holder as `RWLOCK.INFO` lists it: its token and lease end (Unix ms, -1
/// for none).
type Holder = (String, i64);

/// `RWLOCK.INFO` as (mode, holders, waiting).
type Info = (String, Vec<Holder>, i64);

const UPGRADE: &str =
    "NOUPGRADE token holds a read lock: release it before asking for WRITE (two readers upgrading would deadlock)";
const APPLY: &str = "ERR RWLOCK.APPLY only carries a primary's effects to replicas and the AOF; use RWLOCK.ACQUIRE, RWLOCK.RELEASE or RWLOCK.EXTEND";
const EMPTY: &str = "ERR token must not be empty";
const BAD_EXPIRE: &str = "ERR invalid expire time in 'rwlock.acquire' command";
const BAD_WAIT: &str = "ERR invalid WAIT time in 'rwlock.acquire' command";
const SAME_FENCE: &str = "ERR FENCE key must differ from the lock key";
const OVERFLOW: &str = "ERR increment or decrement would overflow";

/// An `RWLOCK.INFO` reply (a RESP3 map, or RESP2's flat array of names and
/// values) as (mode, holders, waiting); the names must come in the
/// contract's order and the holders as `[token, lease end]` pairs.
fn parse_info(reply: &Value) -> Info {
    let pairs: Vec<(&Value, &Value)> = match reply {
        Value::Map(pairs) => pairs.iter().map(|(name, value)| (name, value)).collect(),
        Value::Array(items) if items.len() % 2 == 0 => {
            items.chunks(2).map(|pair| (&pair[0], &pair[1])).collect()
        }
        other => panic!("RWLOCK.INFO: not a map: {other:?}"),
    };
    let names: Vec<String> = pairs.iter().map(|(name, _)| text(name)).collect();
    assert_eq!(
        names,
        ["mode", "holders", "waiting"],
        "RWLOCK.INFO {reply:?}"
    );
    let holders = match pairs[1].1 {
        Value::Array(items) => items
            .iter()
            .map(|holder| match holder {
                Value::Array(pair) => match &pair[..] {
                    [Value::BulkString(token), Value::Int(end)] => {
                        (String::from_utf8_lossy(token).into_owned(), *end)
                    }
                    other => panic!("RWLOCK.INFO holder {other:?}"),
                },
                other => panic!("RWLOCK.INFO holder {other:?}"),
            })
            .collect(),
        other => panic!("RWLOCK.INFO holders {other:?}"),
    };
    let Value::Int(waiting) = pairs[2].1 else {
        panic!("RWLOCK.INFO waiting {:?}", pairs[2].1)
    };
    (text(pairs[0].1), holders, *waiting)
}

fn info(con: &mut Connection, key: &str) -> Info {
    parse_info(&value(con, &["RWLOCK.INFO", key]))
}

/// The holders' tokens, in `RWLOCK.INFO`'s order.
fn tokens(con: &mut Connection, key: &str) -> Vec<String> {
    info(con, key)
        .1
        .into_iter()
        .map(|(token, _)| token)
        .collect()
}

/// The lease end `RWLOCK.INFO` lists for `token`.
fn end_of(con: &mut Connection, key: &str, token: &str) -> i64 {
    info(con, key)
        .1
        .into_iter()
        .find(|(held, _)| held == token)
        .unwrap_or_else(|| panic!("{token} does not hold {key}"))
        .1
}

fn pexpiretime(con: &mut Connection, key: &str) -> i64 {
    int(con, &["PEXPIRETIME", key])
}

/// What the key's PEXPIRETIME must be: the latest lease end, -1 when some
/// holder has none.
fn latest_end(con: &mut Connection, key: &str) -> i64 {
    let holders = info(con, key).1;
    assert!(!holders.is_empty(), "{key} has no holder");
    if holders.iter().any(|(_, end)| *end == -1) {
        -1
    } else {
        holders.iter().map(|(_, end)| *end).max().unwrap()
    }
}

/// Runs `words` (an acquisition), timing it by the server's clock: the
/// reply, and the server's time just before and just after.
fn timed(con: &mut Connection, words: &[&str]) -> (Value, i64, i64) {
    let before = server_ms(con);
    let answer = value(con, words);
    let after = server_ms(con);
    (answer, before, after)
}

fn within(end: i64, before: i64, after: i64, lease: i64, what: &str) {
    assert!(
        (before + lease..=after + lease).contains(&end),
        "{what}: lease end {end} not {lease} ms after [{before}, {after}]"
    );
}

/// Waits until `n` clients wait for `key` (`RWLOCK.INFO`).
fn wait_waiting(con: &mut Connection, key: &str, n: i64) {
    wait_until(&format!("{n} client(s) wait for {key}"), || {
        info(con, key).2 == n
    });
}

fn one() -> Result<Value, String> {
    Ok(Value::Int(1))
}

server_tests! {
    fn replies_of_every_command(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // A missing key is a free lock; nothing to release or extend.
        assert_eq!(info(&mut con, "l"), ("none".to_string(), vec![], 0));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r1"]), 0);
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "r1", "PX", "1000"]), 0);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);

        // Readers share: no lease, and a lease.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r1"]), Value::Int(1));
        let (answer, before, after) = timed(&mut con, &["RWLOCK.ACQUIRE", "l", "read", "r2", "PX", "60000"]);
        assert_eq!(answer, Value::Int(1));
        let (mode, holders, waiting) = info(&mut con, "l");
        assert_eq!((mode.as_str(), waiting, holders.len()), ("read", 0, 2), "{holders:?}");
        assert_eq!(holders[0], ("r1".to_string(), -1));
        assert_eq!(holders[1].0, "r2");
        within(holders[1].1, before, after, 60_000, "r2");
        assert_eq!(text(&value(&mut con, &["TYPE", "l"])), "rr-rwlock");
        assert_eq!(pexpiretime(&mut con, "l"), -1, "r1 holds without a lease");
        // A writer is refused while they hold, at once without WAIT.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "w"]), Value::Nil);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "Write", "w", "PX", "100"]), Value::Nil);
        assert_eq!(tokens(&mut con, "l"), ["r1", "r2"]);

        // RELEASE: 1 for a holder, then 0; 0 for anyone else.
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r1"]), 1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r1"]), 0);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "nobody"]), 0);
        let r2_end = end_of(&mut con, "l", "r2");
        assert_eq!(pexpiretime(&mut con, "l"), r2_end, "the TTL follows the only lease");

        // EXTEND: from now, then ADD after the current end.
        let (answer, before, after) = timed(&mut con, &["RWLOCK.EXTEND", "l", "r2", "PX", "30000"]);
        assert_eq!(answer, Value::Int(1));
        let end = end_of(&mut con, "l", "r2");
        within(end, before, after, 30_000, "EXTEND PX");
        assert_eq!(pexpiretime(&mut con, "l"), end);
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "r2", "PX", "5000", "ADD"]), 1);
        assert_eq!(end_of(&mut con, "l", "r2"), end + 5000);
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "r2", "EX", "7", "add"]), 1);
        assert_eq!(end_of(&mut con, "l", "r2"), end + 12_000);
        assert_eq!(pexpiretime(&mut con, "l"), end + 12_000);
        let (answer, before, after) = timed(&mut con, &["RWLOCK.EXTEND", "l", "r2", "ex", "100"]);
        assert_eq!(answer, Value::Int(1));
        let end = end_of(&mut con, "l", "r2");
        within(end, before, after, 100_000, "EXTEND EX");
        // Only a holder.
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "nobody", "PX", "5000"]), 0);
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "nobody", "PX", "5000", "ADD"]), 0);
        assert_eq!(tokens(&mut con, "l"), ["r2"]);
        assert_eq!(end_of(&mut con, "l", "r2"), end);

        // A holder without a lease: ADD keeps none and answers 0; without
        // ADD it gets one.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r3"]), Value::Int(1));
        assert_eq!(pexpiretime(&mut con, "l"), -1);
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "r3", "PX", "5000", "ADD"]), 0);
        assert_eq!(end_of(&mut con, "l", "r3"), -1);
        assert_eq!(pexpiretime(&mut con, "l"), -1);
        let (answer, before, after) = timed(&mut con, &["RWLOCK.EXTEND", "l", "r3", "PX", "200000"]);
        assert_eq!(answer, Value::Int(1));
        let r3_end = end_of(&mut con, "l", "r3");
        within(r3_end, before, after, 200_000, "EXTEND of a holder without a lease");
        assert_eq!(pexpiretime(&mut con, "l"), r3_end, "the latest of the two leases");

        // The last release deletes the key.
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r2"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r3"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);
        assert_eq!(info(&mut con, "l"), ("none".to_string(), vec![], 0));

        // A writer holds alone.
        let (answer, before, after) = timed(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "w", "EX", "60"]);
        assert_eq!(answer, Value::Int(1));
        let (mode, holders, waiting) = info(&mut con, "l");
        assert_eq!((mode.as_str(), waiting, holders.len()), ("write", 0, 1));
        assert_eq!(holders[0].0, "w");
        within(holders[0].1, before, after, 60_000, "WRITE EX");
        assert_eq!(pexpiretime(&mut con, "l"), holders[0].1);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r"]), Value::Nil);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "x"]), Value::Nil);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r"]), 0);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "w"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);
        // Then readers again; any token bytes.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "rEaD", "\u{0}가\r\n"]), Value::Int(1));
        assert_eq!(tokens(&mut con, "l"), ["\u{0}가\r\n"]);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn every_error_is_exact_and_changes_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "rl", "READ", "r1", "PX", "600000"]), Value::Int(1));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "rl", "READ", "r2"]), Value::Int(1));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "wl", "WRITE", "w", "PX", "600000"]), Value::Int(1));
        for words in [
            &["RPUSH", "list", "x"][..],
            &["SET", "text", "abc"],
            &["SET", "top", "9223372036854775807"],
            &["SET", "f", "5", "PX", "600000"],
        ] {
            value(&mut con, words);
        }
        // A client waiting for wl: no error may disturb the queue.
        let waiter = Waiter::start(&server, &["RWLOCK.ACQUIRE", "wl", "READ", "queued", "WAIT", "60000"]);
        let before = dataset(&mut con);
        let cases: &[(&[&str], &str)] = &[
            // Empty tokens.
            (&["RWLOCK.ACQUIRE", "free", "READ", ""], EMPTY),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "", "PX", "100"], EMPTY),
            (&["RWLOCK.ACQUIRE", "rl", "READ", ""], EMPTY),
            (&["RWLOCK.RELEASE", "rl", ""], EMPTY),
            (&["RWLOCK.RELEASE", "free", ""], EMPTY),
            // Modes other than READ and WRITE.
            (&["RWLOCK.ACQUIRE", "free", "SHARED", "t"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "READWRITE", "t"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "", "t"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "rl", "r1", "READ"], SYNTAX),
            // Both PX and EX, repeated and unknown options.
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX", "10", "EX", "1"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "EX", "1", "PX", "10"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX", "10", "px", "10"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "WAIT", "10", "WAIT", "10"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "FENCE", "f", "FENCE", "f"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "NX"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "XX", "1"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX"], SYNTAX),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "FENCE"], SYNTAX),
            // Lease lengths.
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX", "0"], BAD_EXPIRE),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX", "-5"], BAD_EXPIRE),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "EX", "0"], BAD_EXPIRE),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "EX", "-1"], BAD_EXPIRE),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "EX", "9223372036854775"], BAD_EXPIRE),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX", "9223372036854775807"], BAD_EXPIRE),
            (&["RWLOCK.ACQUIRE", "rl", "READ", "r1", "PX", "0"], BAD_EXPIRE),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX", "1.5"], NOT_INTEGER),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX", "abc"], NOT_INTEGER),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "EX", "1e3"], NOT_INTEGER),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "PX", "99999999999999999999"], NOT_INTEGER),
            // Waits.
            (&["RWLOCK.ACQUIRE", "wl", "READ", "t", "WAIT", "soon"], NOT_INTEGER),
            (&["RWLOCK.ACQUIRE", "wl", "READ", "t", "WAIT", "2.5"], NOT_INTEGER),
            (&["RWLOCK.ACQUIRE", "wl", "READ", "t", "WAIT", "0"], BAD_WAIT),
            (&["RWLOCK.ACQUIRE", "wl", "WRITE", "t", "WAIT", "-1"], BAD_WAIT),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "WAIT", "0"], BAD_WAIT),
            // Fence keys.
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "FENCE", "free"], SAME_FENCE),
            (&["RWLOCK.ACQUIRE", "rl", "READ", "t", "FENCE", "rl"], SAME_FENCE),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "FENCE", "text"], NOT_INTEGER),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "FENCE", "text"], NOT_INTEGER),
            (&["RWLOCK.ACQUIRE", "wl", "WRITE", "x", "FENCE", "text"], NOT_INTEGER),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "FENCE", "top"], OVERFLOW),
            (&["RWLOCK.ACQUIRE", "free", "WRITE", "t", "FENCE", "list"], WRONGTYPE),
            (&["RWLOCK.ACQUIRE", "free", "READ", "t", "FENCE", "list"], WRONGTYPE),
            // Keys of another type.
            (&["RWLOCK.ACQUIRE", "list", "READ", "t"], WRONGTYPE),
            (&["RWLOCK.ACQUIRE", "text", "WRITE", "t"], WRONGTYPE),
            (&["RWLOCK.ACQUIRE", "f", "WRITE", "t", "WAIT", "100"], WRONGTYPE),
            (&["RWLOCK.RELEASE", "list", "t"], WRONGTYPE),
            (&["RWLOCK.RELEASE", "text", "t"], WRONGTYPE),
            (&["RWLOCK.EXTEND", "list", "t", "PX", "10"], WRONGTYPE),
            (&["RWLOCK.INFO", "list"], WRONGTYPE),
            (&["RWLOCK.INFO", "text"], WRONGTYPE),
            // A reader asking WRITE, waiting or not, with a fence or not.
            (&["RWLOCK.ACQUIRE", "rl", "WRITE", "r1"], UPGRADE),
            (&["RWLOCK.ACQUIRE", "rl", "write", "r2", "PX", "10", "WAIT", "100", "FENCE", "f"], UPGRADE),
            // EXTEND without PX or EX.
            (&["RWLOCK.EXTEND", "rl", "r1", "TTL", "10"], SYNTAX),
            (&["RWLOCK.EXTEND", "rl", "r1", "WAIT", "10"], SYNTAX),
            (&["RWLOCK.EXTEND", "rl", "r1", "ADD", "ADD"], SYNTAX),
            // The replication command, from a client.
            (&["RWLOCK.APPLY", "rl", "DROP", "r1"], APPLY),
            (&["RWLOCK.APPLY", "free", "WRITE", "t", "0"], APPLY),
            (&["RWLOCK.APPLY", "wl", "DROP", "w", "READ", "t", "99999999999999"], APPLY),
            // Too few words.
            (&["RWLOCK.ACQUIRE", "free", "READ"], &arity("rwlock.acquire")),
            (&["RWLOCK.RELEASE", "rl"], &arity("rwlock.release")),
            (&["RWLOCK.EXTEND", "rl"], &arity("rwlock.extend")),
            (&["RWLOCK.INFO"], &arity("rwlock.info")),
        ];
        for (words, expected) in cases {
            assert_eq!(error(&mut con, &cmd(words)), *expected, "{words:?}");
            assert_eq!(dataset(&mut con), before, "{words:?} changed data");
        }
        // Errors whose text the contract leaves open: errors all the same,
        // changing nothing.
        for words in [
            &["RWLOCK.EXTEND", "rl", "r1", "PX", "0"][..],
            &["RWLOCK.EXTEND", "rl", "r1", "EX", "-1"],
            &["RWLOCK.EXTEND", "rl", "r1", "PX", "abc"],
            &["RWLOCK.EXTEND", "rl", "r1", "PX", "10", "EX", "10"],
            &["RWLOCK.EXTEND", "rl", "", "PX", "10"],
        ] {
            assert!(reply(&mut con, words).is_err(), "{words:?} succeeded");
            assert_eq!(dataset(&mut con), before, "{words:?} changed data");
        }
        // Nothing moved: the reader still reads, the queue still waits.
        assert_eq!(blocked_clients(&mut con), 1);
        assert_eq!(info(&mut con, "wl").2, 1);
        assert_eq!(tokens(&mut con, "rl"), ["r1", "r2"]);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "wl", "w"]), 1);
        assert_eq!(waiter.answer(), one());
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "rl", "r1"]), 1);
        assert!(!server.log().contains("panic"));
    }

    fn reacquiring_the_held_mode_resets_the_lease(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r", "PX", "60000"]), Value::Int(1));
        let (answer, before, after) = timed(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r", "PX", "90000"]);
        assert_eq!(answer, Value::Int(1));
        within(end_of(&mut con, "l", "r"), before, after, 90_000, "READ again, longer");
        let (answer, before, after) = timed(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r", "EX", "30"]);
        assert_eq!(answer, Value::Int(1));
        let end = end_of(&mut con, "l", "r");
        within(end, before, after, 30_000, "READ again, shorter: the lease is reset, not lengthened");
        assert_eq!(pexpiretime(&mut con, "l"), end);
        // Without PX or EX: no lease any more.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r"]), Value::Int(1));
        assert_eq!(info(&mut con, "l"), ("read".to_string(), vec![("r".to_string(), -1)], 0));
        assert_eq!(pexpiretime(&mut con, "l"), -1);
        // Granted again even with a writer waiting, where a new reader is not.
        let writer = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "WRITE", "w", "WAIT", "60000"]);
        let (answer, before, after) = timed(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r", "PX", "50000"]);
        assert_eq!(answer, Value::Int(1));
        within(end_of(&mut con, "l", "r"), before, after, 50_000, "READ again with a writer waiting");
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "newcomer"]), Value::Nil);
        assert_eq!(info(&mut con, "l").2, 1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r"]), 1);
        assert_eq!(writer.answer(), one());
        // The writer: the same, with a reader waiting.
        let reader = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "READ", "r", "WAIT", "60000"]);
        let (answer, before, after) = timed(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "w", "PX", "40000"]);
        assert_eq!(answer, Value::Int(1));
        let end = end_of(&mut con, "l", "w");
        within(end, before, after, 40_000, "WRITE again");
        assert_eq!(pexpiretime(&mut con, "l"), end);
        let (answer, before, after) = timed(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "w", "EX", "20"]);
        assert_eq!(answer, Value::Int(1));
        within(end_of(&mut con, "l", "w"), before, after, 20_000, "WRITE again, shorter");
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "w"]), Value::Int(1));
        assert_eq!(info(&mut con, "l"), ("write".to_string(), vec![("w".to_string(), -1)], 1));
        assert_eq!(pexpiretime(&mut con, "l"), -1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "w"]), 1);
        assert_eq!(reader.answer(), one());
        assert_eq!(info(&mut con, "l"), ("read".to_string(), vec![("r".to_string(), -1)], 0));
    }

    fn a_downgrade_admits_the_readers_at_the_head_of_the_queue(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "w"]), Value::Int(1));
        let r1 = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "READ", "r1", "WAIT", "60000"]);
        let r2 = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "READ", "r2", "WAIT", "60000", "PX", "60000"]);
        let w2 = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "WRITE", "w2", "WAIT", "60000"]);
        let r3 = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "READ", "r3", "WAIT", "60000"]);
        assert_eq!(info(&mut con, "l").2, 4);
        // The writer asks READ: granted at once, although others wait, with
        // its new lease; the two readers at the head come in with it.
        let (answer, before, after) = timed(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "w", "PX", "70000"]);
        assert_eq!(answer, Value::Int(1));
        assert_eq!(r1.answer(), one());
        assert_eq!(r2.answer(), one());
        let (mode, holders, waiting) = info(&mut con, "l");
        assert_eq!((mode.as_str(), waiting), ("read", 2));
        let names: Vec<&str> = holders.iter().map(|(token, _)| token.as_str()).collect();
        assert_eq!(names, ["r1", "r2", "w"]);
        within(holders[2].1, before, after, 70_000, "the downgraded lease");
        assert_eq!(holders[0].1, -1);
        within(holders[1].1, before, after, 60_000, "r2's lease counts from its admission");
        // The writer behind them, and the reader behind it, still wait.
        assert_eq!(blocked_clients(&mut con), 2);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "newcomer"]), Value::Nil);
        // The downgraded token is an ordinary reader now.
        assert_eq!(error(&mut con, &cmd(&["RWLOCK.ACQUIRE", "l", "WRITE", "w"])), UPGRADE);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "w"]), 1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r1"]), 1);
        assert_eq!(info(&mut con, "l").2, 2, "r2 still reads");
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r2"]), 1);
        assert_eq!(w2.answer(), one());
        assert_eq!(info(&mut con, "l"), ("write".to_string(), vec![("w2".to_string(), -1)], 1));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "w2"]), 1);
        assert_eq!(r3.answer(), one());
        assert_eq!(info(&mut con, "l"), ("read".to_string(), vec![("r3".to_string(), -1)], 0));
    }

    fn waiters_are_served_in_arrival_order_with_the_head_readers_together(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "h"]), Value::Int(1));
        let order = [("READ", "r1"), ("READ", "r2"), ("WRITE", "w1"), ("READ", "r3"), ("READ", "r4"), ("WRITE", "w2")];
        let mut waiters: Vec<Waiter> = order
            .iter()
            .map(|(mode, token)| Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", mode, token, "WAIT", "60000"]))
            .collect();
        assert_eq!(info(&mut con, "l").2, 6);
        let mut next = |n: usize| -> Vec<Result<Value, String>> {
            waiters.drain(..n).map(Waiter::answer).collect()
        };
        // The release lets the two readers at the head in together.
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "h"]), 1);
        assert_eq!(next(2), [one(), one()]);
        assert_eq!(tokens(&mut con, "l"), ["r1", "r2"]);
        assert_eq!(info(&mut con, "l").2, 4);
        // The writer waits for both; the readers behind it wait for it.
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r1"]), 1);
        assert_eq!(info(&mut con, "l"), ("read".to_string(), vec![("r2".to_string(), -1)], 4));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r2"]), 1);
        assert_eq!(next(1), [one()]);
        assert_eq!(info(&mut con, "l"), ("write".to_string(), vec![("w1".to_string(), -1)], 3));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "w1"]), 1);
        assert_eq!(next(2), [one(), one()]);
        assert_eq!(info(&mut con, "l"), ("read".to_string(), vec![("r3".to_string(), -1), ("r4".to_string(), -1)], 1));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r4"]), 1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r3"]), 1);
        assert_eq!(next(1), [one()]);
        assert_eq!(info(&mut con, "l"), ("write".to_string(), vec![("w2".to_string(), -1)], 0));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "w2"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "l"]), 0);
        assert_eq!(blocked_clients(&mut con), 0);
    }

    fn a_writer_is_not_starved_by_a_stream_of_readers(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r1", "PX", "60000"]), Value::Int(1));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r2"]), Value::Int(1));
        let writer = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "WRITE", "w", "WAIT", "60000"]);
        // Readers keep arriving while the writer waits: none passes it, with
        // or without a wait of its own (which runs out behind the writer).
        let mut stream = server.con();
        let arrivals = thread::spawn(move || {
            (0..40)
                .map(|i| {
                    let token = format!("stream-{i}");
                    let wait = if i % 2 == 0 { vec![] } else { vec!["WAIT", "20"] };
                    let mut words = vec!["RWLOCK.ACQUIRE", "l", "READ", token.as_str()];
                    words.extend(wait);
                    value(&mut stream, &words)
                })
                .collect::<Vec<Value>>()
        });
        // Meanwhile the holders come and go: r1 releases and asks again (a
        // new arrival then), r2 renews its hold (a holder may).
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r1"]), 1);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r1"]), Value::Nil);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r2", "PX", "60000"]), Value::Int(1));
        let answers = arrivals.join().unwrap();
        assert!(answers.iter().all(|answer| *answer == Value::Nil), "a reader passed the waiting writer: {answers:?}");
        let late = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "READ", "late", "WAIT", "60000"]);
        assert_eq!(info(&mut con, "l").1.len(), 1, "only r2 holds");
        assert!(!writer.handle.is_finished());
        // The last of the readers that held releases: the writer's turn.
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "r2"]), 1);
        assert_eq!(writer.answer(), one());
        assert_eq!(info(&mut con, "l"), ("write".to_string(), vec![("w".to_string(), -1)], 1));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "w"]), 1);
        assert_eq!(late.answer(), one());
        assert_eq!(tokens(&mut con, "l"), ["late"]);
        let figures = recipes_figures(&mut con, "recipes");
        assert_eq!(figures["rwlock_waits_timed_out"], 20, "{figures:?}");
    }

    fn a_lease_that_ends_releases_that_holder_alone_and_the_timer_serves_the_waiters(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // With the server's active expiry off, only the module's timer at the
        // lease's end can notice it.
        let _: () = cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).query(&mut con).unwrap();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r1", "PX", "300"]), Value::Int(1));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r2", "PX", "900"]), Value::Int(1));
        let r1_end = end_of(&mut con, "l", "r1");
        let r2_end = end_of(&mut con, "l", "r2");
        assert_eq!(pexpiretime(&mut con, "l"), r2_end);
        let mut watch = server.con();
        let writer = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "WRITE", "w", "WAIT", "10000", "PX", "60000"]);
        // r1's lease ends: r1 alone goes; the writer waits on for r2.
        let now = server_ms(&mut watch);
        thread::sleep(Duration::from_millis((r1_end + 150 - now).max(0) as u64));
        assert!(server_ms(&mut watch) < r2_end - 100, "the test ran too slowly to check r1 alone");
        assert_eq!(blocked_clients(&mut watch), 1, "the writer was served while r2 held");
        assert_eq!(info(&mut watch, "l"), ("read".to_string(), vec![("r2".to_string(), r2_end)], 1));
        assert_eq!(int(&mut watch, &["RWLOCK.EXTEND", "l", "r1", "PX", "10000"]), 0, "r1's lease ended");
        assert_eq!(int(&mut watch, &["RWLOCK.RELEASE", "l", "r1"]), 0, "r1's lease ended");
        // r2's lease ends: the timer hands the lock to the writer then.
        assert_eq!(writer.answer(), one());
        let served = server_ms(&mut watch);
        assert!(served >= r2_end, "served at {served}, before r2's lease ended at {r2_end}");
        assert!(served - r2_end < 500, "served {} ms after r2's lease ended", served - r2_end);
        let (mode, holders, waiting) = info(&mut watch, "l");
        assert_eq!((mode.as_str(), waiting, holders.len()), ("write", 0, 1));
        assert_eq!(holders[0].0, "w");
        assert!((r2_end + 60_000..=served + 60_000).contains(&holders[0].1), "the writer's lease counts from its hand-off: {holders:?}");
        assert_eq!(pexpiretime(&mut watch, "l"), holders[0].1);
    }

    fn the_keys_ttl_is_the_latest_lease_end(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let check = |con: &mut Connection, what: &str| {
            let expected = latest_end(con, "l");
            assert_eq!(pexpiretime(con, "l"), expected, "{what}: {:?}", info(con, "l"));
            expected
        };
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "a", "PX", "100000"]), Value::Int(1));
        let a = check(&mut con, "a");
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "b", "PX", "200000"]), Value::Int(1));
        let b = check(&mut con, "a, b");
        assert!(b > a);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "c", "PX", "50000"]), Value::Int(1));
        assert_eq!(check(&mut con, "a, b, c"), b);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "d"]), Value::Int(1));
        assert_eq!(check(&mut con, "a holder without a lease"), -1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "d"]), 1);
        assert_eq!(check(&mut con, "without d"), b);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "b"]), 1);
        assert_eq!(check(&mut con, "without b"), a);
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "c", "PX", "300000"]), 1);
        assert!(check(&mut con, "c extended") > b);
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "c", "PX", "5000"]), 1);
        assert_eq!(check(&mut con, "c shortened"), a);
        assert_eq!(int(&mut con, &["RWLOCK.EXTEND", "l", "a", "PX", "2000", "ADD"]), 1);
        assert_eq!(check(&mut con, "a extended by ADD"), a + 2000);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "a", "PX", "500"]), Value::Int(1));
        check(&mut con, "a again, shorter");
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "a"]), 1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "c"]), 1);
        assert_eq!(pexpiretime(&mut con, "l"), -2);
        // A writer, its retry without a lease, its downgrade.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "w", "PX", "100000"]), Value::Int(1));
        check(&mut con, "w");
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "w"]), Value::Int(1));
        assert_eq!(check(&mut con, "w without a lease"), -1);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "w", "PX", "30000"]), Value::Int(1));
        assert_ne!(check(&mut con, "w downgraded with a lease"), -1);
        // A hand-off to a waiter with a lease.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "w", "PX", "300000"]), Value::Int(1));
        let next = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "WRITE", "n", "WAIT", "60000", "PX", "40000"]);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "w"]), 1);
        assert_eq!(next.answer(), one());
        let end = check(&mut con, "the waiter's lease");
        assert_ne!(end, -1);
        // A lock whose holders all died disappears by itself.
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "l", "n"]), 1);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "x", "PX", "100"]), Value::Int(1));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "y", "PX", "150"]), Value::Int(1));
        wait_until("the lock disappears", || int(&mut con, &["EXISTS", "l"]) == 0);
    }

    fn a_deletion_hands_the_lock_to_the_waiters(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // What RESTORE … REPLACE puts in place: a lock "other" reads.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "template", "READ", "other"]), Value::Int(1));
        let payload: Vec<u8> = query(&mut con, &["DUMP", "template"]);
        for deletion in ["DEL", "UNLINK", "FLUSHALL", "RENAME", "RESTORE … REPLACE"] {
            let _: () = cmd(&["FLUSHALL"]).query(&mut con).unwrap();
            assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "q", "WRITE", "h"]), Value::Int(1));
            let r1 = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "READ", "r1", "WAIT", "30000"]);
            let r2 = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "READ", "r2", "WAIT", "30000"]);
            let w = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "WRITE", "w", "WAIT", "30000"]);
            let done: Value = match deletion {
                "RENAME" => query(&mut con, &["RENAME", "q", "elsewhere"]),
                "RESTORE … REPLACE" => redis::cmd("RESTORE").arg("q").arg(0).arg(&payload[..]).arg("REPLACE").query(&mut con).unwrap(),
                word => query(&mut con, &[word, "q"][..if word == "FLUSHALL" { 1 } else { 2 }]),
            };
            assert!(!matches!(done, Value::ServerError(_) | Value::Nil), "{deletion}: {done:?}");
            assert_eq!(r1.answer(), one(), "{deletion}");
            assert_eq!(r2.answer(), one(), "{deletion}");
            let expected = if deletion == "RESTORE … REPLACE" { vec!["other", "r1", "r2"] } else { vec!["r1", "r2"] };
            let (mode, holders, waiting) = info(&mut con, "q");
            let names: Vec<&str> = holders.iter().map(|(token, _)| token.as_str()).collect();
            assert_eq!((mode.as_str(), names, waiting), ("read", expected, 1), "{deletion}");
            assert_eq!(blocked_clients(&mut con), 1, "{deletion}: the writer waits");
            if deletion == "RENAME" {
                assert_eq!(info(&mut con, "elsewhere"), ("write".to_string(), vec![("h".to_string(), -1)], 0));
            }
            assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &w.id.to_string()]), 1);
            assert_eq!(w.answer(), Ok(Value::Nil), "{deletion}");
        }
        assert!(!server.log().contains("panic"));
    }

    fn waits_end_by_timeout_unblock_kill_or_disconnect(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "q", "WRITE", "h"]), Value::Int(1));
        let started = Instant::now();
        let quick = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "WRITE", "quick", "WAIT", "200"]);
        assert_eq!(quick.answer(), Ok(Value::Nil));
        let waited = started.elapsed();
        assert!((Duration::from_millis(190)..Duration::from_secs(5)).contains(&waited), "{waited:?}");
        wait_blocked(&mut con, 0);
        let unblocked = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "READ", "u", "WAIT", "60000"]);
        let errored = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "READ", "e", "WAIT", "60000"]);
        let killed = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "WRITE", "k", "WAIT", "60000"]);
        // A client that sends a wait and goes away.
        let mut gone = harness::resp::Client::connect(server.port).unwrap();
        gone.send(&[b"RWLOCK.ACQUIRE", b"q", b"READ", b"d", b"WAIT", b"60000"]).unwrap();
        wait_blocked(&mut con, 4);
        let last = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "READ", "last", "WAIT", "60000"]);
        assert_eq!(info(&mut con, "q").2, 5);
        assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &unblocked.id.to_string()]), 1);
        assert_eq!(unblocked.answer(), Ok(Value::Nil));
        assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &errored.id.to_string(), "ERROR"]), 1);
        assert_eq!(errored.answer(), Err("UNBLOCKED client unblocked via CLIENT UNBLOCK".to_string()));
        assert_eq!(int(&mut con, &["CLIENT", "KILL", "ID", &killed.id.to_string()]), 1);
        assert!(killed.answer().is_err());
        drop(gone);
        wait_blocked(&mut con, 1);
        wait_waiting(&mut con, "q", 1);
        // The one left is served, alone.
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "q", "h"]), 1);
        assert_eq!(last.answer(), one());
        assert_eq!(info(&mut con, "q"), ("read".to_string(), vec![("last".to_string(), -1)], 0));
        assert!(!server.log().contains("panic"));
    }

    /// Read-held with a writer waiting and a reader behind it: when the
    /// writer's wait ends (however it does), the reader is at the head of
    /// the queue of a read-held lock, and comes in.
    fn a_writer_leaving_the_head_of_the_queue_lets_the_readers_behind_it_in(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut stuck = Vec::new();
        for how in ["timeout", "unblock", "kill", "disconnect"] {
            let _: () = cmd(&["FLUSHALL"]).query(&mut con).unwrap();
            assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "q", "READ", "r1"]), Value::Int(1));
            let wait = if how == "timeout" { "800" } else { "60000" };
            let mut raw = harness::resp::Client::connect(server.port).unwrap();
            let mut writer = None;
            if how == "disconnect" {
                raw.send(&[b"RWLOCK.ACQUIRE", b"q", b"WRITE", b"w", b"WAIT", b"60000"]).unwrap();
                wait_blocked(&mut con, 1);
            } else {
                writer = Some(Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "WRITE", "w", "WAIT", wait]));
            }
            let reader = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "READ", "r2", "WAIT", "60000"]);
            assert_eq!(info(&mut con, "q").2, 2, "{how}");
            match how {
                "unblock" => assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &writer.as_ref().unwrap().id.to_string()]), 1),
                "kill" => assert_eq!(int(&mut con, &["CLIENT", "KILL", "ID", &writer.as_ref().unwrap().id.to_string()]), 1),
                "disconnect" => drop(raw),
                _ => {}
            }
            if let Some(writer) = writer {
                let answer = writer.answer();
                assert!(matches!(answer, Ok(Value::Nil) | Err(_)), "{how}: {answer:?}");
            }
            let started = Instant::now();
            wait_until(&format!("{how}: the reader behind the writer is served"), || {
                reader.handle.is_finished() || started.elapsed() > Duration::from_secs(3)
            });
            if !reader.handle.is_finished() {
                // Checked for every way below; let this reader go.
                stuck.push(format!("{how}: the reader still waits 3 s later, RWLOCK.INFO {:?}", info(&mut con, "q")));
                assert_eq!(int(&mut con, &["CLIENT", "UNBLOCK", &reader.id.to_string()]), 1);
                assert_eq!(reader.answer(), Ok(Value::Nil));
                continue;
            }
            assert_eq!(reader.answer(), one(), "{how}");
            assert_eq!(tokens(&mut con, "q"), ["r1", "r2"], "{how}");
            assert_eq!(info(&mut con, "q").2, 0, "{how}");
        }
        assert!(stuck.is_empty(), "{stuck:#?}");
    }

    /// The holder releases and, in the same pipeline (before the server
    /// sends the hand-off's replies), the first of two readers admitted
    /// together is killed or unblocked with an error: told an error, it
    /// holds nothing (its grant goes back); the other reader holds, and the
    /// writer behind them still waits for it.
    fn a_reader_taken_away_at_its_hand_off_holds_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for away in ["kill", "unblock error"] {
            let _: () = cmd(&["FLUSHALL"]).query(&mut con).unwrap();
            assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "q", "WRITE", "h"]), Value::Int(1));
            let r1 = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "READ", "r1", "WAIT", "60000"]);
            let r2 = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "READ", "r2", "WAIT", "60000"]);
            let w = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "WRITE", "w", "WAIT", "60000"]);
            let id = r1.id.to_string();
            let mut pipe = redis::pipe();
            pipe.cmd("RWLOCK.RELEASE").arg("q").arg("h");
            match away {
                "kill" => pipe.cmd("CLIENT").arg(&["KILL", "ID", &id][..]),
                _ => pipe.cmd("CLIENT").arg(&["UNBLOCK", &id, "ERROR"][..]),
            };
            let answers: Vec<Value> = pipe.query(&mut con).unwrap();
            assert_eq!(answers[0], Value::Int(1), "{away}");
            let first = r1.answer();
            eprintln!("{}: {away}: the first reader was told {first:?}", flavor.name());
            assert_eq!(r2.answer(), one(), "{away}");
            if first == one() {
                // Told it holds (the kill came too late to matter): it does.
                assert_eq!(tokens(&mut con, "q"), ["r1", "r2"], "{away}");
                assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "q", "r1"]), 1);
            } else {
                assert!(first.is_err(), "{away}: {first:?}");
                wait_until(&format!("{away}: r1's grant goes back"), || tokens(&mut con, "q") == ["r2"]);
                assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "q", "r1"]), 0, "{away}");
            }
            assert_eq!(info(&mut con, "q").2, 1, "{away}: the writer waits for r2");
            assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "q", "r2"]), 1);
            assert_eq!(w.answer(), one(), "{away}");
            assert_eq!(tokens(&mut con, "q"), ["w"], "{away}");
        }
        assert!(!server.log().contains("panic"));
    }

    fn wait_never_blocks_in_multi_or_scripts(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "WRITE", "h"]), Value::Int(1));
        let started = Instant::now();
        let replies: Value = redis::pipe()
            .atomic()
            .cmd("RWLOCK.ACQUIRE").arg("l").arg("READ").arg("me").arg("WAIT").arg(60000)
            .cmd("RWLOCK.ACQUIRE").arg("l").arg("WRITE").arg("me").arg("WAIT").arg(60000)
            .cmd("RWLOCK.ACQUIRE").arg("free").arg("READ").arg("me").arg("WAIT").arg(60000)
            .query(&mut con)
            .unwrap();
        assert_eq!(replies, Value::Array(vec![Value::Nil, Value::Nil, Value::Int(1)]));
        let script = "return redis.call('RWLOCK.ACQUIRE', KEYS[1], ARGV[1], ARGV[2], 'WAIT', 60000)";
        for mode in ["READ", "WRITE"] {
            let got: Value = cmd(&["EVAL", script, "1", "l", mode, "me"]).query(&mut con).unwrap();
            assert_eq!(got, Value::Nil, "{mode}");
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(blocked_clients(&mut con), 0);
        assert_eq!(info(&mut con, "l"), ("write".to_string(), vec![("h".to_string(), -1)], 0));
    }

    fn fencing_tokens(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let (lock, fence) = ("{f}lock", "{f}fence");
        let acquire = |con: &mut Connection, mode: &str, token: &str| -> Value {
            value(con, &["RWLOCK.ACQUIRE", lock, mode, token, "FENCE", fence])
        };
        let counter = |con: &mut Connection| -> Option<String> { query(con, &["GET", fence]) };
        // A reader reads the counter (0 when missing) and writes nothing.
        assert_eq!(acquire(&mut con, "READ", "r"), Value::Int(0));
        assert_eq!(int(&mut con, &["EXISTS", fence]), 0);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", lock, "r"]), 1);
        // A writer increments it; its retry keeps its token.
        assert_eq!(acquire(&mut con, "WRITE", "w1"), Value::Int(1));
        assert_eq!(counter(&mut con).as_deref(), Some("1"));
        assert_eq!(acquire(&mut con, "WRITE", "w1"), Value::Int(1));
        assert_eq!(counter(&mut con).as_deref(), Some("1"));
        // Refused acquisitions take no token.
        assert_eq!(acquire(&mut con, "WRITE", "other"), Value::Nil);
        assert_eq!(acquire(&mut con, "READ", "other"), Value::Nil);
        assert_eq!(counter(&mut con).as_deref(), Some("1"));
        // A retry answers the counter as it is, without incrementing it.
        assert_eq!(int(&mut con, &["INCRBY", fence, "5"]), 6);
        assert_eq!(acquire(&mut con, "WRITE", "w1"), Value::Int(6));
        assert_eq!(counter(&mut con).as_deref(), Some("6"));
        // A downgrade is a READ acquisition: the current value.
        assert_eq!(acquire(&mut con, "READ", "w1"), Value::Int(6));
        assert_eq!(acquire(&mut con, "READ", "r2"), Value::Int(6));
        assert_eq!(acquire(&mut con, "READ", "r2"), Value::Int(6));
        assert_eq!(counter(&mut con).as_deref(), Some("6"));
        // Waiters served by a hand-off get their tokens then.
        let writer = Waiter::start(&server, &["RWLOCK.ACQUIRE", lock, "WRITE", "w3", "WAIT", "60000", "FENCE", fence]);
        let reader = Waiter::start(&server, &["RWLOCK.ACQUIRE", lock, "READ", "r4", "WAIT", "60000", "FENCE", fence]);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", lock, "w1"]), 1);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", lock, "r2"]), 1);
        assert_eq!(writer.answer(), Ok(Value::Int(7)));
        assert_eq!(counter(&mut con).as_deref(), Some("7"));
        assert_eq!(int(&mut con, &["INCR", fence]), 8);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", lock, "w3"]), 1);
        assert_eq!(reader.answer(), Ok(Value::Int(8)));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", lock, "r4"]), 1);
        // The counter keeps its TTL, as with INCR.
        assert_eq!(int(&mut con, &["PEXPIRE", fence, "600000"]), 1);
        let expiry = pexpiretime(&mut con, fence);
        assert_eq!(acquire(&mut con, "WRITE", "w5"), Value::Int(9));
        assert_eq!(pexpiretime(&mut con, fence), expiry);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", lock, "w5"]), 1);
        // A counter at its top: readers still read it.
        let _: () = cmd(&["SET", fence, "9223372036854775807"]).query(&mut con).unwrap();
        assert_eq!(acquire(&mut con, "READ", "r6"), Value::Int(i64::MAX));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", lock, "r6"]), 1);
        assert_eq!(error(&mut con, &cmd(&["RWLOCK.ACQUIRE", lock, "WRITE", "w7", "FENCE", fence])), OVERFLOW);
        assert_eq!(int(&mut con, &["EXISTS", lock]), 0);
    }

    fn info_is_a_map_in_resp2_and_resp3(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let bulk = |text: &str| Value::BulkString(text.as_bytes().to_vec());
        // A missing key.
        let reply = value(&mut con, &["RWLOCK.INFO", "l"]);
        let Value::Array(items) = &reply else { panic!("RESP2: {reply:?}") };
        assert_eq!(items.len(), 6, "{reply:?}");
        assert_eq!((&items[0], &items[2], &items[3], &items[4], &items[5]), (&bulk("mode"), &bulk("holders"), &Value::Array(vec![]), &bulk("waiting"), &Value::Int(0)));
        assert_eq!(text(&items[1]), "none");
        // Holders in token (byte) order, live leases only.
        for (token, lease) in [("b", "60000"), ("a", ""), ("é", ""), ("A", "100000"), ("short", "30")] {
            let mut words = vec!["RWLOCK.ACQUIRE", "l", "READ", token];
            if !lease.is_empty() {
                words.extend(["PX", lease]);
            }
            assert_eq!(value(&mut con, &words), Value::Int(1), "{token}");
        }
        thread::sleep(Duration::from_millis(60));
        let writer = Waiter::start(&server, &["RWLOCK.ACQUIRE", "l", "WRITE", "w", "WAIT", "60000"]);
        let (mode, holders, waiting) = info(&mut con, "l");
        let names: Vec<&str> = holders.iter().map(|(token, _)| token.as_str()).collect();
        assert_eq!((mode.as_str(), names, waiting), ("read", vec!["A", "a", "b", "é"], 1));
        let reply = value(&mut con, &["RWLOCK.INFO", "l"]);
        let Value::Array(items) = &reply else { panic!("RESP2: {reply:?}") };
        let Value::Array(listed) = &items[3] else { panic!("RESP2 holders: {reply:?}") };
        assert_eq!(listed[1], Value::Array(vec![bulk("a"), Value::Int(-1)]));
        assert_eq!(listed[3], Value::Array(vec![Value::BulkString("é".as_bytes().to_vec()), Value::Int(-1)]));
        // RESP3: a map, the same fields in the same order.
        let client = redis::Client::open(format!("{}?protocol=resp3", server.url())).unwrap();
        let mut resp3 = client.get_connection().unwrap();
        let reply = value(&mut resp3, &["RWLOCK.INFO", "l"]);
        assert!(matches!(reply, Value::Map(_)), "RESP3: {reply:?}");
        assert_eq!(parse_info(&reply), info(&mut con, "l"));
        let reply = value(&mut resp3, &["RWLOCK.INFO", "missing"]);
        let Value::Map(pairs) = &reply else { panic!("RESP3: {reply:?}") };
        assert_eq!(pairs.len(), 3);
        assert_eq!(parse_info(&reply), ("none".to_string(), vec![], 0));
        for token in ["A", "a", "b", "é", "short"] {
            int(&mut con, &["RWLOCK.RELEASE", "l", token]);
        }
        assert_eq!(writer.answer(), one());
        let reply = value(&mut resp3, &["RWLOCK.INFO", "l"]);
        assert_eq!(parse_info(&reply), ("write".to_string(), vec![("w".to_string(), -1)], 0));
    }

    fn info_recipes_counts_locks_waits_and_hand_offs(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let names = ["rwlocks", "rwlock_waits", "rwlock_waits_timed_out", "rwlock_handoffs", "rwlocks_with_waiters"];
        let figures = |con: &mut Connection| -> Vec<i64> {
            let all = recipes_figures(con, "recipes");
            names.iter().map(|name| *all.get(*name).unwrap_or_else(|| panic!("no {name} in {all:?}"))).collect()
        };
        assert_eq!(figures(&mut con), [0, 0, 0, 0, 0]);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "a", "READ", "r1"]), Value::Int(1));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "b", "WRITE", "w"]), Value::Int(1));
        // Refusals without WAIT, and grants with WAIT, wait for nothing.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "b", "READ", "nope"]), Value::Nil);
        assert_eq!(figures(&mut con), [2, 0, 0, 0, 0]);
        let on_a = Waiter::start(&server, &["RWLOCK.ACQUIRE", "a", "WRITE", "w1", "WAIT", "10000"]);
        let on_b = Waiter::start(&server, &["RWLOCK.ACQUIRE", "b", "READ", "r2", "WAIT", "10000"]);
        assert_eq!(figures(&mut con), [2, 2, 0, 0, 2]);
        assert_eq!(recipes_figures(&mut con, "recipes")["clients_waiting"], 2);
        let nil: Value = cmd(&["RWLOCK.ACQUIRE", "b", "WRITE", "late", "WAIT", "50"]).query(&mut server.con()).unwrap();
        assert_eq!(nil, Value::Nil);
        assert_eq!(figures(&mut con), [2, 3, 1, 0, 2]);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "b", "w"]), 1);
        assert_eq!(on_b.answer(), one());
        assert_eq!(figures(&mut con), [2, 3, 1, 1, 1]);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "a", "r1"]), 1);
        assert_eq!(on_a.answer(), one());
        assert_eq!(figures(&mut con), [2, 3, 1, 2, 0]);
        // The gauge follows the values stored.
        assert_eq!(int(&mut con, &["COPY", "a", "c"]), 1);
        assert_eq!(figures(&mut con)[0], 3);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "a", "w1"]), 1);
        assert_eq!(int(&mut con, &["DEL", "b"]), 1);
        assert_eq!(figures(&mut con)[0], 1);
        // A FLUSHALL may free in the background (Valkey's default): the
        // gauge follows when the values are freed.
        let _: () = cmd(&["FLUSHALL"]).query(&mut con).unwrap();
        wait_until("the flushed lock is freed", || figures(&mut con)[0] == 0);
        assert_eq!(figures(&mut con), [0, 3, 1, 2, 0]);
        assert_eq!(recipes_figures(&mut con, "recipes")["clients_waiting"], 0);
    }

    fn copy_dump_restore_memory_usage_and_type(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r1"]), Value::Int(1));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r2", "PX", "600000"]), Value::Int(1));
        assert_eq!(text(&value(&mut con, &["TYPE", "l"])), "rr-rwlock");
        let usage = int(&mut con, &["MEMORY", "USAGE", "l"]);
        assert!(usage > 0, "MEMORY USAGE {usage}");
        // COPY: the same lock, and a deep copy.
        assert_eq!(int(&mut con, &["COPY", "l", "copied"]), 1);
        assert_eq!(snapshot(&mut con, "copied"), snapshot(&mut con, "l"));
        assert_eq!(info(&mut con, "copied"), info(&mut con, "l"));
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "copied", "r1"]), 1);
        assert_eq!(tokens(&mut con, "l"), ["r1", "r2"], "the copy was deep");
        assert_eq!(tokens(&mut con, "copied"), ["r2"]);
        // DUMP and RESTORE.
        let payload: Vec<u8> = query(&mut con, &["DUMP", "l"]);
        let restored: Value = redis::cmd("RESTORE").arg("restored").arg(0).arg(&payload[..]).query(&mut con).unwrap();
        assert_eq!(restored, Value::Okay);
        assert_eq!(snapshot(&mut con, "restored"), snapshot(&mut con, "l"));
        assert_eq!(digest_value(&mut con, "restored"), digest_value(&mut con, "l"));
        assert_eq!(info(&mut con, "restored"), info(&mut con, "l"));
        // Restored locks belong to their holders.
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "restored", "r1"]), 1);
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "restored", "WRITE", "w"]), Value::Nil);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "restored", "r2"]), 1);
        assert_eq!(int(&mut con, &["EXISTS", "restored"]), 0);
        // A write lock with a lease, restored with its expiry.
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "m", "WRITE", "w", "PX", "600000"]), Value::Int(1));
        let payload: Vec<u8> = query(&mut con, &["DUMP", "m"]);
        let at = pexpiretime(&mut con, "m");
        let restored: Value = redis::cmd("RESTORE").arg("m2").arg(at).arg(&payload[..]).arg("ABSTTL").query(&mut con).unwrap();
        assert_eq!(restored, Value::Okay);
        assert_eq!(snapshot(&mut con, "m2"), snapshot(&mut con, "m"));
        assert_eq!(info(&mut con, "m2"), info(&mut con, "m"));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "m2", "READ", "r"]), Value::Nil);
        assert_eq!(text(&value(&mut con, &["TYPE", "m2"])), "rr-rwlock");
    }

    fn hostile_restore_payloads_are_refused(flavor) {
        use harness::Field::{Bytes as B, Num as N};
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r1"]), Value::Int(1));
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r2", "PX", "600000"]), Value::Int(1));
        let payload: Vec<u8> = query(&mut con, &["DUMP", "l"]);
        let before = digest(&mut con);
        refused_restore(&mut con, &payload[..payload.len() - 3], "ERR DUMP payload version or checksum are wrong");
        let refused = "ERR Bad data format";
        let (read, write, never, later) = (1, 2, u64::MAX, 4_102_444_800_000);
        let hostile: &[(&str, &[harness::Field])] = &[
            ("truncated: a holder missing", &[N(read), N(2), B(b"a"), N(never)]),
            ("truncated: a lease end missing", &[N(read), N(1), B(b"a")]),
            ("truncated: no holders", &[N(read)]),
            ("nothing at all", &[]),
            ("mode 0", &[N(0), N(1), B(b"a"), N(never)]),
            ("mode 3", &[N(3), N(1), B(b"a"), N(never)]),
            ("mode far out", &[N(u64::MAX), N(1), B(b"a"), N(never)]),
            ("write mode, two holders", &[N(write), N(2), B(b"a"), N(never), B(b"b"), N(never)]),
            ("no holder", &[N(read), N(0)]),
            ("a token twice", &[N(read), N(2), B(b"a"), N(never), B(b"a"), N(later)]),
            ("an empty token", &[N(read), N(1), B(b""), N(never)]),
            ("an empty token among others", &[N(read), N(2), B(b""), N(never), B(b"b"), N(never)]),
            ("lease end 0", &[N(read), N(1), B(b"a"), N(0)]),
            ("lease end past i64", &[N(read), N(1), B(b"a"), N(1 << 63)]),
            ("a number for a token", &[N(read), N(1), N(7), N(never)]),
            ("a huge count", &[N(read), N(u64::MAX - 1), B(b"a"), N(never)]),
            ("a value too many", &[N(read), N(1), B(b"a"), N(never), N(7)]),
        ];
        for (what, fields) in hostile {
            let forged = harness::forge(&payload, fields, 1);
            let got = error(&mut con, redis::cmd("RESTORE").arg("refused").arg(0).arg(&forged[..]));
            assert_eq!(got, refused, "{what}");
            assert_eq!(int(&mut con, &["EXISTS", "refused"]), 0, "{what}");
        }
        // A valid value in an encoding version this build does not know.
        let valid: &[harness::Field] = &[N(read), N(1), B(b"a"), N(never)];
        refused_restore(&mut con, &harness::forge(&payload, valid, 2), refused);
        refused_restore(&mut con, &harness::forge(&payload, valid, 900), refused);
        assert_eq!(digest(&mut con), before, "a refused RESTORE stored something");
        assert_eq!(value(&mut con, &["PING"]), Value::SimpleString("PONG".into()));
        // The forger itself is right: valid forged locks load.
        let forged = harness::forge(&payload, &[N(read), N(2), B(b"a"), N(never), B(b"b"), N(later)], 1);
        let loaded: Value = redis::cmd("RESTORE").arg("forged").arg(0).arg(&forged[..]).query(&mut con).unwrap();
        assert_eq!(loaded, Value::Okay);
        assert_eq!(info(&mut con, "forged"), ("read".to_string(), vec![("a".to_string(), -1), ("b".to_string(), later as i64)], 0));
        let forged = harness::forge(&payload, &[N(write), N(1), B(b"w"), N(never)], 1);
        let loaded: Value = redis::cmd("RESTORE").arg("forged-w").arg(0).arg(&forged[..]).query(&mut con).unwrap();
        assert_eq!(loaded, Value::Okay);
        assert_eq!(info(&mut con, "forged-w"), ("write".to_string(), vec![("w".to_string(), -1)], 0));
        assert!(!server.log().contains("panic"), "{}", server.log());
    }

    /// Each lease is valid alone; their sum would pass the largest time a
    /// signed 64-bit millisecond count holds, which no loader, replica or
    /// `RESTORE` takes back: refused, and nothing changes.
    fn a_lease_summed_past_the_largest_time_is_refused_and_changes_nothing(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let huge = "5000000000000000000";
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "rw", "READ", "t1", "PX", huge]), Value::Int(1));
        let held = info(&mut con, "rw");
        let before = state(&mut con, &["rw"]);
        let refused = error(&mut con, &cmd(&["RWLOCK.EXTEND", "rw", "t1", "PX", huge, "ADD"]));
        assert_eq!(refused, "ERR invalid expire time in 'rwlock.extend' command");
        assert_eq!(info(&mut con, "rw"), held);
        assert_eq!(state(&mut con, &["rw"]), before);
        // The largest lease from now is accepted, once; added again, refused.
        let largest = (i64::MAX - server_ms(&mut con) - 60_000).to_string();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "rw", "READ", "t2", "PX", &largest]), Value::Int(1));
        let refused = error(&mut con, &cmd(&["RWLOCK.EXTEND", "rw", "t2", "PX", &largest, "ADD"]));
        assert_eq!(refused, "ERR invalid expire time in 'rwlock.extend' command");
        assert_eq!(value(&mut con, &["RWLOCK.EXTEND", "rw", "t2", "PX", &largest]), Value::Int(1));
        let past = (i64::MAX - server_ms(&mut con) + 60_000).to_string();
        assert_eq!(error(&mut con, &cmd(&["RWLOCK.ACQUIRE", "rw", "READ", "t3", "PX", &past])), BAD_EXPIRE);
        assert_eq!(error(&mut con, &cmd(&["RWLOCK.EXTEND", "rw", "t2", "PX", &past])), "ERR invalid expire time in 'rwlock.extend' command");
        assert_eq!(tokens(&mut con, "rw"), ["t1", "t2"]);
        // What was written reads back everywhere.
        let payload: Vec<u8> = query(&mut con, &["DUMP", "rw"]);
        let restored: Value = redis::cmd("RESTORE").arg("copy").arg(0).arg(&payload[..]).query(&mut con).unwrap();
        assert_eq!(restored, Value::Okay);
        assert_eq!(info(&mut con, "copy"), info(&mut con, "rw"));
        pair.sync();
        assert_eq!(digest(&mut con), digest(&mut pair.replica.con()));
        let _: () = cmd(&["DEBUG", "RELOAD"]).query(&mut con).unwrap();
        assert_eq!(tokens(&mut con, "rw"), ["t1", "t2"]);
        pair.sync();
        assert_eq!(digest(&mut con), digest(&mut pair.replica.con()));
        assert!(!pair.replica.log().contains("a lease ends at"), "{}", pair.replica.log());
    }

    /// A payload listing its 400,000 readers in descending token order (the
    /// worst order for a sorted vector) loads in O(N log N): well under a
    /// second, where 0.5.0 took 5 s for half as many.
    fn a_payload_in_any_order_loads_in_n_log_n(flavor) {
        if harness::under_valgrind() {
            return; // a bound on time, at a scale valgrind takes minutes over
        }
        use harness::Field::{Bytes as B, Num as N};
        let server = Server::start(flavor);
        let mut con = server.con();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "l", "READ", "r"]), Value::Int(1));
        let template: Vec<u8> = query(&mut con, &["DUMP", "l"]);
        let n = 400_000u64;
        let tokens: Vec<Vec<u8>> = (0..n).rev().map(|i| format!("reader:{i:07}").into_bytes()).collect();
        let mut fields = vec![N(1), N(n)];
        for token in &tokens {
            fields.extend([B(token), N(u64::MAX)]);
        }
        let forged = harness::forge(&template, &fields, 1);
        let started = Instant::now();
        let restored: Value = redis::cmd("RESTORE").arg("many").arg(0).arg(&forged[..]).query(&mut con).unwrap();
        let took = started.elapsed();
        assert_eq!(restored, Value::Okay);
        assert!(took < Duration::from_secs(5), "RESTORE of {n} holders took {took:?}");
        let (mode, holders, _) = info(&mut con, "many");
        assert_eq!((mode.as_str(), holders.len()), ("read", n as usize));
        assert_eq!(holders[0].0, "reader:0000000");
        assert_eq!(holders[n as usize - 1].0, format!("reader:{:07}", n - 1));
        assert_eq!(value(&mut con, &["RWLOCK.RELEASE", "many", "reader:0000007"]), Value::Int(1));
    }

    /// 400,000 readers hold; a writer waits at the head with 2,000 readers
    /// behind it; the writer leaves and the readers go in together. That
    /// costs O(W log N): about what letting them into an empty lock costs
    /// (0.5.0 rescanned and shifted every holder for each: 13 times as long
    /// beside 200,000 holders).
    fn readers_let_in_together_cost_o_w_log_n(flavor) {
        if harness::under_valgrind() {
            return; // a bound on time, at a scale valgrind takes minutes over
        }
        let server = Server::start(flavor);
        let mut con = server.con();
        let admit = |con: &mut Connection, holders: usize| -> Duration {
            let _: () = cmd(&["FLUSHALL"]).query(con).unwrap();
            let mut pipe = redis::pipe();
            for i in 0..holders {
                pipe.cmd("RWLOCK.ACQUIRE").arg("q").arg("READ").arg(format!("holder:{i:06}")).ignore();
            }
            pipe.cmd("RWLOCK.ACQUIRE").arg("q").arg("READ").arg("first").ignore();
            let _: () = pipe.query(con).unwrap();
            let writer = Waiter::start(&server, &["RWLOCK.ACQUIRE", "q", "WRITE", "w", "WAIT", "60000"]);
            let w = 2_000;
            let mut readers = Vec::new();
            for i in 0..w {
                let mut raw = harness::resp::Client::connect(server.port).unwrap();
                let token = format!("waiter:{i:06}");
                raw.send(&[b"RWLOCK.ACQUIRE", b"q", b"READ", token.as_bytes(), b"WAIT", b"60000"]).unwrap();
                readers.push(raw);
            }
            wait_blocked(con, 1 + w as i64);
            assert_eq!(info(con, "q").2, 1 + w as i64);
            let started = Instant::now();
            assert_eq!(int(con, &["CLIENT", "UNBLOCK", &writer.id.to_string()]), 1);
            for raw in &mut readers {
                assert_eq!(raw.read().unwrap().text(), "1");
            }
            let took = started.elapsed();
            assert_eq!(writer.answer(), Ok(Value::Nil));
            assert_eq!(info(con, "q").1.len(), holders + 1 + w);
            took
        };
        let alone = admit(&mut con, 0);
        let beside = admit(&mut con, 400_000);
        assert!(
            beside < alone * 4 + Duration::from_millis(150),
            "2,000 readers let in: {alone:?} into an empty lock, {beside:?} beside 400,000 holders"
        );
    }

    /// Each write fires the event `docs/src/replication.md` names: `rwlock.reclaim`
    /// when only ended leases went (whatever the command), `persist` when
    /// the key's TTL goes.
    fn keyspace_events_follow_the_table(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let ended = |con: &mut Connection| {
            let _: () = cmd(&["FLUSHALL"]).query(con).unwrap();
            // The long lease first: the short one must still hold when the
            // long one is granted (a slow server, valgrind's, would reclaim
            // it then).
            assert_eq!(value(con, &["RWLOCK.ACQUIRE", "e", "READ", "long", "PX", "600000"]), Value::Int(1));
            assert_eq!(value(con, &["RWLOCK.ACQUIRE", "e", "READ", "short", "PX", "20"]), Value::Int(1));
            thread::sleep(Duration::from_millis(100));
        };
        let cases: &[(&str, &[&str], Value, &[&str])] = &[
            ("a non-holder's EXTEND", &["RWLOCK.EXTEND", "e", "nobody", "PX", "1000"], Value::Int(0), &["e rwlock.reclaim"]),
            ("a non-holder's RELEASE", &["RWLOCK.RELEASE", "e", "nobody"], Value::Int(0), &["e rwlock.reclaim"]),
            ("a refused ACQUIRE", &["RWLOCK.ACQUIRE", "e", "WRITE", "nobody"], Value::Nil, &["e rwlock.reclaim"]),
            ("a holder's EXTEND", &["RWLOCK.EXTEND", "e", "long", "PX", "1000"], Value::Int(1), &["e rwlock.extend", "e expire"]),
            ("a holder's RELEASE", &["RWLOCK.RELEASE", "e", "long"], Value::Int(1), &["e rwlock.release", "e del"]),
        ];
        for (what, call, reply, expected) in cases {
            ended(&mut con);
            let events = harness::keyspace_events(&server, expected.len() + 1, |con| {
                assert_eq!(value(con, call), *reply, "{what}");
                let _: () = cmd(&["SET", "marker", "1"]).query(con).unwrap();
            });
            let mut want: Vec<String> = expected.iter().map(|e| e.to_string()).collect();
            want.push("marker set".into());
            assert_eq!(events, want, "{what}");
        }
        // A writer with a lease downgrades to a reader without one: the
        // key's TTL goes, as PERSIST's would.
        let _: () = cmd(&["FLUSHALL"]).query(&mut con).unwrap();
        assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "d", "WRITE", "w", "PX", "600000"]), Value::Int(1));
        let events = harness::keyspace_events(&server, 3, |con| {
            assert_eq!(value(con, &["RWLOCK.ACQUIRE", "d", "READ", "w"]), Value::Int(1));
            let _: () = cmd(&["SET", "marker", "1"]).query(con).unwrap();
        });
        assert_eq!(events, ["d rwlock.acquire", "d persist", "marker set"]);
        assert_eq!(int(&mut con, &["PTTL", "d"]), -1);
    }

    fn replica_holds_exactly_the_primary_state(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let keys = rwlock_workload(&pair.primary, &mut con, Some(&pair));
        pair.sync();
        let mut replica = pair.replica.con();
        assert_eq!(values(&mut con, &keys), values(&mut replica, &keys), "DEBUG DIGEST-VALUE and PEXPIRETIME");
        assert_eq!(state(&mut con, &keys), state(&mut replica, &keys), "DUMP, PEXPIRETIME and DEBUG DIGEST");
        for key in keys.iter().filter(|key| !key.contains("fence")) {
            assert_eq!(info(&mut con, key), info(&mut replica, key), "{key}");
        }
        let refused = error(&mut replica, &cmd(&["RWLOCK.ACQUIRE", "{w}a", "READ", "x"]));
        assert_eq!(refused, "READONLY You can't write against a read only replica.");
    }

    fn aof_and_rdb_restarts_keep_the_holders(flavor) {
        for preamble in ["yes", "no"] {
            let server = harness::aof_round_trip_with(flavor, &["--aof-use-rdb-preamble", preamble], |server, con| {
                let keys = rwlock_workload(server, con, None);
                harness::rewrite_aof(con);
                // Written after the rewrite: replayed from the AOF's tail.
                after_rewrite(server, con);
                keys
            });
            let mut con = server.con();
            assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "{w}a", "r1"]), 1, "preamble {preamble}");
            assert_eq!(value(&mut con, &["RWLOCK.ACQUIRE", "{w}b", "WRITE", "x"]), Value::Nil, "preamble {preamble}");
        }
        // The RDB file: DEBUG RELOAD, then a restart.
        let mut server = Server::start(flavor);
        let mut con = server.con();
        let keys = rwlock_workload(&server, &mut con, None);
        let before = state(&mut con, &keys);
        let _: () = cmd(&["DEBUG", "RELOAD"]).query(&mut con).unwrap();
        assert_eq!(state(&mut con, &keys), before, "DEBUG RELOAD");
        let _: () = cmd(&["SAVE"]).query(&mut con).unwrap();
        drop(con);
        server.restart();
        let mut con = server.con();
        assert_eq!(state(&mut con, &keys), before, "a restart from the RDB file");
        assert_eq!(tokens(&mut con, "{w}a"), ["r1", "r3"]);
        assert_eq!(int(&mut con, &["RWLOCK.RELEASE", "{w}a", "r1"]), 1);
        assert_eq!(figure(&mut con, "rwlocks"), 4, "{{w}}a, {{w}}b, {{w}}d and {{w}}e");
    }

    fn cluster_routes_by_the_key_and_the_fence_key(flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        for i in 0..20 {
            let lock = format!("{{job{i}}}:lock");
            let fence = format!("{{job{i}}}:fence");
            let got: i64 = cmd(&["RWLOCK.ACQUIRE", &lock, "WRITE", "t", "PX", "60000", "FENCE", &fence]).query(&mut con).unwrap();
            assert_eq!(got, 1);
            let got: i64 = cmd(&["RWLOCK.EXTEND", &lock, "t", "PX", "90000"]).query(&mut con).unwrap();
            assert_eq!(got, 1);
            let got: Value = cmd(&["RWLOCK.INFO", &lock]).query(&mut con).unwrap();
            assert_eq!(parse_info(&got).0, "write");
            let got: i64 = cmd(&["RWLOCK.RELEASE", &lock, "t"]).query(&mut con).unwrap();
            assert_eq!(got, 1);
            let got: i64 = cmd(&["RWLOCK.ACQUIRE", &lock, "READ", "r", "FENCE", &fence]).query(&mut con).unwrap();
            assert_eq!(got, 1);
            let owner = cluster.owner(&lock);
            assert_eq!(int(&mut cluster.nodes[owner].con(), &["EXISTS", &lock, &fence]), 2, "{lock}");
        }
        let mut nodes: Vec<_> = cluster.nodes.iter().map(|node| node.con()).collect();
        // Keys in different slots: the server refuses, on whichever node.
        let owner = cluster.owner("a");
        assert_ne!(int(&mut nodes[owner], &["CLUSTER", "KEYSLOT", "a"]), int(&mut nodes[owner], &["CLUSTER", "KEYSLOT", "b"]));
        for words in [
            &["RWLOCK.ACQUIRE", "a", "WRITE", "t", "FENCE", "b"][..],
            &["RWLOCK.ACQUIRE", "a", "READ", "t", "PX", "10", "FENCE", "b", "WAIT", "10"],
        ] {
            assert_eq!(error(&mut nodes[owner], &cmd(words)), CROSSSLOT, "{words:?}");
        }
        let other = (owner + 1) % nodes.len();
        for words in [
            &["RWLOCK.ACQUIRE", "a", "READ", "t"][..],
            &["RWLOCK.RELEASE", "a", "t"],
            &["RWLOCK.EXTEND", "a", "t", "PX", "10"],
            &["RWLOCK.INFO", "a"],
        ] {
            assert_eq!(error(&mut nodes[other], &cmd(words)), cluster.moved("a"), "{words:?}");
        }
        // The keys the server finds (a token named FENCE is no keyword).
        let con = &mut nodes[0];
        assert_eq!(getkeys(con, &["RWLOCK.ACQUIRE", "k", "READ", "t"]), ["k"]);
        assert_eq!(getkeys(con, &["RWLOCK.ACQUIRE", "k", "READ", "t", "PX", "5", "WAIT", "9", "FENCE", "f"]), ["k", "f"]);
        assert_eq!(getkeys(con, &["RWLOCK.ACQUIRE", "k", "WRITE", "FENCE", "FENCE", "f"]), ["k", "f"]);
        assert_eq!(getkeys(con, &["RWLOCK.ACQUIRE", "k", "WRITE", "FENCE"]), ["k"]);
        assert_eq!(getkeys(con, &["RWLOCK.RELEASE", "k", "t"]), ["k"]);
        assert_eq!(getkeys(con, &["RWLOCK.EXTEND", "k", "t", "PX", "5"]), ["k"]);
        assert_eq!(getkeys(con, &["RWLOCK.INFO", "k"]), ["k"]);
    }
}

fn figure(con: &mut Connection, name: &str) -> i64 {
    recipes_figures(con, "recipes")[name]
}

/// Holds the replica (when there is one) for `ms` while the primary runs
/// what follows: the replica then applies it on a later clock.
fn hold(replica: Option<&Replicated>, ms: u64) -> Option<JoinHandle<()>> {
    replica.map(|pair| pair.hold_replica(ms))
}

fn release_hold(held: Option<JoinHandle<()>>) {
    if let Some(held) = held {
        held.join().unwrap();
    }
}

/// Every kind of RWLOCK write: acquisitions with and without leases,
/// retries, EXTEND (PX, EX, ADD), a downgrade, releases, hand-offs to
/// waiters by a release and by the lease-end timer, an ended lease
/// reclaimed with another holder left, a lock whose leases all ended, and a
/// lock released for good. Leaves three locks and a fence counter; returns
/// every key it touched. With a replica, holds it during each group of
/// writes, so that anything sent relative to the clock would land elsewhere.
fn rwlock_workload(
    server: &Server,
    con: &mut Connection,
    replica: Option<&Replicated>,
) -> Vec<&'static str> {
    let acquire = |con: &mut Connection, words: &[&str]| -> i64 {
        let mut all = vec!["RWLOCK.ACQUIRE"];
        all.extend_from_slice(words);
        int(con, &all)
    };
    // Acquisitions, retries, EXTEND, a downgrade.
    let held = hold(replica, 300);
    assert_eq!(acquire(con, &["{w}a", "READ", "r1", "PX", "600000"]), 1);
    assert_eq!(acquire(con, &["{w}a", "READ", "r2"]), 1);
    assert_eq!(acquire(con, &["{w}a", "READ", "r3", "EX", "900"]), 1);
    assert_eq!(
        int(con, &["RWLOCK.EXTEND", "{w}a", "r1", "PX", "700000"]),
        1
    );
    assert_eq!(
        int(con, &["RWLOCK.EXTEND", "{w}a", "r3", "PX", "1000", "ADD"]),
        1
    );
    assert_eq!(int(con, &["RWLOCK.RELEASE", "{w}a", "r2"]), 1);
    assert_eq!(
        acquire(
            con,
            &["{w}b", "WRITE", "w", "PX", "600000", "FENCE", "{w}fence"]
        ),
        1
    );
    assert_eq!(
        acquire(
            con,
            &["{w}b", "WRITE", "w", "PX", "650000", "FENCE", "{w}fence"]
        ),
        1
    );
    assert_eq!(
        acquire(
            con,
            &["{w}b", "READ", "w", "PX", "800000", "FENCE", "{w}fence"]
        ),
        1
    );
    assert_eq!(acquire(con, &["{w}b", "READ", "r", "EX", "500"]), 1);
    assert_eq!(int(con, &["RWLOCK.EXTEND", "{w}b", "r", "EX", "400"]), 1);
    release_hold(held);

    // Hand-offs by a release: two readers together, then a writer.
    assert_eq!(acquire(con, &["{w}c", "WRITE", "h", "PX", "600000"]), 1);
    let r1 = Waiter::start(
        server,
        &[
            "RWLOCK.ACQUIRE",
            "{w}c",
            "READ",
            "r1",
            "WAIT",
            "60000",
            "PX",
            "700000",
        ],
    );
    let r2 = Waiter::start(
        server,
        &["RWLOCK.ACQUIRE", "{w}c", "READ", "r2", "WAIT", "60000"],
    );
    let w = Waiter::start(
        server,
        &[
            "RWLOCK.ACQUIRE",
            "{w}c",
            "WRITE",
            "w",
            "WAIT",
            "60000",
            "PX",
            "900000",
            "FENCE",
            "{w}fence",
        ],
    );
    let held = hold(replica, 300);
    assert_eq!(int(con, &["RWLOCK.RELEASE", "{w}c", "h"]), 1);
    assert_eq!(r1.answer(), Ok(Value::Int(1)));
    assert_eq!(r2.answer(), Ok(Value::Int(1)));
    assert_eq!(int(con, &["RWLOCK.RELEASE", "{w}c", "r1"]), 1);
    assert_eq!(int(con, &["RWLOCK.RELEASE", "{w}c", "r2"]), 1);
    assert_eq!(w.answer(), Ok(Value::Int(2)));
    release_hold(held);

    // Leases that end: one of two readers; a writer whose waiter the timer
    // serves; a lock whose only lease ends.
    assert_eq!(acquire(con, &["{w}d", "READ", "e1", "PX", "200"]), 1);
    assert_eq!(acquire(con, &["{w}d", "READ", "e2", "PX", "600000"]), 1);
    assert_eq!(acquire(con, &["{w}e", "WRITE", "x", "PX", "200"]), 1);
    assert_eq!(acquire(con, &["{w}f", "READ", "z", "PX", "200"]), 1);
    let y = Waiter::start(
        server,
        &[
            "RWLOCK.ACQUIRE",
            "{w}e",
            "WRITE",
            "y",
            "WAIT",
            "10000",
            "PX",
            "600000",
        ],
    );
    let held = hold(replica, 600);
    assert_eq!(y.answer(), Ok(Value::Int(1)));
    release_hold(held);
    wait_until("{w}f's only lease ended", || {
        int(con, &["EXISTS", "{w}f"]) == 0
    });
    thread::sleep(Duration::from_millis(50));
    assert_eq!(tokens(con, "{w}d"), ["e2"]);
    assert_eq!(tokens(con, "{w}e"), ["y"]);

    // A lock taken and released for good.
    assert_eq!(acquire(con, &["{w}g", "WRITE", "g", "PX", "600000"]), 1);
    assert_eq!(int(con, &["RWLOCK.RELEASE", "{w}g", "g"]), 1);
    assert_eq!(int(con, &["RWLOCK.RELEASE", "{w}c", "w"]), 1);
    vec![
        "{w}a", "{w}b", "{w}c", "{w}d", "{w}e", "{w}f", "{w}g", "{w}fence",
    ]
}

/// Writes after an AOF rewrite: an acquisition, an extension, a release and
/// a hand-off, on the workload's locks.
fn after_rewrite(server: &Server, con: &mut Connection) {
    assert_eq!(
        int(
            con,
            &["RWLOCK.ACQUIRE", "{w}a", "READ", "tail", "PX", "600000"]
        ),
        1
    );
    assert_eq!(int(con, &["RWLOCK.EXTEND", "{w}b", "r", "PX", "300000"]), 1);
    let next = Waiter::start(
        server,
        &[
            "RWLOCK.ACQUIRE",
            "{w}d",
            "WRITE",
            "n",
            "WAIT",
            "60000",
            "PX",
            "600000",
        ],
    );
    assert_eq!(int(con, &["RWLOCK.RELEASE", "{w}d", "e2"]), 1);
    assert_eq!(next.answer(), Ok(Value::Int(1)));
    assert_eq!(int(con, &["RWLOCK.RELEASE", "{w}a", "tail"]), 1);
}
