//! The replication table of docs/src/replication.md, row by row, on real servers: each write
//! command answers its exact reply and goes to replicas and the AOF verbatim
//! or as its effect, as the table says, and a replica and an AOF replay then
//! hold exactly what the primary holds (every key's `DUMP` and `PEXPIRETIME`,
//! and `DEBUG DIGEST`).
//!
//! The replica's clock is not the primary's: while the primary runs a row's
//! command the replica is held in `DEBUG SLEEP`, so it applies the command
//! hundreds of milliseconds later, and the AOF is replayed later still, after
//! a restart. A clock-dependent command sent verbatim would land on another
//! expiry or lease end there, and the comparison would fail.

use crate::harness;

use std::collections::BTreeSet;
use std::thread;
use std::time::Duration;

use harness::{
    cmd, command_flags, commands_run, module_commands, show, state, value, Connection, Replicated,
    Server, Value, Waiter,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sent {
    /// The command itself.
    Verbatim,
    /// Other commands reproducing its effect (named here, lower case).
    Effect(&'static [&'static str]),
}

struct Row {
    /// What the row shows, for failure messages.
    case: &'static str,
    setup: &'static [&'static [&'static str]],
    call: &'static [&'static str],
    /// The call's reply, as [`show`] renders it.
    answer: &'static str,
    sent: Sent,
    keys: &'static [&'static str],
}

const SET: Sent = Sent::Effect(&["set"]);
const HSET: Sent = Sent::Effect(&["hset"]);
const APPLY: Sent = Sent::Effect(&["idpool.apply"]);
const POOL_APPLY: Sent = Sent::Effect(&["pool.apply"]);

