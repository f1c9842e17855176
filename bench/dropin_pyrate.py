#!/usr/bin/env python3
"""pyrate-limiter's RedisBucket against redis_recipes.drop_in.pyrate_limiter.RedisBucket.

Contended: 8 workers (threads, each with a client, a bucket and a Limiter of
its own, as 8 processes of a fleet would have) share one bucket of
Rate(1, 1 ms): one admission a millisecond, as a lock around a 1 ms critical
section would give. Each takes 100 admissions with the blocking
`limiter.try_acquire(name)` and works 1 ms after each. A wait is the time
from asking to being admitted. Every row checks afterwards that no 1 ms
window admitted more than 1 (from the admission times, by the server's
clock: `TIME` read around each one would cost a round trip, so the check
reads the bucket's own record instead: the library's sorted set or, for the
drop-in, RATE.PEEK over the run).

Uncontended: one worker, `Rate(1_000_000, 60 s)` (never full), 5,000
`try_acquire` calls back to back: calls a second, median of 3 rounds.

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
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    total = time.perf_counter() - began
    waits.sort()
    return {
        "total": total,
        "rate": len(waits) / total,
        "p50": statistics.median(waits) * 1000,
        "p99": waits[int(len(waits) * 0.99) - 1] * 1000,
        "max": waits[-1] * 1000,
    }


def uncontended(port: int, bucket_class: Any) -> float:
    rates = []
    for _ in range(3):
        client = redis.Redis(port=port)
        client.delete(KEY)
        limiter = Limiter(bucket_class.init(UNCONTENDED, client, KEY))
        began = time.perf_counter()
        for _ in range(CALLS):
            limiter.try_acquire("bench")
        rates.append(CALLS / (time.perf_counter() - began))
        limiter.close()
        client.delete(KEY)
        client.close()
    return statistics.median(rates)


def main() -> None:
    port, label, client = server_from_args(__doc__)
    client.close()
    contended = [(name, contend(port, bucket)) for name, bucket in ROWS]
    alone = [uncontended(port, bucket) for _, bucket in ROWS]
    print(f"### {label}: pyrate-limiter's `Limiter`, {WORKERS} workers × {ROUNDS} admissions of `Rate(1, 1 ms)` "
          f"with {HOLD * 1000:g} ms of work after each; uncontended: {CALLS:,} calls, median of 3 rounds\n")
    print("| bucket | contended total s | p50 wait ms | p99 wait ms | max wait ms | uncontended calls/s | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (name, row), rate in zip(contended, alone):
        print(f"| {name} | {row['total']:.2f} | {row['p50']:.1f} | {row['p99']:.1f} | {row['max']:.0f} "
              f"| {rate:,.0f} | {rate / alone[0]:.2f}× |")


if __name__ == "__main__":
    main()
