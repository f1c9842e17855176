#!/usr/bin/env python3
"""What a call costs the server, in instructions: every hot command against its
built-in, counted by callgrind instead of timed, so the numbers do not move
with the load on a shared machine.

Each server runs under `valgrind --tool=callgrind` with the module loaded.
For each command, the counters are zeroed, redis-benchmark sends the calls
(50 clients, pipeline 16, as in `hot.md`), and the counters are dumped; a call
costs the dump's total divided by the number of calls, the server's request
handling included. The module's share is split into its own code (instructions
executed inside librecipes.so), the module API it calls (key handles, hash
reads, replies, `RedisModule_Replicate`, …) and the dispatch around it (the
context of a module command). The last column is what the ratio would be if
the module's own code cost nothing: where even that misses the target, no code
in the module can meet it, and what remains is the module API.

Usage: cost.py OUTPUT.md  (servers from REDIS_SERVER, REDIS8_SERVER, VALKEY_SERVER;
module from RECIPES_MODULE; COST_CALLS calls per command, default 20000; COST_ONLY=WORD
measures only the rows whose command starts with WORD).

       cost.py --unrelated [--runs R] [--calls N] [--server PATH]... [--setup CMD]... [COMMAND]...
prints, as markdown, what built-in commands (by default INCR and GET) cost on
each server without the module and with it loaded: the module must add nothing
to a command that is not its own (`cost.py --unrelated --help`).
"""

import glob
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

MODULE = os.environ.get("RECIPES_MODULE", os.path.abspath("target/release/librecipes.so"))
CALLS = int(os.environ.get("COST_CALLS", "20000"))
MODULE_OBJECT = os.path.basename(MODULE)

DOC = json.dumps(
    {"id": 10086, "name": "Peter", "tags": ["t%d" % i for i in range(12)], "bio": "x" * 90},
    separators=(",", ":"),
)

# The same recipes as scripts (as in bench/run.sh), run by their SHA1.
ACQUIRE_LUA = """local held = redis.call("GET", KEYS[1])
if held == false then redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2]) return 1 end
if held == ARGV[1] then redis.call("PEXPIRE", KEYS[1], ARGV[2]) return 1 end
return false"""
FIELD_LUA = 'return redis.call("HINCRBY", KEYS[1], ARGV[1], 1)'
# The book's fixed window (the Python package's Limiter before RATE.FIXED).
FIXED_LUA = """local count = redis.call("INCR", KEYS[1])
redis.call("PEXPIRE", KEYS[1], ARGV[1], "NX")
return {count, redis.call("PTTL", KEYS[1])}"""
# @fastify/rate-limit's continueExceeding, as tests/rate.rs writes it.
FASTIFY_LUA = """local current = redis.call("INCR", KEYS[1])
local window, max = tonumber(ARGV[1]), tonumber(ARGV[2])
if current == 1 or current > max then redis.call("PEXPIRE", KEYS[1], window) return {current, window} end
return {current, redis.call("PTTL", KEYS[1])}"""


def sha(script):
    return hashlib.sha1(script.encode()).hexdigest()


