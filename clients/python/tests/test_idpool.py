"""``redis_recipes.idpool`` on every server, sync and asyncio: ``IdPool``
(create, acquire, release, leases that end, renew, info, resize)."""

import asyncio
from typing import Any

from conftest import Clients, value
from recipes_helpers import run


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
