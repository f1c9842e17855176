"""``redis_recipes._core`` and the asyncio driver, what every class runs on,
sync and asyncio: commands that wait longer than redis-py 8's default socket
timeout (5 s) keep their place, standalone and on Redis Cluster; a reply
later than the wait; a moved slot; every family's commands on Redis Cluster;
and the replies a client gets with ``decode_responses`` (the book's
configuration) and without it."""

import asyncio
import concurrent.futures
import time
from typing import Any, Callable, Dict, List, NamedTuple

import pytest
import redis
import redis.asyncio
from conftest import Book, Server, aclose, value
from recipes_helpers import same, until

import redis_recipes
import redis_recipes._core
import redis_recipes.asyncio

# ---- Waits longer than the socket timeout ----------------------------------
#
# A Lock, a ResourcePool and an IdPool, each with one unit held for ~7 s while
# two waiters queue for it, with default clients. Each waiter gets the unit in
# its turn and sends its command once. Everything runs at once (standalone and
# cluster, sync and asyncio) to keep the suite short.

HELD = 7.0  # seconds the holder keeps the unit: past the 5 s socket timeout
WAIT = 10.0  # seconds each waiter waits


class Family(NamedTuple):
    """One kind of queue: the command that waits, how to make a waiter and
    what it gets."""

    command: str
    parked: str  # the module's INFO field counting the waits it parked
    setup: Callable[[Any, Any, str], Any]  # (recipes, client, key)
    unit: Callable[[Any, Any, str, str], Any]  # (recipes, client, key, who)
    take: Callable[[Any, float], Any]
    give: Callable[[Any], Any]
    got: Any


FAMILIES = [
    Family("lock.acquire", "recipes_lock_waits",
           setup=lambda r, c, k: None,
           unit=lambda r, c, k, who: r.Lock(c, k, token=who),
           take=lambda u, s: u.acquire(timeout=s), give=lambda u: u.release(), got=True),
    Family("pool.acquire", "recipes_resource_waits",
           setup=lambda r, c, k: r.ResourcePool(c, k).associate("r"),
           unit=lambda r, c, k, who: r.ResourcePool(c, k, owner=who),
           take=lambda u, s: u.acquire(timeout=s), give=lambda u: u.release("r"), got="r"),
    Family("idpool.next", "recipes_idpool_waits",
           setup=lambda r, c, k: r.IdPool(c, k).create(1),
           unit=lambda r, c, k, who: r.IdPool(c, k),
           take=lambda u, s: u.acquire(timeout=s), give=lambda u: u.release(1), got=1),
]

THREADS = concurrent.futures.ThreadPoolExecutor(max_workers=32)


def start(mode: str, call: Callable[[], Any]) -> "asyncio.Future[Any]":
    """Starts a package call: on a thread of its own for a sync client."""
    if mode == "sync":
        return asyncio.get_running_loop().run_in_executor(THREADS, call)
    return asyncio.ensure_future(call())


async def parked(plain: Any, key: str, name: str) -> None:
    """Returns once the client named ``name`` waits in the server that
    serves ``key`` (its ``CLIENT LIST`` line flagged ``b``)."""
    node = plain.get_redis_connection(plain.get_node_from_key(key)) if isinstance(plain, redis.RedisCluster) else plain
    await until(lambda: any(c["name"] == name and "b" in c["flags"] for c in node.client_list()),
                what=f"{name} waiting")


async def keeps_its_place(family: Family, mode: str, plain: Any, new_client: Callable[..., Any], key: str) -> None:
    """A holds the unit after the holder, B (queued 1 s after A) after A.
    B is sent once A waits in the server: with both cores busy, A's thread
    or task may take longer than a second to send its call."""
    family.setup(redis_recipes, plain, key)
    holder = family.unit(redis_recipes, plain, key, "holder")
    assert family.take(holder, WAIT) == family.got
    recipes = redis_recipes if mode == "sync" else redis_recipes.asyncio
    names = [f"{key}:{who}".replace(" ", "_") for who in "ab"]
    clients = [new_client(client_name=name) for name in names]  # defaults: socket_timeout=5 with redis-py 8
    a, b = (family.unit(recipes, client, key, who) for client, who in zip(clients, "ab"))
    try:
        started = time.monotonic()
        waiting_a = start(mode, lambda: family.take(a, WAIT))
        await asyncio.sleep(1)
        await parked(plain, key, names[0])
        waiting_b = start(mode, lambda: family.take(b, WAIT))
        await parked(plain, key, names[1])
        await asyncio.sleep(max(0.0, HELD - (time.monotonic() - started)))
        assert not waiting_a.done() and not waiting_b.done()
        assert family.give(holder)
        assert await asyncio.wait_for(waiting_a, 3) == family.got, family.command
        assert HELD - 0.5 < time.monotonic() - started < HELD + 1.5
        await asyncio.sleep(0.3)
        assert not waiting_b.done(), f"{family.command}: B went before A"
        assert await start(mode, lambda: family.give(a))
        assert await asyncio.wait_for(waiting_b, 3) == family.got, family.command
        assert await start(mode, lambda: family.give(b))
    finally:
        for client in clients:
            if mode == "asyncio":
                await aclose(client)
            else:
                client.close()