# (our command, the built-in or script, target ratio, setup commands run after FLUSHALL)
ROWS = [
    ("IDGEN.NEXT gen:b", "INCR gen:a", 0.9, []),
    ("IDGEN.NEXT ids2 FIELD f", "HINCRBY ids f 1", 0.9, []),
    ("ARTICLE.VIEW art:read", "HINCRBY art:read views 1", 0.9,
     [["ARTICLE.CREATE", "art:read", "hello", "some-body-text", "peter"]]),
    ("ARTICLE.GET art:read", "HGETALL art:read", 0.9,
     [["ARTICLE.CREATE", "art:read", "hello", "some-body-text", "peter"]]),
    ("ARTICLE.CREATE art:__rand_int__ hello some-body-text peter",
     "HSET art:__rand_int__ title hello content some-body-text author peter created_at 1700000000000",
     0.8, []),
    ("LOCK.ACQUIRE lock:__rand_int__ tok PX 60000", "SET lock:__rand_int__ tok NX PX 60000", 0.8, []),
    ("CACHE.SETJSON page:__rand_int__ " + DOC, "SET page:__rand_int__ " + DOC, 0.6, []),
    ("IDPOOL.NEXT pool:hot TTL 60000", "INCR gen:a", 0.6, [["IDPOOL.CREATE", "pool:hot", "1000000"]]),
    ("RATE.LIMIT rl:ours 1000000 1000000", "INCR rl:incr", 0.6, []),
    ("LOCK.ACQUIRE lock:__rand_int__ tok PX 60000", f"EVALSHA {sha(ACQUIRE_LUA)} 1 lock:__rand_int__ tok 60000",
     1.5, [["SCRIPT", "LOAD", ACQUIRE_LUA]]),
    ("IDGEN.NEXT ids2 FIELD f", f"EVALSHA {sha(FIELD_LUA)} 1 ids3 f", 1.5, [["SCRIPT", "LOAD", FIELD_LUA]]),
    ("RATE.FIXED fx:ours 60000", "INCR fx:incr", 0.6, []),
    ("RATE.FIXED fx:ours 60000", f"EVALSHA {sha(FIXED_LUA)} 1 fx:lua 60000", 1.5, [["SCRIPT", "LOAD", FIXED_LUA]]),
    ("RATE.FIXED fx:ours 60000 MAX 1000000000 EXTEND", f"EVALSHA {sha(FASTIFY_LUA)} 1 fx:lua 60000 1000000000",
     1.5, [["SCRIPT", "LOAD", FASTIFY_LUA]]),
]
# COST_ONLY=WORD: only the rows whose command starts with WORD (a quick run).
ONLY = os.environ.get("COST_ONLY")

LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(?:([*>])\s+)?(.*?)(?: \(([\d,]+)x\))?(?: \[(.*)\])?\s*$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True).stdout.strip()


def wait_ready(port, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cli(port, "ping") == "PONG":
            return
        time.sleep(0.2)
    raise SystemExit(f"the server on port {port} did not start")


def function_name(name):
    # "file:function"; Rust paths contain "::", file names no ":".
    return re.sub(r"^[^:]*:(?!:)", "", name, count=1)


def parse(dump):
    """→ total, own (exclusive in the module), api (server functions the module
    called, inclusive), replicate (of api: Replicate), dispatch."""
    total = None
    with open(dump) as f:
        for line in f:
            if line.startswith("summary:") or (total is None and line.startswith("totals:")):
                total = int(line.split()[1])
    flat = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", dump],
                          capture_output=True, text=True).stdout
    own = 0
    for line in flat.splitlines():
        m = LINE.match(line)
        if m and not m.group(2) and (m.group(5) or "").endswith(MODULE_OBJECT):
            own += int(m.group(1).replace(",", ""))
    tree = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=calling", "--threshold=100",
                           "--auto=no", dump], capture_output=True, text=True).stdout
    api = replicate = dispatch = 0
    caller, caller_cost, caller_ours = None, 0, False
    for line in tree.splitlines():
        m = LINE.match(line)
        if not m or not m.group(2):
            continue
        # callgrind_annotate leaves out the object of a function whose source
        # file it knows: the module's functions always show theirs.
        cost, mark, name = int(m.group(1).replace(",", "")), m.group(2), function_name(m.group(3))
        ours = (m.group(5) or "").endswith(MODULE_OBJECT)
        if mark == "*":
            caller, caller_cost, caller_ours = name, cost, ours
            continue
        if caller_ours and not ours:
            api += cost
            if re.fullmatch(r"[RV]M_Replicate", name):
                replicate += cost
        # The dispatcher (listed once per spelling of its file's path, with
        # its callees under one of them) less the module command it calls.
        if caller and caller.endswith("ModuleCommandDispatcher") and ours:
            dispatch = max(dispatch, caller_cost - cost)
    return {"total": total or 0, "own": own, "api": api, "replicate": replicate, "dispatch": dispatch}


