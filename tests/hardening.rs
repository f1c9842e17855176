//! The module under attack, on real servers: generated bad input for every
//! command while writes are paused at random moments, and hostile text in
//! valid calls (each crash counted, the server started again to go on); one
//! valid call of every command and its exact reply; kill -9 with an AOF,
//! failover to a replica, resharding in a cluster, memory pressure and ACL
//! limits. `make test` runs these at their default sizes; `make stress` runs
//! the fuzzers longer and under valgrind.
//!
//! The fuzzers and the tests of lost writes print `STRESS <figure> <flavor>
//! <value>` lines, which `bench/stress.sh` gathers into its report.

use crate::harness;

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use harness::resp::{Client, Reply};
use harness::samples::samples;
use harness::{
    cmd, command_flags, digest, int, module_commands, ok, query, reply, show, Cluster, Connection,
    Flavor, Replicated, Server, Value,
};
use harness::{fits, in_error_catalogue};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn report(figure: &str, flavor: Flavor, value: impl std::fmt::Display) {
    println!("STRESS {figure} {} {value}", flavor.name());
}

// ---- the fuzzer ------------------------------------------------------------

/// One argument of a command as `COMMAND DOCS` describes it.
#[derive(Clone, Debug)]
struct ArgDoc {
    kind: String,
    token: Option<Vec<u8>>,
    optional: bool,
    multiple: bool,
    children: Vec<ArgDoc>,
}

#[derive(Clone)]
struct CommandDoc {
    name: String,
    args: Vec<ArgDoc>,
    tokens: Vec<Vec<u8>>,
}

/// A RESP2 map (a flat array of names and values) by name.
fn fields(reply: &Reply) -> HashMap<String, Reply> {
    reply
        .items()
        .chunks(2)
        .filter_map(|pair| match pair {
            [name, value] => Some((name.text().to_lowercase(), value.clone())),
            _ => None,
        })
        .collect()
}

fn arg_docs(reply: &Reply, tokens: &mut Vec<Vec<u8>>) -> Vec<ArgDoc> {
    reply
        .items()
        .iter()
        .map(|arg| {
            let map = fields(arg);
            let flags: Vec<String> = map
                .get("flags")
                .map_or(vec![], |f| f.items().iter().map(Reply::text).collect());
            let token = map.get("token").map(|t| t.text().into_bytes());
            if let Some(token) = &token {
                tokens.push(token.clone());
            }
            ArgDoc {
                kind: map.get("type").map(Reply::text).unwrap_or_default(),
                token,
                optional: flags.iter().any(|f| f == "optional"),
                multiple: flags.iter().any(|f| f == "multiple"),
                children: map.get("arguments").map_or(vec![], |a| arg_docs(a, tokens)),
            }
        })
        .collect()
}

/// Every command of the module, with its arguments, from the server itself.
fn discover(con: &mut Client) -> Vec<CommandDoc> {
    let list = con
        .call(&[b"COMMAND", b"LIST", b"FILTERBY", b"MODULE", b"recipes"])
        .expect("COMMAND LIST");
    let mut names: Vec<String> = list.items().iter().map(Reply::text).collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let docs = con
                .call(&[b"COMMAND", b"DOCS", name.as_bytes()])
                .expect("COMMAND DOCS");
            let doc = docs.items().get(1).map(fields).unwrap_or_default();
            let mut tokens = Vec::new();
            let args = doc
                .get("arguments")
                .map_or(vec![], |a| arg_docs(a, &mut tokens));
            CommandDoc { name, args, tokens }
        })
        .collect()
}

/// Keys of every type the fuzzer's dataset holds (and one that is absent).
const KEYS: &[&[u8]] = &[
    b"k:str",
    b"k:int",
    b"k:json",
    b"k:hash",
    b"k:list",
    b"k:set",
    b"k:zset",
    b"k:stream",
    b"k:pool",
    b"k:lock",
    b"k:ac",
    b"k:absent",
    b"",
];

const INTEGERS: &[&[u8]] = &[
    b"0",
    b"1",
    b"2",
    b"5",
    b"-1",
    b"100",
    b"60000",
    b"2147483648",
    b"4294967295",
    b"4294967296",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"9223372036854775808",
    b"18446744073709551616",
    b"1.5",
    b"01",
    b"+1",
    b"",
    b"abc",
    b"\xff",
];

/// The doubles a `double` argument meets: zeros of both signs, the largest
/// and a subnormal, infinities and NaN, and what C's strtod takes but a
/// careful parser need not (hex, a cut exponent, nothing).
const DOUBLES: &[&[u8]] = &[
    b"0", b"-0", b"1", b"-1.5", b"1e308", b"-1e308", b"1e-320", b"inf", b"-inf", b"nan", b"0x10",
    b"1e", b"",
];