def calls(nodes: List[Server]) -> Dict[str, List[int]]:
    """How many times each waiting command ran, failed and waited on
    ``nodes``. A command sent again after a timeout waits twice; Redis 7.0
    also counts it as a second call, later servers may count only the call
    that was answered."""
    counts = {family.command: [0, 0, 0] for family in FAMILIES}
    for node in nodes:
        client = node.client()
        stats, module = client.info("commandstats"), client.info("recipes")
        for family in FAMILIES:
            row = stats.get(f"cmdstat_{family.command}", {})
            count = counts[family.command]
            count[0] += row.get("calls", 0)
            count[1] += row.get("failed_calls", 0)
            count[2] += module[family.parked]
    return counts


# A grant within 1.5 s of the release for 12 queues at once: beside the other parts of the run,
# starved event loops put it past that.
@pytest.mark.alone
def test_long_waits_keep_their_place(cluster: List[Server]) -> None:
    """Per server: a standalone server of the cluster's flavor and the
    cluster, each with the sync and asyncio clients, each with the three
    families: 12 queues, ~8 s in all."""
    if redis.VERSION >= (8,):  # the clients below time out a read after 5 s
        assert redis.Redis().connection_pool.connection_kwargs["socket_timeout"] == 5
    standalone = Server(cluster[0].process.args[0])
    port = cluster[0].port
    new_clients: Dict[Any, Callable[..., Any]] = {
        ("standalone", "sync"): lambda **kw: redis.Redis(port=standalone.port, **kw),
        ("standalone", "asyncio"): lambda **kw: redis.asyncio.Redis(port=standalone.port, **kw),
        ("cluster", "sync"): lambda **kw: redis.RedisCluster(host="127.0.0.1", port=port, **kw),
        ("cluster", "asyncio"): lambda **kw: redis.asyncio.RedisCluster(host="127.0.0.1", port=port, **kw),
    }
    plains = {"standalone": standalone.client(), "cluster": redis.RedisCluster(host="127.0.0.1", port=port)}
    try:
        before = {"standalone": calls([standalone]), "cluster": calls(cluster)}

        async def main() -> None:
            queues = [((kind, mode), new_client, family)
                      for (kind, mode), new_client in new_clients.items() for family in FAMILIES]
            outcomes = await asyncio.gather(*(
                keeps_its_place(family, mode, plains[kind], new_client, f"{{{kind}:{mode}}}:{family.command}")
                for (kind, mode), new_client, family in queues
            ), return_exceptions=True)
            failed = [(queue[0], queue[2].command, outcome)
                      for queue, outcome in zip(queues, outcomes) if isinstance(outcome, BaseException)]
            if failed:
                raise AssertionError(f"{len(failed)} of {len(queues)} queues failed: {failed!r}") from failed[0][2]

        asyncio.run(main())
        after = {"standalone": calls([standalone]), "cluster": calls(cluster)}
        for kind in plains:
            for command, count in after[kind].items():
                # Per mode: called once by the holder and once by each waiter
                # (never sent again), none failed, and each waiter waited once.
                change = [now - then for now, then in zip(count, before[kind][command])]
                assert change == [2 * 3, 0, 2 * 2], (kind, command)
    finally:
        plains["cluster"].close()
        standalone.stop()


@pytest.mark.skipif(not redis_recipes._core.LONG_READS, reason="redis-py before 8 reads with the client's timeout")
def test_a_reply_later_than_the_wait_raises_and_drops_the_connection(server: Server, monkeypatch: Any) -> None:
    """A server that answers past the wait and the margin (paused here):
    TimeoutError, and the client's next command reads its own reply."""
    monkeypatch.setattr(redis_recipes._core, "MARGIN", 0.2)
    plain = server.client()
    plain.flushall()

    async def late(mode: str, paused: asyncio.Event) -> None:
        recipes = redis_recipes if mode == "sync" else redis_recipes.asyncio
        client = server.client() if mode == "sync" else redis.asyncio.Redis(port=server.port)
        try:
            assert await start(mode, client.ping)  # connected before the pause
            lock = recipes.Lock(client, f"Lock:late:{mode}", ttl=5)
            await paused.wait()
            started = time.monotonic()
            with pytest.raises(redis.TimeoutError):
                await start(mode, lambda: lock.acquire(timeout=0.1))
            assert 0.25 < time.monotonic() - started < 1
            await asyncio.sleep(1.2)  # the pause is over
            ids = recipes.IdGenerator(client, f"ids:late:{mode}")
            assert await start(mode, lambda: ids.reserve(100))
            assert await start(mode, lambda: ids.produce()) == 101
        finally:
            if mode == "asyncio":
                await aclose(client)

    async def main() -> None:
        paused = asyncio.Event()
        both = asyncio.gather(late("sync", paused), late("asyncio", paused))
        await asyncio.sleep(0.3)
        plain.execute_command("CLIENT", "PAUSE", 1000, "ALL")
        paused.set()
        await both

    asyncio.run(main())


