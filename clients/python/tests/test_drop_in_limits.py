"""``redis_recipes.drop_in.limits``: the ``recipes://`` and
``async+recipes://`` storages for ``limits``, on every server, sync and
asyncio: built from their uris, and the moving window exact through
``limits``' own ``MovingWindowRateLimiter``, one ``RATE.LIMIT`` per hit and
one ``RATE.PEEK`` per test or stats read. And Flask-Limiter and SlowAPI on
the ``recipes://`` storage: the one-line change (``storage_uri``) in an
application, a route limited to 2 a minute answering 429 on the third
request, and the moving window running on the module's RATE commands.
(``limits``' own tests run against these storages in
``test_drop_in_limits_suite.py``.)"""

import asyncio
import time
from typing import Any, Awaitable, Callable, Dict

import pytest
import redis
from conftest import Server, aclose, value

limits = pytest.importorskip("limits", reason="limits is not installed (pip install './clients/python[test]')")

import limits.aio.storage  # noqa: E402, F811 (the module importorskip returned, with its submodule)
import limits.aio.strategies  # noqa: E402
import limits.strategies  # noqa: E402
from limits import RateLimitItemPerSecond  # noqa: E402
from limits.errors import StorageError  # noqa: E402
from limits.storage import storage_from_string  # noqa: E402
from packaging.version import Version  # noqa: E402  (limits' own dependency)

import redis_recipes.drop_in  # noqa: E402,F401  (registers the schemes)
from redis_recipes.drop_in.limits import AsyncRecipesStorage, RecipesStorage  # noqa: E402
from redis_recipes.errors import WrongType  # noqa: E402

# limits' asyncio Redis storage, which ours extends, refuses a redis-py older
# than it asks for (5.2.0 with limits 5.8; the package supports 5.0).
NEEDED = limits.aio.storage.RedisStorage.DEPENDENCIES.get("redis")
ASYNCIO_REFUSED = (
    f"limits {limits.__version__}'s asyncio Redis storage needs redis>={NEEDED} (redis {redis.__version__} here)"
    if NEEDED is not None and Version(redis.__version__) < Version(str(NEEDED)) else ""
)


def needs_the_asyncio_storage() -> None:
    """Skips the test where limits' asyncio storage refuses this redis-py."""
    if ASYNCIO_REFUSED:
        pytest.skip(ASYNCIO_REFUSED)


def calls(server: Server) -> Dict[str, int]:
    stats = server.client().info("commandstats")
    return {name[len("cmdstat_"):]: value["calls"] for name, value in stats.items() if name.startswith("cmdstat_")}


def run(server: Server, mode: str, body: Callable[[Any, Any], Awaitable[None]], **options: Any) -> None:
    """Runs ``body(storage, MovingWindowRateLimiter)`` for ``mode`` on a
    flushed server."""
    if mode == "asyncio":
        needs_the_asyncio_storage()
    server.client().flushall()
    scheme = "recipes" if mode == "sync" else "async+recipes"

    async def main() -> None:
        storage = storage_from_string(f"{scheme}://127.0.0.1:{server.port}/0", **options)
        strategies = limits.strategies if mode == "sync" else limits.aio.strategies
        try:
            await body(storage, strategies.MovingWindowRateLimiter(storage))
        finally:
            if mode == "asyncio":
                await aclose(storage.bridge.get_connection())

    asyncio.run(main())


def test_the_uris_build_the_recipes_storages(server: Server) -> None:
    needs_the_asyncio_storage()
    sync = storage_from_string(f"recipes://127.0.0.1:{server.port}/0")
    assert type(sync) is RecipesStorage
    assert sync.check() is True

    async def main() -> None:
        storage = storage_from_string(f"async+recipes://127.0.0.1:{server.port}/0")
        assert type(storage) is AsyncRecipesStorage
        assert await storage.check() is True
        await aclose(storage.bridge.get_connection())

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
        # Three hits in 2 s: the first hit leaves the window 2 s after it, the
        # two others (0.8 s later) 0.8 s after that; the check between them
        # has 0.75 s to spare for a machine whose both cores are busy.
        three = RateLimitItemPerSecond(3, 2)
        before = time.time()
        assert await value(limiter.hit(three, "u")) is True
        after = time.time()
        await asyncio.sleep(0.8)
        assert await value(limiter.hit(three, "u", cost=2)) is True
        assert await value(limiter.hit(three, "u")) is False
        asked = time.time()
        start, count = await value(storage.get_moving_window(three.key_for("u"), 3, 2))
        answered = time.time()
        assert count == 3
        # The first hit was allowed while its call ran: the start, read from
        # the server's whole milliseconds left and this clock when asked, is
        # early by at most the time the answer took.
        assert before - (answered - asked) - 0.002 < start < after + 0.002, (before, start, after)
        await asyncio.sleep(max(0.0, after + 2.05 - time.time()))
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


# ---- Flask-Limiter and SlowAPI ----------------------------------------------


def rate_calls(server: Server) -> Dict[str, int]:
    stats = server.client().info("commandstats")
    return {name: stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("rate.limit", "rate.peek")}


def test_flask_limiter(server: Server) -> None:
    pytest.importorskip("flask_limiter", reason="Flask-Limiter is not installed")
    from flask import Flask
    from flask_limiter import Limiter
    from flask_limiter.util import get_remote_address

    server.client().flushall()
    before = rate_calls(server)
    app = Flask(__name__)
    limiter = Limiter(
        get_remote_address,
        app=app,
        storage_uri=f"recipes://127.0.0.1:{server.port}",
        strategy="moving-window",
    )

    @app.route("/hello")
    @limiter.limit("2/minute")
    def hello() -> str:
        return "hello"

    client = app.test_client()
    assert [client.get("/hello").status_code for _ in range(3)] == [200, 200, 429]
    after = rate_calls(server)
    assert after["rate.limit"] > before["rate.limit"]


def test_slowapi(server: Server) -> None:
    pytest.importorskip("slowapi", reason="SlowAPI is not installed")
    from slowapi import Limiter, _rate_limit_exceeded_handler
    from slowapi.errors import RateLimitExceeded
    from slowapi.util import get_remote_address
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    server.client().flushall()
    before = rate_calls(server)
    limiter = Limiter(
        key_func=get_remote_address,
        storage_uri=f"recipes://127.0.0.1:{server.port}",
        strategy="moving-window",
    )

    @limiter.limit("2/minute")
    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("hello")

    app = Starlette(routes=[Route("/hello", hello)])
    app.state.limiter = limiter
    app.add_exception_handler(RateLimitExceeded, _rate_limit_exceeded_handler)
    client = TestClient(app)
    assert [client.get("/hello").status_code for _ in range(3)] == [200, 200, 429]
    after = rate_calls(server)
    assert after["rate.limit"] > before["rate.limit"]
