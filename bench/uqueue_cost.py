#!/usr/bin/env python3
"""What a unique circular queue costs the server, in instructions per call
(callgrind), beside the book's recipe on a plain list: UQUEUE.INSERT of 1 and
10 queued items (each moved to the tail) against MULTI, one `LREM key 0 item`
per item, `RPUSH key items…`, EXEC; UQUEUE.ROTATE against `LMOVE key key LEFT
RIGHT`; both on 10,000 items (as examples/bench_driver.rs uqueue).

Reuses bench/queue_cost.py's server and reply reader (bench/cost.py's server
under callgrind); the calls are sent by this script over one connection, 64 a
batch, so the client's parsing of the replies is not counted. The book's rows
get a tenth of the calls (each scans the whole list). Each request of a
batch names other items (item-NNNNN, all queued), so a batch moves 64 (or 640)
different items.

Usage: uqueue_cost.py [--calls N] [--annotate DIR] [--only NAME:ITEMS]... [SERVER ...]
(default REDIS_SERVER or redis-server; module from RECIPES_MODULE).
With --markdown, prints the table of bench/results/uqueue.md (one column per
server) instead of one table per server.
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost  # noqa: E402
import queue_cost  # noqa: E402

LENGTH = 10000
ITEMS = [f"item-{n:05}" for n in range(LENGTH)]


def request(name, items, i):
    """The words of the `i`th call of a batch (0 ≤ i < 64)."""
    # 13 is coprime to LENGTH: the 64 × items numbers are distinct.
    values = [ITEMS[(i * items + j) * 13 % LENGTH] for j in range(items)]
    if name == "UQUEUE.INSERT":
        return [["UQUEUE.INSERT", "uq", *values]]
    if name == "book":
        return [["MULTI"], *(["LREM", "l", "0", v] for v in values), ["RPUSH", "l", *values], ["EXEC"]]
    if name == "UQUEUE.ROTATE":
        return [["UQUEUE.ROTATE", "uq"]]
    if name == "LMOVE":
        return [["LMOVE", "l", "l", "LEFT", "RIGHT"]]
    raise SystemExit(f"unknown row {name}")


class UqueueServer(queue_cost.QueueServer):
    def send(self, command, calls):
        name, items = command
        batch = [request(name, items, i) for i in range(self.batch)]
        data = b"".join(queue_cost.encode(w) for words in batch for w in words)
        replies = sum(len(words) for words in batch)
        with socket.create_connection(("127.0.0.1", self.port)) as sock:
            reader = queue_cost.Reader(sock)
            for _ in range(calls // self.batch):
                sock.sendall(data)
                for _ in range(replies):
                    reader.reply()


ROWS = [("UQUEUE.INSERT", 1), ("book", 1), ("UQUEUE.INSERT", 10), ("book", 10),
        ("UQUEUE.ROTATE", 0), ("LMOVE", 0)]
LABELS = {("UQUEUE.INSERT", 1): "`UQUEUE.INSERT`, 1 item", ("book", 1): "the book's MULTI/LREM/RPUSH/EXEC, 1 item",
          ("UQUEUE.INSERT", 10): "`UQUEUE.INSERT`, 10 items",
          ("book", 10): "the book's MULTI/10 LREM/RPUSH/EXEC, 10 items",
          ("UQUEUE.ROTATE", 0): "`UQUEUE.ROTATE`", ("LMOVE", 0): "`LMOVE key key LEFT RIGHT`"}
SETUP = [["UQUEUE.INSERT", "uq", *ITEMS], ["RPUSH", "l", *ITEMS]]


def measure(binary, rows, calls, annotate=None):
    """→ (server label, {row: {total, own, api, dispatch} per call})."""
    server = UqueueServer(binary, "standalone")
    try:
        label = server.version()
        out = {}
        for name, items in rows:
            def read(dump, name=name, items=items):
                if annotate:
                    os.makedirs(annotate, exist_ok=True)
                    tag = f"{label.replace(' ', '-')}-{name}-{items}"
                    shutil.copy(dump, os.path.join(annotate, tag + ".cg"))
                    with open(os.path.join(annotate, tag + ".txt"), "w") as f:
                        f.write(subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=99.5", dump],
                                               capture_output=True, text=True).stdout)
                return cost.parse(dump)
            # The book's LREM scans all 10,000 items: a tenth of the calls.
            n = max(64, calls // 10 // 64 * 64) if name == "book" else calls
            server.send((name, items), max(64, n // 10))  # warm up
            r = server.count((name, items), SETUP, n, read)
            out[(name, items)] = {k: v / n for k, v in r.items()}
        return label, out
    finally:
        server.stop()


def markdown(results):
    """One row per call, one column per server; ratios the built-in's count over ours."""
    labels = [label for label, _ in results]
    lines = ["| call | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for row in ROWS:
        cells = []
        for _, counts in results:
            c = counts.get(row)
            cells.append("—" if c is None else f"{c['total']:,.0f} (module code {c['own']:,.0f})")
        lines.append(f"| {LABELS[row]} | " + " | ".join(cells) + " |")
    for ours, theirs, what, target in [(("UQUEUE.INSERT", 1), ("book", 1), "1 item: book ÷ UQUEUE.INSERT", "≥ 20"),
                                       (("UQUEUE.INSERT", 10), ("book", 10), "10 items: book ÷ UQUEUE.INSERT", "≥ 20"),
                                       (("UQUEUE.ROTATE", 0), ("LMOVE", 0), "LMOVE ÷ UQUEUE.ROTATE", "≥ 0.8")]:
        cells = []
        for _, counts in results:
            if ours in counts and theirs in counts:
                cells.append(f"**{counts[theirs]['total'] / counts[ours]['total']:,.2f}×**")
            else:
                cells.append("—")
        lines.append(f"| {what} (target {target}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("servers", nargs="*")
    parser.add_argument("--calls", type=int, default=6400)
    parser.add_argument("--annotate")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", action="append", help="NAME:ITEMS, e.g. UQUEUE.ROTATE:0 (repeatable)")
    args = parser.parse_args()
    binaries = args.servers or [os.environ.get("REDIS_SERVER") or shutil.which("redis-server")]
    rows = [(n, int(i)) for n, i in (o.split(":") for o in args.only)] if args.only else ROWS
    results = []
    for binary in binaries:
        label, counts = measure(binary, rows, args.calls, args.annotate)
        results.append((label, counts))
        if not args.markdown:
            print(f"### {label}\n\n| call | instr/call | module code | module API | dispatch |")
            print("|---|---:|---:|---:|---:|")
            for row in rows:
                r = counts[row]
                print(f"| {LABELS[row]} | {r['total']:,.0f} | {r['own']:,.0f} | {r['api']:,.0f} "
                      f"| {r['dispatch']:,.0f} |", flush=True)
            print()
    if args.markdown:
        print(markdown(results))


if __name__ == "__main__":
    main()