def test_a_moved_slot_falls_back_to_the_cluster_client(cluster: List[Server]) -> None:
    """The client's map sends the wait to a node that no longer serves the
    key: the MOVED answer hands it to the cluster client's execute_command,
    which finds the node and updates its map."""

    def misroute(client: Any, key: str) -> str:
        serving = client.get_node_from_key(key)
        other = next(node for node in client.get_primaries() if node.name != serving.name)
        client.nodes_manager.slots_cache[client.keyslot(key)] = [other]
        return serving.name

    client = redis.RedisCluster(host="127.0.0.1", port=cluster[0].port)
    try:
        serving = misroute(client, "Lock:moved")
        assert redis_recipes.Lock(client, "Lock:moved").acquire(timeout=1) is True
        assert client.get_node_from_key("Lock:moved").name == serving
        assert redis_recipes.Lock(client, "Lock:moved").acquire(timeout=0.1) is False
    finally:
        client.close()

    async def main() -> None:
        client = redis.asyncio.RedisCluster(host="127.0.0.1", port=cluster[0].port)
        try:
            await client.initialize()
            serving = misroute(client, "Lock:moved:async")
            assert await redis_recipes.asyncio.Lock(client, "Lock:moved:async").acquire(timeout=1) is True
            assert client.get_node_from_key("Lock:moved:async").name == serving
            assert await redis_recipes.asyncio.Lock(client, "Lock:moved:async").acquire(timeout=0.1) is False
        finally:
            await aclose(client)

    asyncio.run(main())


# ---- Every family on Redis Cluster -----------------------------------------


def test_idgen_lock_article_rate_and_idpool_on_redis_cluster(cluster: List[Server]) -> None:
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
            limiter = redis_recipes.Limiter(client, f"Limiter:{n}", 60, 1)  # RATE.FIXED routed by its key
            assert (limiter.is_valid(), limiter.is_valid(), limiter.remaining_time()) == (True, False, 0)
            resources = redis_recipes.ResourcePool(client, f"ResourcePool:{n}")
            assert resources.associate("r") and resources.acquire() == "r"
            assert (resources.is_available("r"), resources.is_occupied("r"), resources.has("r")) == (False, True, True)
        index = redis_recipes.SlugIndex(client, "{blog}slugs")
        assert index.lookup("post-7") == "{blog}article::7"
    finally:
        client.close()


def test_idgen_lock_and_rate_on_redis_cluster_with_asyncio(cluster: List[Server]) -> None:
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
                limiter = recipes.Limiter(client, f"async:Limiter:{n}", 60, 1)
                assert (await limiter.is_valid(), await limiter.is_valid()) == (True, False)
                assert await recipes.ResourcePool(client, f"async:pool:{n}").has("r") is False
        finally:
            await aclose(client)

    asyncio.run(body())


def test_rwlock_latch_and_url_shorty_on_redis_cluster(cluster: List[Server]) -> None:
    client = redis.RedisCluster(host="127.0.0.1", port=cluster[0].port)
    try:
        for n in range(10):
            rw = redis_recipes.ReadWriteLock(client, f"{{rw:{n}}}:lock", fence=f"{{rw:{n}}}:fence", ttl=30)
            with rw.write_lock() as writer:
                assert writer.fencing_token == 1
                assert rw.read_lock().acquire(timeout=0.05) is False
            reader = rw.read_lock()
            assert reader.acquire(timeout=1) is True and reader.fencing_token == 1
            assert rw.info().mode == "read"
            assert reader.release() is True
            latch = redis_recipes.CountDownLatch(client, f"latch:{n}")
            assert latch.try_set_count(1) is True
            assert latch.wait(0.05) is False
            assert latch.count_down() == 0 and latch.wait(1) is True
            shorty = redis_recipes.UrlShorty(client, f"short:{n}")
            assert shorty.shorten("https://example.com/") == "1"
            assert shorty.restore("1") == "https://example.com/"
    finally:
        client.close()


