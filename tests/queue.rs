//! QUEUE on real servers: exact replies of both commands in both modes at
//! both ends, the list left exactly as the book's `RPUSH`/`LPUSH` + `LTRIM`
//! leave it, the TTL kept, every error changing nothing, a client blocked in
//! `BLPOP` served, the keyspace events, `WATCH`, replication to a replica and
//! the AOF.

use crate::harness;

use harness::{
    arity, cmd, dataset, error, int, keyspace_events, query, show, value, Server, Value, Waiter,
    NOT_INTEGER, SYNTAX, WRONGTYPE,
};

const MAXLEN: &str = "ERR maxlen must be a positive integer";

fn items(con: &mut harness::Connection, key: &str) -> Vec<String> {
    query(con, &["LRANGE", key, "0", "-1"])
}

/// A call's reply as `show` writes it (`[2, ["a"]]`).
fn shown(con: &mut harness::Connection, words: &[&str]) -> String {
    show(&value(con, words))
}

server_tests! {
    fn replies_at_the_tail(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // A missing key: the list is made, as RPUSH makes it.
        assert_eq!(shown(&mut con, &["QUEUE.RPUSH", "q", "3", "REFUSE", "a", "b"]), "2");
        assert_eq!(query::<String>(&mut con, &["TYPE", "q"]), "list");
        // Only the first items that fit are written.
        assert_eq!(shown(&mut con, &["queue.rpush", "q", "3", "refuse", "c", "d", "e"]), "1");
        assert_eq!(items(&mut con, "q"), ["a", "b", "c"]);
        // Full: nothing.
        assert_eq!(shown(&mut con, &["QUEUE.RPUSH", "q", "3", "REFUSE", "x"]), "0");
        assert_eq!(items(&mut con, "q"), ["a", "b", "c"]);
        // EVICT: the oldest (the head) fall out, oldest first.
        assert_eq!(shown(&mut con, &["QUEUE.RPUSH", "q", "4", "EVICT", "d", "e"]), r#"[2, ["a"]]"#);
        assert_eq!(items(&mut con, "q"), ["b", "c", "d", "e"]);
        assert_eq!(shown(&mut con, &["QUEUE.RPUSH", "q", "4", "Evict", "f"]), r#"[1, ["b"]]"#);
        // More items than maxlen: the list's own go, then the first given.
        assert_eq!(
            shown(&mut con, &["QUEUE.RPUSH", "q", "2", "EVICT", "g", "h", "i"]),
            r#"[2, ["c", "d", "e", "f", "g"]]"#
        );
        assert_eq!(items(&mut con, "q"), ["h", "i"]);
        // Room left: nothing falls out.
        assert_eq!(shown(&mut con, &["QUEUE.RPUSH", "q", "5", "EVICT", "j"]), "[1, []]");
        assert_eq!(items(&mut con, "q"), ["h", "i", "j"]);
        // Binary items come back as they went in.
        assert_eq!(
            shown(&mut con, &["QUEUE.RPUSH", "q", "3", "EVICT", "\u{0}\r\n"]),
            r#"[1, ["h"]]"#
        );
        assert_eq!(int(&mut con, &["LLEN", "q"]), 3);
    }

    fn replies_at_the_head(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        // As LPUSH: each item at the head in turn.
        assert_eq!(shown(&mut con, &["QUEUE.LPUSH", "q", "4", "REFUSE", "a", "b", "c"]), "3");
        assert_eq!(items(&mut con, "q"), ["c", "b", "a"]);
        assert_eq!(shown(&mut con, &["QUEUE.LPUSH", "q", "4", "REFUSE", "d", "e"]), "1");
        assert_eq!(items(&mut con, "q"), ["d", "c", "b", "a"]);
        // EVICT: the oldest are at the tail, and go oldest first.
        assert_eq!(shown(&mut con, &["QUEUE.LPUSH", "q", "4", "EVICT", "e", "f"]), r#"[2, ["a", "b"]]"#);
        assert_eq!(items(&mut con, "q"), ["f", "e", "d", "c"]);
        assert_eq!(
            shown(&mut con, &["QUEUE.LPUSH", "q", "2", "EVICT", "g", "h", "i"]),
            r#"[2, ["c", "d", "e", "f", "g"]]"#
        );
        assert_eq!(items(&mut con, "q"), ["i", "h"]);
        // A consumer at the tail gets the oldest first.
        assert_eq!(query::<String>(&mut con, &["RPOP", "q"]), "h");
    }

    fn the_list_ends_as_push_then_trim_leaves_it(flavor) {
        // The book's MULTI (RPUSH/LPUSH, then LTRIM) on one key, the command on
        // another, over a run of pushes of 1 to 4 items.
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut next = 0;
        for round in 0..40 {
            let count = 1 + round % 4;
            let maxlen = 1 + (round * 7) % 5;
            let given: Vec<String> = (0..count).map(|i| format!("i{}", next + i)).collect();
            next += count;
            let given: Vec<&str> = given.iter().map(String::as_str).collect();
            let maxlen_text = maxlen.to_string();
            for (push, queue_push) in [("RPUSH", "QUEUE.RPUSH"), ("LPUSH", "QUEUE.LPUSH")] {
                // EVICT: push, then keep the maxlen newest.
                let book = format!("book:{push}");
                let mine = format!("mine:{push}");
                let before = items(&mut con, &book);
                let mut words = vec![push, book.as_str()];
                words.extend(&given);
                let _: i64 = query(&mut con, &words);
                let (start, stop) = if push == "RPUSH" { (format!("-{maxlen}"), "-1".to_string()) } else { ("0".to_string(), format!("{}", maxlen - 1)) };
                let _: () = query(&mut con, &["LTRIM", &book, &start, &stop]);
                let mut words = vec![queue_push, mine.as_str(), &maxlen_text, "EVICT"];
                words.extend(&given);
                let answer = value(&mut con, &words);
                assert_eq!(items(&mut con, &book), items(&mut con, &mine), "{words:?}");
                // What went is everything that was there or was given, but
                // is not kept, oldest first.
                let after = items(&mut con, &mine);
                let mut offered: Vec<String> = before;
                if push == "LPUSH" {
                    offered.reverse();
                }
                offered.extend(given.iter().map(|s| s.to_string()));
                let kept_new = given.len().min(maxlen);
                let gone: Vec<String> = offered.into_iter().filter(|item| !after.contains(item)).collect();
                let expected = Value::Array(vec![
                    Value::Int(kept_new as i64),
                    Value::Array(gone.iter().map(|s| Value::BulkString(s.as_bytes().to_vec())).collect()),
                ]);
                assert_eq!(answer, expected, "{words:?}");
                // REFUSE against the book's FixedLengthQueue (LTRIM 0 maxlen-1 after RPUSH).
                // One key per maxlen: the book's LTRIM would also cut a list made
                // longer before, which REFUSE leaves alone (see below).
                let book = format!("fixed:{push}:{maxlen}");
                let mine = format!("refuse:{push}:{maxlen}");
                let mut words = vec!["RPUSH", book.as_str()];
                words.extend(&given);
                let length: i64 = query(&mut con, &words);
                let _: () = query(&mut con, &["LTRIM", &book, "0", &format!("{}", maxlen - 1)]);
                let book_kept = if (length as usize) < maxlen { given.len() as i64 } else { given.len() as i64 - (length - maxlen as i64) };
                let mut words = vec!["QUEUE.RPUSH", mine.as_str(), &maxlen_text, "REFUSE"];
                words.extend(&given);
                assert_eq!(int(&mut con, &words), book_kept.max(0), "{words:?}");
                assert_eq!(items(&mut con, &book), items(&mut con, &mine), "{words:?}");
            }
        }
    }

    fn a_list_longer_than_maxlen(flavor) {
        // Made longer by a plain RPUSH: REFUSE takes nothing and leaves it;
        // EVICT brings it down to maxlen.
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: i64 = query(&mut con, &["RPUSH", "q", "a", "b", "c", "d"]);
        assert_eq!(int(&mut con, &["QUEUE.LPUSH", "q", "2", "REFUSE", "x"]), 0);
        assert_eq!(items(&mut con, "q"), ["a", "b", "c", "d"]);
        assert_eq!(shown(&mut con, &["QUEUE.RPUSH", "q", "2", "EVICT", "x"]), r#"[1, ["a", "b", "c"]]"#);
        assert_eq!(items(&mut con, "q"), ["d", "x"]);
    }

    fn the_ttl_is_kept(flavor) {
        // Even when every item the list held falls out (the list never empties).
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: i64 = query(&mut con, &["RPUSH", "q", "a", "b"]);
        let _: i64 = query(&mut con, &["PEXPIRE", "q", "600000"]);
        let at = int(&mut con, &["PEXPIRETIME", "q"]);
        assert_eq!(shown(&mut con, &["QUEUE.RPUSH", "q", "2", "EVICT", "c", "d"]), r#"[2, ["a", "b"]]"#);
        // Popped from the other end (the tail), in the order popped.
        assert_eq!(shown(&mut con, &["QUEUE.LPUSH", "q", "1", "EVICT", "e"]), r#"[1, ["d", "c"]]"#);
        assert_eq!(int(&mut con, &["PEXPIRETIME", "q"]), at);
        assert_eq!(items(&mut con, "q"), ["e"]);
    }

    fn errors_change_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: i64 = query(&mut con, &["RPUSH", "q", "a", "b"]);
        let _: () = query(&mut con, &["SET", "s", "text"]);
        let before = dataset(&mut con);
        let cases: &[(&[&str], String)] = &[
            (&["QUEUE.RPUSH", "q", "0", "EVICT", "x"], MAXLEN.into()),
            (&["QUEUE.LPUSH", "q", "-1", "REFUSE", "x"], MAXLEN.into()),
            (&["QUEUE.RPUSH", "new", "0", "EVICT", "x"], MAXLEN.into()),
            (&["QUEUE.RPUSH", "q", "ten", "EVICT", "x"], NOT_INTEGER.into()),
            (&["QUEUE.RPUSH", "q", "1.5", "EVICT", "x"], NOT_INTEGER.into()),
            (&["QUEUE.RPUSH", "q", "3", "DROP", "x"], SYNTAX.into()),
            (&["QUEUE.LPUSH", "q", "3", "x", "y"], SYNTAX.into()),
            (&["QUEUE.RPUSH", "q", "3", "EVICT"], arity("queue.rpush")),
            (&["QUEUE.LPUSH", "q", "3"], arity("queue.lpush")),
            (&["QUEUE.RPUSH", "s", "3", "EVICT", "x"], WRONGTYPE.into()),
            (&["QUEUE.LPUSH", "s", "3", "REFUSE", "x"], WRONGTYPE.into()),
        ];
        for (words, expected) in cases {
            assert_eq!(&error(&mut con, &cmd(words)), expected, "{words:?}");
            assert_eq!(dataset(&mut con), before, "{words:?} changed data");
        }
    }

    fn a_client_blocked_in_blpop_is_served(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        for (push, mode) in [("QUEUE.RPUSH", "EVICT"), ("QUEUE.LPUSH", "REFUSE")] {
            let waiter = Waiter::start(&server, &["BLPOP", "q", "10"]);
            let started = std::time::Instant::now();
            let _: Value = value(&mut con, &[push, "q", "5", mode, "a", "b"]);
            let answer = waiter.answer().unwrap();
            assert!(started.elapsed() < std::time::Duration::from_secs(2) || harness::under_valgrind());
            // As after RPUSH q a b (LPUSH q a b): the head goes to the waiter.
            let first = if push == "QUEUE.RPUSH" { "a" } else { "b" };
            assert_eq!(show(&answer), format!(r#"["q", "{first}"]"#), "{push}");
            assert_eq!(int(&mut con, &["LLEN", "q"]), 1);
            let _: i64 = query(&mut con, &["DEL", "q"]);
        }
        // BLMOVE too, the list made by the push.
        let waiter = Waiter::start(&server, &["BLMOVE", "src", "dst", "LEFT", "RIGHT", "10"]);
        assert_eq!(int(&mut con, &["QUEUE.RPUSH", "src", "1", "REFUSE", "m"]), 1);
        assert_eq!(show(&waiter.answer().unwrap()), r#""m""#);
        assert_eq!(items(&mut con, "dst"), ["m"]);
        assert_eq!(int(&mut con, &["EXISTS", "src"]), 0);
    }

    fn events_as_push_then_trim(flavor) {
        let server = Server::start(flavor);
        let fired = keyspace_events(&server, 6, |con| {
            let _: Value = value(con, &["QUEUE.RPUSH", "q", "2", "EVICT", "a"]);
            let _: Value = value(con, &["QUEUE.RPUSH", "q", "2", "EVICT", "b", "c"]);
            // Nothing written: no event.
            let _: Value = value(con, &["QUEUE.LPUSH", "q", "2", "REFUSE", "d"]);
            let _: Value = value(con, &["QUEUE.LPUSH", "q", "3", "REFUSE", "d"]);
            let _: Value = value(con, &["QUEUE.LPUSH", "q", "3", "EVICT", "e"]);
        });
        assert_eq!(fired, ["q rpush", "q rpush", "q ltrim", "q lpush", "q lpush", "q ltrim"]);
        // The book's MULTI fires these too (LTRIM's once it removes something).
        let book = keyspace_events(&server, 2, |con| {
            let _: Value = value(con, &["RPUSH", "q", "x"]);
            let _: () = query(con, &["LTRIM", "q", "-3", "-1"]);
        });
        assert_eq!(book, ["q rpush", "q ltrim"]);
    }

    fn many_evicted_at_once(flavor) {
        // 10 or more of the list's own items out: the list is cut in one go
        // (src/queue.rs TRIM_FROM), with the same reply, list, TTL and events.
        let server = Server::start(flavor);
        let mut con = server.con();
        let filler: Vec<String> = (0..30).map(|n| format!("f{n:02}")).collect();
        for (push, queue_push, given, maxlen) in [
            ("RPUSH", "QUEUE.RPUSH", 3, 20),
            ("LPUSH", "QUEUE.LPUSH", 3, 20),
            ("RPUSH", "QUEUE.RPUSH", 12, 10),
            ("LPUSH", "QUEUE.LPUSH", 12, 10),
            ("RPUSH", "QUEUE.RPUSH", 1, 21),
        ] {
            let (book, mine) = ("book", "mine");
            for key in [book, mine] {
                let _: i64 = query(&mut con, &["DEL", key]);
                let mut words = vec!["RPUSH", key];
                words.extend(filler.iter().map(String::as_str));
                let _: i64 = query(&mut con, &words);
                let _: i64 = query(&mut con, &["PEXPIRE", key, "600000"]);
            }
            let at = int(&mut con, &["PEXPIRETIME", mine]);
            let before = items(&mut con, book);
            let given: Vec<String> = (0..given).map(|n| format!("g{n:02}")).collect();
            let mut words = vec![push, book];
            words.extend(given.iter().map(String::as_str));
            let _: i64 = query(&mut con, &words);
            let (start, stop) = if push == "RPUSH" { (format!("-{maxlen}"), "-1".to_string()) } else { ("0".to_string(), format!("{}", maxlen - 1)) };
            let _: () = query(&mut con, &["LTRIM", book, &start, &stop]);
            let maxlen_text = maxlen.to_string();
            let mut words = vec![queue_push, mine, &maxlen_text, "EVICT"];
            words.extend(given.iter().map(String::as_str));
            let answer = value(&mut con, &words);
            let after = items(&mut con, mine);
            assert_eq!(items(&mut con, book), after, "{words:?}");
            let mut offered = before;
            if push == "LPUSH" {
                offered.reverse();
            }
            offered.extend(given.iter().cloned());
            let gone: Vec<Value> = offered
                .iter()
                .filter(|item| !after.contains(item))
                .map(|s| Value::BulkString(s.as_bytes().to_vec()))
                .collect();
            let kept = given.len().min(maxlen) as i64;
            assert_eq!(answer, Value::Array(vec![Value::Int(kept), Value::Array(gone)]), "{words:?}");
            assert_eq!(int(&mut con, &["PEXPIRETIME", mine]), at, "{words:?}");
        }
        let fired = keyspace_events(&server, 4, |con| {
            let _: Value = value(con, &["QUEUE.RPUSH", "mine", "5", "EVICT", "x"]);
            let _: Value = value(con, &["QUEUE.LPUSH", "mine", "1", "EVICT", "y", "z"]);
        });
        assert_eq!(fired, ["mine rpush", "mine ltrim", "mine lpush", "mine ltrim"]);
        assert_eq!(items(&mut con, "mine"), ["z"]);
    }

    fn a_write_aborts_a_watch_and_a_refusal_does_not(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut other = server.con();
        let _: i64 = query(&mut con, &["RPUSH", "q", "a"]);
        for (words, aborted) in [
            (&["QUEUE.RPUSH", "q", "1", "REFUSE", "b"][..], false),
            (&["QUEUE.RPUSH", "q", "1", "EVICT", "b"][..], true),
        ] {
            let _: () = query(&mut con, &["WATCH", "q"]);
            let _: () = query(&mut con, &["MULTI"]);
            let _: Value = value(&mut other, words);
            let _: Value = query(&mut con, &["LLEN", "q"]);
            let exec: Value = query(&mut con, &["EXEC"]);
            assert_eq!(exec == Value::Nil, aborted, "{words:?}: {exec:?}");
        }
    }

    fn a_replica_and_the_aof_hold_the_same_lists(flavor) {
        let workload = |_: &Server, con: &mut harness::Connection| {
            let _: i64 = query(con, &["RPUSH", "q", "a", "b", "c"]);
            let _: i64 = query(con, &["PEXPIRE", "q", "600000"]);
            let _: Value = value(con, &["QUEUE.RPUSH", "q", "4", "EVICT", "d", "e", "f"]);
            let _: Value = value(con, &["QUEUE.LPUSH", "q", "5", "REFUSE", "g", "h"]);
            let _: Value = value(con, &["QUEUE.LPUSH", "q", "2", "EVICT", "i"]);
            let _: Value = value(con, &["QUEUE.RPUSH", "r", "2", "REFUSE", "x", "y", "z"]);
            let mut words = vec!["RPUSH", "s"];
            let filler: Vec<String> = (0..40).map(|n| format!("f{n:02}")).collect();
            words.extend(filler.iter().map(String::as_str));
            let _: i64 = query(con, &words);
            // Cut in one go (10 or more out), at both ends.
            let _: Value = value(con, &["QUEUE.RPUSH", "s", "25", "EVICT", "x", "y"]);
            let _: Value = value(con, &["QUEUE.LPUSH", "s", "12", "EVICT", "z"]);
            vec!["q", "r", "s"]
        };
        harness::replica_converges(flavor, workload);
        let server = harness::aof_round_trip(flavor, workload);
        assert_eq!(items(&mut server.con(), "q"), ["i", "g"]);
    }
}
