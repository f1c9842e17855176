"""Each module error as its exception; a ``with Lock`` block that outlives its
TTL with renewal on and off; 16 threads contending through the package; a
server without the module; Redis Cluster."""

import asyncio
import threading
import time
from typing import Any, List

import pytest
import redis
from conftest import Clients, Server, value
from redis.exceptions import ResponseError
from test_book import run

import redis_recipes


def test_each_error_has_its_exception(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        errors = redis_recipes
        clients.plain.hset("a-hash", "f", "v")
        clients.plain.set("a-string", "not a limiter")
        clients.plain.set("gen", 2**63 - 1)
        first = recipes.Article(client, 1, slug_index="slugs")
        await value(first.create("t", "c", "a", slug="taken"))
        cases = [
            (lambda: recipes.Article(client, 2, slug_index="slugs").create("t", "c", "a", slug="taken"),
             errors.SlugTaken),
            (lambda: recipes.Article(client, 3, slug_index="slugs").create("t", "c", "a", slug="no spaces"),
             errors.InvalidSlug),
            (lambda: recipes.IdPool(client, "no-pool").acquire(), errors.PoolMissing),
            (lambda: recipes.IdGenerator(client, "gen").produce(), errors.GeneratorExhausted),
            (lambda: recipes.IdGenerator(client, "a-hash").produce(), errors.WrongType),
            (lambda: recipes.RateLimiter(client, "x", 1, 5).limit("y", cost=6), errors.CostTooHigh),
            (lambda: recipes.RateLimiter(client, "x", 1, 5).limit("y", cost=6), ResponseError),
        ]
        for call, kind in cases:
            with pytest.raises(kind):
                await value(call())
        pool = recipes.IdPool(client, "pool")
        await value(pool.create(10))
        await value(pool.acquire())
        await value(pool.acquire())
        with pytest.raises(errors.CannotShrink):
            await value(pool.resize(1))
        limiter = recipes.RateLimiter(client, "act", 1, 5)
        clients.plain.set(limiter.key("u"), "not a limiter")
        with pytest.raises(errors.LimiterMismatch):
            await value(limiter.limit("u"))
        # Any command run through the package's driver is translated.
        broken = recipes.JsonCache(client)
        with pytest.raises(errors.InvalidJson):
            await value(broken._drive(iter_one(("CACHE.SETJSON", "j", "{bad"))))
        assert clients.plain.exists("j") == 0

    run(clients, body)


def test_the_table_of_errors_picks_each_class() -> None:
    from redis_recipes.errors import KINDS, translate

    for kind in KINDS:
        message = f"{kind.start} (the rest) {kind.containing}"
        assert type(translate(ResponseError(message))) is kind.cls, kind
        assert type(translate(ResponseError(f"ERR {message}"))) is kind.cls, kind
        assert str(translate(ResponseError(message))) == message
    assert type(translate(ResponseError("cost 7 is not an error of the module"))) is ResponseError
    assert type(translate(ResponseError("syntax error"))) is ResponseError


def iter_one(words: tuple) -> Any:
    reply = yield words
    return reply


def test_a_server_without_the_module_says_what_to_load(server: Server) -> None:
    plain = Server(server.process.args[0], module=False)
    try:
        with pytest.raises(redis_recipes.ModuleNotLoaded, match="loadmodule"):
            redis_recipes.IdGenerator(plain.client(), "id").produce()
    finally:
        plain.stop()


def lease_outlives_ttl(clients: Clients, renew: bool, on_lost: Any = None) -> Any:
    async def body(client: Any, recipes: Any) -> None:
        lock = recipes.Lock(client, "Lock:long", ttl=0.3, renew=renew, on_lost=on_lost)
        if clients.mode == "sync":
            with lock:
                time.sleep(1.0)
                held = clients.plain.get("Lock:long")
        else:
            async with lock:
                await asyncio.sleep(1.0)
                held = clients.plain.get("Lock:long")
        assert (held == lock.token.encode()) is renew

    run(clients, body)


def test_renewal_keeps_the_lock_past_its_ttl(clients: Clients) -> None:
    lease_outlives_ttl(clients, renew=True)
    assert clients.plain.exists("Lock:long") == 0  # released on exit


def test_without_renewal_the_block_learns_the_lock_was_lost(clients: Clients) -> None:
    with pytest.raises(redis_recipes.LockLost):
        lease_outlives_ttl(clients, renew=False)
    lost: List[Any] = []
    lease_outlives_ttl(Clients(clients.server, clients.mode), renew=False, on_lost=lost.append)
    assert len(lost) == 1


def test_sixteen_threads_never_overlap(server: Server) -> None:
    inside, ledger, guard = [0], [], threading.Lock()

    def worker(n: int) -> None:
        client = server.client()
        for _ in range(20):
            with redis_recipes.Lock(client, "Lock:ledger", ttl=10, wait=30):
                with guard:
                    inside[0] += 1
                    ledger.append(inside[0])
                time.sleep(0.0005)
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ledger) == 16 * 20
    assert max(ledger) == 1, "two holders at once"


