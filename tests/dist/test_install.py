"""The release's artifacts (``make dist``, in ``dist/``) installed as a user
installs them, on this machine (``make test`` runs as root on Debian 12, with
Debian's redis-server; it builds the artifacts beside its other builds and
runs this beside its other parts):

* ``SHA256SUMS`` holds every artifact's sum; the tarball holds the module,
  ``LICENSE``, ``README``, ``CHANGELOG.md`` and ``recipes.conf`` (Redis's
  snippet, ``packaging/redis/recipes.conf``); its module is the Debian
  package's;
* the module's newest ``GLIBC_`` symbol version (``objdump -T``) is the one
  ``docs/src/operating.md`` and the tarball's README state, and the Debian
  package depends on at least that libc6;
* the Debian package, installed with ``dpkg -i``: the module in
  ``/usr/lib/redis/modules/`` (and linked from ``/usr/lib/valkey/modules/``),
  each server's snippet as a conffile with every line commented out, so that
  a copy of Debian's ``/etc/redis/redis.conf`` that includes it as installed
  starts without the module. The same copy including the snippet enabled (its
  ``loadmodule`` and setting lines uncommented, as the operator does) starts
  Debian's redis-server with the module: ``MODULE LIST`` shows it from the
  package's path, every setting of ``docs/spec.json`` has its default, and one
  call of each family of the spec answers as the family's samples
  (``tests/samples/<family>.txt``) say; valkey-server likewise with Valkey's
  snippet;
* the wheel installed into a fresh virtualenv and the npm tarball into a fresh
  npm project (with the ioredis of the package's lockfile), each running the
  README's first example of its language against that redis-server
  (``clients/python/tests/manual_blocks.py``,
  ``clients/node/test/glue/manual-blocks.mjs``);
* ``dpkg -r``: the module gone, only the conffiles left, as dpkg leaves them
  (unchanged, every line commented out); ``dpkg -P``: every file and folder
  under ``/etc/redis``, ``/etc/valkey``, ``/usr/lib/redis`` and
  ``/usr/lib/valkey`` and every file of Debian's redis-server and redis-tools
  packages as before, with its mode and owner.

The tests run in the order of this file, on one install for the module. The
machine's own server (Debian's systemd service) is neither started nor
touched: each server here runs in a folder of the run's TMPDIR on a free
loopback port. A test run stopped half-way (SIGTERM, Ctrl-C) still removes the
package; one killed outright leaves it, and the next run fails, saying so.
"""

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import generate  # noqa: E402 - tools/ is no package

DIST = ROOT / "dist"
SPEC = json.loads((ROOT / "docs" / "spec.json").read_text(encoding="utf-8"))
VERSION = SPEC["version"]
PACKAGE = "redis-recipes"
TARBALL = DIST / f"{PACKAGE}-{VERSION}-x86_64-linux-gnu.tar.gz"
DEB = DIST / f"{PACKAGE}_{VERSION}-1_amd64.deb"
SDIST = DIST / f"redis_recipes-{VERSION}.tar.gz"
WHEEL = DIST / f"redis_recipes-{VERSION}-py3-none-any.whl"
NPM = DIST / f"{PACKAGE}-{VERSION}.tgz"
ARTIFACTS = [TARBALL, DEB, SDIST, WHEEL, NPM]
CONFFILES = {server: f"{etc}/{SPEC['module']}.conf" for server, (_, etc, _) in generate.SERVERS.items()}
MODULES = {server: f"{modules}/librecipes.so" for server, (_, _, modules) in generate.SERVERS.items()}
# What the package touches, and the server it must leave as it was.
WATCHED = ["/etc/redis", "/etc/valkey", "/usr/lib/redis", "/usr/lib/valkey"]
SERVER_PACKAGES = ["redis-server", "redis-tools"]
DEBIAN_REDIS = "/usr/bin/redis-server"
DEBIAN_CONF = Path("/etc/redis/redis.conf")
# A line of a snippet that an operator enables by uncommenting it: `loadmodule …` or a setting with its value.
DIRECTIVE = re.compile(r"^# ((?:loadmodule|recipes\.[a-z-]+) \S+)$")

