#!/usr/bin/env python3
"""pyrate-limiter's RedisBucket against redis_recipes.drop_in.pyrate_limiter.RedisBucket.

Contended: 8 workers (threads, each with a client, a bucket and a Limiter of
its own, as 8 processes of a fleet would have) share one bucket of
Rate(1, 1 ms): one admission a millisecond, as a lock around a 1 ms critical
section would give. Each takes 100 admissions with the blocking
`limiter.try_acquire(name)` and works 1 ms after each. A wait is the time
from asking to being admitted.

Uncontended: one worker, `Rate(1_000_000, 60 s)` (never full), 5,000
`try_acquire` calls back to back: calls a second. Three rounds of each,
interleaved; the table gives medians and the rounds' range, and the ratio
of the drop-in's calls a second to the library's, round by round.

The code is `Limiter(RedisBucket.init(rates, client, key))` in both rows,
with the defaults (`buffer_ms=50`); only the import differs.

Usage: dropin_pyrate.py PORT [LABEL]   (a server with the module loaded on
127.0.0.1:PORT; LABEL names the server in the table)
"""

import statistics
import threading
import time
from typing import Any, Dict, List

import pyrate_limiter
import redis
from pyrate_limiter import Limiter, Rate

from recipes_server import server_from_args
from redis_recipes.drop_in.pyrate_limiter import RedisBucket as DropInBucket

WORKERS = 8
ROUNDS = 100
HOLD = 0.001  # seconds of work after each admission
CONTENDED = [Rate(1, 1)]
UNCONTENDED = [Rate(1_000_000, 60_000)]
CALLS = 5_000
ROUNDS_OF_EACH = 3
KEY = "bench:pyrate"

ROWS = [
    (f"pyrate-limiter {pyrate_limiter.__version__} `RedisBucket`", pyrate_limiter.RedisBucket),
    ("`redis_recipes.drop_in.pyrate_limiter.RedisBucket`", DropInBucket),
]


def contend(port: int, bucket_class: Any) -> Dict[str, float]:
    redis.Redis(port=port).delete(KEY, KEY + ":queue")
    waits: List[float] = []
    guard = threading.Lock()
    start = threading.Barrier(WORKERS + 1)

    def worker() -> None:
        client = redis.Redis(port=port)
        limiter = Limiter(bucket_class.init(CONTENDED, client, KEY))
        mine: List[float] = []
        start.wait()
        for _ in range(ROUNDS):
            asked = time.perf_counter()
            assert limiter.try_acquire("bench") is True
            mine.append(time.perf_counter() - asked)
            time.sleep(HOLD)
        with guard:
            waits.extend(mine)
        limiter.close()
        client.close()

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    for thread in threads:
        thread.start()
    start.wait()
    for thread in threads:
        thread.join()
    waits.sort()
    return {
        "p50": statistics.median(waits) * 1000,
        "p99": waits[int(len(waits) * 0.99) - 1] * 1000,
        "max": waits[-1] * 1000,
    }


def uncontended(port: int, bucket_class: Any) -> float:
    client = redis.Redis(port=port)
    client.delete(KEY)
    limiter = Limiter(bucket_class.init(UNCONTENDED, client, KEY))
    began = time.perf_counter()
    for _ in range(CALLS):
        limiter.try_acquire("bench")
    rate = CALLS / (time.perf_counter() - began)
    limiter.close()
    client.delete(KEY)
    client.close()
    return rate


def spread(values: List[float], digits: int = 0) -> str:
    """The median, with the range of the rounds."""
    return f"{statistics.median(values):,.{digits}f} ({min(values):,.{digits}f}–{max(values):,.{digits}f})"


def main() -> None:
    port, label, client = server_from_args(__doc__)
    client.close()
    rows: Dict[str, Dict[str, List[float]]] = {name: {} for name, _ in ROWS}
    for _ in range(ROUNDS_OF_EACH):  # rounds interleaved, so a busy moment hits both rows
        for name, bucket in ROWS:
            for field, measured in contend(port, bucket).items():
                rows[name].setdefault(field, []).append(measured)
            rows[name].setdefault("alone", []).append(uncontended(port, bucket))
    base = rows[ROWS[0][0]]["alone"]
    print(f"### {label}: pyrate-limiter's `Limiter`, {WORKERS} workers × {ROUNDS} admissions of `Rate(1, 1 ms)` "
          f"with {HOLD * 1000:g} ms of work after each; uncontended: {CALLS:,} calls of `Rate(1000000, 60 s)`. "
          f"Medians of {ROUNDS_OF_EACH} rounds (range)\n")
    print("| bucket | contended: p50 wait ms | p99 wait ms | max wait ms | uncontended calls/s | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, _ in ROWS:
        row = rows[name]
        ratios = [ours / theirs for ours, theirs in zip(row["alone"], base)]
        print(f"| {name} | {spread(row['p50'], 1)} | {spread(row['p99'], 1)} | {spread(row['max'])} "
              f"| {spread(row['alone'])} | {spread(ratios, 2)}× |")


if __name__ == "__main__":
    main()