def test_redis_cluster(cluster: List[Server]) -> None:
    client = redis.RedisCluster(host="127.0.0.1", port=cluster[0].port)
    try:
        for n in range(20):
            ids = redis_recipes.IdGenerator(client, f"orders:{n}")
            assert ids.produce() == 1
            assert ids.produce_many(5) == range(2, 7)
            lock = redis_recipes.Lock(client, f"{{job:{n}}}:lock", fence=f"{{job:{n}}}:fence", ttl=30)
            assert lock.acquire() and lock.fencing_token == 1
            assert lock.release()
            article = redis_recipes.Article(client, n, key=f"{{blog}}article::{n}", slug_index="{blog}slugs")
            assert article.create("t", "c", "a", slug=f"post-{n}")
            assert redis_recipes.RateLimiter(client, "login", 60, 5).is_permitted(n)
            pool = redis_recipes.IdPool(client, f"pool:{n}")
            assert pool.create(3) and pool.acquire() == 1
        index = redis_recipes.SlugIndex(client, "{blog}slugs")
        assert index.lookup("post-7") == "{blog}article::7"
    finally:
        client.close()


def test_the_package_installs_with_its_types() -> None:
    import importlib.resources

    assert (importlib.resources.files("redis_recipes") / "py.typed").is_file()


def test_redis_cluster_with_asyncio(cluster: List[Server]) -> None:
    import redis.asyncio.cluster

    import redis_recipes.asyncio as recipes

    async def body() -> None:
        client = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=cluster[0].port)
        try:
            for n in range(10):
                assert await recipes.IdGenerator(client, f"async:orders:{n}").produce() == 1
                lock = recipes.Lock(client, f"{{async:{n}}}:lock", fence=f"{{async:{n}}}:fence", ttl=30)
                async with lock:
                    assert lock.fencing_token == 1
                assert (await recipes.RateLimiter(client, "async", 60, 1).limit(n)).allowed
                assert not await recipes.RateLimiter(client, "async", 60, 1).is_permitted(n)
        finally:
            await client.aclose()

    asyncio.run(body())


def pool_lease_outlives_ttl(clients: Clients, renew: bool, on_lost: Any = None) -> Any:
    async def body(client: Any, recipes: Any) -> None:
        pool = recipes.ResourcePool(client, "ResourcePool:long", owner="me")
        await value(pool.associate("r"))
        lease = pool.lease(timeout=5, ttl=0.3, renew=renew, on_lost=on_lost)
        if clients.mode == "sync":
            with lease as resource:
                time.sleep(1.0)
                holders = await value(pool.holders())
        else:
            async with lease as resource:
                await asyncio.sleep(1.0)
                holders = await value(pool.holders())
        assert resource == "r"
        assert ("r" in holders) is renew

    run(clients, body)


def test_a_renewed_pool_lease_outlives_its_ttl(clients: Clients) -> None:
    pool_lease_outlives_ttl(clients, renew=True)
    assert redis_recipes.ResourcePool(clients.plain, "ResourcePool:long").info()["free"] == 1


def test_a_lost_pool_lease_is_reported(clients: Clients) -> None:
    with pytest.raises(redis_recipes.LeaseLost):
        pool_lease_outlives_ttl(clients, renew=False)
    lost: List[Any] = []
    pool_lease_outlives_ttl(Clients(clients.server, clients.mode), renew=False, on_lost=lost.append)
    assert lost == ["r"]


def test_a_lease_that_finds_no_resource_raises(server: Server) -> None:
    pool = redis_recipes.ResourcePool(server.client(), "ResourcePool:empty")
    with pytest.raises(redis_recipes.NoResourceFree):
        with pool.lease(timeout=0.05):
            pass