# A SIGTERM (tests/run.sh stopping the run) ends the tests as Ctrl-C does, through the fixtures' teardown, which
# removes the package.
signal.signal(signal.SIGTERM, signal.default_int_handler)


def run(*command: Union[str, Path], cwd: Optional[Path] = None) -> str:
    done = subprocess.run([str(word) for word in command], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


def package_status() -> str:
    """The package's state for dpkg: ``ii`` installed, ``rc`` removed with its conffiles left, ``""`` unknown."""
    done = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", PACKAGE], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() not in ("un", "pn") else ""


def describe(path: str) -> str:
    """A path's type, mode and owner, and its content's hash (a link: its target)."""
    st = os.lstat(path)
    head = f"{stat.filemode(st.st_mode)} {st.st_uid}:{st.st_gid}"
    if stat.S_ISLNK(st.st_mode):
        return f"{head} -> {os.readlink(path)}"
    if stat.S_ISREG(st.st_mode):
        return f"{head} {hashlib.sha256(Path(path).read_bytes()).hexdigest()}"
    return head


def snapshot() -> Dict[str, str]:
    """Every path under WATCHED and every file of the server's packages, described; and their dpkg states."""
    paths = set()
    for top in WATCHED:
        if os.path.lexists(top):
            paths.add(top)
            for folder, folders, files in os.walk(top):
                paths.update(os.path.join(folder, name) for name in folders + files)
    listed = run("dpkg", "-L", *SERVER_PACKAGES).splitlines()
    paths.update(path for path in listed if path.startswith("/") and os.path.lexists(path))
    state = {path: describe(path) for path in sorted(paths)}
    for package in SERVER_PACKAGES:
        state[f"dpkg {package}"] = run("dpkg-query", "-W", "-f=${db:Status-Abbrev} ${Version}", package)
    return state


def changed(before: Dict[str, str], after: Dict[str, str]) -> List[str]:
    return sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))


def newest_glibc(module: Path) -> str:
    """The newest ``GLIBC_`` version among the module's dynamic symbols (``objdump -T``)."""
    versions = set(re.findall(r"\bGLIBC_(\d+(?:\.\d+)+)\b", run("objdump", "-T", module)))
    newest: str = max(versions, key=lambda version: tuple(int(part) for part in version.split(".")))
    return newest


# Servers --------------------------------------------------------------------


class Simple(str):
    """A simple string reply (``+OK``), told apart from a bulk string (bytes)."""


class Error(str):
    """An error reply."""


Reply = Union[None, int, bytes, Simple, Error, List["Reply"]]


