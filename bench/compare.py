#!/usr/bin/env python3
"""Throughput of one build of the module against another, interleaved: did a
change make a command slower?

    compare.py BEFORE.so AFTER.so [--server PATH]... [--rounds R] [--requests N]

Each server binary (default: redis-server on PATH) runs twice at once, one
process per build. Each round sends every hot command of `cost.py`'s table
to both, in an order that alternates round by round, after FLUSHALL and the
command's setup, with redis-benchmark (50 clients, pipeline 16, as
`make bench`). A round's ratio is AFTER's requests per second over BEFORE's;
the table gives the median ratio and the spread of the rounds, so load on a
shared machine hits both builds alike. Prints markdown.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost  # noqa: E402


def start(server, module):
    port = cost.free_port()
    workdir = tempfile.mkdtemp()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir, "--save", "",
         "--appendonly", "no", "--loadmodule", module, "--logfile", os.path.join(workdir, "log")])
    cost.wait_ready(port)
    return proc, port, workdir


def rps(port, command, requests):
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-c", "50", "-P", "16", "-n", str(requests),
         "-r", "1000000000", "--csv", *command.split(" ")],
        capture_output=True, text=True).stdout.splitlines()
    # The test's name may hold commas and quotes unescaped: count from the end.
    return float(out[1].split(",")[-7].strip('"'))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--server", action="append")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--requests", type=int, default=200000)
    a = p.parse_args()
    commands = []
    for ours, _builtin, _target, setup in cost.ROWS:
        if ours not in [c for c, _ in commands]:
            commands.append((ours, setup))
    print("| server | command | before (req/s, median) | after (req/s, median) | after / before, median (min–max) |")
    print("|---|---|---:|---:|---:|")
    for server in a.server or [shutil.which("redis-server")]:
        version = subprocess.run([server, "--version"], capture_output=True, text=True).stdout.split()[2].removeprefix("v=")
        builds = [start(server, a.before), start(server, a.after)]
        try:
            for command, setup in commands:
                samples = ([], [])
                for r in range(a.rounds):
                    for side in ((0, 1) if r % 2 == 0 else (1, 0)):
                        port = builds[side][1]
                        cost.cli(port, "FLUSHALL")
                        for words in setup:
                            cost.cli(port, *words)
                        samples[side].append(rps(port, command, a.requests))
                ratios = sorted(after / before for before, after in zip(*samples))
                shown = command if len(command) < 60 else command[:57] + "…"
                print(f"| {version} | `{shown}` | {cost.median(samples[0]):,.0f} | {cost.median(samples[1]):,.0f} "
                      f"| {cost.median(ratios):.3f} ({ratios[0]:.3f}–{ratios[-1]:.3f}) |", flush=True)
        finally:
            for proc, _port, workdir in builds:
                proc.terminate()
                proc.wait()
                shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