/// One row per command and per way it can replicate. Keys of a row share a
/// hash tag; rows use different keys, so all can run on one server.
const ROWS: &[Row] = &[
    Row {
        case: "IDGEN.NEXT",
        setup: &[],
        call: &["IDGEN.NEXT", "{a}gen", "COUNT", "3"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{a}gen"],
    },
    Row {
        case: "IDGEN.NEXT FIELD",
        setup: &[],
        call: &["IDGEN.NEXT", "{b}ids", "FIELD", "orders"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{b}ids"],
    },
    Row {
        case: "IDGEN.RESERVE",
        setup: &[&["SET", "{c}gen", "7", "PX", "600000"]],
        call: &["IDGEN.RESERVE", "{c}gen", "1000"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{c}gen"],
    },
    Row {
        case: "LOCK.ACQUIRE (a lease from now, a fence)",
        setup: &[],
        call: &[
            "LOCK.ACQUIRE",
            "{d}lock",
            "t1",
            "PX",
            "600000",
            "FENCE",
            "{d}fence",
        ],
        answer: "1",
        sent: SET,
        keys: &["{d}lock", "{d}fence"],
    },
    Row {
        case: "LOCK.RELEASEIF (no waiter)",
        setup: &[&["LOCK.ACQUIRE", "{e}lock", "t1", "PX", "600000"]],
        call: &["LOCK.RELEASEIF", "{e}lock", "t1"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{e}lock"],
    },
    Row {
        case: "LOCK.EXTEND",
        setup: &[&["LOCK.ACQUIRE", "{f}lock", "t1", "PX", "600000"]],
        call: &["LOCK.EXTEND", "{f}lock", "t1", "PX", "900000"],
        answer: "1",
        sent: Sent::Effect(&["pexpireat"]),
        keys: &["{f}lock"],
    },
    Row {
        case: "LOCK.MACQUIRE (leases from now)",
        setup: &[&["LOCK.ACQUIRE", "{fm}b", "t1", "PX", "600000"]],
        call: &[
            "LOCK.MACQUIRE",
            "3",
            "{fm}a",
            "{fm}b",
            "{fm}c",
            "t1",
            "PX",
            "600000",
        ],
        answer: "3",
        sent: SET,
        keys: &["{fm}a", "{fm}b", "{fm}c"],
    },
    Row {
        case: "LOCK.MRELEASEIF (no waiter)",
        setup: &[
            &["LOCK.ACQUIRE", "{fr}a", "t1", "PX", "600000"],
            &["LOCK.ACQUIRE", "{fr}b", "t2", "PX", "600000"],
            &["LOCK.ACQUIRE", "{fr}c", "t1"],
        ],
        call: &["LOCK.MRELEASEIF", "3", "{fr}a", "{fr}b", "{fr}c", "t1"],
        answer: "2",
        sent: Sent::Verbatim,
        keys: &["{fr}a", "{fr}b", "{fr}c"],
    },
    Row {
        case: "LOCK.MEXTEND",
        setup: &[
            &["LOCK.ACQUIRE", "{fe}a", "t1", "PX", "600000"],
            &["LOCK.ACQUIRE", "{fe}b", "t1"],
        ],
        call: &["LOCK.MEXTEND", "2", "{fe}a", "{fe}b", "t1", "PX", "900000"],
        answer: "2",
        sent: Sent::Effect(&["pexpireat"]),
        keys: &["{fe}a", "{fe}b"],
    },
    Row {
        case: "ARTICLE.CREATE (created_at, a slug)",
        setup: &[],
        call: &[
            "ARTICLE.CREATE",
            "{g}art",
            "t",
            "c",
            "au",
            "SLUG",
            "{g}slugs",
            "hello",
        ],
        answer: "1",
        sent: HSET,
        keys: &["{g}art", "{g}slugs"],
    },
    Row {
        case: "ARTICLE.UPDATE (updated_at)",
        setup: &[&["ARTICLE.CREATE", "{h}art", "t", "c", "au"]],
        call: &["ARTICLE.UPDATE", "{h}art", "TITLE", "t2"],
        answer: "1",
        sent: HSET,
        keys: &["{h}art"],
    },
    Row {
        case: "ARTICLE.SETSLUG",
        setup: &[&[
            "ARTICLE.CREATE",
            "{i}art",
            "t",
            "c",
            "au",
            "SLUG",
            "{i}slugs",
            "old",
        ]],
        call: &["ARTICLE.SETSLUG", "{i}art", "{i}slugs", "new"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{i}art", "{i}slugs"],
    },
    Row {
        case: "ARTICLE.VIEW",
        setup: &[&["ARTICLE.CREATE", "{j}art", "t", "c", "au"]],
        call: &["ARTICLE.VIEW", "{j}art"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{j}art"],
    },
    Row {
        case: "ARTICLE.DELETE",
        setup: &[
            &[
                "ARTICLE.CREATE",
                "{k}art",
                "t",
                "c",
                "au",
                "SLUG",
                "{k}slugs",
                "x",
            ],
            &[
                "ARTICLE.CREATE",
                "{k}art2",
                "t",
                "c",
                "au",
                "SLUG",
                "{k}slugs",
                "y",
            ],
        ],
        call: &["ARTICLE.DELETE", "{k}art", "SLUG", "{k}slugs"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{k}art", "{k}art2", "{k}slugs"],
    },
    Row {
        case: "CACHE.SETJSON (no TTL)",
        setup: &[],
        call: &["CACHE.SETJSON", "{l}doc", "{ \"a\" : [1, 2.50] }"],
        answer: "+OK",
        sent: Sent::Verbatim,
        keys: &["{l}doc"],
    },
    Row {
        case: "CACHE.SETJSON EX",
        setup: &[],
        call: &["CACHE.SETJSON", "{m}doc", "{\"a\":1}", "EX", "600"],
        answer: "+OK",
        sent: SET,
        keys: &["{m}doc"],
    },
    Row {
        case: "CACHE.HSET",
        setup: &[],
        call: &["CACHE.HSET", "{n}h", "PX", "600000", "f", "v", "g", "w"],
        answer: "2",
        sent: Sent::Effect(&["hset", "pexpireat"]),
        keys: &["{n}h"],
    },
    Row {
        case: "IDPOOL.CREATE",
        setup: &[],
        call: &["IDPOOL.CREATE", "{o}pool", "100", "TTL", "600000"],
        answer: "+OK",
        sent: Sent::Verbatim,
        keys: &["{o}pool"],
    },
    Row {
        case: "IDPOOL.NEXT (a lease that never ends)",
        setup: &[
            &["IDPOOL.CREATE", "{p}pool", "100"],
            &["IDPOOL.NEXT", "{p}pool"],
        ],
        call: &["IDPOOL.NEXT", "{p}pool"],
        answer: "2",
        sent: Sent::Verbatim,
        keys: &["{p}pool"],
    },
    Row {
        case: "IDPOOL.NEXT TTL (a lease from now)",
        setup: &[&["IDPOOL.CREATE", "{q}pool", "100"]],
        call: &["IDPOOL.NEXT", "{q}pool", "TTL", "600000"],
        answer: "1",
        sent: APPLY,
        keys: &["{q}pool"],
    },
    Row {
        case: "IDPOOL.NEXT reclaiming an ended lease",
        setup: &[
            &["IDPOOL.CREATE", "{r}pool", "100"],
            &["IDPOOL.NEXT", "{r}pool", "TTL", "1"],
        ],
        call: &["IDPOOL.NEXT", "{r}pool"],
        answer: "2",
        sent: APPLY,
        keys: &["{r}pool"],
    },
    Row {
        case: "IDPOOL.RELEASE",
        setup: &[
            &["IDPOOL.CREATE", "{s}pool", "100"],
            &["IDPOOL.NEXT", "{s}pool", "TTL", "600000"],
        ],
        call: &["IDPOOL.RELEASE", "{s}pool", "1"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{s}pool"],
    },
    Row {
        case: "IDPOOL.RELEASE reclaiming an ended lease",
        setup: &[
            &["IDPOOL.CREATE", "{t}pool", "100"],
            &["IDPOOL.NEXT", "{t}pool", "TTL", "600000"],
            &["IDPOOL.NEXT", "{t}pool", "TTL", "1"],
        ],
        call: &["IDPOOL.RELEASE", "{t}pool", "1"],
        answer: "1",
        sent: APPLY,
        keys: &["{t}pool"],
    },
    Row {
        case: "IDPOOL.RENEW",
        setup: &[
            &["IDPOOL.CREATE", "{u}pool", "100"],
            &["IDPOOL.NEXT", "{u}pool", "TTL", "600000"],
        ],
        call: &["IDPOOL.RENEW", "{u}pool", "1", "900000"],
        answer: "1",
        sent: APPLY,
        keys: &["{u}pool"],
    },
    Row {
        case: "IDPOOL.RESIZE",
        setup: &[&["IDPOOL.CREATE", "{v}pool", "100"]],
        call: &["IDPOOL.RESIZE", "{v}pool", "50"],
        answer: "+OK",
        sent: APPLY,
        keys: &["{v}pool"],
    },
    Row {
        case: "RATE.LIMIT allowed (GCRA)",
        setup: &[],
        // Periods that outlast the test, as for every key a row leaves with
        // a TTL: an expiry would send DEL to the replica during a later row.
        call: &["RATE.LIMIT", "{x}rate", "5", "600000", "AND", "100", "1000"],
        answer: "[0, 5, 4, -1, 120000]",
        sent: SET,
        keys: &["{x}rate"],
    },
    Row {
        case: "RATE.LIMIT allowed (SLIDING)",
        setup: &[&["RATE.LIMIT", "{y}rate", "5", "600000", "SLIDING"]],
        call: &["RATE.LIMIT", "{y}rate", "5", "600000", "SLIDING"],
        answer: "[0, 5, 3, -1, 600000]",
        sent: Sent::Effect(&["rate.apply"]),
        keys: &["{y}rate"],
    },
    Row {
        case: "RATE.RESET",
        setup: &[&["RATE.LIMIT", "{z}rate", "5", "60000"]],
        call: &["RATE.RESET", "{z}rate"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{z}rate"],
    },
    Row {
        case: "RATE.FIXED (a new window)",
        setup: &[],
        call: &["RATE.FIXED", "{fa}fixed", "600000", "COST", "2", "MAX", "5"],
        answer: "[2, 600000]",
        sent: SET,
        keys: &["{fa}fixed"],
    },
    Row {
        case: "RATE.FIXED (the TTL kept)",
        setup: &[&["SET", "{fb}fixed", "5"]],
        call: &["RATE.FIXED", "{fb}fixed", "0", "COST", "-2"],
        answer: "[3, -1]",
        sent: Sent::Verbatim,
        keys: &["{fb}fixed"],
    },
    Row {
        case: "RATE.FIXED … BACKOFF",
        setup: &[&["RATE.FIXED", "{fc}fixed", "600000"]],
        call: &[
            "RATE.FIXED",
            "{fc}fixed",
            "600000",
            "COST",
            "2",
            "MAX",
            "1",
            "BACKOFF",
        ],
        answer: "[3, 1200000]",
        sent: SET,
        keys: &["{fc}fixed"],
    },
    Row {
        case: "UQUEUE.INSERT",
        setup: &[&["UQUEUE.INSERT", "{ua}uq", "a", "b"]],
        call: &["UQUEUE.INSERT", "{ua}uq", "a", "c"],
        answer: "3",
        sent: Sent::Verbatim,
        keys: &["{ua}uq"],
    },
    Row {
        case: "UQUEUE.REMOVE",
        setup: &[&["UQUEUE.INSERT", "{ub}uq", "a", "b"]],
        call: &["UQUEUE.REMOVE", "{ub}uq", "a"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{ub}uq"],
    },
    Row {
        case: "UQUEUE.REMOVE (the last item: the key goes)",
        setup: &[&["UQUEUE.INSERT", "{uc}uq", "a"]],
        call: &["UQUEUE.REMOVE", "{uc}uq", "a"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{uc}uq"],
    },
    Row {
        case: "UQUEUE.ROTATE",
        setup: &[&["UQUEUE.INSERT", "{ud}uq", "a", "b"]],
        call: &["UQUEUE.ROTATE", "{ud}uq"],
        answer: "\"a\"",
        sent: Sent::Verbatim,
        keys: &["{ud}uq"],
    },
    Row {
        case: "UQUEUE.ROTATE … WAIT (an item there: the rotation without WAIT)",
        setup: &[&["UQUEUE.INSERT", "{ue}uq", "a", "b"]],
        call: &["UQUEUE.ROTATE", "{ue}uq", "WAIT", "1000"],
        answer: "\"a\"",
        sent: Sent::Effect(&["uqueue.rotate"]),
        keys: &["{ue}uq"],
    },
    Row {
        case: "POOL.ADD",
        setup: &[&["POOL.ADD", "{pa}pool", "a"]],
        call: &["POOL.ADD", "{pa}pool", "b", "a", "c"],
        answer: "2",
        sent: Sent::Verbatim,
        keys: &["{pa}pool"],
    },
    Row {
        case: "POOL.REMOVE",
        setup: &[
            &["POOL.ADD", "{pb}pool", "a", "b"],
            &["POOL.ACQUIRE", "{pb}pool", "o", "PX", "600000"],
        ],
        call: &["POOL.REMOVE", "{pb}pool", "a"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{pb}pool"],
    },
    Row {
        case: "POOL.ACQUIRE (a lease that never ends)",
        setup: &[&["POOL.ADD", "{pc}pool", "a", "b"]],
        call: &["POOL.ACQUIRE", "{pc}pool", "o"],
        answer: "\"a\"",
        sent: Sent::Verbatim,
        keys: &["{pc}pool"],
    },
    Row {
        case: "POOL.ACQUIRE PX (a lease from now)",
        setup: &[&["POOL.ADD", "{pd}pool", "a", "b"]],
        call: &[
            "POOL.ACQUIRE",
            "{pd}pool",
            "o",
            "PX",
            "600000",
            "WAIT",
            "1000",
        ],
        answer: "\"a\"",
        sent: POOL_APPLY,
        keys: &["{pd}pool"],
    },
    Row {
        case: "POOL.ACQUIRE reclaiming an ended lease",
        setup: &[
            &["POOL.ADD", "{pe}pool", "a"],
            &["POOL.ACQUIRE", "{pe}pool", "o", "PX", "1"],
        ],
        call: &["POOL.ACQUIRE", "{pe}pool", "p"],
        answer: "\"a\"",
        sent: POOL_APPLY,
        keys: &["{pe}pool"],
    },
    Row {
        case: "POOL.RELEASE",
        setup: &[
            &["POOL.ADD", "{pf}pool", "a"],
            &["POOL.ACQUIRE", "{pf}pool", "o", "PX", "600000"],
        ],
        call: &["POOL.RELEASE", "{pf}pool", "a", "o"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{pf}pool"],
    },
    Row {
        case: "POOL.RELEASE reclaiming an ended lease",
        setup: &[
            &["POOL.ADD", "{pg}pool", "a", "b"],
            &["POOL.ACQUIRE", "{pg}pool", "o", "PX", "600000"],
            &["POOL.ACQUIRE", "{pg}pool", "o", "PX", "1"],
        ],
        call: &["POOL.RELEASE", "{pg}pool", "a", "o"],
        answer: "1",
        sent: POOL_APPLY,
        keys: &["{pg}pool"],
    },
    Row {
        case: "POOL.RENEW",
        setup: &[
            &["POOL.ADD", "{ph}pool", "a"],
            &["POOL.ACQUIRE", "{ph}pool", "o", "PX", "600000"],
        ],
        call: &["POOL.RENEW", "{ph}pool", "a", "o", "PX", "900000"],
        answer: "1",
        sent: POOL_APPLY,
        keys: &["{ph}pool"],
    },
    Row {
        case: "IDGEN.ASSIGN (a new name, a reverse index)",
        setup: &[&["IDGEN.ASSIGN", "{ia}gen", "{ia}ids", "known"]],
        call: &[
            "IDGEN.ASSIGN",
            "{ia}gen",
            "{ia}ids",
            "new",
            "REVERSE",
            "{ia}names",
        ],
        answer: "2",
        sent: Sent::Verbatim,
        keys: &["{ia}gen", "{ia}ids", "{ia}names"],
    },
    Row {
        case: "IDGEN.ASSIGN (a known name, its missing reverse entry)",
        setup: &[&["IDGEN.ASSIGN", "{ib}gen", "{ib}ids", "known"]],
        call: &[
            "IDGEN.ASSIGN",
            "{ib}gen",
            "{ib}ids",
            "known",
            "REVERSE",
            "{ib}names",
        ],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{ib}gen", "{ib}ids", "{ib}names"],
    },
    Row {
        case: "RWLOCK.ACQUIRE (a lease from now)",
        setup: &[&["RWLOCK.ACQUIRE", "{ra}rw", "READ", "r1"]],
        call: &["RWLOCK.ACQUIRE", "{ra}rw", "READ", "r2", "PX", "600000"],
        answer: "1",
        sent: Sent::Effect(&["rwlock.apply"]),
        keys: &["{ra}rw"],
    },
    Row {
        case: "RWLOCK.ACQUIRE WRITE (a fence)",
        setup: &[],
        call: &[
            "RWLOCK.ACQUIRE",
            "{rb}rw",
            "WRITE",
            "w",
            "PX",
            "600000",
            "FENCE",
            "{rb}fence",
        ],
        answer: "1",
        sent: Sent::Effect(&["rwlock.apply", "set"]),
        keys: &["{rb}rw", "{rb}fence"],
    },
    Row {
        case: "RWLOCK.ACQUIRE READ by the writer (a downgrade)",
        setup: &[&["RWLOCK.ACQUIRE", "{rc}rw", "WRITE", "w", "PX", "600000"]],
        call: &["RWLOCK.ACQUIRE", "{rc}rw", "READ", "w", "PX", "900000"],
        answer: "1",
        sent: Sent::Effect(&["rwlock.apply"]),
        keys: &["{rc}rw"],
    },
    Row {
        case: "RWLOCK.RELEASE",
        setup: &[
            &["RWLOCK.ACQUIRE", "{rd}rw", "READ", "r1", "PX", "600000"],
            &["RWLOCK.ACQUIRE", "{rd}rw", "READ", "r2", "PX", "900000"],
        ],
        call: &["RWLOCK.RELEASE", "{rd}rw", "r2"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{rd}rw"],
    },
    Row {
        case: "RWLOCK.RELEASE reclaiming an ended lease",
        setup: &[
            &["RWLOCK.ACQUIRE", "{re}rw", "READ", "r1", "PX", "600000"],
            &["RWLOCK.ACQUIRE", "{re}rw", "READ", "r2", "PX", "1"],
        ],
        call: &["RWLOCK.RELEASE", "{re}rw", "r1"],
        answer: "1",
        sent: Sent::Effect(&["rwlock.apply"]),
        keys: &["{re}rw"],
    },
    Row {
        case: "RWLOCK.EXTEND",
        setup: &[&["RWLOCK.ACQUIRE", "{rf}rw", "READ", "r1", "PX", "600000"]],
        call: &["RWLOCK.EXTEND", "{rf}rw", "r1", "PX", "900000"],
        answer: "1",
        sent: Sent::Effect(&["rwlock.apply"]),
        keys: &["{rf}rw"],
    },
    Row {
        case: "LATCH.SET (a lifetime from now)",
        setup: &[],
        call: &["LATCH.SET", "{la}latch", "3", "PX", "600000"],
        answer: "1",
        sent: SET,
        keys: &["{la}latch"],
    },
    Row {
        case: "LATCH.SET (no lifetime)",
        setup: &[],
        call: &["LATCH.SET", "{lb}latch", "3"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{lb}latch"],
    },
    Row {
        case: "LATCH.COUNTDOWN",
        setup: &[&["LATCH.SET", "{lc}latch", "3", "PX", "600000"]],
        call: &["LATCH.COUNTDOWN", "{lc}latch", "2"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{lc}latch"],
    },
    Row {
        case: "AUTOCOMPLETE.FEED (no lifetime, nothing faded)",
        setup: &[&["AUTOCOMPLETE.FEED", "{aa}ac", "redis", "2"]],
        call: &["AUTOCOMPLETE.FEED", "{aa}ac", "redis"],
        answer: "\"3\"",
        sent: Sent::Verbatim,
        keys: &["{aa}ac"],
    },
    Row {
        case: "AUTOCOMPLETE.FEED PX (a lifetime from now)",
        setup: &[],
        call: &["AUTOCOMPLETE.FEED", "{ab}ac", "redis", "2", "PX", "600000"],
        answer: "\"2\"",
        sent: Sent::Effect(&["autocomplete.feed"]),
        keys: &["{ab}ac"],
    },
    Row {
        case: "AUTOCOMPLETE.FEED PXAT (an absolute time)",
        setup: &[],
        call: &[
            "AUTOCOMPLETE.FEED",
            "{ac}ac",
            "redis",
            "PXAT",
            "99999999999999",
        ],
        answer: "\"1\"",
        sent: Sent::Verbatim,
        keys: &["{ac}ac"],
    },
    Row {
        case: "AUTOCOMPLETE.FEED removing faded entries",
        setup: &[
            // The live entry first: a write after a fading one may remove it.
            &["AUTOCOMPLETE.FEED", "{ad}ac", "redis", "1", "PX", "600000"],
            &["AUTOCOMPLETE.FEED", "{ad}ac", "old", "1", "PX", "1"],
            &["AUTOCOMPLETE.FEED", "{ad}ac", "older", "1", "PX", "1"],
        ],
        call: &["AUTOCOMPLETE.FEED", "{ad}ac", "redis", "4"],
        answer: "\"5\"",
        sent: Sent::Effect(&["autocomplete.remove", "autocomplete.feed"]),
        keys: &["{ad}ac"],
    },
    Row {
        case: "AUTOCOMPLETE.SET (no lifetime, nothing faded)",
        setup: &[&["AUTOCOMPLETE.FEED", "{ae}ac", "redis", "2"]],
        call: &["AUTOCOMPLETE.SET", "{ae}ac", "rust", "7"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{ae}ac"],
    },
    Row {
        case: "AUTOCOMPLETE.SET EX (a lifetime from now)",
        setup: &[&["AUTOCOMPLETE.FEED", "{af}ac", "redis", "2"]],
        call: &["AUTOCOMPLETE.SET", "{af}ac", "redis", "7", "EX", "600"],
        answer: "0",
        sent: Sent::Effect(&["autocomplete.set"]),
        keys: &["{af}ac"],
    },
    Row {
        case: "AUTOCOMPLETE.SET removing faded entries",
        setup: &[
            &["AUTOCOMPLETE.FEED", "{ag}ac", "redis", "2"],
            &["AUTOCOMPLETE.FEED", "{ag}ac", "old", "1", "PX", "1"],
        ],
        call: &[
            "AUTOCOMPLETE.SET",
            "{ag}ac",
            "old",
            "7",
            "PXAT",
            "99999999999999",
        ],
        answer: "1",
        sent: Sent::Effect(&["autocomplete.remove", "autocomplete.set"]),
        keys: &["{ag}ac"],
    },
    Row {
        case: "AUTOCOMPLETE.REMOVE (nothing faded)",
        setup: &[
            &["AUTOCOMPLETE.FEED", "{ah}ac", "redis", "2"],
            &["AUTOCOMPLETE.FEED", "{ah}ac", "rust"],
        ],
        call: &["AUTOCOMPLETE.REMOVE", "{ah}ac", "redis", "ruby"],
        answer: "1",
        sent: Sent::Verbatim,
        keys: &["{ah}ac"],
    },
    Row {
        case: "AUTOCOMPLETE.REMOVE removing faded entries, the key emptied",
        setup: &[
            &[
                "AUTOCOMPLETE.FEED",
                "{ai}ac",
                "redis",
                "1",
                "PXAT",
                "99999999999999",
            ],
            &["AUTOCOMPLETE.FEED", "{ai}ac", "old", "1", "PX", "1"],
        ],
        call: &["AUTOCOMPLETE.REMOVE", "{ai}ac", "redis", "old"],
        answer: "1",
        sent: Sent::Effect(&["autocomplete.remove"]),
        keys: &["{ai}ac"],
    },
    Row {
        case: "QUEUE.RPUSH EVICT",
        setup: &[&["RPUSH", "{qa}queue", "a", "b", "c"]],
        call: &["QUEUE.RPUSH", "{qa}queue", "4", "EVICT", "d", "e"],
        answer: "[2, [\"a\"]]",
        sent: Sent::Verbatim,
        keys: &["{qa}queue"],
    },
    Row {
        case: "QUEUE.LPUSH REFUSE",
        setup: &[&["RPUSH", "{qb}queue", "a", "b", "c"]],
        call: &["QUEUE.LPUSH", "{qb}queue", "5", "REFUSE", "x", "y", "z"],
        answer: "2",
        sent: Sent::Verbatim,
        keys: &["{qb}queue"],
    },
];
/// Runs setup commands, each of which must succeed with something other
/// than nil.
fn prepare(con: &mut Connection, steps: &[&[&str]]) {
    for words in steps {
        assert_ne!(value(con, words), Value::Nil, "{words:?}");
    }
}

fn setup(con: &mut Connection, row: &Row) {
    prepare(con, row.setup);
    // Leases of 1 ms end before the row's command runs.
    thread::sleep(Duration::from_millis(5));
}

/// Runs a row's command and checks its reply.
fn call(con: &mut Connection, row: &Row) {
    let answer = show(&value(con, row.call));
    assert_eq!(answer, row.answer, "{}", row.case);
}

/// Holds the replica's event loop for a while (it applies the stream late).
fn hold(replica: &Server) -> thread::JoinHandle<()> {
    let mut con = replica.con();
    let held = thread::spawn(move || {
        let _: Value = cmd(&["DEBUG", "SLEEP", "0.3"]).query(&mut con).unwrap();
    });
    thread::sleep(Duration::from_millis(50));
    held
}

/// A release that hands what it freed to a waiting client.
struct HandOff {
    setup: &'static [&'static [&'static str]],
    waiter: &'static [&'static str],
    release: &'static [&'static str],
    /// The waiter's answer.
    granted: &'static str,
    /// What the replica runs: the release, then the grant's effect.
    received: &'static [&'static str],
    keys: &'static [&'static str],
}

const HAND_OFFS: &[HandOff] = &[
    HandOff {
        setup: &[&["LOCK.ACQUIRE", "{w}lock", "t1", "PX", "600000"]],
        waiter: &[
            "LOCK.ACQUIRE",
            "{w}lock",
            "t2",
            "PX",
            "600000",
            "WAIT",
            "20000",
            "FENCE",
            "{w}fence",
        ],
        release: &["LOCK.RELEASEIF", "{w}lock", "t1"],
        granted: "1",
        received: &["lock.releaseif", "set"],
        keys: &["{w}lock", "{w}fence"],
    },
    HandOff {
        setup: &[
            &["POOL.ADD", "{wp}pool", "r"],
            &["POOL.ACQUIRE", "{wp}pool", "o1"],
        ],
        waiter: &["POOL.ACQUIRE", "{wp}pool", "o2", "WAIT", "20000"],
        release: &["POOL.RELEASE", "{wp}pool", "r", "o1"],
        granted: "r",
        received: &["pool.release", "pool.apply"],
        keys: &["{wp}pool"],
    },
    HandOff {
        setup: &[
            &["IDPOOL.CREATE", "{wi}pool", "1"],
            &["IDPOOL.NEXT", "{wi}pool"],
        ],
        waiter: &["IDPOOL.NEXT", "{wi}pool", "WAIT", "20000"],
        release: &["IDPOOL.RELEASE", "{wi}pool", "1"],
        granted: "1",
        received: &["idpool.release", "idpool.apply"],
        keys: &["{wi}pool"],
    },
    HandOff {
        setup: &[&["RWLOCK.ACQUIRE", "{wr}rw", "WRITE", "w", "PX", "600000"]],
        waiter: &[
            "RWLOCK.ACQUIRE",
            "{wr}rw",
            "READ",
            "r",
            "PX",
            "600000",
            "WAIT",
            "20000",
        ],
        release: &["RWLOCK.RELEASE", "{wr}rw", "w"],
        granted: "1",
        received: &["rwlock.release", "rwlock.apply"],
        keys: &["{wr}rw"],
    },
    // A counter with room again: the negative cost as the command, then the
    // waiter's call as its effect (its window set from the grant).
    HandOff {
        setup: &[&["RATE.FIXED", "{wf}fixed", "0"]],
        waiter: &[
            "RATE.FIXED",
            "{wf}fixed",
            "600000",
            "MAX",
            "1",
            "WAIT",
            "20000",
        ],
        release: &["RATE.FIXED", "{wf}fixed", "0", "COST", "-1"],
        granted: "[1, 600000]",
        received: &["rate.fixed", "set"],
        keys: &["{wf}fixed"],
    },
    // The same with a reward that itself waits: it applies at once (it
    // never passes max), as the command, and serves the waiter the same way.
    HandOff {
        setup: &[&["RATE.FIXED", "{wg}fixed", "0"]],
        waiter: &[
            "RATE.FIXED",
            "{wg}fixed",
            "600000",
            "MAX",
            "1",
            "WAIT",
            "20000",
        ],
        release: &[
            "RATE.FIXED",
            "{wg}fixed",
            "0",
            "MAX",
            "1",
            "COST",
            "-1",
            "WAIT",
            "20000",
        ],
        granted: "[1, 600000]",
        received: &["rate.fixed", "set"],
        keys: &["{wg}fixed"],
    },
    // A waiter for an item: the insert, then the waiter's rotation (last:
    // a rotation takes nothing to give back, see `a_hand_off_never_received…`).
    HandOff {
        setup: &[],
        waiter: &["UQUEUE.ROTATE", "{wu}uq", "WAIT", "20000"],
        release: &["UQUEUE.INSERT", "{wu}uq", "a"],
        granted: "a",
        received: &["uqueue.insert", "uqueue.rotate"],
        keys: &["{wu}uq"],
    },
];
fn all_keys() -> Vec<&'static str> {
    ROWS.iter()
        .flat_map(|row| row.keys.iter().copied())
        .collect()
}

server_tests! {
    fn each_write_reaches_a_late_replica_as_the_table_says(flavor) {
        let pair = Replicated::start(flavor);
        let mut primary = pair.primary.con();
        let mut replica = pair.replica.con();
        // A key an earlier row left with a short TTL (a rate limiter's
        // state) must not expire during a later row, whose commands would
        // then include its DEL (seen on a busy machine, where the rows take
        // longer).
        let _: () = cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).query(&mut primary).unwrap();
        for row in ROWS {
            setup(&mut primary, row);
            pair.sync();
            let _: () = cmd(&["CONFIG", "RESETSTAT"]).query(&mut replica).unwrap();
            let held = hold(&pair.replica);
            call(&mut primary, row);
            held.join().unwrap();
            pair.sync();
            let name = row.call[0].to_lowercase();
            let received: BTreeSet<String> = commands_run(&mut replica)
                .into_iter()
                .map(|(command, _)| command)
                // Only data commands: not the test's own CONFIG, CLIENT, DEBUG or
                // INFO, nor the stream's SELECT, MULTI and EXEC.
                .filter(|command| !command.contains('|') && !matches!(command.as_str(), "debug" | "ping" | "info" | "select" | "multi" | "exec" | "replconf" | "hello"))
                .collect();
            let expected: BTreeSet<String> = match row.sent {
                Sent::Verbatim => BTreeSet::from([name.clone()]),
                Sent::Effect(commands) => commands.iter().map(|c| c.to_string()).collect(),
            };
            assert_eq!(received, expected, "{}: the replica received other commands", row.case);
            assert_eq!(
                state(&mut primary, row.keys),
                state(&mut replica, row.keys),
                "{}: the replica holds another state",
                row.case
            );
        }
    }

    fn each_write_replays_from_the_aof_later_to_the_same_state(flavor) {
        let server = harness::aof_round_trip(flavor, |_, con| {
            for row in ROWS {
                setup(con, row);
                call(con, row);
            }
            // The replay comes later still: the restart, and this.
            thread::sleep(Duration::from_millis(300));
            all_keys()
        });
        drop(server);
    }

    fn a_hand_off_goes_as_the_release_then_the_grant(flavor) {
        // A release with a client waiting: the release verbatim, then the
        // waiter's grant as its effect (the replica has no queue).
        let pair = Replicated::start(flavor);
        let mut primary = pair.primary.con();
        let mut replica = pair.replica.con();
        for hand_off in HAND_OFFS {
            prepare(&mut primary, hand_off.setup);
            let waiter = Waiter::start(&pair.primary, hand_off.waiter);
            pair.sync();
            let _: () = cmd(&["CONFIG", "RESETSTAT"]).query(&mut replica).unwrap();
            let held = hold(&pair.replica);
            // 1, or RATE.FIXED's [counter, ttl].
            let released = value(&mut primary, hand_off.release);
            assert!(matches!(released, Value::Int(1) | Value::Array(_)), "{}: {released:?}", hand_off.release[0]);
            let answer = match waiter.answer() {
                Ok(Value::BulkString(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                Ok(other) => show(&other),
                Err(error) => panic!("{}: {error}", hand_off.release[0]),
            };
            assert_eq!(answer, hand_off.granted, "{}", hand_off.release[0]);
            held.join().unwrap();
            pair.sync();
            let received: BTreeSet<String> = commands_run(&mut replica)
                .into_iter()
                .map(|(command, _)| command)
                .filter(|command| command.contains('.') || command == "set")
                .collect();
            let expected: BTreeSet<String> = hand_off.received.iter().map(|c| c.to_string()).collect();
            assert_eq!(received, expected, "{}", hand_off.release[0]);
            assert_eq!(state(&mut primary, hand_off.keys), state(&mut replica, hand_off.keys), "{}", hand_off.release[0]);
        }
        let holder: String = cmd(&["GET", "{w}lock"]).query(&mut replica).unwrap();
        assert_eq!(holder, "t2");
    }

    fn a_hand_off_never_received_goes_back_as_its_effect(flavor) {
        // A release hands the key to a waiter killed before its reply went
        // out: the grant's effect, then its give-back (`DEL`, `POOL.APPLY …
        // FREE`, `IDPOOL.APPLY … FREE`), then the next waiter's grant. The
        // replica and an AOF replay end where the primary is.
        let pair = Replicated::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut primary = pair.primary.con();
        let mut replica = pair.replica.con();
        for (hand_off, gone) in HAND_OFFS.iter().zip([&["del"][..], &[], &[]]) {
            prepare(&mut primary, hand_off.setup);
            let first = Waiter::start(&pair.primary, hand_off.waiter);
            let next_words: Vec<&str> = hand_off.waiter.iter().map(|w| match *w { "t2" => "t3", "o2" => "o3", w => w }).collect();
            let next = Waiter::start(&pair.primary, &next_words);
            pair.sync();
            let _: () = cmd(&["CONFIG", "RESETSTAT"]).query(&mut replica).unwrap();
            let mut pipe = redis::pipe();
            pipe.cmd(hand_off.release[0]).arg(&hand_off.release[1..]);
            pipe.cmd("CLIENT").arg(&["KILL", "ID", &first.id.to_string()][..]);
            let answers: Vec<Value> = pipe.query(&mut primary).unwrap();
            assert_eq!(answers, [Value::Int(1), Value::Int(1)], "{}", hand_off.release[0]);
            assert!(first.answer().is_err());
            let granted = match hand_off.granted.parse::<i64>() {
                // The fencing token the killed waiter took is not reused.
                Ok(n) if hand_off.release[0] == "LOCK.RELEASEIF" => Value::Int(n + 1),
                Ok(n) => Value::Int(n),
                Err(_) => Value::BulkString(hand_off.granted.as_bytes().to_vec()),
            };
            assert_eq!(next.answer(), Ok(granted), "{}", hand_off.release[0]);
            pair.sync();
            let received: BTreeSet<String> = commands_run(&mut replica)
                .into_iter()
                .map(|(command, _)| command)
                .filter(|command| command.contains('.') || command == "set" || command == "del")
                .collect();
            let expected: BTreeSet<String> = hand_off.received.iter().chain(gone).map(|c| c.to_string()).collect();
            assert_eq!(received, expected, "{}", hand_off.release[0]);
            assert_eq!(state(&mut primary, hand_off.keys), state(&mut replica, hand_off.keys), "{}", hand_off.release[0]);
        }
        let holder: String = cmd(&["GET", "{w}lock"]).query(&mut replica).unwrap();
        assert_eq!(holder, "t3");
        let keys: Vec<&str> = HAND_OFFS.iter().flat_map(|h| h.keys.iter().copied()).collect();
        let before = state(&mut primary, &keys);
        drop(primary);
        let mut restarted = pair.primary;
        restarted.restart();
        assert_eq!(before, state(&mut restarted.con(), &keys), "the AOF restored another state");
    }

    fn the_table_covers_every_write_command(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let covered: BTreeSet<String> = ROWS.iter().map(|row| row.call[0].to_lowercase()).collect();
        for name in module_commands(&mut con) {
            let write = command_flags(&mut con, &name).iter().any(|flag| flag == "write");
            // The *.APPLY commands only carry other commands' effects.
            if write && !name.ends_with(".apply") {
                assert!(covered.contains(&name), "{name} has no row in the replication table");
            }
        }
    }
}