class Connection:
    """A RESP2 connection that tells simple strings from bulk strings, as the samples' replies do."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rb")

    def call(self, *words: str) -> Reply:
        encoded = [word.encode() for word in words]
        self.sock.sendall(b"".join([b"*%d\r\n" % len(encoded)] + [b"$%d\r\n%s\r\n" % (len(w), w) for w in encoded]))
        return self.read()

    def read(self) -> Reply:
        line = self.file.readline()
        assert line.endswith(b"\r\n"), f"the connection ended: {line!r}"
        kind, rest = line[:1], line[1:-2].decode()
        if kind == b"+":
            return Simple(rest)
        if kind == b"-":
            return Error(rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            return None if int(rest) < 0 else self.file.read(int(rest) + 2)[:-2]
        if kind == b"*":
            return None if int(rest) < 0 else [self.read() for _ in range(int(rest))]
        raise AssertionError(f"not a RESP2 reply: {line!r}")

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def show(reply: Reply) -> str:
    """A reply as the samples write it (tests/harness/calls.rs's ``show``)."""
    if reply is None:
        return "nil"
    if isinstance(reply, Error):
        return f"!{reply}"
    if isinstance(reply, Simple):
        return f"+{reply}"
    if isinstance(reply, int):
        return str(reply)
    if isinstance(reply, bytes):
        quoted = "".join(
            f"\\{chr(byte)}" if byte in b'"\\' else chr(byte) if 0x20 <= byte <= 0x7E else f"\\x{byte:02x}"
            for byte in reply
        )
        return f'"{quoted}"'
    return "[" + ", ".join(show(item) for item in reply) + "]"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """A server started with a configuration file: ``base`` (a copy of Debian's
    redis.conf, or nothing), this test's own lines (port, folder, log: the
    last say wins), then ``extra``."""

    def __init__(self, binary: str, base: Optional[Path], extra: List[str]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="recipes-dist-"))
        self.binary = binary
        text = base.read_text(encoding="utf-8") if base else ""
        # A port that another server takes between the pick and the bind: the next one.
        for _ in range(5):
            self.port = free_port()
            own = [f"port {self.port}", "bind 127.0.0.1", "daemonize no", f"pidfile {self.dir}/server.pid",
                   f"logfile {self.dir}/server.log", f"dir {self.dir}", 'save ""', "appendonly no"]
            self.conf = self.dir / "server.conf"
            self.conf.write_text(text + "\n" + "\n".join(own + extra) + "\n", encoding="utf-8")
            self.process = subprocess.Popen([binary, str(self.conf)], cwd=self.dir, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL)
            if self.answers():
                self.connection = Connection(self.port)
                return
            self.process.kill()
            self.process.wait()
        raise AssertionError(f"{binary} {self.conf} did not start on a port of its own: {self.log()}")

    def answers(self) -> bool:
        """Whether the process started answers on its port (not another server that had the port first)."""
        deadline = time.monotonic() + 20
        while self.process.poll() is None:
            try:
                connection = Connection(self.port)
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"{self.binary} did not answer in 20 s: {self.log()}") from None
                time.sleep(0.02)
                continue
            info = connection.call("INFO", "server")
            connection.close()
            assert isinstance(info, bytes), info
            return f"process_id:{self.process.pid}\r\n".encode() in info
        return False

    def call(self, *words: str) -> Reply:
        return self.connection.call(*words)

    def log(self) -> str:
        try:
            return (self.dir / "server.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.connection.close()
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def modules(server: Server) -> List[Dict[str, Reply]]:
    """MODULE LIST, each module as a dict."""
    listed = server.call("MODULE", "LIST")
    assert isinstance(listed, list), listed
    found = []
    for module in listed:
        assert isinstance(module, list), module
        found.append({str(name, "utf-8"): value for name, value in zip(module[::2], module[1::2])
                      if isinstance(name, bytes)})
    return found


def enabled(conffile: str, folder: Path) -> Path:
    """A copy in ``folder`` of an installed snippet with its loadmodule and
    setting lines uncommented, as the operator enables it."""
    lines = Path(conffile).read_text(encoding="utf-8").splitlines()
    copy = folder / Path(conffile).name
    copy.write_text("\n".join(DIRECTIVE.sub(r"\1", line) for line in lines) + "\n", encoding="utf-8")
    return copy


# The artifacts --------------------------------------------------------------


def test_the_sums_cover_every_artifact() -> None:
    missing = [path.name for path in ARTIFACTS + [DIST / "SHA256SUMS"] if not path.is_file()]
    assert not missing, f"not in dist/: {missing} (`make dist` writes them)"
    sums: Dict[str, str] = {}
    for line in (DIST / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        sums[name] = digest
    assert sorted(sums) == sorted(path.name for path in ARTIFACTS)
    for path in ARTIFACTS:
        assert sums[path.name] == hashlib.sha256(path.read_bytes()).hexdigest(), path.name


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tarball, unpacked: its one folder."""
    where = tmp_path_factory.mktemp("tarball")
    with tarfile.open(TARBALL) as tarball:
        tarball.extractall(where, filter="data")
    return where / TARBALL.name[: -len(".tar.gz")]


def test_the_tarball_holds_the_module_its_licence_readme_changelog_and_snippet(unpacked: Path) -> None:
    assert sorted(path.name for path in unpacked.parent.iterdir()) == [unpacked.name]
    assert sorted(path.name for path in unpacked.iterdir()) == [
        "CHANGELOG.md", "LICENSE", "README", "librecipes.so", "recipes.conf"]
    for name, source in [("CHANGELOG.md", "CHANGELOG.md"), ("LICENSE", "LICENSE"), ("README", "packaging/README"),
                         ("recipes.conf", "packaging/redis/recipes.conf")]:
        assert (unpacked / name).read_bytes() == (ROOT / source).read_bytes(), name
    assert (unpacked / "librecipes.so").stat().st_mode & 0o777 == 0o755


def test_the_glibc_the_module_needs_is_the_one_documented_and_depended_on(unpacked: Path) -> None:
    glibc = newest_glibc(unpacked / "librecipes.so")
    for page in ["docs/src/operating.md", "packaging/README"]:
        stated = set(re.findall(r"GLIBC_\d+(?:\.\d+)+", (ROOT / page).read_text(encoding="utf-8")))
        assert stated == {f"GLIBC_{glibc}"}, f"{page} states {stated}; the module's newest is GLIBC_{glibc}"
    depends = run("dpkg-deb", "-f", DEB, "Depends")
    assert f"libc6 (>= {glibc})" in depends, depends


def test_the_python_sdist_and_wheel_carry_the_licence() -> None:
    with tarfile.open(SDIST) as sdist:
        assert f"redis_recipes-{VERSION}/LICENSE" in sdist.getnames()
    with zipfile.ZipFile(WHEEL) as wheel:
        licences = [name for name in wheel.namelist() if name.endswith("/LICENSE")]
        assert len(licences) == 1 and wheel.read(licences[0]) == (ROOT / "LICENSE").read_bytes(), licences


# The Debian package ---------------------------------------------------------


@pytest.fixture(scope="module")
def installed() -> Iterator[Dict[str, str]]:
    """The Debian package installed with dpkg -i; the machine's state before, to compare."""
    if package_status():
        pytest.fail(f"{PACKAGE} is on this machine already (dpkg -l {PACKAGE}: {package_status()}): the test "
                    f"installs it and compares the machine with how it was; remove it first (dpkg -P {PACKAGE})")
    before = snapshot()
    try:
        run("dpkg", "-i", DEB)
        yield before
    finally:
        if package_status():
            subprocess.run(["dpkg", "-P", PACKAGE], capture_output=True)


@pytest.fixture(scope="module")
def redis(installed: Dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Debian's redis-server with a copy of Debian's redis.conf that includes Redis's snippet enabled."""
    snippet = enabled(CONFFILES["redis"], tmp_path_factory.mktemp("redis"))
    server = Server(DEBIAN_REDIS, DEBIAN_CONF, [f"include {snippet}"])
    yield server
    server.stop()


def test_dpkg_installs_the_module_and_the_snippets_as_conffiles(installed: Dict[str, str], unpacked: Path) -> None:
    assert package_status() == "ii"
    assert Path(MODULES["redis"]).read_bytes() == (unpacked / "librecipes.so").read_bytes()
    assert os.path.realpath(MODULES["valkey"]) == MODULES["redis"]
    conffiles = run("dpkg-query", "-W", "-f=${Conffiles}", PACKAGE)
    assert sorted(line.split()[0] for line in conffiles.splitlines() if line.strip()) == sorted(CONFFILES.values())
    for server, conffile in CONFFILES.items():
        text = Path(conffile).read_text(encoding="utf-8")
        assert text == (ROOT / "packaging" / server / Path(conffile).name).read_text(encoding="utf-8")
        assert all(line.startswith("#") for line in text.splitlines() if line.strip()), conffile


def test_the_snippet_as_installed_loads_nothing(installed: Dict[str, str]) -> None:
    server = Server(DEBIAN_REDIS, DEBIAN_CONF, [f"include {CONFFILES['redis']}"])
    try:
        assert modules(server) == []
    finally:
        server.stop()


def test_debian_redis_server_loads_the_module_from_the_enabled_snippet(redis: Server) -> None:
    listed = modules(redis)
    major, minor, patch = (int(part) for part in VERSION.split("."))
    assert [(m["name"], m["ver"], m["path"]) for m in listed] == [
        (SPEC["module"].encode(), major * 10000 + minor * 100 + patch, MODULES["redis"].encode())]
    version = redis.call("INFO", "server")
    assert isinstance(version, bytes) and b"redis_version:7.0." in version, "Debian 12's redis-server"


def test_every_setting_has_its_default(redis: Server) -> None:
    got = redis.call("CONFIG", "GET", "recipes.*")
    assert isinstance(got, list)
    settings = {name: value for name, value in zip(got[::2], got[1::2])}
    assert settings == {setting["name"].encode(): str(setting["default"]).encode()
                        for family in SPEC["families"] for setting in family["settings"]}


def samples() -> Tuple[List[Tuple[List[str], str]], Dict[str, Tuple[List[str], str]]]:
    """The samples' setup (every family's, as the samples' calls expect it), and each family's first call that
    succeeds, with its reply (tests/harness/samples.rs reads the same files)."""
    setup: List[Tuple[List[str], str]] = []
    first: Dict[str, Tuple[List[str], str]] = {}
    for path in sorted((ROOT / "tests" / "samples").glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("events "):
                continue
            words, reply = line.split(" => ", 1)
            if words.startswith("setup "):
                setup.append((words.split()[1:], reply))
            elif not reply.startswith("!"):
                first.setdefault(path.stem, (words.split(), reply))
    return setup, first


def test_one_call_of_each_family_answers_as_its_sample(redis: Server) -> None:
    setup, first = samples()
    families = [family["name"].lower() for family in SPEC["families"]]
    lacking = [family for family in families if family not in first]
    assert not lacking, f"no call in tests/samples/<family>.txt for {lacking}"
    for family in families:
        assert redis.call("FLUSHALL") == "OK"
        for words, reply in setup:
            assert show(redis.call(*words)) == reply, f"setup {' '.join(words)}"
        words, reply = first[family]
        assert show(redis.call(*words)) == reply, " ".join(words)


def test_the_wheel_runs_the_readmes_first_python_example(redis: Server, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", WHEEL)
    where = run(python, "-c", "import redis_recipes; print(redis_recipes.__version__, redis_recipes.__file__)")
    version, path = where.split()
    assert version == VERSION and path.startswith(str(venv)), where
    run(python, ROOT / "clients" / "python" / "tests" / "manual_blocks.py", ROOT / "README.md", str(redis.port))


def test_the_npm_tarball_runs_the_readmes_first_js_example(redis: Server, tmp_path: Path) -> None:
    lock = json.loads((ROOT / "clients" / "node" / "package-lock.json").read_text(encoding="utf-8"))
    ioredis = lock["packages"]["node_modules/ioredis"]["version"]
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text('{"name": "app", "private": true}\n', encoding="utf-8")
    run("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", NPM, f"ioredis@{ioredis}", cwd=project)
    installed = project / "node_modules" / PACKAGE
    assert json.loads((installed / "package.json").read_text(encoding="utf-8"))["version"] == VERSION
    found = run("node", "-p", "require.resolve('redis-recipes')", cwd=project)
    assert found.startswith(str(installed)), found
    run("node", ROOT / "clients" / "node" / "test" / "glue" / "manual-blocks.mjs", ROOT / "README.md", project,
        str(redis.port))


def test_valkey_loads_the_module_from_its_enabled_snippet(installed: Dict[str, str], tmp_path: Path) -> None:
    binary = os.environ.get("VALKEY_SERVER") or shutil.which("valkey-server")
    if not binary:
        pytest.fail("no valkey-server: `make test` gives one (VALKEY_SERVER)")
    server = Server(binary, None, [f"include {enabled(CONFFILES['valkey'], tmp_path)}"])
    try:
        # Valkey lists its own Lua engine as a module too.
        ours = [m["path"] for m in modules(server) if m["name"] == SPEC["module"].encode()]
        assert ours == [MODULES["valkey"].encode()]
        assert server.call("IDGEN.NEXT", "id") == 1
    finally:
        server.stop()


def test_dpkg_r_then_p_leave_the_server_as_it_was(installed: Dict[str, str], redis: Server) -> None:
    redis.stop()
    run("dpkg", "-r", PACKAGE)
    assert package_status() == "rc"
    # dpkg -r keeps conffiles (an operator's edits survive a reinstall): they are left as installed, every line
    # commented out, and nothing includes them (redis.conf is as it was).
    left = changed(installed, snapshot())
    new_folders = [folder for folder in {str(Path(path).parent) for path in CONFFILES.values()}
                   if folder not in installed]
    assert left == sorted(list(CONFFILES.values()) + new_folders)
    for server, conffile in CONFFILES.items():
        assert Path(conffile).read_bytes() == (ROOT / "packaging" / server / Path(conffile).name).read_bytes()
    run("dpkg", "-P", PACKAGE)
    assert package_status() == ""
    assert changed(installed, snapshot()) == []
