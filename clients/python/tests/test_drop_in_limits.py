"""The ``recipes://`` and ``async+recipes://`` storages for ``limits``, on
every server, sync and asyncio: built from their uris, and the moving window
exact through ``limits``' own ``MovingWindowRateLimiter``, one ``RATE.LIMIT``
per hit and one ``RATE.PEEK`` per test or stats read."""

import asyncio
import time
from typing import Any, Awaitable, Callable, Dict

import pytest
import redis
from conftest import Server, value

limits = pytest.importorskip("limits", reason="limits is not installed (pip install './clients/python[test]')")

import limits.aio.strategies  # noqa: E402, F811 (the module importorskip returned, with its submodule)
import limits.strategies  # noqa: E402
from limits import RateLimitItemPerSecond  # noqa: E402
from limits.errors import StorageError  # noqa: E402
from limits.storage import storage_from_string  # noqa: E402

import redis_recipes.drop_in  # noqa: E402,F401  (registers the schemes)
from redis_recipes.drop_in.limits import AsyncRecipesStorage, RecipesStorage  # noqa: E402
from redis_recipes.errors import WrongType  # noqa: E402


def calls(server: Server) -> Dict[str, int]:
    stats = server.client().info("commandstats")
    return {name[len("cmdstat_"):]: value["calls"] for name, value in stats.items() if name.startswith("cmdstat_")}


def run(server: Server, mode: str, body: Callable[[Any, Any], Awaitable[None]], **options: Any) -> None:
    """Runs ``body(storage, MovingWindowRateLimiter)`` for ``mode`` on a
    flushed server."""
    server.client().flushall()
    scheme = "recipes" if mode == "sync" else "async+recipes"

    async def main() -> None:
        storage = storage_from_string(f"{scheme}://127.0.0.1:{server.port}/0", **options)
        strategies = limits.strategies if mode == "sync" else limits.aio.strategies
        try:
            await body(storage, strategies.MovingWindowRateLimiter(storage))
        finally:
            if mode == "asyncio":
                await storage.bridge.get_connection().aclose()

    asyncio.run(main())


def test_the_uris_build_the_recipes_storages(server: Server) -> None:
    sync = storage_from_string(f"recipes://127.0.0.1:{server.port}/0")
    assert type(sync) is RecipesStorage
    assert sync.check() is True

    async def main() -> None:
        storage = storage_from_string(f"async+recipes://127.0.0.1:{server.port}/0")
        assert type(storage) is AsyncRecipesStorage
        assert await storage.check() is True
        await storage.bridge.get_connection().aclose()

    asyncio.run(main())
    # limits' own schemes still build limits' own storages.
    assert type(storage_from_string(f"redis://127.0.0.1:{server.port}")) is limits.storage.RedisStorage


def test_the_moving_window_is_exact(server: Server, mode: str) -> None:
    async def body(storage: Any, limiter: Any) -> None:
        ten = RateLimitItemPerSecond(10)
        before = calls(server)
        # 10 a second: ten hits allowed, the eleventh refused.
        assert [await value(limiter.hit(ten, "user")) for _ in range(11)] == [True] * 10 + [False]
        assert await value(limiter.test(ten, "user")) is False
        stats = await value(limiter.get_window_stats(ten, "user"))
        assert stats.remaining == 0
        # The window frees when the first hit leaves it, a second after it.
        assert time.time() < stats.reset_time <= time.time() + 1
        # A cost is all or nothing: 6 fit, 5 more do not (and take nothing),
        # 4 do; 11 never fit.
        assert await value(limiter.hit(ten, "batch", cost=6)) is True
        assert await value(limiter.hit(ten, "batch", cost=5)) is False
        assert (await value(limiter.get_window_stats(ten, "batch"))).remaining == 4
        assert await value(limiter.test(ten, "batch", cost=4)) is True
        assert await value(limiter.test(ten, "batch", cost=5)) is False
        assert await value(limiter.hit(ten, "batch", cost=4)) is True
        assert await value(limiter.hit(ten, "batch", cost=1)) is False
        assert await value(limiter.hit(ten, "other", cost=11)) is False
        assert (await value(limiter.get_window_stats(ten, "other"))).remaining == 10
        after = calls(server)
        # One RATE.LIMIT per hit that could fit, one RATE.PEEK per test or
        # stats read; no script.
        assert after.get("rate.limit", 0) - before.get("rate.limit", 0) == 11 + 4
        assert after.get("rate.peek", 0) - before.get("rate.peek", 0) == 6
        for script in ("eval", "evalsha"):
            assert after.get(script, 0) == before.get(script, 0)
        key = "LIMITS:" + ten.key_for("user")
        assert server.client().type(key) == b"string"
        assert 0 < server.client().pttl(key) <= 1000

    run(server, mode, body)


def test_hits_leave_the_window_one_by_one(server: Server, mode: str) -> None:
    async def body(storage: Any, limiter: Any) -> None:
        three = RateLimitItemPerSecond(3)
        started = time.time()
        assert await value(limiter.hit(three, "u")) is True
        await asyncio.sleep(0.4)
        assert await value(limiter.hit(three, "u", cost=2)) is True
        assert await value(limiter.hit(three, "u")) is False
        start, count = await value(storage.get_moving_window(three.key_for("u"), 3, 1))
        assert count == 3
        assert started - 0.05 < start < started + 0.05, (start, started)
        # The first hit leaves the window a second after it; the two others
        # are still in it.
        await asyncio.sleep(max(0.0, started + 1.1 - time.time()))
        assert (await value(limiter.get_window_stats(three, "u"))).remaining == 1
        assert await value(limiter.hit(three, "u")) is True
        assert await value(limiter.hit(three, "u")) is False
        await value(limiter.clear(three, "u"))
        assert (await value(limiter.get_window_stats(three, "u"))).remaining == 3

    run(server, mode, body)


def test_resp3_clients_and_a_limit_of_a_million(server: Server, mode: str) -> None:
    async def body(storage: Any, limiter: Any) -> None:
        million = RateLimitItemPerSecond(1_000_000, 2)
        assert await value(limiter.hit(million)) is True
        assert await value(limiter.hit(million, cost=999_999)) is True
        assert await value(limiter.hit(million)) is False
        assert (await value(limiter.get_window_stats(million))).remaining == 0

    run(server, mode, body, protocol=3)


def test_errors_are_the_servers_and_wrap_as_limits_asks(server: Server, mode: str) -> None:
    item = RateLimitItemPerSecond(5)

    async def body(storage: Any, limiter: Any) -> None:
        server.client().hset("LIMITS:" + item.key_for("h"), "f", "v")
        with pytest.raises(WrongType):
            await value(limiter.hit(item, "h"))
        with pytest.raises(redis.ResponseError, match="max must be at most 100000 when its period is over"):
            await value(limiter.hit(RateLimitItemPerSecond(200_000, 3600), "big"))

    run(server, mode, body)

    async def wrapped(storage: Any, limiter: Any) -> None:
        server.client().hset("LIMITS:" + item.key_for("h"), "f", "v")
        with pytest.raises(StorageError) as raised:
            await value(limiter.hit(item, "h"))
        assert isinstance(raised.value.storage_error, WrongType)

    run(server, mode, wrapped, wrap_exceptions=True)