fn strings() -> Vec<Vec<u8>> {
    let mut strings: Vec<Vec<u8>> = [
        &b""[..],
        b"x",
        b"hello",
        b"a b",
        b"\xff\xfe",
        b"\x00",
        b"{}",
        b"{\"a\":1,\"b\":[2]}",
        b"[1,2",
        b"slug-1",
        b"\xc3\xa9t\xc3\xa9",
        b"-_-",
        b"\r\n",
        b"%s%n",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect();
    strings.push(vec![b'y'; 1000]);
    strings
}

/// (Re)creates the dataset: a key of every type.
fn setup(con: &mut Client) {
    let calls: &[&[&[u8]]] = &[
        &[b"FLUSHALL"],
        &[b"SET", b"k:str", b"hello"],
        &[b"SET", b"k:int", b"41"],
        &[b"SET", b"k:json", b"{\"a\":1,\"b\":[2]}"],
        &[b"SET", b"k:lock", b"token"],
        &[
            b"HSET", b"k:hash", b"title", b"t", b"views", b"3", b"slug-1", b"k:hash",
        ],
        &[b"RPUSH", b"k:list", b"a", b"b"],
        &[b"SADD", b"k:set", b"a"],
        &[b"ZADD", b"k:zset", b"1", b"a"],
        &[b"XADD", b"k:stream", b"*", b"f", b"v"],
        &[b"IDPOOL.CREATE", b"k:pool", b"5", b"TTL", b"600000"],
        &[b"IDPOOL.NEXT", b"k:pool"],
        &[b"AUTOCOMPLETE.FEED", b"k:ac", b"hello", b"2"],
        &[
            b"AUTOCOMPLETE.SET",
            b"k:ac",
            b"x",
            b"1e308",
            b"PX",
            b"600000",
        ],
    ];
    for call in calls {
        let reply = con.call(call).expect("setup");
        assert!(!reply.is_error(), "setup {:?}: {}", call, reply.text());
    }
}

/// Keys about to expire are made persistent before each call (see
/// `Attacker::settled_digest`), so that the digest compared around a failing
/// call cannot change by expiry alone.
const PERSIST_SOON: &[u8] = b"for _, k in ipairs(redis.call('KEYS', '*')) do \
    local t = redis.call('PTTL', k) \
    if t >= 0 and t < 10000 then redis.call('PERSIST', k) end end return 0";

/// The words a generator fills arguments with, by the type `COMMAND DOCS`
/// gives them.
struct Palette {
    keys: Vec<Vec<u8>>,
    integers: Vec<Vec<u8>>,
    doubles: Vec<Vec<u8>>,
    strings: Vec<Vec<u8>>,
}

fn words(list: &[&[u8]]) -> Vec<Vec<u8>> {
    list.iter().map(|word| word.to_vec()).collect()
}

/// The attack palette: keys of every type, integers at and past every
/// boundary, junk text.
fn junk() -> Palette {
    Palette {
        keys: words(KEYS),
        integers: words(INTEGERS),
        doubles: words(DOUBLES),
        strings: strings(),
    }
}

struct Generator {
    commands: Vec<CommandDoc>,
    palette: Palette,
    rng: StdRng,
    /// Where the first key went in the argv being built.
    first_key: Option<usize>,
}

impl Generator {
    fn new(commands: Vec<CommandDoc>, palette: Palette, seed: u64) -> Self {
        Generator {
            commands,
            palette,
            rng: StdRng::seed_from_u64(seed),
            first_key: None,
        }
    }

    fn choose(&mut self, from: fn(&Palette) -> &Vec<Vec<u8>>) -> Vec<u8> {
        let list = from(&self.palette);
        list[self.rng.random_range(0..list.len())].clone()
    }

    fn any_word(&mut self, tokens: &[Vec<u8>]) -> Vec<u8> {
        match self.rng.random_range(0..4) {
            0 if !tokens.is_empty() => tokens[self.rng.random_range(0..tokens.len())].clone(),
            1 => self.choose(|p| &p.keys),
            2 => self.choose(|p| &p.integers),
            _ => self.choose(|p| &p.strings),
        }
    }

    fn emit(&mut self, args: &[ArgDoc], out: &mut Vec<Vec<u8>>) {
        for arg in args {
            if arg.optional && self.rng.random_bool(0.5) {
                continue;
            }
            let times = if arg.multiple {
                self.rng.random_range(1..=3)
            } else {
                1
            };
            for _ in 0..times {
                self.emit_one(arg, out);
            }
        }
    }

    fn emit_one(&mut self, arg: &ArgDoc, out: &mut Vec<Vec<u8>>) {
        if let Some(token) = &arg.token {
            out.push(token.clone());
        }
        match arg.kind.as_str() {
            "key" => {
                self.first_key.get_or_insert(out.len());
                out.push(self.choose(|p| &p.keys));
            }
            "integer" => out.push(self.choose(|p| &p.integers)),
            "double" => out.push(self.choose(|p| &p.doubles)),
            "pure-token" => {}
            "oneof" if !arg.children.is_empty() => {
                let choice = arg.children[self.rng.random_range(0..arg.children.len())].clone();
                self.emit_one(&choice, out);
            }
            "block" => {
                let children = arg.children.clone();
                self.emit(&children, out);
            }
            _ => out.push(self.choose(|p| &p.strings)),
        }
    }

    /// A command of the module with arguments after its documentation.
    fn documented(&mut self) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let at = self.rng.random_range(0..self.commands.len());
        let (name, args, tokens) = {
            let command = &self.commands[at];
            (
                command.name.clone(),
                command.args.clone(),
                command.tokens.clone(),
            )
        };
        let name = if self.rng.random_bool(0.2) {
            name.to_uppercase()
        } else {
            name
        };
        let mut argv = vec![name.into_bytes()];
        self.first_key = None;
        self.emit(&args, &mut argv);
        (argv, tokens)
    }

    /// A command of the module with arguments after its documentation, then
    /// as often as not broken: arguments dropped, added, repeated, swapped,
    /// replaced by junk, or cut short.
    fn argv(&mut self) -> Vec<Vec<u8>> {
        let (mut argv, tokens) = self.documented();
        if self.rng.random_bool(0.5) {
            for _ in 0..self.rng.random_range(1..=3) {
                let len = argv.len();
                match self.rng.random_range(0..6) {
                    0 if len > 1 => {
                        argv.remove(self.rng.random_range(1..len));
                    }
                    1 => {
                        let word = self.any_word(&tokens);
                        argv.insert(self.rng.random_range(1..=len), word);
                    }
                    2 if len > 1 => {
                        let word = argv[self.rng.random_range(1..len)].clone();
                        argv.push(word);
                    }
                    3 if len > 2 => {
                        let (a, b) = (self.rng.random_range(1..len), self.rng.random_range(1..len));
                        argv.swap(a, b);
                    }
                    4 if len > 1 => {
                        let word = self.any_word(&tokens);
                        argv[self.rng.random_range(1..len)] = word;
                    }
                    _ => argv.truncate(self.rng.random_range(1..=len)),
                }
            }
        }
        argv
    }
}

