#!/usr/bin/env python3
"""python-redis-lock against redis_recipes.drop_in.redis_lock.

Contended: 8 threads share one redis.Redis client; each takes the same lock
200 times with `with redis_lock.Lock(client, NAME, expire=10):`, holds it
for a 1 ms critical section and releases it; the module is the only change
between the rows (the library wakes its waiters with BLPOP on a signal
list; the drop-in waits in the server's queue). A wait is the time from
asking for the lock to holding it. Uncontended: one thread takes and
releases a lock of its own 5,000 times (the same line, a new Lock each
time); median and spread (min–max) of 5 rounds, the two rows' rounds taken
in turn.

Usage: dropin_redis_lock.py PORT [LABEL]   (a server with the module
loaded on 127.0.0.1:PORT; LABEL names the server in the table)
"""

import statistics
import threading
import time
from typing import Any, Dict, List

import redis
import redis_lock

from recipes_server import server_from_args
from redis_recipes.drop_in import redis_lock as drop_in

THREADS = 8
ROUNDS = 200
HOLD = 0.001  # seconds: the critical section
ALONE = 5000  # uncontended acquire/release cycles per round
ALONE_ROUNDS = 5
NAME = "bench:dropin-redis-lock"

ROWS = [("python-redis-lock `redis_lock`", redis_lock), ("`redis_recipes.drop_in.redis_lock`", drop_in)]


def contend(port: int, module: Any) -> Dict[str, Any]:
    client = redis.Redis(port=port)
    client.delete("lock:" + NAME, "lock-signal:" + NAME)
    waits: List[float] = []
    inside = [0]
    overlaps = [0]
    guard = threading.Lock()
    start = threading.Barrier(THREADS + 1)

    def worker() -> None:
        mine: List[float] = []
        start.wait()
        for _ in range(ROUNDS):
            asked = time.perf_counter()
            with module.Lock(client, NAME, expire=10):
                mine.append(time.perf_counter() - asked)
                with guard:
                    inside[0] += 1
                    overlaps[0] += inside[0] > 1
                time.sleep(HOLD)
                with guard:
                    inside[0] -= 1
        with guard:
            waits.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    total = time.perf_counter() - began
    client.close()
    waits.sort()
    return {
        "total": total,
        "p50": statistics.median(waits) * 1000,
        "p99": waits[int(len(waits) * 0.99) - 1] * 1000,
        "max": waits[-1] * 1000,
        "overlaps": overlaps[0],
    }


def alone(port: int) -> List[List[float]]:
    """Acquire/release cycles per second of each row, one figure per round;
    the rows' rounds alternate, so a change in the machine's load falls on
    both."""
    client = redis.Redis(port=port)
    rates: List[List[float]] = [[] for _ in ROWS]
    for _ in range(ALONE_ROUNDS):
        for row, (_, module) in enumerate(ROWS):
            began = time.perf_counter()
            for _ in range(ALONE):
                with module.Lock(client, NAME + ":alone", expire=10):
                    pass
            rates[row].append(ALONE / (time.perf_counter() - began))
    client.close()
    return rates


def main() -> None:
    port, label, client = server_from_args(__doc__)
    client.close()
    rates = alone(port)
    results = [(name, contend(port, module), rates[row]) for row, (name, module) in enumerate(ROWS)]
    base = statistics.median(results[0][2])
    print(f"### {label}: python-redis-lock, {THREADS} threads × {ROUNDS} critical sections of {HOLD * 1000:g} ms, "
          f"and {ALONE:,} uncontended cycles\n")
    print("| lock | contended: total s | p50 wait ms | p99 wait ms | max wait ms "
          "| uncontended cycles/s, median (min–max) | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, row, rates in results:
        assert row["overlaps"] == 0, f"{name}: two holders at once"
        rate = statistics.median(rates)
        print(f"| {name} | {row['total']:.2f} | {row['p50']:.1f} | {row['p99']:.1f} | {row['max']:.0f} "
              f"| {rate:,.0f} ({min(rates):,.0f}–{max(rates):,.0f}) | {rate / base:.2f}× |")


if __name__ == "__main__":
    main()
