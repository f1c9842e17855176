"""The book's transcripts, run through the package on every server, with
redis-py's sync client and with redis.asyncio: the book's results."""

import asyncio
import time
from typing import Any, Awaitable, Callable

from conftest import Clients, value


def run(clients: Clients, body: Callable[[Any, Any], Awaitable[None]]) -> None:
    async def main() -> None:
        try:
            await body(clients.client, clients.recipes)
        finally:
            if clients.mode == "asyncio":
                await clients.client.aclose()

    asyncio.run(main())


def test_id_generator(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        ids = recipes.IdGenerator(client, "user::id")
        assert await value(ids.current()) == 0
        assert await value(ids.reserve(1_000_000)) is True
        assert await value(ids.reserve(1000)) is False
        assert await value(ids.produce()) == 1_000_001
        assert await value(ids.produce()) == 1_000_002
        assert await value(ids.produce_many(3)) == range(1_000_003, 1_000_006)
        assert await value(ids.current()) == 1_000_005
        assert clients.plain.get("user::id") == b"1000005"  # still a plain counter
        hashed = recipes.HashIdGenerator(client, "ids")
        assert await value(hashed.reserve("post", 10_000)) is True
        assert await value(hashed.produce("post")) == 10_001
        assert await value(hashed.produce("user")) == 1
        assert await value(hashed.current("post")) == 10_001

    run(clients, body)


def test_locks(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        # The basic lock: acquire once, a second holder fails, release.
        lock = recipes.Lock(client, "Lock:10086")
        other = recipes.Lock(client, "Lock:10086")
        assert await value(lock.acquire()) is True
        assert await value(other.acquire()) is False
        assert await value(other.release()) is False  # not its lock
        assert await value(lock.release()) is True
        assert await value(other.acquire()) is True
        assert await value(other.release()) is True
        # The auto-release lock: gone after its timeout.
        auto = recipes.AutoReleaseLock(client, "Lock:auto")
        assert await value(auto.acquire(100, unit="ms")) is True
        assert await value(recipes.AutoReleaseLock(client, "Lock:auto").acquire(5)) is False
        await asyncio.sleep(0.2)
        assert await value(recipes.AutoReleaseLock(client, "Lock:auto").acquire(5)) is True
        # The identity lock: only the password releases it.
        identity = recipes.IdentityLock(client, "Lock:identity")
        assert await value(identity.acquire("top_secret")) is True
        assert await value(identity.acquire("wrong")) is False
        assert await value(identity.release("wrong")) is False
        assert await value(identity.release("top_secret")) is True
        # Fencing tokens increase with every acquisition.
        fenced = recipes.Lock(client, "{job}:lock", fence="{job}:fence", ttl=30)
        assert await value(fenced.acquire()) is True
        first = fenced.fencing_token
        assert await value(fenced.release()) is True
        assert await value(fenced.acquire()) is True
        assert fenced.fencing_token == first + 1
        assert await value(fenced.release()) is True

    run(clients, body)


def test_a_blocking_acquire_waits_in_the_servers_queue(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        holder = recipes.Lock(client, "Lock:queue", ttl=0.3)
        assert await value(holder.acquire()) is True
        waiter = recipes.Lock(clients.new_client(), "Lock:queue", ttl=10)
        started = time.monotonic()
        assert await value(waiter.acquire(timeout=5)) is True  # handed over at expiry
        assert 0.15 < time.monotonic() - started < 3
        assert await value(recipes.Lock(client, "Lock:queue").acquire(timeout=0.1)) is False
        assert await value(waiter.release()) is True

    run(clients, body)


def test_article(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        article = recipes.Article(client, 10086, slug_index="slug.to.id")
        assert await value(article.get()) == {"id": "10086"}
        assert await value(article.create("greeting", "hello world", "peter", slug="hello")) is True
        assert await value(article.create("again", "x", "y")) is False
        got = await value(article.get())
        assert got["id"] == "10086"
        assert got["title"] in (b"greeting", "greeting")
        assert isinstance(got["create_at"], bytes) and float(got["create_at"]) > 1_600_000_000
        assert await value(article.update(title="hi")) is True
        assert await value(recipes.Article(client, 1).update(title="no such")) is False
        assert await value(article.view()) == 1
        assert await value(article.view()) == 2
        index = recipes.SlugIndex(client, "slug.to.id")
        assert await value(index.lookup("hello")) == "article::10086"
        assert await value(article.set_slug("hi-there")) is True
        assert await value(index.lookup("hello")) is None
        assert await value(article.delete()) is True
        assert await value(index.lookup("hi-there")) is None

    run(clients, body)


def test_caches(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        cache = recipes.Cache(client)
        assert await value(cache.set("greeting", b"\x00bytes\xff")) is None
        assert await value(cache.get("greeting")) == b"\x00bytes\xff"
        assert await value(cache.update("greeting", "new")) == b"\x00bytes\xff"
        json_cache = recipes.JsonCache(client)
        user = {"id": 10086, "name": "Peter", "tags": ["a", "b"], "big": 12345678901234567890}
        assert await value(json_cache.set("user::10086", user, ttl=60)) is None
        assert await value(json_cache.get("user::10086")) == user
        assert await value(json_cache.get("user::10086", "name", "id")) == {"name": "Peter", "id": 10086}
        assert await value(json_cache.get("none")) is None
        assert 0 < clients.plain.pttl("user::10086") <= 60_000
        hash_cache = recipes.HashCache(client)
        assert await value(hash_cache.set("user::h", {"name": "Peter", "age": 56}, ttl=0.2)) is None
        got = await value(hash_cache.get("user::h"))
        decoded = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in got.items()}
        assert decoded == {"name": "Peter", "age": "56"}
        await asyncio.sleep(0.3)
        assert await value(hash_cache.get("user::h")) is None

    run(clients, body)


def test_rate_limiter(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        # The book: 5 logins per 60 s.
        limiter = recipes.RateLimiter(client, "login", 60, 5)
        assert await value(limiter.remaining("peter")) == 5
        for _ in range(5):
            assert await value(limiter.is_permitted("peter")) is True
        assert await value(limiter.is_permitted("peter")) is False
        assert await value(limiter.remaining("peter")) == 0
        assert 11 <= await value(limiter.duration("peter")) <= 12  # GCRA: one action back every 12 s
        decision = await value(limiter.limit("peter"))
        assert decision.limited and 11_000 < decision.retry_after_ms <= 12_000
        assert await value(limiter.revoke("peter")) is None
        assert await value(limiter.is_permitted("peter")) is True
        # Several limits, costs and the exact window.
        api = recipes.RateLimiter(client, "api", 1, 10, also=[(3600, 3)])
        assert (await value(api.limit("k", cost=2))).remaining == 1
        assert (await value(api.peek("k"))).allowed
        assert not (await value(api.limit("k", cost=2))).allowed
        window = recipes.RateLimiter(client, "quota", 1, 2, sliding=True)
        assert [(await value(window.limit("u"))).allowed for _ in range(3)] == [True, True, False]

    run(clients, body)


def test_id_pool(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        pool = recipes.IdPool(client, "seats")
        assert await value(pool.create(3)) is True
        assert await value(pool.create(3)) is False
        assert [await value(pool.acquire()) for _ in range(4)] == [1, 2, 3, None]
        assert await value(pool.release(2)) is True
        assert await value(pool.release(2)) is False
        assert await value(pool.acquire(ttl=0.05)) == 2
        await asyncio.sleep(0.1)
        assert await value(pool.acquire()) == 2  # the lease ended
        assert await value(pool.renew(1, 60)) is True
        info = await value(pool.info())
        assert info["max"] == 3 and info["leased"] == 3 and info["default_ttl"] is None
        assert await value(pool.resize(10)) is True
        assert await value(pool.acquire()) == 4

    run(clients, body)


def test_resource_pool(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        # The book's chapter 10: associate three, acquire three, the fourth
        # gets None; release one and acquire it again.
        pool = recipes.ResourcePool(client, "ResourcePool:browsers", owner="w1")
        assert await value(pool.associate("b1", "b2", "b3")) is True
        assert await value(pool.size()) == 3
        got = [await value(pool.acquire()) for _ in range(3)]
        assert got == ["b1", "b2", "b3"]
        assert await value(pool.acquire()) is None
        assert (await value(pool.available_count()), await value(pool.occupied_count())) == (0, 3)
        other = recipes.ResourcePool(client, "ResourcePool:browsers", owner="w2")
        assert await value(other.release("b2")) is False  # not its holder
        assert await value(pool.release("b2")) is True
        assert await value(other.acquire(ttl=0.2)) == "b2"
        # w2 crashes: its lease ends and b2 comes back, to a waiting client.
        started = time.monotonic()
        assert await value(pool.acquire(timeout=5)) == "b2"
        assert time.monotonic() - started < 2
        holders = await value(pool.holders())
        assert holders == {"b1": ("w1", None), "b2": ("w1", None), "b3": ("w1", None)}
        assert await value(pool.info()) == {"size": 3, "free": 0, "held": 3, "waiting": 0}
        assert await value(pool.disassociate("b1", "b2", "b3")) is True
        assert await value(pool.size()) == 0

    run(clients, body)
