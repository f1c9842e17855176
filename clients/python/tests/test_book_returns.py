"""The book's classes return what the book's code returns, types included:
each method of ``IdGenerator``, ``HashIdGenerator``, ``Lock``,
``AutoReleaseLock``, ``IdentityLock``, ``Article``, ``Cache``, ``JsonCache``,
``HashCache``, ``RateLimiter`` and ``ResourcePool`` against the companion
code (huangzworks/redis-usage-collection ``code/*.py``, huangzworks/
redis-manual-code ``string/*.py``, ``hash/article.py``) and the books'
transcripts, with a client configured as the book's
(``Redis(decode_responses=True)``), on every server, sync and asyncio. A
client without ``decode_responses`` keeps getting what it got before (text
keys, bytes values), and what the package adds beyond the book keeps its own
return values."""

import asyncio
import time
from typing import Any, Awaitable, Callable, List

import pytest
import redis
import redis.asyncio
from conftest import Server, value

import redis_recipes
import redis_recipes.asyncio


class Book:
    """A flushed server's client made as the book makes it
    (``decode_responses=True``; ``decode=False`` for one that does not
    decode), and the package's classes for the mode."""

    def __init__(self, server: Server, mode: str, decode: bool = True) -> None:
        self.plain = server.client(decode_responses=True)
        self.plain.flushall()
        self.mode = mode
        if mode == "sync":
            self.client: Any = server.client(decode_responses=decode)
            self.recipes: Any = redis_recipes
        else:
            self.client = redis.asyncio.Redis(port=server.port, decode_responses=decode)
            self.recipes = redis_recipes.asyncio

    def run(self, body: Callable[[Any, Any], Awaitable[None]]) -> None:
        async def main() -> None:
            try:
                await body(self.client, self.recipes)
            finally:
                if self.mode == "asyncio":
                    await self.client.aclose()
                else:
                    self.client.close()

        asyncio.run(main())


@pytest.fixture
def book(server: Server, mode: str) -> Book:
    return Book(server, mode)


@pytest.fixture
def raw(server: Server, mode: str) -> Book:
    return Book(server, mode, decode=False)


async def same(call: Any, expected: Any) -> Any:
    """Awaits ``call`` (in either mode) and checks it equals ``expected``
    with exactly its type (``True`` is not ``1``, ``'10086'`` not ``10086``)."""
    got = await value(call)
    assert got == expected and type(got) is type(expected), f"{got!r} is not {expected!r}"
    return got


# ---- IdGenerator, HashIdGenerator: redis-usage-collection code/id_generator.py,
# code/hash_id_generator.py; redis-manual-code string/id_generator.py; the
# transcripts of 代码清单 2-6 and 5-1, 5-2.


