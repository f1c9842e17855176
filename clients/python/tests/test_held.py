"""``redis_recipes._held`` (and its asyncio twin): the background renewal of
``with Lock(…, renew=True)`` and ``with pool.lease(…, renew=True)``, sync
and asyncio at once, on real servers: a lease the server says is gone is
reported once and renewing stops; renewals that fail (a paused server, a
short socket timeout) are tried again while the lease lasts, and reported
once it has ended. And ``with`` on an asyncio holder raises instead of
taking nothing."""

import asyncio
import threading
import time
from typing import Any, Awaitable, Callable, Dict, List

import pytest
import redis
import redis.asyncio
import redis.asyncio.retry
import redis.retry
from conftest import Server, aclose
from recipes_helpers import eventually
from redis.backoff import NoBackoff

import redis_recipes
import redis_recipes.asyncio

RESOURCE = "r"
OWNER = "me"


class Holding:
    """A lock or a pool resource held with renewal in a block that lasts
    until ``leave`` is set; ``lost`` collects what ``on_lost`` was called
    with."""

    def __init__(self, mode: str, kind: str, client: Any, ttl: float) -> None:
        self.mode, self.kind = mode, kind
        self.key = f"{kind}:{mode}"
        self.lost: List[Any] = []
        self.entered = threading.Event()
        recipes: Any = redis_recipes if mode == "sync" else redis_recipes.asyncio
        if kind == "lock":
            self.holder = recipes.Lock(client, self.key, ttl=ttl, renew=True, on_lost=self.lost.append)
            self.subject: Any = self.holder
        else:
            pool = recipes.ResourcePool(client, self.key, owner=OWNER, ttl=ttl)
            self.holder = pool.lease(timeout=5, renew=True, on_lost=self.lost.append)
            self.subject = RESOURCE

    def held(self, plain: redis.Redis) -> bool:
        """Whether the server says it is held (by this holder)."""
        if self.kind == "lock":
            return bool(plain.get(self.key) == self.holder.token.encode())
        holders = redis_recipes.ResourcePool(plain, self.key).holders()
        return holders.get(RESOURCE, ("", None))[0] == OWNER

    def block(self, leave: threading.Event) -> Any:
        """The block: a thread's work (sync) or a coroutine (asyncio)."""
        if self.mode == "sync":
            return asyncio.get_running_loop().run_in_executor(None, self._sync_block, leave)
        return asyncio.ensure_future(self._async_block(leave))

    def _sync_block(self, leave: threading.Event) -> None:
        with self.holder:
            self.entered.set()
            leave.wait(60)

    async def _async_block(self, leave: threading.Event) -> None:
        async with self.holder:
            self.entered.set()
            while not leave.is_set():
                await asyncio.sleep(0.01)


def renewals(plain: redis.Redis) -> int:
    """How many renewals the server has run (lock and pool)."""
    stats = plain.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in ("lock.extend", "pool.renew"))


def hold_all(server: Server, ttl: float, disrupt: Callable[[List[Holding], redis.Redis], Awaitable[None]],
             **options: Any) -> List[Holding]:
    """Holds a lock and a pool resource with a sync and an asyncio client
    (``options`` for both), all at once, runs ``disrupt`` while they are
    held, then ends the blocks."""
    plain = server.client()
    plain.flushall()

    async def main() -> List[Holding]:
        sync_client = server.client(**options, retry=redis.retry.Retry(NoBackoff(), 0))
        async_client = redis.asyncio.Redis(port=server.port, **options,
                                           retry=redis.asyncio.retry.Retry(NoBackoff(), 0))
        holdings = [Holding(mode, kind, client, ttl)
                    for mode, client in (("sync", sync_client), ("asyncio", async_client))
                    for kind in ("lock", "lease")]
        for holding in holdings:
            if holding.kind == "lease":
                plain.execute_command("POOL.ADD", holding.key, RESOURCE)
        leave = threading.Event()
        blocks = [holding.block(leave) for holding in holdings]
        try:
            assert await eventually(lambda: all(h.entered.is_set() for h in holdings), 10)
            await disrupt(holdings, plain)
        finally:
            leave.set()
            await asyncio.gather(*blocks)
            sync_client.close()
            await aclose(async_client)
        return holdings

    return asyncio.run(main())


