"""``redis_recipes.rate`` on every server, sync and asyncio: the book's
``RateLimiter`` (its transcript, and what its code returns, types
included), several limits, costs and the exact window; the second
edition's fixed-window ``Limiter``."""

import asyncio
from typing import Any

from conftest import Book, Clients, value
from recipes_helpers import run, same

import redis_recipes


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


# ---- What the book's code returns: code/rate_limiter.py (chapter 8).


def test_rate_limiter_returns_what_the_book_returns(book: Book) -> None:
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


# ---- What the book's code returns: code/limiter.py (chapter 8).


def test_limiter_returns_what_the_book_returns(book: Book) -> None:
    """The book's fixed window: ``INCR`` then ``EXPIRE … NX``; ``is_valid``
    is ``count <= maximum``; ``remaining_time`` is the actions left (0 when
    over), None without the key. The key is the book's string counter."""

    async def body(client: Any, recipes: Any) -> None:
        book.plain.config_resetstat()
        limiter = recipes.Limiter(client, "Limiter:login", 0.5, 3)
        await same(limiter.remaining_time(), None)  # no window open
        for left in (2, 1, 0):
            await same(limiter.is_valid(), True)
            await same(limiter.remaining_time(), left)
        await same(limiter.is_valid(), False)
        await same(limiter.is_valid(), False)
        await same(limiter.remaining_time(), 0)  # over the maximum
        assert book.plain.get("Limiter:login") == "5"  # refused actions counted, as the book's INCR
        ttl = book.plain.pttl("Limiter:login")
        assert 0 < ttl <= 500
        # The window is fixed: later actions do not push its end.
        await asyncio.sleep(0.1)
        await same(limiter.is_valid(), False)
        assert book.plain.pttl("Limiter:login") <= ttl - 50
        # It ends all at once: a new window, full again.
        await asyncio.sleep(0.5)
        await same(limiter.remaining_time(), None)
        await same(limiter.is_valid(), True)
        await same(limiter.remaining_time(), 2)
        # EXPIRE NX: a counter left without a TTL gets one; a maximum of 0
        # allows nothing.
        book.plain.set("Limiter:stuck", 1)
        stuck = recipes.Limiter(client, "Limiter:stuck", 60, 3)
        await same(stuck.is_valid(), True)
        await same(stuck.remaining_time(), 1)
        assert 59_000 < book.plain.pttl("Limiter:stuck") <= 60_000
        closed = recipes.Limiter(client, "Limiter:closed", 60, 0)
        await same(closed.remaining_time(), None)
        await same(closed.is_valid(), False)
        await same(closed.remaining_time(), 0)
        # One RATE.FIXED a call, no script.
        stats = book.plain.info("commandstats")
        assert "cmdstat_eval" not in stats and "cmdstat_evalsha" not in stats
        assert stats["cmdstat_rate.fixed"]["calls"] == 9

    book.run(body)

