"""``redis_recipes.drop_in.pyrate_limiter.RedisBucket``: pyrate-limiter's
Redis bucket on RATE, on every server, sync and asyncio. Built as the
library's (``RedisBucket.init``), a put is one ``RATE.LIMIT`` with the
bucket's rates as the limits of one key (all or nothing, the server's
clock); ``count`` and ``peek`` read it with ``RATE.PEEK``; a blocking
acquire of pyrate-limiter's ``Limiter`` waits in the server's queue, in
arrival order; a key of the library's format refuses with ``WRONGTYPE`` (and
the library refuses ours); other algorithms, and every call on a server
without the module, are the library's own. (pyrate-limiter's own Redis tests
run against the bucket in ``test_drop_in_pyrate_limiter_suite.py``.)"""

import asyncio
import threading
import time
from typing import Any, Dict, List

import pytest
import redis
import redis.asyncio
from conftest import Server, aclose, binary, value

pyrate_limiter = pytest.importorskip(
    "pyrate_limiter", reason="pyrate-limiter is not installed (pip install './clients/python[test]', Python 3.10+)"
)

from pyrate_limiter import FixedWindow, Limiter, Rate, RateItem  # noqa: E402
from pyrate_limiter import RedisBucket as LibraryBucket  # noqa: E402

from redis_recipes.drop_in.pyrate_limiter import RedisBucket  # noqa: E402
from redis_recipes.errors import WrongType  # noqa: E402


def calls(server: Server) -> Dict[str, int]:
    stats = server.client().info("commandstats")
    return {name[len("cmdstat_") :]: stat["calls"] for name, stat in stats.items() if name.startswith("cmdstat_")}


def client_for(server: Server, mode: str) -> Any:
    return server.client() if mode == "sync" else redis.asyncio.Redis(port=server.port)


async def close(client: Any) -> None:
    if isinstance(client, redis.asyncio.Redis):
        await aclose(client)
    else:
        client.close()


def rate_peek(plain: redis.Redis, *words: Any) -> List[int]:
    """``RATE.PEEK``'s fields in order (a map under RESP3, else an array)."""
    reply = plain.execute_command("RATE.PEEK", *words)
    return [int(field) for field in (reply.values() if isinstance(reply, dict) else reply)]


def fresh(server: Server) -> redis.Redis:
    plain = server.client()
    plain.flushall()
    plain.config_resetstat()
    return plain


def test_a_put_is_one_rate_limit_on_the_rates_of_one_key(server: Server, mode: str) -> None:
    plain = fresh(server)
    rates = [Rate(3, 1000), Rate(4, 1500)]

    async def main() -> None:
        client = client_for(server, mode)
        bucket = await value(RedisBucket.init(rates, client, "pyrate/one"))
        assert [await value(bucket.put(RateItem("item", bucket.now()))) for _ in range(4)] == [True] * 3 + [False]
        assert bucket.failing_rate is rates[0]
        wait = await value(bucket.waiting(RateItem("item", bucket.now())))
        assert 900 < wait <= 1000  # the first unit leaves the 1 s window then (server's time)
        assert await value(bucket.count()) == 3
        assert [await value(bucket.peek(i)) is not None for i in range(4)] == [True, True, True, False]
        newest = await value(bucket.peek(0))
        assert newest.name == "pyrate/one" and abs(newest.timestamp - bucket.now()) < 1000
        assert await value(bucket.leak(bucket.now())) == 0
        await close(client)

    asyncio.run(main())
    # RATE's sliding window under the key, its TTL the longest rate's interval.
    stored = plain.get("pyrate/one")
    assert plain.type("pyrate/one") == b"string" and stored is not None and stored[:1] == b"W"
    assert len(stored) in (13, 25, 37)  # the tag, then one 12-byte entry per millisecond with puts
    assert 1400 < plain.pttl("pyrate/one") <= 1500
    # The same window read with RATE.PEEK: 3 of 4 used over 1.5 s.
    assert rate_peek(plain, "pyrate/one", 4, 1500, "SLIDING")[:3] == [0, 4, 1]
    seen = calls(server)
    assert seen["rate.limit"] == 4 and "evalsha" not in seen and "zadd" not in seen, seen
    assert "script|load" in seen or "script" in seen  # init loads the library's script, as the library's does


def test_all_or_nothing_across_the_rates(server: Server) -> None:
    plain = fresh(server)
    rates = [Rate(2, 300), Rate(3, 5000)]
    bucket = RedisBucket.init(rates, server.client(), "pyrate/all")
    assert bucket.put(RateItem("a", bucket.now(), weight=2)) is True
    assert bucket.put(RateItem("a", bucket.now())) is False
    assert bucket.failing_rate is rates[0]
    time.sleep(0.35)
    assert bucket.put(RateItem("a", bucket.now(), weight=2)) is False  # room in 300 ms, not in 5 s
    assert bucket.failing_rate is rates[1]
    assert bucket.count() == 2  # the refused put consumed nothing in either window
    assert bucket.put(RateItem("a", bucket.now())) is True
    assert bucket.failing_rate is None
    assert rate_peek(plain, "pyrate/all", 3, 5000, "SLIDING")[2] == 0


def test_a_weight_above_a_limit_never_fits_and_sends_nothing(server: Server) -> None:
    fresh(server)
    rates = [Rate(3, 1000), Rate(5, 3000)]
    bucket = RedisBucket.init(rates, server.client(), "pyrate/heavy")
    item = RateItem("a", bucket.now(), weight=4)
    assert bucket.put(item) is False
    assert bucket.failing_rate is rates[0]
    assert bucket.waiting(item) == -1
    assert Limiter(bucket).try_acquire("a", weight=4) is False
    assert bucket.put(RateItem("a", bucket.now(), weight=0)) is True  # weightless: counts nothing
    assert "rate.limit" not in calls(server)


