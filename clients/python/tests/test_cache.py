"""``redis_recipes.cache`` on every server, sync and asyncio: ``Cache``,
``JsonCache`` and ``HashCache`` (the book's transcripts, and what the book's
code returns, types included)."""

import asyncio
from typing import Any

from conftest import Book, Clients, value
from recipes_helpers import run, same


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


# ---- What the book's code returns: code/cache.py, code/json_cache.py,
# code/hash_cache.py; redis-manual-code string/cache.py (update); the
# transcripts of 代码清单 1-2 and 1-3.


def test_cache_returns_what_the_book_returns(book: Book) -> None:
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


def test_json_cache_returns_what_the_book_returns(book: Book) -> None:
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


def test_hash_cache_returns_what_the_book_returns(book: Book) -> None:
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
