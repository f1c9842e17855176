"""``redis_recipes.pool`` on every server, sync and asyncio: the book's
``ResourcePool`` (its chapter 10, and what its code returns, types
included), and ``with pool.lease(…)``: renewed past its TTL, lost, or
finding no resource."""

import asyncio
import time
from typing import Any, List

import pytest
from conftest import Book, Clients, Server, value
from recipes_helpers import run, same

import redis_recipes


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


# ---- What the book's code returns: code/resource_pool.py (chapter 10).


def test_resource_pool_returns_what_the_book_returns(book: Book) -> None:
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


def test_resource_pool_per_resource_questions_return_what_the_book_returns(book: Book) -> None:
    """The book's ``is_available``, ``is_occupied`` and ``has`` (bools from
    ``SISMEMBER … == 1``), on ``POOL.STATUS``; a lease that ended is free."""

    async def body(client: Any, recipes: Any) -> None:
        pool = recipes.ResourcePool(client, "ResourcePool:browsers", owner="w1")
        other = recipes.ResourcePool(client, "ResourcePool:browsers", owner="w2")

        async def answers(resource: str, available: bool, occupied: bool) -> None:
            await same(pool.is_available(resource), available)
            await same(pool.is_occupied(resource), occupied)
            await same(pool.has(resource), available or occupied)

        await answers("b1", False, False)  # no pool yet
        await same(pool.status("b1"), None)
        await same(pool.associate("b1"), True)
        await same(pool.associate("b2"), True)
        await answers("b1", True, False)
        await answers("nope", False, False)
        await same(pool.acquire(), "b1")
        await answers("b1", False, True)
        await same(pool.status("b1"), "held")
        await same(other.is_occupied("b1"), True)  # whoever holds it
        await same(pool.release("b1"), True)
        await answers("b1", True, False)
        await same(pool.status("b1"), "free")
        # Beyond the book: a lease that ends frees the resource at once.
        await same(other.acquire(ttl=0.1), "b2")
        await answers("b2", False, True)
        await asyncio.sleep(0.25)
        await answers("b2", True, False)
        await same(pool.disassociate("b1"), True)
        await answers("b1", False, False)
        await same(pool.disassociate("b2"), True)
        await answers("b2", False, False)

    book.run(body)


def test_resource_pool_per_resource_questions_without_decoding(raw: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        pool = recipes.ResourcePool(client, "ResourcePool:raw", owner="w")
        await same(pool.associate("r"), True)
        await same(pool.status("r"), "free")
        await same(pool.is_available("r"), True)
        await same(pool.acquire(), "r")
        await same(pool.is_occupied("r"), True)
        await same(pool.has("r"), True)
        await same(pool.has("s"), False)

    raw.run(body)


# ---- with pool.lease(…) ----------------------------------------------------


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