def test_rwlock_latch_and_url_shorty_on_redis_cluster_with_asyncio(cluster: List[Server]) -> None:
    import redis.asyncio.cluster

    recipes = redis_recipes.asyncio

    async def body() -> None:
        client = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=cluster[0].port)
        try:
            for n in range(10):
                rw = recipes.ReadWriteLock(client, f"{{arw:{n}}}:lock", fence=f"{{arw:{n}}}:fence", ttl=30)
                async with rw.write_lock() as writer:
                    assert writer.fencing_token == 1
                    assert await rw.read_lock().acquire(timeout=0.05) is False
                async with rw.read_lock() as reader:
                    assert reader.fencing_token == 1
                latch = recipes.CountDownLatch(client, f"alatch:{n}")
                assert await latch.try_set_count(1) is True
                assert await latch.wait(0.05) is False
                assert await latch.count_down() == 0 and await latch.wait(1) is True
                shorty = recipes.UrlShorty(client, f"ashort:{n}")
                assert await shorty.shorten("https://example.com/") == "1"
                assert await shorty.restore("1") == "https://example.com/"
        finally:
            await aclose(client)

    asyncio.run(body())


def test_the_book_returns_on_redis_cluster(cluster: List[Server]) -> None:
    client = redis.RedisCluster(host="127.0.0.1", port=cluster[0].port, decode_responses=True)
    try:
        client.delete("returns:article::1")
        article = redis_recipes.Article(client, 1, key="returns:article::1")
        assert article.create("t", "c", "a") is True
        got = article.get()
        assert got["id"] == "1" and got["title"] == "t" and type(got["create_at"]) is str
        assert article.is_exists() is True
        gen = redis_recipes.HashIdGenerator(client, "returns:ids")
        client.delete("returns:ids")
        assert gen.reserve("post", 10) is True and gen.reserve("post", 20) is False
        assert gen.produce("post") == 11
        cache = redis_recipes.HashCache(client)
        assert cache.set("returns:h", {"a": 1}) is None and cache.get("returns:h") == {"a": "1"}
        pool = redis_recipes.ResourcePool(client, "returns:pool", owner="w")
        client.delete("returns:pool")
        assert pool.associate("r") is True and pool.total_count() == 1 and pool.acquire() == "r"
        limiter = redis_recipes.RateLimiter(client, "returns", 60, 1)
        assert limiter.revoke("u") is None and limiter.duration("u") is None
    finally:
        client.close()


# ---- Replies with and without decode_responses -----------------------------


def test_additions_with_a_decoding_client(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        ids = recipes.IdPool(client, "seats")
        await same(ids.create(2), True)
        await same(ids.create(2), False)
        await same(ids.acquire(), 1)
        await same(ids.acquire(ttl=60), 2)
        await same(ids.acquire(timeout=0.05), None)
        await same(ids.release(1), True)
        await same(ids.renew(2, 30), True)
        await same(ids.resize(3), True)
        info = await value(ids.info())
        assert info["max"] == 3 and all(type(v) in (int, type(None)) for v in info.values())
        article = recipes.Article(client, 7, slug_index="slug.to.id")
        await same(article.create("t", "c", "a", slug="hello"), True)
        await same(recipes.SlugIndex(client, "slug.to.id").lookup("hello"), "article::7")
        await same(article.set_slug("hi"), True)
        await same((await value(article.record()))["slug"], "hi")

    book.run(body)


def test_a_client_without_decode_responses(raw: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        article = recipes.Article(client, 10086)
        await same(article.create("message", "hello world", "peter"), True)
        got = await value(article.get())
        assert list(got) == ["id", "title", "content", "author", "create_at"]
        assert got["id"] == "10086" and got["title"] == b"message" and got["author"] == b"peter"
        assert type(got["create_at"]) is bytes and abs(float(got["create_at"]) - time.time()) < 60
        assert (await value(article.record()))["title"] == b"message"
        cache = recipes.Cache(client)
        await same(cache.set("logo", b"\x89PNG\r\n\x1a\n\x00\x00"), None)
        await same(cache.get("logo"), b"\x89PNG\r\n\x1a\n\x00\x00")
        await same(cache.update("logo", b"new"), b"\x89PNG\r\n\x1a\n\x00\x00")
        hashed = recipes.HashCache(client)
        await same(hashed.set("User:10086", {"name": "Peter", "age": 56}), None)
        await same(hashed.get("User:10086"), {"name": b"Peter", "age": b"56"})
        await same(recipes.JsonCache(client).set("j", [1, "a"]), None)
        await same(recipes.JsonCache(client).get("j"), [1, "a"])
        pool = recipes.ResourcePool(client, "ResourcePool:raw", owner="w1")
        await same(pool.associate("b1"), True)
        await same(pool.acquire(), "b1")
        limiter = recipes.RateLimiter(client, "login", 60, 1)
        await same(limiter.is_permitted("u"), True)
        assert type(await value(limiter.duration("u"))) is int
        await same(recipes.SlugIndex(client, "none").lookup("x"), None)

    raw.run(body)
