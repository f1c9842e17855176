#!/usr/bin/env python3
"""The limits package's moving window on the recipes:// storage against
limits' own Redis storage (redis://): same redis-py client, same server,
only the storage uri changed.

Speed: one thread calls MovingWindowRateLimiter.hit() HITS times, round robin
over KEYS identifiers of a `1000/hour` limit (every hit allowed), then
get_window_stats() as often; ROUNDS rounds alternate the storages, on fresh
keys each round. The table shows the median calls per second, and the
server's own time per call (INFO commandstats, all commands of the phase):
with one Python client the client's round trip dominates the first, the
second is what a busy server feels.

Memory: MEMORY_HITS hits on each of MEMORY_KEYS identifiers of `1000/hour`,
then the growth of used_memory over MEMORY_KEYS keys. Twice: round robin
over the keys (each hit in a millisecond of its own: one entry per hit, the
recipes storage's worst case), and back to back on each key (hits in the
same millisecond share an entry).

Usage: dropin_limits.py PORT [LABEL]   (a server with the module loaded on
127.0.0.1:PORT, used by nothing else meanwhile; LABEL names the server in
the table)
"""

import statistics
import time
import uuid
from typing import Any, Callable, Dict, List

import redis
from recipes_server import server_from_args
from limits import RateLimitItemPerHour
from limits import __version__ as limits_version
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

import redis_recipes.drop_in  # noqa: F401  (registers recipes://)

ROUNDS = 3
HITS = 10_000
KEYS = 1_000
MEMORY_KEYS = 50
MEMORY_HITS = 1_000
ITEM = RateLimitItemPerHour(1000)

STORAGES = [
    ("limits' Redis storage, `redis://` (Lua scripts, a list of timestamps)", "redis"),
    ("`recipes://` (`RATE.LIMIT` / `RATE.PEEK … SLIDING`)", "recipes"),
]


def storage(scheme: str, port: int, prefix: str) -> Any:
    return storage_from_string(f"{scheme}://127.0.0.1:{port}/0", key_prefix=prefix)


def forget(client: redis.Redis, prefix: str) -> None:
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    for start in range(0, len(keys), 1000):
        client.delete(*keys[start:start + 1000])


def server_usec(client: redis.Redis) -> float:
    """Microseconds the server spent in commands so far (INFO excluded)."""
    stats = client.info("commandstats")
    return sum(value["usec"] for name, value in stats.items() if name not in ("cmdstat_info",))


def timed(client: redis.Redis, calls: int, run: Callable[[], None]) -> Dict[str, float]:
    """Calls per second, and server microseconds per call."""
    usec = server_usec(client)
    began = time.perf_counter()
    run()
    elapsed = time.perf_counter() - began
    return {"rate": calls / elapsed, "usec": (server_usec(client) - usec) / calls}


def speed(scheme: str, port: int, client: redis.Redis) -> Dict[str, Dict[str, float]]:
    prefix = f"bench-{scheme}-{uuid.uuid4().hex[:8]}"
    limiter = MovingWindowRateLimiter(storage(scheme, port, prefix))
    ids = [str(n) for n in range(KEYS)]
    allowed: List[bool] = []

    def hits() -> None:
        hit = limiter.hit
        allowed.extend(hit(ITEM, ids[n % KEYS]) for n in range(HITS))

    def stats() -> None:
        window = limiter.get_window_stats
        for n in range(HITS):
            window(ITEM, ids[n % KEYS])

    result = {"hit": timed(client, HITS, hits), "stats": timed(client, HITS, stats)}
    assert all(allowed) and len(allowed) == HITS, f"{scheme}: a hit was refused"
    forget(client, prefix)
    return result


def memory(scheme: str, port: int, client: redis.Redis, round_robin: bool) -> float:
    prefix = f"mem-{scheme}-{uuid.uuid4().hex[:8]}"
    limiter = MovingWindowRateLimiter(storage(scheme, port, prefix))
    ids = [str(n) for n in range(MEMORY_KEYS)]
    order = [uid for _ in range(MEMORY_HITS) for uid in ids] if round_robin else \
        [uid for uid in ids for _ in range(MEMORY_HITS)]
    before = client.info("memory")["used_memory"]
    for uid in order:
        assert limiter.hit(ITEM, uid), f"{scheme}: a hit was refused"
    after = client.info("memory")["used_memory"]
    forget(client, prefix)
    return (after - before) / MEMORY_KEYS


def main() -> None:
    port, label, client = server_from_args(__doc__)
    runs: Dict[str, List[Dict[str, Dict[str, float]]]] = {scheme: [] for _, scheme in STORAGES}
    for round_ in range(ROUNDS):
        order = STORAGES if round_ % 2 == 0 else STORAGES[::-1]
        for _, scheme in order:
            runs[scheme].append(speed(scheme, port, client))
    table: Dict[str, Dict[str, float]] = {}
    for _, scheme in STORAGES:
        row = {f"{call}_{what}": statistics.median(run[call][what] for run in runs[scheme])
               for call in ("hit", "stats") for what in ("rate", "usec")}
        row["spread"] = memory(scheme, port, client, round_robin=True)
        row["burst"] = memory(scheme, port, client, round_robin=False)
        table[scheme] = row
    client.close()
    theirs, ours = table["redis"], table["recipes"]
    print(f"### {label}: limits {limits_version} moving window, `{ITEM}`, one redis-py client\n")
    print(f"Speed: median of {ROUNDS} rounds of {HITS:,} calls over {KEYS:,} keys; server µs: the server's own "
          f"time per call (INFO commandstats). Memory: used_memory growth per key after {MEMORY_HITS:,} hits on "
          f"each of {MEMORY_KEYS} keys, round robin (a millisecond of its own per hit) or back to back.\n")
    print("| storage | `hit()` calls/s | server µs per `hit()` | `get_window_stats()` calls/s "
          "| server µs per `get_window_stats()` | memory per key, round robin | memory per key, back to back |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, scheme in STORAGES:
        row = table[scheme]
        print(f"| {name} | {row['hit_rate']:,.0f} | {row['hit_usec']:.2f} | {row['stats_rate']:,.0f} "
              f"| {row['stats_usec']:.2f} | {row['spread']:,.0f} B | {row['burst']:,.0f} B |")
    print(f"| **recipes:// vs redis://** | **{ours['hit_rate'] / theirs['hit_rate']:.2f}×** (target ≥ 1.5) "
          f"| **{theirs['hit_usec'] / ours['hit_usec']:.2f}× less** "
          f"| **{ours['stats_rate'] / theirs['stats_rate']:.2f}×** "
          f"| **{theirs['stats_usec'] / ours['stats_usec']:.2f}× less** "
          f"| **{theirs['spread'] / ours['spread']:.2f}× less** | **{theirs['burst'] / ours['burst']:.2f}× less** |")


if __name__ == "__main__":
    main()
