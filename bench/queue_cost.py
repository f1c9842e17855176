#!/usr/bin/env python3
"""What a bounded push costs the server, in instructions per call (callgrind),
beside the built-ins it replaces: RPUSH, LTRIM, the book's
MULTI/RPUSH/LTRIM key -1000 -1/EXEC, and QUEUE.RPUSH EVICT/REFUSE, each with 1
and 10 items, onto a list of 1,000 items (as examples/bench_driver.rs queue);
and, for the floor of any module command, UQUEUE.LEN of a missing key (open a
key, answer an integer) beside LLEN.

Reuses bench/cost.py's server under callgrind; the calls are sent by this
script over one connection, 64 a batch (redis-benchmark cannot send a
transaction), so the client's parsing of the replies is not counted.

Usage: queue_cost.py [--calls N] [--annotate DIR] [SERVER ...]
(default REDIS_SERVER or redis-server; module from RECIPES_MODULE).
With --annotate, each dump's callgrind_annotate (exclusive, per function) is
written to DIR.
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost  # noqa: E402

MAXLEN = 1000
FILL = [f"fill-{n:04}" for n in range(MAXLEN)]


def encode(words):
    out = [b"*%d\r\n" % len(words)]
    for w in words:
        b = w.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class Reader:
    def __init__(self, sock):
        self.sock, self.buf, self.pos = sock, b"", 0

    def line(self):
        while True:
            end = self.buf.find(b"\r\n", self.pos)
            if end >= 0:
                line, self.pos = self.buf[self.pos:end], end + 2
                return line
            self.buf = self.buf[self.pos:] + self.sock.recv(1 << 20)
            self.pos = 0

    def skip(self, n):
        while len(self.buf) - self.pos < n:
            self.buf = self.buf[self.pos:] + self.sock.recv(1 << 20)
            self.pos = 0
        self.pos += n

    def reply(self):
        line = self.line()
        kind = line[:1]
        if kind == b"-":
            raise SystemExit(f"error reply: {line!r}")
        if kind == b"$":
            n = int(line[1:])
            if n >= 0:
                self.skip(n + 2)
        elif kind == b"*":
            for _ in range(max(int(line[1:]), 0)):
                self.reply()


def calls_of(name, items):
    values = [f"item-{i:04}" for i in range(items)]
    if name == "RPUSH":
        return [["RPUSH", "q", *values]]
    if name == "LTRIM":
        return [["LTRIM", "q", f"-{MAXLEN}", "-1"]]
    if name in ("LLEN", "UQUEUE.LEN"):
        # A missing key: the least a command that opens a key can do.
        return [[name, "none"]]
    if name == "book":
        return [["MULTI"], ["RPUSH", "q", *values], ["LTRIM", "q", f"-{MAXLEN}", "-1"], ["EXEC"]]
    return [["QUEUE.RPUSH", "q", str(MAXLEN), name, *values]]


class QueueServer(cost.Server):
    batch = 64

    def send(self, command, calls):
        request = b"".join(encode(w) for w in command) * self.batch
        replies = len(command) * self.batch
        with socket.create_connection(("127.0.0.1", self.port)) as sock:
            reader = Reader(sock)
            for _ in range(calls // self.batch):
                sock.sendall(request)
                for _ in range(replies):
                    reader.reply()


ROWS = [("LLEN", 0), ("UQUEUE.LEN", 0), ("RPUSH", 1), ("LTRIM", 1), ("book", 1), ("EVICT", 1), ("REFUSE", 1),
        ("RPUSH", 10), ("book", 10), ("EVICT", 10), ("REFUSE", 10)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("servers", nargs="*")
    parser.add_argument("--calls", type=int, default=12800)
    parser.add_argument("--annotate")
    parser.add_argument("--only", action="append", help="NAME:ITEMS, e.g. EVICT:1 (repeatable)")
    args = parser.parse_args()
    binaries = args.servers or [os.environ.get("REDIS_SERVER") or shutil.which("redis-server")]
    rows = [(n, int(i)) for n, i in (o.split(":") for o in args.only)] if args.only else ROWS
    setup = [["RPUSH", "q", *FILL]]
    for binary in binaries:
        server = QueueServer(binary, "standalone")
        try:
            label = server.version()
            print(f"### {label}\n\n| call | items | instr/call | module code | module API | dispatch |")
            print("|---|---:|---:|---:|---:|---:|")
            for name, items in rows:
                def read(dump, name=name, items=items):
                    if args.annotate:
                        os.makedirs(args.annotate, exist_ok=True)
                        tag = f"{label.replace(' ', '-')}-{name}-{items}"
                        shutil.copy(dump, os.path.join(args.annotate, tag + ".cg"))
                        with open(os.path.join(args.annotate, tag + ".txt"), "w") as f:
                            f.write(subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=99.5", dump],
                                                   capture_output=True, text=True).stdout)
                    return cost.parse(dump)
                server.send(calls_of(name, items), args.calls // 10)  # warm up
                r = server.count(calls_of(name, items), setup, args.calls, read)
                c = args.calls
                print(f"| {name} | {items} | {r['total'] / c:,.0f} | {r['own'] / c:,.0f} | {r['api'] / c:,.0f} "
                      f"| {r['dispatch'] / c:,.0f} |", flush=True)
            print()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
