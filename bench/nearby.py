#!/usr/bin/env python3
"""NEARBY.RANDOM against the recipe it replaces: GEOSEARCH … BYRADIUS of every
member within the radius, and a pick in the client (random.choice), on the
same geo key, at 1,000, 100,000 and 1,000,000 members.

Two layouts, each a key of N members:
- *sparse*: 100 members within 1 km of the centre, the rest spread over the
  whole map: what is inside the radius stays the same as the key grows;
- *dense*: N members spread evenly over a 20 km square around the centre:
  the members within 1 km grow with N (about 0.8% of them).

One call is one round trip of one client (redis-py, no pipelining). Rounds
alternate the two (200 calls each); a cell is the median of 5 rounds' calls
per second, with their range; the ratio is ours over the recipe, the median
of the per-round ratios.

Usage: nearby.py PORT [LABEL]   (a server with the module loaded on
127.0.0.1:PORT; LABEL names the server in the table)
"""

import math
import random
import statistics
import time
from typing import Callable, List, Tuple

import redis

from recipes_server import server_from_args

SIZES = (1_000, 100_000, 1_000_000)
CALLS = 200
ROUNDS = 5
CENTRE = (13.40, 52.52)
KEY = "bench:nearby"
# Degrees of latitude and longitude in a kilometre at the centre's latitude.
KM_LAT = 1 / 111.2
KM_LON = 1 / (111.2 * math.cos(math.radians(CENTRE[1])))


def load(client: redis.Redis, layout: str, size: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    client.delete(KEY)
    pipe = client.pipeline(transaction=False)
    batch: List[object] = []
    for i in range(size):
        if layout == "sparse" and i >= 100:
            lon, lat = rng.uniform(-179, 179), rng.uniform(-80, 80)
        elif layout == "sparse":
            # Within 0.9 km of the centre, evenly over the disc.
            r, a = 0.9 * math.sqrt(rng.random()), rng.uniform(0, 2 * math.pi)
            lon, lat = CENTRE[0] + r * math.cos(a) * KM_LON, CENTRE[1] + r * math.sin(a) * KM_LAT
        else:
            lon, lat = CENTRE[0] + rng.uniform(-10, 10) * KM_LON, CENTRE[1] + rng.uniform(-10, 10) * KM_LAT
        batch.extend((f"{lon:.6f}", f"{lat:.6f}", f"m{i}"))
        if len(batch) >= 3000:
            pipe.execute_command("GEOADD", KEY, *batch)
            batch = []
        if len(pipe) >= 20:
            pipe.execute()
    if batch:
        pipe.execute_command("GEOADD", KEY, *batch)
    pipe.execute()


def per_second(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        call()
    return CALLS / (time.perf_counter() - started)


def compare(client: redis.Redis) -> Tuple[List[float], List[float], int]:
    lon, lat = (str(x) for x in CENTRE)
    within = client.execute_command("GEOSEARCH", KEY, "FROMLONLAT", lon, lat, "BYRADIUS", "1", "km")

    def ours() -> object:
        return client.execute_command("NEARBY.RANDOM", KEY, "FROMLONLAT", lon, lat, "BYRADIUS", "1", "km")

    def recipe() -> object:
        found = client.execute_command("GEOSEARCH", KEY, "FROMLONLAT", lon, lat, "BYRADIUS", "1", "km")
        return random.choice(found) if found else None

    assert ours() in within
    rates_ours, rates_recipe = [], []
    for _ in range(ROUNDS):
        rates_ours.append(per_second(ours))
        rates_recipe.append(per_second(recipe))
    return rates_ours, rates_recipe, len(within)


def cell(rates: List[float]) -> str:
    return f"{statistics.median(rates):,.0f} ({min(rates):,.0f}–{max(rates):,.0f})"


def main() -> None:
    _, label, client = server_from_args(__doc__.split("Usage: ")[1])
    print(f"### {label}: NEARBY.RANDOM against GEOSEARCH … BYRADIUS 1 km and a pick in the client\n")
    print("| layout | members | within 1 km | NEARBY.RANDOM calls/s | recipe calls/s | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for layout in ("sparse", "dense"):
        for size in SIZES:
            load(client, layout, size)
            ours, recipe, within = compare(client)
            ratio = statistics.median(o / r for o, r in zip(ours, recipe))
            print(f"| {layout} | {size:,} | {within:,} | {cell(ours)} | {cell(recipe)} | {ratio:.2f}× |", flush=True)
    client.delete(KEY)
    print()


if __name__ == "__main__":
    main()