def test_id_generator(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        gen = recipes.IdGenerator(client, "user::id")
        await same(gen.reserve(1000000), True)  # reserve(): SET NX … is True
        await same(gen.produce(), 1000001)  # produce(): INCR, an int
        await same(gen.produce(), 1000002)
        await same(gen.produce(), 1000003)
        await same(gen.reserve(1000), False)  # the key has a value
        await same(gen.reserve(2_000_000), False)  # used: the book's reserve fails, nothing changes
        await same(gen.produce(), 1000004)
        assert book.plain.get("user::id") == "1000004"
        fresh = recipes.IdGenerator(client, "UserID")
        await same(fresh.reserve("1000000"), True)  # digits, as redis-py would send them
        await same(fresh.produce(), 1000001)
        for bad in (-1, "x", 1.5, None):
            with pytest.raises(ValueError):
                await value(recipes.IdGenerator(client, "bad").reserve(bad))
        assert book.plain.exists("bad") == 0
        # Beyond the book: raising the floor at any time, segments, the current value.
        await same(gen.raise_floor(2_000_000), True)
        await same(gen.raise_floor(1000), False)
        await same(gen.produce(), 2_000_001)
        await same(gen.produce_many(2), range(2_000_002, 2_000_004))
        await same(gen.current(), 2_000_003)

    book.run(body)


def test_hash_id_generator(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        gen = recipes.HashIdGenerator(client, "UserID_Coll")
        await same(gen.reserve("PostID", 1000000), True)  # HSETNX … == 1
        await same(gen.produce("PostID"), 1000001)  # HINCRBY, an int
        await same(gen.produce("PostID"), 1000002)
        await same(gen.reserve("PostID", 9999), False)
        await same(gen.reserve("PostID", 5_000_000), False)
        await same(gen.produce("PostID"), 1000003)
        await same(gen.produce("CommentID"), 1)
        await same(gen.reserve("CommentID", 1000000), False)  # produced already
        with pytest.raises(ValueError):
            await value(gen.reserve("Other", -5))
        # Beyond the book.
        await same(gen.raise_floor("CommentID", 1000000), True)
        await same(gen.produce("CommentID"), 1000001)
        await same(gen.produce_many("CommentID", 2), range(1000002, 1000004))
        await same(gen.current("CommentID"), 1000003)

    book.run(body)


# ---- Lock, AutoReleaseLock, IdentityLock: code/lock.py,
# code/auto_release_lock.py, code/identity_lock.py; 代码清单 3-1, 3-2, 4-1.


def test_lock(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        locker1 = recipes.Lock(client, "Lock:10086")
        await same(locker1.acquire(), True)  # SET … NX is True
        await same(locker1.release(), True)  # DEL … == 1
        await same(locker1.acquire(), True)
        await same(locker1.acquire(), False)  # SET … NX: held, even by itself
        locker2 = recipes.Lock(client, "Lock:10086")
        await same(locker2.acquire(), False)
        await same(locker1.release(), True)
        await same(locker1.release(), False)  # nothing to release
        # Beyond the book: a wait, a lease, a fencing token (an attribute).
        fenced = recipes.Lock(client, "{f}:lock", fence="{f}:fence", ttl=30)
        await same(fenced.acquire(timeout=0.1), True)
        assert fenced.fencing_token == 1 and type(fenced.fencing_token) is int
        await same(fenced.extend(), True)
        await same(fenced.release(), True)

    book.run(body)


def test_auto_release_lock(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        lock = recipes.AutoReleaseLock(client, "Lock:10086")
        await same(lock.acquire(5), True)  # SET … NX EX is True
        await same(recipes.AutoReleaseLock(client, "Lock:10086").acquire(5), False)
        await same(lock.acquire(5), False)  # held, even by itself
        await same(lock.release(), True)
        await same(lock.acquire(150, unit="ms"), True)  # SET … NX PX
        await asyncio.sleep(0.3)  # released by itself
        await same(lock.acquire(5), True)
        await same(lock.release(), True)
        await same(lock.release(), False)
        with pytest.raises(ValueError):
            await value(lock.acquire(5, unit="min"))

    book.run(body)


def test_identity_lock(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        lock = recipes.IdentityLock(client, "Lock:10086")
        await same(lock.acquire("top_secret"), True)
        await same(lock.acquire("top_secret"), False)  # held, even with the same password
        await same(recipes.IdentityLock(client, "Lock:10086").acquire("another"), False)
        await same(lock.release("wrong_password"), False)
        await same(lock.release("top_secret"), True)
        await same(lock.release("top_secret"), False)  # the lock is gone

    book.run(body)


# ---- Article: redis-manual-code hash/article.py (one hash, article::<id>) and
# string/article.py; the transcript of 代码清单 2-3.


def test_article(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        article = recipes.Article(client, 10086)
        assert article.id == "10086"  # the book's self.id = str(article_id)
        await same(article.is_exists(), False)
        await same(article.create("message", "hello world", "peter"), True)
        got = await value(article.get())
        assert list(got) == ["id", "title", "content", "author", "create_at"]
        create_at = got.pop("create_at")
        assert got == {"id": "10086", "title": "message", "content": "hello world", "author": "peter"}
        assert all(type(v) is str for v in got.values())
        assert type(create_at) is str and abs(float(create_at) - time.time()) < 60  # '1551199163.4296808'
        await same(article.update(author="john"), True)
        again = await value(article.get())
        assert again == {**got, "author": "john", "create_at": create_at}
        await same(article.create("message", "hello world", "peter"), False)
        await same(article.is_exists(), True)
        missing = recipes.Article(client, 10087)
        await same(missing.get(), {"id": "10087"})  # HGETALL of nothing, the ID added
        await same(missing.update(title="x"), False)
        assert book.plain.exists("article::10087") == 0
        # A hash the book's own code wrote reads the same.
        book.plain.hset("article::1", mapping={"title": "t", "content": "c", "author": "a",
                                                "create_at": "1551199163.4296808"})
        await same(recipes.Article(client, 1).get(),
                   {"id": "1", "title": "t", "content": "c", "author": "a", "create_at": "1551199163.4296808"})
        # Beyond the book: every field as the module keeps it, page views.
        await same(article.view(), 1)
        record = await value(article.record())
        assert record["id"] == "10086" and record["author"] == "john" and record["views"] == 1
        assert type(record["created_at"]) is int and abs(record["created_at"] - float(create_at) * 1000) < 1
        assert type(record["updated_at"]) is int and record["updated_at"] >= record["created_at"]
        await same(missing.record(), None)
        await same(article.delete(), True)
        await same(article.get(), {"id": "10086"})

    book.run(body)


# ---- Cache, JsonCache, HashCache: code/cache.py, code/json_cache.py,
# code/hash_cache.py; redis-manual-code string/cache.py (update); the
# transcripts of 代码清单 1-2 and 1-3.


def test_cache(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        cache = recipes.Cache(client)
        await same(cache.get(10086), None)
        await same(cache.set(10086, "<html><p>Hello World!</p></html>", 60), None)  # no return
        await same(cache.get(10086), "<html><p>Hello World!</p></html>")
        assert 0 < book.plain.ttl("10086") <= 60
        await same(cache.set("message", "hello world"), None)
        assert book.plain.ttl("message") == -1
        await same(cache.update("message", "good morning"), "hello world")  # GETSET: the old value
        await same(cache.get("message"), "good morning")
        await same(cache.update("none", "first"), None)
        await same(cache.get("none"), "first")

    book.run(body)


def test_json_cache(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        cache = recipes.JsonCache(client)
        data = {"id": 10086, "name": "Peter", "gender": "male", "age": 56}
        await same(cache.set("User:10086", data), None)  # no output in the transcript
        await same(cache.get("User:10086"), {"id": 10086, "name": "Peter", "gender": "male", "age": 56})
        await same(cache.set("User:10087", data, 60), None)
        assert 0 < book.plain.ttl("User:10087") <= 60
        await same(cache.get("none"), None)
        # Beyond the book: some fields only.
        await same(cache.get("User:10086", "name"), {"name": "Peter"})

    book.run(body)


def test_hash_cache(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        cache = recipes.HashCache(client)
        data = {"id": 10086, "name": "Peter", "gender": "male", "age": 56}
        await same(cache.set("User:10086", data), None)  # no ttl: as the book's transcript calls it
        await same(cache.get("User:10086"), {"id": "10086", "name": "Peter", "gender": "male", "age": "56"})
        assert book.plain.ttl("User:10086") == -1
        await same(cache.set("User:10087", data, 60), None)  # fields and TTL in one command
        assert 0 < book.plain.ttl("User:10087") <= 60
        await same(cache.set("User:short", {"name": "Peter"}, 0.1), None)
        await asyncio.sleep(0.25)
        await same(cache.get("User:short"), None)
        await same(cache.get("none"), None)

    book.run(body)


# ---- RateLimiter: code/rate_limiter.py (chapter 8).


def test_rate_limiter(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        limiter = recipes.RateLimiter(client, "login", 60, 5)
        await same(limiter.remaining("peter"), 5)
        await same(limiter.duration("peter"), None)  # may act now
        for left in (4, 3, 2, 1, 0):
            await same(limiter.is_permitted("peter"), True)
            await same(limiter.remaining("peter"), left)
        await same(limiter.is_permitted("peter"), False)
        await same(limiter.remaining("peter"), 0)
        wait = await value(limiter.duration("peter"))
        assert type(wait) is int and 11 <= wait <= 12  # GCRA: one action every 12 s comes back
        await same(limiter.revoke("peter"), None)  # no return
        await same(limiter.revoke("nobody"), None)
        await same(limiter.duration("peter"), None)
        await same(limiter.is_permitted("peter"), True)
        # The exact window: the wait is until the oldest action leaves it.
        window = recipes.RateLimiter(client, "quota", 60, 2, sliding=True)
        for _ in range(2):
            await same(window.is_permitted("u"), True)
        await same(window.is_permitted("u"), False)
        wait = await value(window.duration("u"))
        assert type(wait) is int and 59 <= wait <= 60
        # Beyond the book: a Decision of ints.
        decision = await value(limiter.limit("mary", cost=2))
        assert type(decision) is redis_recipes.Decision and decision == (False, 5, 3, -1, decision.reset_after_ms)
        assert all(type(field) is int for field in decision[1:]) and type(decision.limited) is bool
        assert (await value(limiter.peek("mary"))).remaining == 3

    book.run(body)


# ---- ResourcePool: code/resource_pool.py (chapter 10).


def test_resource_pool(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        pool = recipes.ResourcePool(client, "ResourcePool:browsers", owner="w1")
        await same(pool.associate("b1"), True)
        await same(pool.associate("b1"), False)  # already there
        await same(pool.associate("b2"), True)
        await same(pool.associate("b3"), True)
        await same(pool.total_count(), 3)
        await same(pool.available_count(), 3)
        await same(pool.occupied_count(), 0)
        await same(pool.acquire(), "b1")  # a text resource with decode_responses=True
        await same(pool.available_count(), 2)
        await same(pool.occupied_count(), 1)
        await same(pool.release("b1"), True)  # SMOVE occupied available
        await same(pool.release("b1"), False)  # not held
        await same(pool.disassociate("b3"), True)
        await same(pool.disassociate("b3"), False)  # not there
        await same(pool.total_count(), 2)
        for _ in range(2):
            assert await value(pool.acquire()) in ("b1", "b2")
        await same(pool.acquire(), None)  # none free
        # Beyond the book: several at once (True when every one was new / there),
        # owners and leases.
        await same(pool.associate("b3", "b4"), True)
        await same(pool.associate("b4", "b5"), False)  # b4 was there (b5 is added)
        await same(pool.total_count(), 5)
        await same(pool.disassociate("b4", "b5"), True)
        await same(pool.disassociate("b3", "nope"), False)  # nope was not there (b3 is removed)
        await same(pool.size(), 2)
        await same(pool.info(), {"size": 2, "free": 0, "held": 2, "waiting": 0})
        await same(pool.holders(), {"b1": ("w1", None), "b2": ("w1", None)})
        await same(pool.renew("b1", 30), True)

    book.run(body)


# ---- What the package adds, with a decoding client (the book's).


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


# ---- A client without decode_responses: as before (text keys, bytes values).


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
