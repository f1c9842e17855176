#!/usr/bin/env python3
"""redis-py's Lock against redis_recipes.drop_in.Lock under contention.

8 threads share one redis.Redis client; each takes the same lock 200 times,
holds it for a 1 ms critical section and releases it, with the code
`with client.lock(NAME, timeout=10, sleep=S, lock_class=C):` and nothing
else changed between the rows: redis-py's Lock with its default sleep=0.1,
redis-py's Lock with sleep=0.01, and the drop-in (which waits in the
server's queue; sleep is unused). A wait is the time from asking for the
lock to holding it. Prints a Markdown table; the ratio column is each row's
critical sections per second over redis-py's default.

Usage: dropin_lock.py PORT [LABEL]   (a server with the module loaded on
127.0.0.1:PORT; LABEL names the server in the table)
"""

import statistics
import threading
import time
from typing import Any, Dict, List

import redis
import redis.lock

from recipes_server import server_from_args
from redis_recipes.drop_in import Lock as DropInLock

THREADS = 8
ROUNDS = 200
HOLD = 0.001  # seconds: the critical section
NAME = "bench:dropin-lock"

ROWS = [
    ("redis-py `Lock`, sleep=0.1 (default)", redis.lock.Lock, 0.1),
    ("redis-py `Lock`, sleep=0.01", redis.lock.Lock, 0.01),
    ("`redis_recipes.drop_in.Lock`", DropInLock, 0.1),
]


def contend(port: int, lock_class: type, sleep: float) -> Dict[str, Any]:
    client = redis.Redis(port=port)
    client.delete(NAME)
    waits: List[float] = []
    inside = [0]
    overlaps = [0]
    guard = threading.Lock()
    start = threading.Barrier(THREADS + 1)

    def worker() -> None:
        mine: List[float] = []
        lock = client.lock(NAME, timeout=10, sleep=sleep, lock_class=lock_class)
        start.wait()
        for _ in range(ROUNDS):
            asked = time.perf_counter()
            with lock:
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
        "rate": len(waits) / total,
        "p50": statistics.median(waits) * 1000,
        "p99": waits[int(len(waits) * 0.99) - 1] * 1000,
        "max": waits[-1] * 1000,
        "overlaps": overlaps[0],
    }


def main() -> None:
    port, label, client = server_from_args(__doc__)
    client.close()
    results = [(name, contend(port, lock_class, sleep)) for name, lock_class, sleep in ROWS]
    base = results[0][1]["rate"]
    print(f"### {label}: {THREADS} threads × {ROUNDS} critical sections of {HOLD * 1000:g} ms, one lock\n")
    print("| lock | total s | critical sections/s | p50 wait ms | p99 wait ms | max wait ms | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, row in results:
        assert row["overlaps"] == 0, f"{name}: two holders at once"
        print(f"| {name} | {row['total']:.2f} | {row['rate']:.0f} | {row['p50']:.1f} | {row['p99']:.1f} "
              f"| {row['max']:.0f} | {row['rate'] / base:.2f}× |")


if __name__ == "__main__":
    main()