def test_a_lease_the_server_says_is_gone_is_reported_once_and_renewing_stops(server: Server) -> None:
    ttl = 0.6

    async def delete(holdings: List[Holding], plain: redis.Redis) -> None:
        await asyncio.sleep(ttl)  # renewed once or twice
        assert all(holding.held(plain) for holding in holdings)
        plain.delete(*(holding.key for holding in holdings))
        assert await eventually(lambda: all(holding.lost for holding in holdings), 5)
        before = renewals(plain)
        await asyncio.sleep(ttl)  # three periods
        assert renewals(plain) == before, "a renewer went on after the loss"

    holdings = hold_all(server, ttl, delete)
    for holding in holdings:  # once, by the renewer; not again when the block ended
        assert holding.lost == [holding.subject], (holding.mode, holding.kind)
        assert holding.holder.lost


def test_renewals_that_fail_are_tried_again_while_the_lease_lasts(server: Server) -> None:
    ttl = 1.5  # renewed every 0.5 s

    async def pause(holdings: List[Holding], plain: redis.Redis) -> None:
        # 0.8 s of timeouts (0.1 s each): at least one renewal of each fails.
        plain.execute_command("CLIENT", "PAUSE", 800, "ALL")
        await asyncio.sleep(ttl + 0.5)  # past the lease the last renewal before the pause gave
        assert all(holding.held(plain) for holding in holdings)
        assert not any(holding.lost for holding in holdings)

    holdings = hold_all(server, ttl, pause, socket_timeout=0.1)
    assert not any(holding.lost for holding in holdings)
    plain = server.client()
    assert not any(holding.held(plain) for holding in holdings)  # given back at the end


def test_renewals_that_fail_until_the_lease_ends_report_it_once(server: Server) -> None:
    ttl = 0.6

    async def pause(holdings: List[Holding], plain: redis.Redis) -> None:
        plain.execute_command("CLIENT", "PAUSE", 2000, "ALL")
        started = time.monotonic()
        assert await eventually(lambda: all(holding.lost for holding in holdings), 1.8)
        assert time.monotonic() - started >= ttl * 2 / 3  # not before the lease could have ended
        await asyncio.sleep(2.4 - (time.monotonic() - started))  # the pause is over
        before = renewals(plain)
        await asyncio.sleep(ttl)
        assert renewals(plain) == before, "a renewer went on after the loss"

    holdings = hold_all(server, ttl, pause, socket_timeout=0.1)
    for holding in holdings:
        assert holding.lost == [holding.subject], (holding.mode, holding.kind)


def test_with_instead_of_async_with_raises(server: Server) -> None:
    plain = server.client()
    plain.flushall()
    plain.execute_command("POOL.ADD", "pool", RESOURCE)

    async def body() -> None:
        client = redis.asyncio.Redis(port=server.port)
        try:
            recipes = redis_recipes.asyncio
            holders: Dict[str, Any] = {
                "Lock": recipes.Lock(client, "lock", ttl=5),
                "Lease": recipes.ResourcePool(client, "pool", owner=OWNER).lease(timeout=1),
            }
            for name, holder in holders.items():
                with pytest.raises(TypeError, match=f"{name} .*use 'async with'"):
                    with holder:
                        pytest.fail("the block ran")
            assert plain.exists("lock") == 0
            assert redis_recipes.ResourcePool(plain, "pool").info()["free"] == 1
            async with holders["Lock"] as lock:  # the same objects work with async with
                assert lock.fencing_token is None and plain.exists("lock") == 1
            async with holders["Lease"] as resource:
                assert resource == RESOURCE
        finally:
            await aclose(client)

    asyncio.run(body())