fn shown(argv: &[Vec<u8>]) -> String {
    argv.iter()
        .map(|word| format!("\"{}\"", word.escape_ascii()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Makes module calls one at a time on its own connection and checks each:
/// the server must still run and answer `DEBUG DIGEST` afterwards, an error reply must
/// be one line of valid UTF-8, and a call that failed must have left `DEBUG
/// DIGEST` unchanged. A call that blocks (a lock wait) is freed with `CLIENT
/// UNBLOCK`. A call after which the server is gone or does not answer is a
/// crash: it is recorded, and the server is started again (on a fresh
/// dataset) so that the run goes on and counts every crash.
struct Attacker<'s> {
    server: &'s mut Server,
    seed: u64,
    control: Client,
    con: Client,
    id: String,
    calls: usize,
    failed: usize,
    blocked: usize,
    /// Each crash: the seed, the call and what the server did.
    crashes: Vec<String>,
    /// Held by a [`Pauser`] while writes are paused.
    pauses: Arc<Mutex<()>>,
}

/// What a run of an [`Attacker`] came to.
struct Outcome {
    calls: usize,
    failed: usize,
    blocked: usize,
    crashes: Vec<String>,
}

/// A run stops after this many crashes: each one is reported, and more of
/// the same would only take time.
const MOST_CRASHES: usize = 10;

/// Two connections to the server: one for control, one for the calls (and
/// the latter's `CLIENT ID`).
fn connect(server: &Server) -> io::Result<(Client, Client, String)> {
    let control = Client::connect(server.port)?;
    let mut con = Client::connect(server.port)?;
    let id = con.call(&[b"CLIENT", b"ID"])?.text();
    Ok((control, con, id))
}

impl<'s> Attacker<'s> {
    fn new(server: &'s mut Server, seed: u64) -> Self {
        let (control, con, id) = connect(server).expect("connect");
        Attacker {
            server,
            seed,
            control,
            con,
            id,
            calls: 0,
            failed: 0,
            blocked: 0,
            crashes: Vec::new(),
            pauses: Arc::default(),
        }
    }

    /// Every command of the module, from `COMMAND DOCS`: each takes a key,
    /// so each has documented arguments.
    fn commands(&mut self) -> Vec<CommandDoc> {
        let commands = discover(&mut self.control);
        assert!(!commands.is_empty(), "no module command found");
        for command in &commands {
            assert!(
                !command.args.is_empty(),
                "{}: no arguments in COMMAND DOCS",
                command.name
            );
        }
        commands
    }

    fn reset(&mut self) {
        setup(&mut self.control);
    }

    /// Makes sure no key expires while a call is checked, and answers the
    /// `DEBUG DIGEST` of the data then: keys about to expire are made
    /// persistent, then a full `SCAN` has the server delete the keys whose
    /// time already passed (a key that has expired but not yet been removed
    /// would otherwise vanish from `DEBUG DIGEST` at the server's next expire
    /// cycle, as if the call had deleted it). The three commands go out
    /// together, one round trip before each call; further pages of `SCAN`
    /// and a second digest follow only when the first page does not reach
    /// the end.
    fn settled_digest(&mut self) -> io::Result<Reply> {
        let cursor_of = |page: &Reply| {
            page.items()
                .first()
                .map(Reply::text)
                .unwrap_or_default()
                .into_bytes()
        };
        self.control.send_all(&[
            &[b"EVAL", PERSIST_SOON, b"0"],
            &[b"SCAN", b"0", b"COUNT", b"1000"],
            &[b"DEBUG", b"DIGEST"],
        ])?;
        self.control.read()?;
        let mut cursor = cursor_of(&self.control.read()?);
        let digest = self.control.read()?;
        if cursor == b"0" {
            return Ok(digest);
        }
        while cursor != b"0" {
            cursor = cursor_of(&self.control.call(&[b"SCAN", &cursor, b"COUNT", b"1000"])?);
        }
        self.control.call(&[b"DEBUG", b"DIGEST"])
    }

    /// Makes one call and checks it; `None` when the server crashed.
    fn call(&mut self, argv: &[Vec<u8>]) -> Option<Reply> {
        let call = self.calls;
        self.calls += 1;
        match self.attempt(argv, call) {
            Ok(reply) => Some(reply),
            Err(what) => {
                self.crashes.push(format!(
                    "seed {}, call {call}: the server failed after {}: {what}",
                    self.seed,
                    shown(argv)
                ));
                self.recover();
                None
            }
        }
    }

    /// Makes one call and checks it; `Err` says how the server failed.
    fn attempt(&mut self, argv: &[Vec<u8>], call: usize) -> Result<Reply, String> {
        let failed = |error: io::Error| error.to_string();
        let before = self.settled_digest().map_err(failed)?;
        let words: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        // The call and a digest of the data after it go out together (one
        // round trip a call less): the digest's reply also shows the server
        // still answers on the call's connection.
        self.con
            .send_all(&[&words, &[b"DEBUG", b"DIGEST"]])
            .map_err(failed)?;
        // No pause begins while this is decided: a call held by a pause runs
        // once the server sees the pause ended (Redis 7.0 only notices at its
        // next cron, up to 100 ms later); unblocking it instead would answer
        // it twice.
        let pauses = Arc::clone(&self.pauses);
        let no_pause = pauses.lock().unwrap_or_else(|e| e.into_inner());
        let started = |con: &mut Client, ms| con.reply_started(Duration::from_millis(ms));
        if !started(&mut self.con, 20).map_err(failed)?
            && !started(&mut self.con, 200).map_err(failed)?
        {
            // Blocked (a lock wait): unblock it; 0 if it was only slow.
            let unblocked = self
                .control
                .call(&[b"CLIENT", b"UNBLOCK", self.id.as_bytes(), b"ERROR"])
                .map_err(failed)?;
            if unblocked == Reply::Int(1) {
                self.blocked += 1;
            }
        }
        drop(no_pause);
        let reply = self.con.read().map_err(failed)?;
        let after = match self.con.read() {
            Ok(Reply::Status(digest)) => Reply::Status(digest),
            other => return Err(format!("DEBUG DIGEST answered {other:?}")),
        };
        if !self.server.alive() {
            return Err("the process exited".to_string());
        }
        let seed = self.seed;
        if let Reply::Error(text) = &reply {
            self.failed += 1;
            assert!(
                std::str::from_utf8(text).is_ok(),
                "seed {seed}, call {call}: {} answered an error that is not UTF-8: {}",
                shown(argv),
                text.escape_ascii()
            );
            assert_eq!(
                before,
                after,
                "seed {seed}, call {call}: {} failed ({}) but changed data",
                shown(argv),
                reply.text()
            );
            // Every error is the catalogue's (`docs/spec.json`), or the
            // server's own answer to `CLIENT UNBLOCK … ERROR`.
            let text = reply.text();
            assert!(
                in_error_catalogue(&text) || text.starts_with("UNBLOCKED "),
                "seed {seed}, call {call}: {} answered an error that is not in \
                 the catalogue: {text}",
                shown(argv)
            );
        }
        Ok(reply)
    }

    /// After a crash: the server started again, new connections, the
    /// dataset made again.
    fn recover(&mut self) {
        self.server.kill9();
        self.server.start_again();
        (self.control, self.con, self.id) = connect(self.server).expect("connect after a restart");
        self.reset();
    }

    /// The run's figures; checks that the server still runs.
    fn finish(mut self) -> Outcome {
        if !self.server.alive() {
            self.crashes
                .push(format!("seed {}: the server is gone at the end", self.seed));
        }
        Outcome {
            calls: self.calls,
            failed: self.failed,
            blocked: self.blocked,
            crashes: self.crashes,
        }
    }
}

/// Fails the test if the server crashed or a command panicked (the module
/// catches a panic and logs it).
fn assert_no_crash(server: &Server, outcome: &Outcome) {
    assert!(
        outcome.crashes.is_empty(),
        "{} crash(es):\n{}\nlog:\n{}",
        outcome.crashes.len(),
        outcome.crashes.join("\n"),
        server.log()
    );
    assert!(
        !server.log().contains("panic"),
        "a command panicked:\n{}",
        server.log()
    );
}

/// Pauses the server's writes (`CLIENT PAUSE ms WRITE`, 5 to 60 ms) at
/// random moments until dropped, as `FAILOVER`, a cluster failover or a
/// shutdown waiting for replicas do: leases end, waits run out and
/// hand-offs fall due inside pauses. Holds `gate` during each pause; counts
/// the pauses. Connects again after a crash of the server.
struct Pauser {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<usize>>,
}

impl Pauser {
    fn start(port: u16, seed: u64, gate: Arc<Mutex<()>>) -> Pauser {
        let stop = Arc::new(AtomicBool::new(false));
        let mut con = Client::connect(port).expect("connect");
        let stopped = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut pauses = 0;
            while !stopped.load(Ordering::Relaxed) {
                thread::sleep(Duration::from_millis(rng.random_range(20..300)));
                let ms = rng.random_range(5..=60);
                let _pausing = gate.lock().unwrap_or_else(|e| e.into_inner());
                let pause = ms.to_string();
                match con.call(&[b"CLIENT", b"PAUSE", pause.as_bytes(), b"WRITE"]) {
                    Ok(Reply::Status(_)) => pauses += 1,
                    _ => {
                        if let Ok(again) = Client::connect(port) {
                            con = again;
                        }
                    }
                }
                // Until the server's pause is over.
                thread::sleep(Duration::from_millis(ms + 5));
            }
            pauses
        });
        Pauser {
            stop,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .map_or(0, |thread| thread.join().unwrap_or(0))
    }
}

impl Drop for Pauser {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Runs `calls` generated commands, broken as often as not, through an
/// [`Attacker`], while writes pause now and then (the pauses counted).
fn fuzz_module(server: &mut Server, seed: u64, calls: usize) -> (Outcome, usize) {
    let pauses: Arc<Mutex<()>> = Arc::default();
    let pauser = Pauser::start(server.port, seed, Arc::clone(&pauses));
    let mut attacker = Attacker::new(server, seed);
    attacker.pauses = pauses;
    let mut generator = Generator::new(attacker.commands(), junk(), seed);
    for call in 0..calls {
        if attacker.crashes.len() >= MOST_CRASHES {
            break;
        }
        if call.is_multiple_of(500) {
            attacker.reset();
        }
        attacker.call(&generator.argv());
    }
    let pauses = pauser.finish();
    (attacker.finish(), pauses)
}

/// Keys for the hostile-text run: few, so that calls meet each other's
/// state; all in one hash slot.
const HOSTILE_KEYS: &[&[u8]] = &[
    "{h}가".as_bytes(),
    "{h}一".as_bytes(),
    "{h}Ā😀".as_bytes(),
    b"{h}caf\xe9",
    b"{h}\r\n",
    b"{h}\x00",
    b"{h}%s%n",
];

/// Integers a valid call takes: small and positive.
const VALID_INTEGERS: &[&[u8]] = &[b"1", b"2", b"3", b"5", b"10", b"100", b"60000"];

/// Doubles a valid call takes.
const VALID_DOUBLES: &[&[u8]] = &[b"1", b"0.5", b"-2", b"1e3"];

/// Text that has broken servers' reply and log lines: characters whose code
/// point is a multiple of 256, other multi-byte UTF-8, invalid UTF-8, NUL,
/// line breaks, format directives, hash tags, and lengths past every cut.
/// Several are valid slugs, so the slug paths are reached.
fn hostile_strings() -> Vec<Vec<u8>> {
    let mut texts = words(&[
        "가".as_bytes(),
        "一".as_bytes(),
        "Ā".as_bytes(),
        "😀".as_bytes(),
        "café".as_bytes(),
        "日本語-slug_1".as_bytes(),
        "\u{202e}\u{feff}".as_bytes(),
        b"caf\xe9",
        b"\xff\xfe",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\x00",
        b"a\x00b",
        b"\r\n",
        b"x\r\ny",
        b"%s%n%p",
        b"{h}",
        b"{\"a\":\"\xc3\xa9\\u0000\"}",
    ]);
    texts.push("가".repeat(70).into_bytes());
    texts.push("一".repeat(201).into_bytes());
    texts.push(vec![b'x'; 10_000]);
    texts
}

fn hostile() -> Palette {
    Palette {
        keys: words(HOSTILE_KEYS),
        integers: words(VALID_INTEGERS),
        doubles: words(VALID_DOUBLES),
        strings: hostile_strings(),
    }
}

/// Valid calls of every command (from `COMMAND DOCS`) with hostile text in
/// every string and key position, each made twice: the second time with
/// another key first, so that it meets the state the first call left (a
/// taken slug, a held lock, an existing record or pool) — the paths that
/// quote a client's text back. Returns the outcome and how many SLUGTAKEN
/// errors it saw.
fn fuzz_hostile_text(server: &mut Server, seed: u64, calls: usize) -> (Outcome, usize) {
    let mut attacker = Attacker::new(server, seed);
    let commands = attacker.commands();
    // The commands that take a slug (a SLUG token, or a slug in their
    // name) also get one pair in four of their own: the paths that quote
    // a taken slug back stay reached however many families the module has.
    let slugged: Vec<CommandDoc> = commands
        .iter()
        .filter(|doc| {
            doc.name.contains("slug") || doc.tokens.iter().any(|t| t.eq_ignore_ascii_case(b"SLUG"))
        })
        .cloned()
        .collect();
    assert!(!slugged.is_empty(), "no command takes a slug");
    let mut generator = Generator::new(commands, hostile(), seed);
    let mut slug_generator = Generator::new(slugged, hostile(), seed ^ 0x5106);
    let mut slug_taken = 0;
    let mut pairs = 0usize;
    while attacker.calls < calls && attacker.crashes.len() < MOST_CRASHES {
        // Few keys fill up fast; an empty start now and then lets creates
        // succeed, so that the second call of a pair meets what they made.
        if attacker.calls.is_multiple_of(40) {
            let _ = attacker.control.call(&[b"FLUSHALL"]);
        }
        pairs += 1;
        let generator = if pairs.is_multiple_of(4) {
            &mut slug_generator
        } else {
            &mut generator
        };
        let (mut argv, _) = generator.documented();
        let first_key = generator.first_key;
        for round in 0..2 {
            if round == 1 {
                let Some(at) = first_key else { break };
                let other = loop {
                    let key = generator.choose(|p| &p.keys);
                    if key != argv[at] {
                        break key;
                    }
                };
                argv[at] = other;
            }
            if let Some(Reply::Error(text)) = attacker.call(&argv) {
                if text.starts_with(b"SLUGTAKEN") {
                    slug_taken += 1;
                }
            }
        }
    }
    (attacker.finish(), slug_taken)
}

fn hostile_calls() -> usize {
    std::env::var("HOSTILE_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(6_000)
}

fn fuzz_calls() -> usize {
    std::env::var("FUZZ_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000)
}

fn fuzz_seed() -> u64 {
    std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0x5eed_2026)
}

// ---- one valid call of every command ---------------------------------------
// (`tests/samples/<family>.txt`, read by `harness/samples.rs`)

/// The words of a sample call, as the connection takes them.
fn sample_words(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

/// Makes the data the sample calls expect, checking each setup reply.
fn sample_data(con: &mut Connection) {
    for (setup, expected) in samples().setup {
        assert_eq!(
            &answer(con, &sample_words(&setup)),
            &expected,
            "setup {setup:?}"
        );
    }
}

/// [`sample_data`] in one round trip, from the samples' `setup` read once
/// (the edge run sets it up thousands of times): each reply as the samples
/// expect it.
fn sample_data_pipelined(con: &mut Connection, setup: &[(Vec<String>, String)]) {
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for (words, _) in setup {
        pipe.add_command(cmd(&sample_words(words)));
    }
    let replies: Vec<Value> = pipe.query(con).expect("the samples' setup");
    for ((words, expected), value) in setup.iter().zip(replies) {
        let shown = match value {
            Value::ServerError(e) => format!("!{} {}", e.code(), e.details().unwrap_or_default()),
            value => show(&value),
        };
        assert_eq!(&shown, expected, "setup {words:?}");
    }
}

/// A call's reply as [`show`] renders it, an error as `!CODE detail`.
fn answer(con: &mut Connection, words: &[&str]) -> String {
    match reply(con, words) {
        Ok(value) => show(&value),
        Err(error) => format!("!{error}"),
    }
}

/// Whether a command has `flag` (`COMMAND INFO`).
fn has_flag(con: &mut Connection, command: &str, flag: &str) -> bool {
    command_flags(con, command).iter().any(|f| f == flag)
}

server_tests! {
    fn generated_arguments_never_crash_or_half_write(flavor) {
        let mut server = Server::start(flavor);
        let calls = fuzz_calls();
        let (outcome, pauses) = fuzz_module(&mut server, fuzz_seed(), calls);
        report("calls_fuzzed", flavor, outcome.calls);
        report("calls_failed", flavor, outcome.failed);
        report("calls_blocked", flavor, outcome.blocked);
        report("crashes", flavor, outcome.crashes.len());
        assert_no_crash(&server, &outcome);
        assert_eq!(outcome.calls, calls);
        assert!(
            outcome.failed > calls / 10 && outcome.failed < calls,
            "{} of {calls} calls failed: the generator is off",
            outcome.failed
        );
        assert!(pauses > 0, "writes were never paused");
        // About one call in two thousand waits for a lock.
        if calls >= 10_000 {
            assert!(outcome.blocked > 0, "no call waited for a lock");
        }
    }

    fn hostile_text_in_every_argument_never_crashes_or_garbles(flavor) {
        let mut server = Server::start(flavor);
        let (outcome, slug_taken) = fuzz_hostile_text(&mut server, fuzz_seed(), hostile_calls());
        report("hostile_calls", flavor, outcome.calls);
        report("hostile_calls_failed", flavor, outcome.failed);
        report("hostile_calls_blocked", flavor, outcome.blocked);
        report("hostile_slug_taken", flavor, slug_taken);
        report("hostile_crashes", flavor, outcome.crashes.len());
        assert_no_crash(&server, &outcome);
        // The second call of a pair meets a slug the first one took.
        if outcome.calls >= 2_000 {
            assert!(slug_taken > 0, "no call met a taken slug");
            assert!(outcome.failed < outcome.calls, "every call failed: the generator is off");
        }
    }

    /// The crash count is real: a call after which the server is gone
    /// (`SHUTDOWN NOSAVE` stands in for a crash) is counted, the server is
    /// started again on a fresh dataset, and the run goes on.
    fn a_crash_is_counted_and_the_run_goes_on(flavor) {
        let mut server = Server::start(flavor);
        let mut attacker = Attacker::new(&mut server, 7);
        attacker.reset();
        let next = [b"IDGEN.NEXT".to_vec(), b"k:gen".to_vec()];
        assert_eq!(attacker.call(&next), Some(Reply::Int(1)));
        assert_eq!(attacker.call(&next), Some(Reply::Int(2)));
        assert_eq!(attacker.call(&[b"SHUTDOWN".to_vec(), b"NOSAVE".to_vec()]), None);
        assert_eq!(attacker.call(&next), Some(Reply::Int(1)), "a fresh dataset");
        let outcome = attacker.finish();
        assert_eq!((outcome.calls, outcome.failed, outcome.blocked), (4, 0, 0));
        assert_eq!(outcome.crashes.len(), 1, "{:?}", outcome.crashes);
        let crash = &outcome.crashes[0];
        assert!(
            crash.starts_with("seed 7, call 2: the server failed after \"SHUTDOWN\" \"NOSAVE\": "),
            "{crash}"
        );
        assert!(server.alive());
        assert_eq!(int(&mut server.con(), &["IDGEN.CURRENT", "k:gen"]), 1);
    }

    /// The OOM and ACL tests rely on these calls: each answers exactly its
    /// sample's reply on a fresh dataset; a read changes nothing, a write
    /// changes the data exactly when it succeeds.
    fn sample_calls_answer_as_written_for_every_command(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let samples = samples();
        let sampled: Vec<&str> = samples.calls.iter().map(|(name, _, _)| name.as_str()).collect();
        assert_eq!(
            module_commands(&mut con),
            sampled,
            "tests/samples holds one call of every command"
        );
        for (name, words, expected) in &samples.calls {
            let words = sample_words(words);
            ok(&mut con, &["FLUSHALL"]);
            sample_data(&mut con);
            let before = harness::dataset(&mut con);
            assert_eq!(&answer(&mut con, &words), expected, "{words:?}");
            let changed = harness::dataset(&mut con) != before;
            let read = has_flag(&mut con, name, "readonly");
            let succeeded = !expected.starts_with('!');
            assert_eq!(changed, !read && succeeded, "{words:?}: changed the data: {changed}");
        }
    }

    fn kill_9_loses_nothing_acknowledged(flavor) {
        let mut server = Server::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut con = server.con();
        let _: () = cmd(&["IDPOOL.CREATE", "pool", "1000000"]).query(&mut con).unwrap();
        let port = server.port;
        let stop = Arc::new(AtomicBool::new(false));
        let clients: Vec<_> = (0..4)
            .map(|t| {
                let stop = stop.clone();
                thread::spawn(move || {
                    let mut acked: Vec<(String, Vec<String>)> = Vec::new();
                    let Ok(mut con) = Client::connect(port) else { return acked };
                    for i in 0.. {
                        if stop.load(Ordering::SeqCst) && i % 5 == 0 {
                            break;
                        }
                        let (key, token) = (format!("k9:{t}:{i}"), format!("tok-{t}-{i}"));
                        let calls: [Vec<String>; 5] = [
                            vec!["IDGEN.NEXT".into(), "gen".into()],
                            vec!["LOCK.ACQUIRE".into(), format!("{key}:lock"), token.clone(), "PX".into(), "600000".into()],
                            vec!["ARTICLE.CREATE".into(), format!("{key}:art"), "title".into(), token.clone(), "author".into()],
                            vec!["IDPOOL.NEXT".into(), "pool".into()],
                            vec!["CACHE.SETJSON".into(), format!("{key}:json"), format!("{{\"t\":\"{token}\"}}")],
                        ];
                        let call = &calls[i % 5];
                        let words: Vec<&[u8]> = call.iter().map(|w| w.as_bytes()).collect();
                        match con.call(&words) {
                            Ok(reply) if !reply.is_error() => {
                                let mut record = call.clone();
                                record.push(reply.text());
                                acked.push((call[0].clone(), record));
                            }
                            _ => break,
                        }
                    }
                    acked
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(400));
        server.kill9();
        stop.store(true, Ordering::SeqCst);
        let acked: Vec<(String, Vec<String>)> = clients.into_iter().flat_map(|c| c.join().unwrap()).collect();
        assert!(acked.len() > 100, "only {} writes before the kill", acked.len());
        server.start_again();
        let mut con = server.con();
        let mut lost = 0;
        let mut ids = HashSet::new();
        let mut leases = HashSet::new();
        for (command, record) in &acked {
            let answer = record.last().unwrap();
            let kept = match command.as_str() {
                "IDGEN.NEXT" => {
                    assert!(ids.insert(answer.clone()), "ID {answer} handed out twice");
                    int(&mut con, &["IDGEN.CURRENT", "gen"]) >= answer.parse::<i64>().unwrap()
                }
                "LOCK.ACQUIRE" => {
                    let holder: Option<String> = cmd(&["GET", &record[1]]).query(&mut con).unwrap();
                    holder.as_deref() == Some(record[2].as_str())
                }
                "ARTICLE.CREATE" => {
                    let content: Option<String> = cmd(&["HGET", &record[1], "content"]).query(&mut con).unwrap();
                    content.as_deref() == Some(record[3].as_str())
                }
                "IDPOOL.NEXT" => {
                    assert!(leases.insert(answer.clone()), "pool ID {answer} handed out twice");
                    int(&mut con, &["IDPOOL.RENEW", "pool", answer, "600000"]) == 1
                }
                _ => {
                    let json: Option<String> = cmd(&["GET", &record[1]]).query(&mut con).unwrap();
                    json.as_deref() == Some(record[2].as_str())
                }
            };
            if !kept {
                lost += 1;
                eprintln!("lost after kill -9: {record:?}");
            }
        }
        // Nothing is handed out again after the restart.
        let next = int(&mut con, &["IDGEN.NEXT", "gen"]).to_string();
        assert!(!ids.contains(&next), "ID {next} repeated after the restart");
        for _ in 0..100 {
            let id = int(&mut con, &["IDPOOL.NEXT", "pool"]).to_string();
            assert!(!leases.contains(&id), "pool ID {id} repeated after the restart");
        }
        report("acknowledged_writes", flavor, acked.len());
        report("acknowledged_writes_lost", flavor, lost);
        assert_eq!(lost, 0);
    }

    fn failover_repeats_no_id_and_keeps_every_lock(flavor) {
        let mut pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let acked = |con: &mut Connection| {
            let replicas: i64 = cmd(&["WAIT", "1", "5000"]).query(con).unwrap();
            assert_eq!(replicas, 1, "the replica did not acknowledge");
        };
        let mut ids = Vec::new();
        for _ in 0..200 {
            ids.push(int(&mut con, &["IDGEN.NEXT", "orders"]));
            acked(&mut con);
        }
        let _: () = cmd(&["IDPOOL.CREATE", "seats", "500", "TTL", "600000"]).query(&mut con).unwrap();
        let mut leased = HashSet::new();
        for _ in 0..300 {
            leased.insert(int(&mut con, &["IDPOOL.NEXT", "seats"]));
        }
        for id in 1..=50 {
            assert_eq!(int(&mut con, &["IDPOOL.RELEASE", "seats", &id.to_string()]), 1);
            leased.remove(&id);
        }
        acked(&mut con);
        let mut locks = Vec::new();
        for i in 0..20 {
            let (key, token) = (format!("lock:{i}"), format!("worker-{i}"));
            let _: () = cmd(&["LOCK.ACQUIRE", &key, &token, "PX", "600000"]).query(&mut con).unwrap();
            let expiry = int(&mut con, &["PEXPIRETIME", &key]);
            locks.push((key, token, expiry));
        }
        acked(&mut con);
        pair.primary.kill9();
        let mut promoted = pair.replica.con();
        let _: () = cmd(&["REPLICAOF", "NO", "ONE"]).query(&mut promoted).unwrap();
        let mut repeated = 0;
        let next = int(&mut promoted, &["IDGEN.NEXT", "orders"]);
        if ids.contains(&next) {
            repeated += 1;
        }
        assert_eq!(next, ids.iter().max().unwrap() + 1);
        let free = 500 - leased.len();
        for _ in 0..free {
            let id = int(&mut promoted, &["IDPOOL.NEXT", "seats"]);
            if leased.contains(&id) {
                repeated += 1;
            }
        }
        let full: Option<i64> = cmd(&["IDPOOL.NEXT", "seats"]).query(&mut promoted).unwrap();
        assert_eq!(full, None, "every acknowledged lease survived, so the pool is full");
        for (key, token, expiry) in &locks {
            let holder: Option<String> = cmd(&["GET", key]).query(&mut promoted).unwrap();
            assert_eq!(holder.as_deref(), Some(token.as_str()), "{key}");
            assert_eq!(int(&mut promoted, &["PEXPIRETIME", key]), *expiry, "{key}");
        }
        report("ids_repeated_after_failover", flavor, repeated);
        assert_eq!(repeated, 0);
    }

    fn resharding_moves_every_recipe_intact(flavor) {
        let cluster = Cluster::start(flavor);
        let mut node = cluster.nodes[0].con();
        // Hash tags in the lowest slots, which `--cluster reshard` moves first.
        let low_tags: Vec<String> = (0..10_000)
            .map(|n| format!("t{n}"))
            .filter(|tag| int(&mut node, &["CLUSTER", "KEYSLOT", &format!("{{{tag}}}")]) < 100)
            .take(3)
            .collect();
        let [pool, lock, article] = [0, 1, 2].map(|i| low_tags[i].clone());
        let keys = [
            format!("{{{pool}}}:pool"),
            format!("{{{lock}}}:lock"),
            format!("{{{lock}}}:fence"),
            format!("{{{article}}}:art"),
            format!("{{{article}}}:slugs"),
        ];
        let mut con = cluster.client();
        let _: () = cmd(&["IDPOOL.CREATE", &keys[0], "100", "TTL", "600000"]).query(&mut con).unwrap();
        for expected in 1..=10 {
            assert_eq!(int(&mut con, &["IDPOOL.NEXT", &keys[0]]), expected);
        }
        assert_eq!(int(&mut con, &["IDPOOL.RELEASE", &keys[0], "4"]), 1);
        let _: () = cmd(&["LOCK.ACQUIRE", &keys[1], "worker-1", "PX", "600000", "FENCE", &keys[2]]).query(&mut con).unwrap();
        let _: Value = cmd(&["ARTICLE.CREATE", &keys[3], "title", "body", "peter", "SLUG", &keys[4], "hello"]).query(&mut con).unwrap();
        let snapshot = |con: &mut redis::cluster::ClusterConnection| -> Vec<(Option<Vec<u8>>, i64)> {
            keys.iter()
                .map(|key| {
                    let dump: Option<Vec<u8>> = cmd(&["DUMP", key]).query(con).unwrap();
                    (dump, int(con, &["PEXPIRETIME", key]))
                })
                .collect()
        };
        let before = snapshot(&mut con);
        let ids: Vec<String> = cluster
            .nodes
            .iter()
            .map(|n| {
                let id: String = cmd(&["CLUSTER", "MYID"]).query(&mut n.con()).unwrap();
                id
            })
            .collect();
        let status = std::process::Command::new(harness::redis_cli())
            .args(["--cluster", "reshard", &format!("127.0.0.1:{}", cluster.nodes[0].port)])
            .args(["--cluster-from", &ids[0], "--cluster-to", &ids[1], "--cluster-slots", "100", "--cluster-yes"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("redis-cli --cluster reshard");
        assert!(status.success());
        // The keys now live on the second node.
        let mut target = cluster.nodes[1].con();
        for key in &keys {
            assert_eq!(int(&mut target, &["EXISTS", key]), 1, "{key} did not move");
        }
        let after = snapshot(&mut con);
        // Values must be identical. MIGRATE carries a key's TTL as a relative
        // time, so the absolute expiry may move by the time the move took.
        let differing = before
            .iter()
            .zip(&after)
            .filter(|((dump, at), (dump_after, at_after))| dump != dump_after || (at - at_after).abs() > 1_000)
            .count();
        report("keys_differing_after_resharding", flavor, differing);
        assert_eq!(differing, 0);
        // And the recipes keep working through a cluster client.
        assert_eq!(int(&mut con, &["IDPOOL.NEXT", &keys[0]]), 11);
        assert_eq!(int(&mut con, &["LOCK.RELEASEIF", &keys[1], "worker-1"]), 1);
        let owner: String = cmd(&["ARTICLE.BYSLUG", &keys[4], "hello"]).query(&mut con).unwrap();
        assert_eq!(owner, keys[3]);
    }

    fn writes_refused_under_memory_pressure_change_nothing(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        sample_data(&mut con);
        ok(&mut con, &["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
        ok(&mut con, &["CONFIG", "SET", "maxmemory", "1"]);
        let before = digest(&mut con);
        let mut refused = 0;
        for (name, words, _) in samples().calls {
            if !has_flag(&mut con, &name, "denyoom") {
                continue;
            }
            let words = sample_words(&words);
            let error = reply(&mut con, &words).err();
            assert!(error.as_deref().is_some_and(|e| e.starts_with("OOM")), "{words:?}: {error:?}");
            assert_eq!(digest(&mut con), before, "{words:?} changed data while refused");
            refused += 1;
        }
        assert!(refused >= 10, "only {refused} commands are deny-oom");
        // The article still has its slug, and writes work again with memory.
        let owner: String = cmd(&["ARTICLE.BYSLUG", "app:slugs", "s1"]).query(&mut con).unwrap();
        assert_eq!(owner, "app:art");
        ok(&mut con, &["CONFIG", "SET", "maxmemory", "0"]);
        assert_eq!(int(&mut con, &["IDGEN.NEXT", "app:gen"]), 1);
    }

    fn acl_limits_reach_module_commands(flavor) {
        let server = Server::start(flavor);
        let mut admin = server.con();
        sample_data(&mut admin);
        for rule in [
            vec!["ACL", "SETUSER", "reader", "on", ">pw", "+@read", "~*"],
            vec!["ACL", "SETUSER", "app", "on", ">pw", "+@all", "~app:*"],
        ] {
            let _: () = cmd(&rule).query(&mut admin).unwrap();
        }
        let login = |user: &str| {
            redis::Client::open(format!("redis://{user}:pw@127.0.0.1:{}/", server.port))
                .unwrap()
                .get_connection()
                .unwrap()
        };
        let categories = flavor.has_module_acl_categories(&mut admin);
        let before = digest(&mut admin);
        // A reader runs no write command; reads only where modules can
        // give their commands categories (Redis 7.0 cannot: none at all).
        let mut reader = login("reader");
        for (name, words, _) in samples().calls {
            let words = sample_words(&words);
            let error = reply(&mut reader, &words).err();
            let write = has_flag(&mut admin, &name, "write");
            if write || !categories {
                assert!(error.as_deref().is_some_and(|e| e.starts_with("NOPERM")), "reader ran {words:?}: {error:?}");
            } else {
                assert!(error.is_none(), "reader refused {words:?}: {error:?}");
            }
        }
        assert_eq!(digest(&mut admin), before);
        // Key patterns hold for every key a module command touches.
        let mut app = login("app");
        for words in [
            vec!["IDGEN.NEXT", "other:gen"],
            vec!["LOCK.ACQUIRE", "app:l", "t", "FENCE", "other:fence"],
            vec!["ARTICLE.CREATE", "app:a", "t", "c", "a", "SLUG", "other:slugs", "s"],
            vec!["ARTICLE.BYSLUG", "other:slugs", "s1"],
            vec!["CACHE.SETJSON", "other:json", "1"],
            vec!["IDPOOL.CREATE", "other:pool", "5"],
            vec!["IDPOOL.INFO", "other:pool"],
        ] {
            let error = reply(&mut app, &words).err();
            assert!(error.as_deref().is_some_and(|e| e.starts_with("NOPERM")), "app ran {words:?}: {error:?}");
        }
        assert_eq!(digest(&mut admin), before);
        assert_eq!(int(&mut app, &["IDGEN.NEXT", "app:gen"]), 1);
        // The categories COMMAND INFO gives.
        if categories {
            let members = |category: &str, admin: &mut Connection| -> HashSet<String> {
                cmd(&["ACL", "CAT", category]).query(admin).unwrap()
            };
            for (category, expected) in [
                ("write", &["idgen.next", "lock.acquire", "article.create", "cache.setjson", "idpool.next", "idpool.create", "rate.limit", "rate.reset"][..]),
                ("read", &["idgen.current", "article.get", "article.byslug", "cache.getjson", "idpool.info", "rate.peek"][..]),
                ("fast", &["idgen.next", "lock.releaseif", "article.view", "idpool.next", "idpool.info", "rate.limit", "rate.peek", "rate.reset"][..]),
                ("hash", &["article.create", "article.get", "cache.hset"][..]),
                ("string", &["cache.setjson", "cache.getjson"][..]),
                ("blocking", &["lock.acquire"][..]),
            ] {
                let found = members(category, &mut admin);
                for name in expected {
                    assert!(found.contains(*name), "{name} is not in @{category}");
                }
            }
        }
    }
}

// ---- every integer argument at its edges ------------------------------------

/// The calls the edge run makes of one sample: the sample itself, and the
/// sample with each optional argument `COMMAND DOCS` documents that it
/// lacks (a flag such as `ADD`, or a tokened integer such as `WAIT 1000` or
/// `TTL 1000`), so that a flag changing what an integer means (`ADD` sums
/// two leases) meets every edge too.
fn variants(words: &[String], doc: &CommandDoc) -> Vec<Vec<String>> {
    let has = |token: &[u8]| {
        words
            .iter()
            .any(|w| w.as_bytes().eq_ignore_ascii_case(token))
    };
    let with = |extra: &[&[u8]]| {
        let mut call = words.to_vec();
        call.extend(
            extra
                .iter()
                .map(|w| String::from_utf8_lossy(w).into_owned()),
        );
        call
    };
    let mut calls = vec![words.to_vec()];
    for arg in doc.args.iter().filter(|arg| arg.optional) {
        let tokens: Vec<&ArgDoc> = std::iter::once(arg).chain(&arg.children).collect();
        if tokens.iter().any(|a| a.token.as_deref().is_some_and(has)) {
            continue;
        }
        match (arg.kind.as_str(), &arg.token) {
            ("pure-token", Some(token)) => calls.push(with(&[token])),
            ("integer", Some(token)) => calls.push(with(&[token, b"1000"])),
            ("oneof", _) => {
                for child in &arg.children {
                    match (child.kind.as_str(), &child.token) {
                        ("pure-token", Some(token)) => calls.push(with(&[token])),
                        ("integer", Some(token)) => calls.push(with(&[token, b"1000"])),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    calls
}

/// The integers one argument meets: 0, 1, -1, its sample value, the largest
/// it accepts and one more (with a margin below for a time that moves), and
/// the ends of the signed and unsigned 64-bit ranges and one past them.
fn edges(sample: i128, largest: i128) -> Vec<i128> {
    let mut values = vec![
        0,
        1,
        -1,
        sample,
        largest,
        largest + 1,
        i128::from(i64::MAX),
        i128::from(i64::MAX) + 1,
        i128::from(u64::MAX) + 1,
    ];
    if largest > 2_000_000 {
        values.push(largest - 1_000_000);
    }
    values.sort_unstable();
    values.dedup();
    values
}

/// A server and its replica under the edge run: the calls go on a raw
/// connection (a call that waits is unblocked after a moment), the checks
/// on another.
struct EdgeRun<'p> {
    pair: &'p Replicated,
    con: Connection,
    calls: Client,
    calls_id: String,
    /// The samples' setup (`samples()` reads the files).
    setup: Vec<(Vec<String>, String)>,
    accepted: usize,
    round_trips: usize,
}

impl<'p> EdgeRun<'p> {
    fn new(pair: &'p Replicated) -> Self {
        let mut calls = Client::connect(pair.primary.port).expect("connect");
        let calls_id = calls.call(&[b"CLIENT", b"ID"]).expect("CLIENT ID").text();
        EdgeRun {
            pair,
            con: pair.primary.con(),
            calls,
            calls_id,
            setup: samples().setup,
            accepted: 0,
            round_trips: 0,
        }
    }

    /// An empty dataset but for the samples' setup.
    fn fresh(&mut self) {
        ok(&mut self.con, &["FLUSHALL"]);
        sample_data_pipelined(&mut self.con, &self.setup);
    }

    /// The reply to `argv`; a call that waits (it was accepted) is
    /// unblocked once the server shows it blocked (`CLIENT LIST`'s flag `b`),
    /// or after 300 ms without a reply. Unblocking at 300 ms alone made the
    /// waits a third of the run's time.
    fn call(&mut self, argv: &[String]) -> Reply {
        let words: Vec<&[u8]> = argv.iter().map(|w| w.as_bytes()).collect();
        self.calls.send(&words).expect("send");
        let deadline = Instant::now() + Duration::from_millis(300);
        while !self
            .calls
            .reply_started(Duration::from_millis(2))
            .expect("read")
        {
            if Instant::now() >= deadline || self.blocked() {
                int(&mut self.con, &["CLIENT", "UNBLOCK", &self.calls_id]);
                break;
            }
        }
        self.calls.read().expect("a reply")
    }

    /// Whether the calls' connection is blocked in the server.
    fn blocked(&mut self) -> bool {
        let line: String = query(&mut self.con, &["CLIENT", "LIST", "ID", &self.calls_id]);
        line.split(' ')
            .find_map(|field| field.strip_prefix("flags="))
            .is_some_and(|flags| flags.contains('b'))
    }

    /// Whether the sample call with `value` at `at` is accepted on the
    /// samples' data.
    fn accepts(&mut self, call: &[String], at: usize, value: i128) -> bool {
        self.fresh();
        let mut call = call.to_vec();
        call[at] = value.to_string();
        !self.call(&call).is_error()
    }

    /// The largest value at `at` the call accepts, from one it accepts (a
    /// boundary: accepted there, refused one above).
    fn largest(&mut self, call: &[String], at: usize, accepted: i128) -> i128 {
        let (mut low, mut high) = (accepted, i128::from(i64::MAX) + 1);
        if self.accepts(call, at, high - 1) {
            return high - 1;
        }
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if self.accepts(call, at, middle) {
                low = middle;
            } else {
                high = middle;
            }
        }
        low
    }

    /// After an accepted call: every key of a module type survives `DUMP`
    /// and `RESTORE`, and the replica holds what the primary holds.
    fn check(&mut self, after: &str) {
        let keys: Vec<Vec<u8>> = query(&mut self.con, &["KEYS", "*"]);
        for key in keys {
            let kind: String = redis::cmd("TYPE")
                .arg(&key[..])
                .query(&mut self.con)
                .unwrap();
            if BUILT_IN_TYPES.contains(&kind.as_str()) {
                continue;
            }
            let dump: Option<Vec<u8>> = redis::cmd("DUMP")
                .arg(&key[..])
                .query(&mut self.con)
                .unwrap();
            let Some(dump) = dump else { continue };
            let restored = redis::cmd("RESTORE")
                .arg("edge:round-trip")
                .arg(0)
                .arg(&dump[..])
                .arg("REPLACE")
                .query::<Value>(&mut self.con);
            assert_eq!(
                restored,
                Ok(Value::Okay),
                "after {after}: RESTORE of the DUMP of {} ({kind})",
                key.escape_ascii()
            );
            assert_eq!(int(&mut self.con, &["DEL", "edge:round-trip"]), 1);
            self.round_trips += 1;
        }
        self.replica_agrees(after);
    }

    /// The replica's `DEBUG DIGEST` equals the primary's (looked at again
    /// while a key that expired on the primary is on its way as a `DEL`).
    fn replica_agrees(&mut self, after: &str) {
        let mut replica = self.pair.replica.con();
        let mut last = (String::new(), String::new());
        for _ in 0..40 {
            self.pair.sync();
            last = (digest(&mut self.con), digest(&mut replica));
            if last.0 == last.1 {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "after {after}: the replica's digest {} differs from the primary's {}",
            last.1, last.0
        );
    }
}

const BUILT_IN_TYPES: &[&str] = &["string", "list", "set", "zset", "hash", "stream", "none"];

/// The edge run: every integer argument of every sample call (and of its
/// variants) at each of its [`edges`], the call made twice (a second call
/// adds to what the first stored: `ADD`, a renewal, a count), after the
/// sample with the same value where a variant adds a flag. After each
/// accepted call the keys of module types round-trip and the replica
/// agrees; after each pair `DEBUG RELOAD` reads back what was written.
/// Returns (calls made, calls accepted, round trips, reloads).
fn edge_run(flavor: Flavor) -> (usize, usize, usize, usize) {
    let pair = Replicated::start(flavor);
    let mut run = EdgeRun::new(&pair);
    let docs = discover(&mut Client::connect(pair.primary.port).expect("connect"));
    let (mut calls, mut reloads) = (0, 0);
    for (name, words, _) in samples().calls {
        let Some(doc) = docs.iter().find(|doc| doc.name == name) else {
            panic!("{name}: no COMMAND DOCS");
        };
        let sample = words.clone();
        for call in variants(&words, doc) {
            for at in 1..call.len() {
                let Ok(value) = call[at].parse::<i64>() else {
                    continue;
                };
                let value = i128::from(value);
                if !run.accepts(&call, at, value) {
                    continue; // the *.APPLY commands refuse clients
                }
                let largest = run.largest(&call, at, value);
                for edge in edges(value, largest) {
                    run.fresh();
                    let mut sequence = Vec::new();
                    if call.len() > sample.len() && at < sample.len() {
                        let mut first = sample.clone();
                        first[at] = edge.to_string();
                        sequence.push(first);
                    }
                    let mut this = call.clone();
                    this[at] = edge.to_string();
                    sequence.extend([this.clone(), this]);
                    for argv in &sequence {
                        calls += 1;
                        let reply = run.call(argv);
                        let shown = format!("{} (in {})", argv.join(" "), sequence[0].join(" "));
                        assert!(pair.primary.log().find("panic").is_none(), "{shown}");
                        if !reply.is_error() {
                            run.accepted += 1;
                            run.check(&shown);
                        }
                    }
                    let reload = redis::cmd("DEBUG")
                        .arg("RELOAD")
                        .query::<Value>(&mut run.con);
                    assert_eq!(reload, Ok(Value::Okay), "DEBUG RELOAD after {sequence:?}");
                    reloads += 1;
                }
            }
        }
    }
    let log = pair.replica.log();
    assert!(
        !log.contains("panic") && !log.contains("Error"),
        "the replica's log:\n{log}"
    );
    (calls, run.accepted, run.round_trips, reloads)
}

server_tests! {
    /// Every numeric argument at its edges, alone and summed, writes only
    /// what reads back: `RESTORE` of each module-type key's `DUMP`, `DEBUG
    /// RELOAD`, and a replica's digest.
    fn every_integer_at_its_edges_writes_only_what_reads_back(flavor) {
        let (calls, accepted, round_trips, reloads) = edge_run(flavor);
        report("edge_calls", flavor, calls);
        report("edge_calls_accepted", flavor, accepted);
        report("edge_round_trips", flavor, round_trips);
        report("edge_reloads", flavor, reloads);
        assert!(accepted > calls / 4 && accepted < calls, "{accepted} of {calls} accepted: the run is off");
        assert!(round_trips > accepted, "{round_trips} round trips for {accepted} accepted calls");
    }
}

// ---- the error catalogue ----------------------------------------------------

#[test]
fn fits_fills_names_with_any_text() {
    assert!(fits(
        "ERR id must be between 1 and {max}",
        "ERR id must be between 1 and <max>"
    ));
    assert!(fits("A {x} b {y} c", "A 1 b 2 c"));
    assert!(fits("A {x} b {y} c", "A 가 b 2 c"));
    assert!(!fits("A {x} b {y} c", "A 1 b 2 d"));
    assert!(!fits("A {x} b", "A  b x"));
    assert!(fits("key '{key}'", "key ''"));
    assert!(!fits("A {x} b", "A b"));
    assert!(fits("ERR syntax error", "ERR syntax error"));
    assert!(!fits("ERR syntax error", "ERR syntax errors"));
}