class Server:
    def __init__(self, binary, scenario, module=True):
        self.dir = tempfile.mkdtemp()
        self.port = free_port()
        config = ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir, "--save", "",
                  *(["--loadmodule", MODULE] if module else []), "--logfile", os.path.join(self.dir, "log")]
        self.replica = None
        if scenario == "replica + AOF":
            config += ["--appendonly", "yes", "--appendfsync", "everysec", "--auto-aof-rewrite-percentage", "0"]
        else:
            config += ["--appendonly", "no"]
        self.dumps = os.path.join(self.dir, "cg")
        self.process = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.dumps}.%p", binary, *config],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(self.port)
        if scenario == "replica + AOF":
            self.replica_dir = tempfile.mkdtemp()
            self.replica_port = free_port()
            self.replica = subprocess.Popen(
                [binary, "--port", str(self.replica_port), "--bind", "127.0.0.1", "--dir", self.replica_dir,
                 "--save", "", "--appendonly", "no", "--loadmodule", MODULE,
                 "--replicaof", "127.0.0.1", str(self.port)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_ready(self.replica_port)
            deadline = time.time() + 120
            while "master_link_status:up" not in cli(self.replica_port, "info", "replication"):
                if time.time() > deadline:
                    raise SystemExit("the replica did not connect")
                time.sleep(0.2)

    def measure(self, command, setup):
        result = self.count(command, setup, CALLS, parse)
        return {k: v / CALLS for k, v in result.items()}

    def count(self, command, setup, calls, read):
        """FLUSHALL, the setup, then `calls` calls of `command` between a
        zeroing and a dump of the counters: → read(the dump)."""
        cli(self.port, "flushall")
        for words in setup:
            cli(self.port, *words)
        before = set(glob.glob(self.dumps + ".*.*"))
        control = ["callgrind_control"]
        subprocess.run(control + ["-z", str(self.process.pid)], capture_output=True, check=True)
        self.send(command, calls)
        subprocess.run(control + ["--dump", str(self.process.pid)], capture_output=True, check=True)
        for _ in range(600):
            new = set(glob.glob(self.dumps + ".*.*")) - before
            if new:
                dump = new.pop()
                time.sleep(0.2)
                result = read(dump)
                os.remove(dump)
                return result
            time.sleep(0.1)
        raise SystemExit("callgrind wrote no dump")

    def send(self, command, calls):
        subprocess.run(["redis-benchmark", "-p", str(self.port), "-c", "50", "-P", "16", "-n", str(calls),
                        "-r", "1000000000", "-q", *command.split()], capture_output=True, check=True)

    def modules(self):
        return cli(self.port, "module", "list")

    def version(self):
        info = cli(self.port, "info", "server")
        name = "Valkey" if "valkey_version" in info else "Redis"
        key = "valkey_version" if name == "Valkey" else "redis_version"
        for line in info.splitlines():
            if line.startswith(key + ":"):
                return f"{name} {line.split(':', 1)[1].strip()}"
        return name

    def stop(self):
        for process in (self.replica, self.process):
            if process:
                process.terminate()
                try:
                    process.wait(60)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.replica:
            shutil.rmtree(self.replica_dir, ignore_errors=True)


# --unrelated: built-in commands (none of the module's) with their setup.
UNRELATED = [("INCR counter", []), ("GET greeting", [["SET", "greeting", "hello"]])]


def total(dump):
    """Everything the dump counted (callgrind's summary line)."""
    with open(dump) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise SystemExit(f"no total in {dump}")


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def unrelated(argv):
    """What loading the module costs the commands that are not its own: each
    built-in counted on the same server without `--loadmodule` and with it,
    RUNS times each, a fresh server per run (without and with alternating, one
    valgrind at a time). A call costs (count of 2N calls - count of N calls) / N,
    N = --calls, so the clients' connections and anything else counted once per
    batch cancel out; each command is first sent N/10 times uncounted."""
    import argparse
    parser = argparse.ArgumentParser(prog="cost.py --unrelated", description=unrelated.__doc__)
    parser.add_argument("commands", nargs="*", metavar="COMMAND",
                        help='a built-in command as one string, e.g. "INCR counter" (default: "INCR counter" and '
                             '"GET greeting", after SET greeting hello)')
    parser.add_argument("--setup", action="append", default=[], metavar="COMMAND",
                        help="a command run after FLUSHALL before every count of every COMMAND (repeatable)")
    parser.add_argument("--server", action="append", metavar="PATH",
                        help="a server binary (repeatable; default: REDIS_SERVER or redis-server on PATH, "
                             "REDIS8_SERVER, VALKEY_SERVER)")
    parser.add_argument("--runs", type=int, default=5, help="servers started per side (default 5)")
    parser.add_argument("--calls", type=int, default=CALLS, help=f"N (default COST_CALLS or {CALLS})")
    args = parser.parse_args(argv)
    setup = [words.split() for words in args.setup]
    rows = [(command, setup) for command in args.commands] or [(c, s + setup) for c, s in UNRELATED]
    binaries = args.server or [os.environ.get("REDIS_SERVER") or shutil.which("redis-server"),
                               os.environ.get("REDIS8_SERVER"), os.environ.get("VALKEY_SERVER")]
    calls = args.calls
    print(f"N = {calls:,} calls (redis-benchmark, 50 clients, pipeline 16); {args.runs} runs per side; "
          "instructions per call = (count of 2N calls - count of N calls) / N.\n")
    for binary in filter(None, binaries):
        if not os.access(binary, os.X_OK):
            print(f"skipped: {binary} is not executable", file=sys.stderr)
            continue
        counts = {(command, module): [] for command, _ in rows for module in (False, True)}
        label = None
        for run in range(args.runs):
            for module in ((False, True) if run % 2 == 0 else (True, False)):
                server = Server(binary, "standalone", module=module)
                try:
                    label = server.version()
                    loaded = "recipes" in server.modules()
                    if loaded != module:
                        raise SystemExit(f"{label}: module {'not ' if module else ''}loaded, expected otherwise")
                    for command, words in rows:
                        cli(server.port, "flushall")
                        for setup_words in words:
                            cli(server.port, *setup_words)
                        server.send(command, max(calls // 10, 1))
                        once = server.count(command, words, calls, total)
                        twice = server.count(command, words, 2 * calls, total)
                        counts[(command, module)].append((twice - once) / calls)
                        print(f"{label} run {run + 1} {'with' if module else 'without'} module: {command}: "
                              f"{counts[(command, module)][-1]:,.1f} (N: {once / calls:,.1f}, "
                              f"2N: {twice / (2 * calls):,.1f})", file=sys.stderr)
                finally:
                    server.stop()
        print(f"### {label} (`{binary}`)\n")
        print("| command | without module: median (min–max) | with module: median (min–max) | difference "
              "(medians) |")
        print("|---|---:|---:|---:|")
        for command, _ in rows:
            without, with_ = counts[(command, False)], counts[(command, True)]
            difference = median(with_) - median(without)
            print(f"| `{command}` | {median(without):,.1f} ({min(without):,.1f}–{max(without):,.1f}) | "
                  f"{median(with_):,.1f} ({min(with_):,.1f}–{max(with_):,.1f}) | {difference:+,.1f} "
                  f"({difference / median(without):+.2%}) |")
        print()
        for command, _ in rows:
            for module in (False, True):
                values = ", ".join(f"{v:,.1f}" for v in counts[(command, module)])
                print(f"- `{command}` {'with' if module else 'without'} module, run by run: {values}")
        print(flush=True)


def main():
    if sys.argv[1:2] == ["--unrelated"]:
        return unrelated(sys.argv[2:])
    out = sys.argv[1]
    binaries = [os.environ.get("REDIS_SERVER") or shutil.which("redis-server"),
                os.environ.get("REDIS8_SERVER"), os.environ.get("VALKEY_SERVER")]
    rows = []
    for binary in filter(None, binaries):
        if not os.access(binary, os.X_OK):
            continue
        for scenario in ("standalone", "replica + AOF"):
            server = Server(binary, scenario)
            try:
                label = server.version()
                for ours, builtin, target, setup in ROWS:
                    if ONLY and not ours.startswith(ONLY):
                        continue
                    theirs = server.measure(builtin, setup)
                    mine = server.measure(ours, setup)
                    rows.append((label, scenario, ours, builtin, target, mine, theirs))
                    print(f"{label} {scenario}: {ours.split()[0]} {mine['total']:.0f} vs "
                          f"{builtin.split()[0]} {theirs['total']:.0f}", file=sys.stderr)
            finally:
                server.stop()
    write(out, rows)


def short(command):
    words = command.split()
    return " ".join(w if len(w) < 24 else "<sha1>" if re.fullmatch("[0-9a-f]{40}", w) else "<%d B>" % len(w) for w in words)


def write(out, rows):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    with open(out, "w") as f:
        f.write("# What a call costs: instructions per call (callgrind)\n\n")
        f.write(f"Machine: {os.cpu_count()} cores ({cpu}), {os.uname().sysname} {os.uname().release}; "
                f"{time.strftime('%Y-%m-%d', time.gmtime())}. valgrind --tool=callgrind, counters zeroed before and\n")
        f.write(f"dumped after {CALLS:,} calls from redis-benchmark (50 clients, pipeline 16, random keys where\n"
                "the command has `__rand_int__`); a call's cost is everything the server executed divided by the\n"
                "calls: reading and parsing the request, the command, propagation, the reply. Counts are exact and\n"
                "do not move with the machine's load, unlike requests/s; time adds what callgrind does not count\n"
                "(system calls, cache misses), alike for both sides. *replica + AOF*: `appendonly yes`,\n"
                "`appendfsync everysec`, one replica attached (not counted). Produced by `bench/cost.py`.\n\n")
        f.write("Of our call: *module code* is what ran inside the module itself; *module API* is what the server\n"
                "ran for the API functions the module called (opening keys, hash reads and writes, replies,\n"
                "keyspace events, replication), *of it Replicate* the share of `RedisModule_Replicate` (an\n"
                "effect); *dispatch* the module command's context. *built-in* is the nearest built-in, or in the\n"
                "last two rows per scenario the same recipe as a script (`EVALSHA`, the scripts of bench/run.sh).\n"
                "*× built-in* is its count over ours (the speed ratio if time followed instructions).\n"
                "*without module code* is that ratio with\n"
                "the module's own code taken away: where it is below the target, no change to the module's\n"
                "code can meet the target.\n\n")
        f.write("| server | scenario | command | instr/call | built-in | instr/call | × built-in | target "
                "| module code | module API | of it Replicate | dispatch | without module code | verdict |\n")
        f.write("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
        for label, scenario, ours, builtin, target, mine, theirs in rows:
            ratio = theirs["total"] / mine["total"] if mine["total"] else 0
            bound = theirs["total"] / (mine["total"] - mine["own"]) if mine["total"] > mine["own"] else 0
            if ratio >= target:
                verdict = "met"
            elif bound < target:
                verdict = "out of the module's reach"
            else:
                cut = mine["total"] - theirs["total"] / target
                verdict = f"needs {cut:,.0f} of the {mine['own']:,.0f} module instructions cut"
            f.write(f"| {label} | {scenario} | `{short(ours)}` | {mine['total']:,.0f} | `{short(builtin)}` | "
                    f"{theirs['total']:,.0f} | {ratio:.2f}× | ≥ {target}× | {mine['own']:,.0f} | {mine['api']:,.0f} | "
                    f"{mine['replicate']:,.0f} | {mine['dispatch']:,.0f} | {bound:.2f}× | {verdict} |\n")


if __name__ == "__main__":
    main()
