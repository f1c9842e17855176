#!/usr/bin/env python3
"""What the writes to the two data types kept in `src/common/tree.rs` cost, in
instructions per call (callgrind, as `cost.py` counts them): the paths of the
tree that `cost.py`'s one IDPOOL row and `autocomplete.py`'s rows do not reach.

- IDPOOL, on a pool of 1,000,000 IDs holding 100,000 leases that never end,
  each call a script of module calls run by EVALSHA (so one call makes one
  lease and may give it back): a NEXT; a NEXT and the RELEASE of its ID; a
  NEXT, a RENEW and a RELEASE of its ID; a RELEASE of an ID no longer leased
  and a NEXT.
- AUTOCOMPLETE, on a key of 20,000 entries (3 to 10 letters of 20, random
  weights) with a kept answer for `s`: a FEED of an entry present (under
  another prefix), a FEED of a new entry, a REMOVE of those new entries.

Usage: tree_cost.py [OUTPUT.md]  (module from RECIPES_MODULE, server from
REDIS_SERVER or redis-server on PATH; COST_CALLS calls per row, default 20000).
Prints the table; with OUTPUT.md, also writes it there.
"""

import glob
import os
import random
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost  # noqa: E402

CALLS = cost.CALLS
POOL_SCRIPTS = [
    ("IDPOOL: NEXT", "return redis.call('IDPOOL.NEXT', KEYS[1])"),
    ("IDPOOL: NEXT, RELEASE",
     "local id = redis.call('IDPOOL.NEXT', KEYS[1]) return redis.call('IDPOOL.RELEASE', KEYS[1], id)"),
    ("IDPOOL: NEXT, RENEW, RELEASE",
     ("local id = redis.call('IDPOOL.NEXT', KEYS[1]) redis.call('IDPOOL.RENEW', KEYS[1], id, 600000) "
      "return redis.call('IDPOOL.RELEASE', KEYS[1], id)")),
    ("IDPOOL: RELEASE of a free ID, NEXT",
     "redis.call('IDPOOL.RELEASE', KEYS[1], 50000) return redis.call('IDPOOL.NEXT', KEYS[1])"),
]


def counted(server, command):
    """`CALLS` calls of `command` between a zeroing and a dump of the
    counters (no FLUSHALL: the data is the caller's) → cost.parse per call."""
    before = set(glob.glob(server.dumps + ".*.*"))
    subprocess.run(["callgrind_control", "-z", str(server.process.pid)], capture_output=True, check=True)
    server.send(command, CALLS)
    subprocess.run(["callgrind_control", "--dump", str(server.process.pid)], capture_output=True, check=True)
    for _ in range(600):
        new = set(glob.glob(server.dumps + ".*.*")) - before
        if new:
            dump = new.pop()
            time.sleep(0.2)
            result = cost.parse(dump)
            os.remove(dump)
            return {k: v / CALLS for k, v in result.items()}
        time.sleep(0.1)
    raise SystemExit("callgrind wrote no dump")


def pool_rows(server):
    rows = []
    for name, script in POOL_SCRIPTS:
        cost.cli(server.port, "flushall")
        cost.cli(server.port, "IDPOOL.CREATE", "pool:hot", "1000000")
        server.send("IDPOOL.NEXT pool:hot", 100_000)
        sha = cost.cli(server.port, "script", "load", script)
        rows.append((name, counted(server, f"EVALSHA {sha} 1 pool:hot")))
    return rows


def autocomplete_rows(server):
    cost.cli(server.port, "flushall")
    rnd = random.Random(46)
    words = set()
    while len(words) < 20_000:
        words.add("".join(rnd.choice("abcdefghijklmnopqrst") for _ in range(rnd.randint(3, 10))))
    load = subprocess.Popen(["redis-cli", "-p", str(server.port), "--pipe"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL)
    for word in sorted(words):
        args = ["AUTOCOMPLETE.SET", "ac", word, str(rnd.randint(1, 1000))]
        load.stdin.write(("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args)).encode())
    load.stdin.close()
    load.wait()
    cost.cli(server.port, "AUTOCOMPLETE.HINT", "ac", "s")
    present = min(word for word in words if word.startswith("b") and len(word) == 8)
    return [
        ("AUTOCOMPLETE: FEED of an entry present", counted(server, f"AUTOCOMPLETE.FEED ac {present} 1")),
        ("AUTOCOMPLETE: FEED of a new entry", counted(server, "AUTOCOMPLETE.FEED ac new__rand_int__ 1")),
        ("AUTOCOMPLETE: REMOVE of those", counted(server, "AUTOCOMPLETE.REMOVE ac new__rand_int__")),
    ]


def main():
    binary = os.environ.get("REDIS_SERVER") or shutil.which("redis-server")
    server = cost.Server(binary, "standalone")
    try:
        label = server.version()
        rows = pool_rows(server) + autocomplete_rows(server)
    finally:
        server.stop()
    lines = [f"{label}, module `{os.path.basename(cost.MODULE)}`, {CALLS:,} calls a row.", "",
             "| call | instr/call | module code |", "|---|---:|---:|"]
    lines += [f"| {name} | {r['total']:,.0f} | {r['own']:,.0f} |" for name, r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
