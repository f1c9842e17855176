"""``redis_recipes.idgen`` on every server, sync and asyncio: the book's
``IdGenerator`` and ``HashIdGenerator`` (its transcripts, and what its code
returns, types included), and ``UrlShorty`` (the book's chapter 20) with its
base 62."""

from typing import Any

import pytest
from conftest import Book, Clients, value
from recipes_helpers import run, same
from redis.crc import key_slot


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


# ---- What the book's code returns: redis-usage-collection
# code/id_generator.py, code/hash_id_generator.py; redis-manual-code
# string/id_generator.py; the transcripts of 代码清单 2-6 and 5-1, 5-2.


def test_id_generator_returns_what_the_book_returns(book: Book) -> None:
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


def test_hash_id_generator_returns_what_the_book_returns(book: Book) -> None:
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


# ---- UrlShorty -------------------------------------------------------------


def test_url_shorty(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        shorty = recipes.UrlShorty(client)
        assert (shorty.counter, shorty.ids, shorty.urls) == ("{UrlShorty}:counter", "{UrlShorty}:ids",
                                                             "{UrlShorty}:urls")
        assert len({key_slot(key.encode()) for key in (shorty.counter, shorty.ids, shorty.urls)}) == 1
        page = "https://redis.io/docs/latest/develop/data-types/strings/"
        assert await value(shorty.shorten(page)) == "1"
        assert await value(shorty.shorten(page)) == "1"  # the same URL, the same ID
        assert await value(shorty.shorten("https://example.com/")) == "2"
        assert await value(shorty.restore("1")) == page
        assert await value(shorty.restore("2")) == "https://example.com/"
        assert clients.plain.get("{UrlShorty}:counter") == b"2"
        assert clients.plain.hget("{UrlShorty}:ids", page) == b"1"
        assert clients.plain.hget("{UrlShorty}:urls", "1") == page.encode()
        # Unknown and invalid short IDs.
        for unknown in ("3", "zz", "0", "", "01", "a-b", "é", "aZl8N0y58M8", "zzzzzzzzzzzz"):
            assert await value(shorty.restore(unknown)) is None, unknown
        # Base 62: 0-9a-zA-Z.
        assert await value(recipes.IdGenerator(client, shorty.counter).raise_floor(60)) is True
        assert await value(shorty.shorten("https://example.com/61")) == "Z"
        assert await value(shorty.shorten("https://example.com/62")) == "10"
        assert await value(shorty.restore("10")) == "https://example.com/62"
        assert await value(shorty.shorten("https://example.com/")) == "2"
        unicode = "https://例え.テスト/パス?q=ü"
        short = await value(shorty.shorten(unicode))
        assert await value(shorty.restore(short)) == unicode
        # Another key, other IDs.
        other = recipes.UrlShorty(client, "links")
        assert await value(other.shorten(page)) == "1"
        assert clients.plain.exists("{links}:counter", "{links}:ids", "{links}:urls") == 3
        with pytest.raises(ValueError):
            recipes.UrlShorty(client, "")

    run(clients, body)


def test_base62() -> None:
    from redis_recipes.idgen import from_base62, to_base62

    for n in (0, 1, 9, 10, 35, 36, 61, 62, 3843, 3844, 2**63 - 1):
        assert from_base62(to_base62(n)) == n
    assert to_base62(61) == "Z" and to_base62(62) == "10" and to_base62(2**63 - 1) == "aZl8N0y58M7"
    assert [from_base62(bad) for bad in ("", "00", "01", "a b", "aZl8N0y58M8")] == [None] * 5
