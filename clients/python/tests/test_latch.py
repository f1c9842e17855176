"""``redis_recipes.latch`` on every server, sync and asyncio: the
``CountDownLatch`` (count down, wait, arm, expire, long waits sent in
chunks)."""

import asyncio
import time
from typing import Any

import pytest
from conftest import Clients, value
from recipes_helpers import commands, eventually, run, start

import redis_recipes.latch


def test_latch_counts_down_and_opens(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        latch = recipes.CountDownLatch(client, "latch")
        # A missing latch is open.
        assert await value(latch.count()) == 0
        assert await value(latch.wait(5)) is True
        assert await value(latch.count_down()) == 0
        assert clients.plain.exists("latch") == 0
        assert await value(latch.try_set_count(2)) is True
        assert await value(latch.try_set_count(5)) is False  # armed already: nothing changes
        assert await value(latch.count()) == 2
        assert clients.plain.get("latch") == b"2" and clients.plain.pttl("latch") == -1
        started = time.monotonic()
        assert await value(latch.wait(0.2)) is False
        assert time.monotonic() - started >= 0.15
        other = recipes.CountDownLatch(clients.new_client(), "latch")
        waiting = start(clients, lambda: other.wait(10))
        assert await eventually(lambda: clients.plain.info("recipes")["recipes_latches_with_waiters"] == 1)
        assert await value(latch.count_down()) == 1
        await asyncio.sleep(0.1)
        assert not waiting.done()
        assert await value(latch.count_down()) == 0
        assert await asyncio.wait_for(waiting, 3) is True
        assert clients.plain.exists("latch") == 0
        # Armed again, and counted down past 0.
        assert await value(latch.try_set_count(3)) is True
        assert await value(latch.count_down(2)) == 1
        assert await value(latch.count_down(5)) == 0
        assert await value(latch.count()) == 0
        assert await value(latch.wait()) is True

    run(clients, body)


def test_a_latch_with_a_ttl_opens_when_it_ends(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        latch = recipes.CountDownLatch(client, "latch")
        assert await value(latch.try_set_count(3, ttl=0.4)) is True
        assert 0 < clients.plain.pttl("latch") <= 400
        assert await value(latch.try_set_count(1, ttl=100)) is False
        assert 0 < clients.plain.pttl("latch") <= 400  # its TTL unchanged
        assert await value(latch.count_down()) == 2
        assert 0 < clients.plain.pttl("latch") <= 400  # kept
        started = time.monotonic()
        assert await value(latch.wait()) is True  # no timeout: until it opens
        assert 0.1 < time.monotonic() - started < 3
        assert await value(latch.count()) == 0

    run(clients, body)


def test_long_latch_waits_are_sent_in_chunks(clients: Clients, monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunks of 0.5 s: a round trip eats into the time a chunk covers, so the
    # counts below hold while one takes under 0.2 s (both cores busy: a few ms).
    monkeypatch.setattr(redis_recipes.latch, "CHUNK", 0.5)

    async def body(client: Any, recipes: Any) -> None:
        latch = recipes.CountDownLatch(client, "latch")
        assert await value(latch.try_set_count(1)) is True
        before = commands(clients.plain, "latch.wait")
        started = time.monotonic()
        assert await value(latch.wait(1.2)) is False
        assert 1.15 < time.monotonic() - started < 3
        assert commands(clients.plain, "latch.wait") - before == 3  # 0.5 + 0.5 + 0.2 s
        clients.plain.pexpire("latch", 1500)  # opens in 1.5 s
        before = commands(clients.plain, "latch.wait")
        started = time.monotonic()
        assert await value(latch.wait()) is True
        assert 1.3 < time.monotonic() - started < 4
        assert commands(clients.plain, "latch.wait") - before >= 3

    run(clients, body)