def test_a_blocking_acquire_waits_in_the_servers_queue_in_arrival_order(server: Server) -> None:
    fresh(server)
    rates = [Rate(1, 150)]
    first = RedisBucket.init(rates, server.client(), "pyrate/queue")
    assert Limiter(first).try_acquire("q") is True
    granted: List[str] = []
    guard = threading.Lock()

    def waiter(name: str) -> None:
        # Each waiter as another process would be: its own client, bucket and Limiter.
        limiter = Limiter(RedisBucket.init(rates, server.client(), "pyrate/queue"))
        assert limiter.try_acquire(name) is True
        with guard:
            granted.append(name)

    threads = []
    for name in ("a", "b", "c", "d"):
        threads.append(threading.Thread(target=waiter, args=(name,)))
        threads[-1].start()
        time.sleep(0.03)
    for thread in threads:
        thread.join(10)
    assert granted == ["a", "b", "c", "d"]
    seen = calls(server)
    # Each refused acquire queued once (LOCK.ACQUIRE … WAIT) and handed the head on.
    assert seen["lock.acquire"] == 4 and seen["lock.releaseif"] == 4, seen
    assert server.client().exists("{pyrate/queue}:queue") == 0


def test_a_blocking_acquire_gives_up_at_its_timeout_having_consumed_nothing(server: Server, mode: str) -> None:
    plain = fresh(server)
    rates = [Rate(1, 3000)]

    async def main() -> None:
        client = client_for(server, mode)
        limiter = Limiter(await value(RedisBucket.init(rates, client, "pyrate/timeout")))
        if mode == "sync":
            assert limiter.try_acquire("t") is True
            began = time.monotonic()
            assert limiter.try_acquire("t", timeout=0.2) is False
            assert limiter.try_acquire("t", blocking=False) is False
        else:
            assert await limiter.try_acquire_async("t") is True
            began = time.monotonic()
            assert await limiter.try_acquire_async("t", timeout=0.2) is False
            assert await limiter.try_acquire_async("t", blocking=False) is False
        assert 0.19 < time.monotonic() - began < 2.5
        await close(client)

    asyncio.run(main())
    assert rate_peek(plain, "pyrate/timeout", 1, 3000, "SLIDING")[:3] == [1, 1, 0]
    assert plain.exists("{pyrate/timeout}:queue") == 0


def test_an_async_blocking_acquire_is_granted_when_the_window_has_room(server: Server) -> None:
    fresh(server)

    async def main() -> None:
        client = redis.asyncio.Redis(port=server.port)
        limiter = Limiter(await RedisBucket.init([Rate(2, 300)], client, "pyrate/async"))
        began = time.monotonic()
        assert [await limiter.try_acquire_async("x") for _ in range(4)] == [True] * 4
        assert time.monotonic() - began >= 0.29  # the third waited for the window
        await aclose(client)

    asyncio.run(main())
    assert calls(server)["lock.acquire"] >= 1


def test_the_formats_refuse_each_other(server: Server) -> None:
    plain = fresh(server)
    rates = [Rate(5, 1000)]
    library = LibraryBucket.init(rates, server.client(), "pyrate/library")
    assert library.put(RateItem("a", library.now())) is True
    ours = RedisBucket.init(rates, server.client(), "pyrate/library")
    with pytest.raises(WrongType, match="pyrate-limiter's own RedisBucket keeps a sorted set"):
        ours.put(RateItem("a", ours.now()))
    with pytest.raises(WrongType):
        ours.count()
    assert plain.zcard("pyrate/library") == 1  # untouched
    assert RedisBucket.init(rates, server.client(), "pyrate/ours").put(RateItem("a", 0)) is True
    mine = LibraryBucket.init(rates, server.client(), "pyrate/ours")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        mine.put(RateItem("a", mine.now()))
    assert issubclass(WrongType, redis.ResponseError)


def test_other_algorithms_are_the_librarys_own(server: Server) -> None:
    plain = fresh(server)
    bucket = RedisBucket.init([Rate(2, 3_600_000)], server.client(), "pyrate/fixed", algorithm=FixedWindow())
    assert [bucket.put(RateItem("f", bucket.now())) for _ in range(3)] == [True, True, False]
    assert plain.type("pyrate/fixed") == b"zset" and bucket.count() == 2
    assert "rate.limit" not in calls(server)


@pytest.mark.parametrize("mode_", ["sync", "asyncio"])
def test_without_the_module_it_is_the_library(mode_: str) -> None:
    server = Server(binary("redis"), module=False)
    try:
        rates = [Rate(2, 500)]

        async def main() -> None:
            client = client_for(server, mode_)
            bucket = await value(RedisBucket.init(rates, client, "pyrate/without"))
            limiter = Limiter(bucket)
            results = [await value(bucket.put(RateItem("w", bucket.now()))) for _ in range(3)]
            assert results == [True, True, False]
            assert await value(bucket.count()) == 2
            assert b"w:" in (await value(bucket.peek(0))).name.encode()
            if mode_ == "sync":
                assert limiter.try_acquire("w", timeout=1) is True
            else:
                assert await limiter.try_acquire_async("w", timeout=1) is True
            await close(client)

        asyncio.run(main())
        assert server.client().type("pyrate/without") == b"zset"
        seen = calls(server)
        assert seen.get("evalsha", 0) >= 4 and "lock.acquire" not in seen, seen
    finally:
        server.stop()
