"""``redis_recipes.rwlock`` on every server, sync and asyncio: the fair
``ReadWriteLock`` (readers share, a writer excludes, a waiting writer is
served before a later reader, ``with`` blocks, fencing tokens, downgrade,
extend, renewal, losing a lease, ``with`` on an asyncio handle)."""

import asyncio
import contextlib
import time
from typing import Any, AsyncIterator, Callable, List

import pytest
import redis.asyncio
from conftest import Clients, Server, aclose, value
from recipes_helpers import commands, eventually, run, start

import redis_recipes
import redis_recipes.asyncio
from redis_recipes import RwLockInfo

KEY = "rw"


# ---- helpers ---------------------------------------------------------------


def info(clients: Clients, key: str = KEY) -> RwLockInfo:
    """The lock's state, as the server reports it."""
    return redis_recipes.ReadWriteLock(clients.plain, key).info()


@contextlib.asynccontextmanager
async def holding(clients: Clients, handle: Any) -> AsyncIterator[Any]:
    """``with handle`` (sync) or ``async with handle`` (asyncio)."""
    if clients.mode == "sync":
        with handle as held:
            yield held
    else:
        async with handle as held:
            yield held


# ---- ReadWriteLock ---------------------------------------------------------


def test_readers_share_and_a_writer_excludes(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        rw = recipes.ReadWriteLock(client, KEY, ttl=30)
        first, second, writer = rw.read_lock(), rw.read_lock(), rw.write_lock()
        assert len({first.token, second.token, writer.token}) == 3
        assert (first.mode, writer.mode) == ("read", "write")
        assert await value(first.acquire()) is True
        assert await value(second.acquire()) is True
        assert await value(writer.acquire()) is False
        state = info(clients)
        assert state.mode == "read" and set(state.holders) == {first.token, second.token}
        assert state.waiting == 0
        now = time.time() * 1000
        assert all(now < end <= now + 30_000 + 1000 for end in state.holders.values() if end is not None)
        assert 0 < clients.plain.pttl(KEY) <= 30_000
        assert await value(first.acquire()) is True  # a retry: granted again
        assert await value(first.release()) is True
        assert await value(first.release()) is False
        assert await value(writer.acquire()) is False  # the second reader still reads
        assert await value(second.release()) is True
        assert clients.plain.exists(KEY) == 0  # no holders: no key
        assert await value(writer.acquire()) is True
        state = info(clients)
        assert state.mode == "write" and list(state.holders) == [writer.token]
        assert await value(first.acquire()) is False
        assert await value(rw.write_lock().acquire()) is False
        assert await value(first.acquire(timeout=0.1)) is False
        assert await value(writer.release()) is True
        assert info(clients) == RwLockInfo("none", {}, 0)
        # Without a ttl a holding has no lease, and the key no TTL.
        forever = recipes.ReadWriteLock(client, KEY).read_lock()
        assert await value(forever.acquire()) is True
        assert info(clients).holders == {forever.token: None}
        assert clients.plain.pttl(KEY) == -1
        assert await value(forever.release()) is True

    run(clients, body)


def test_a_waiting_writer_is_served_before_a_later_reader(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        served: List[str] = []

        def waiter(name: str, handle: Any) -> Callable[[], Any]:
            if clients.mode == "sync":
                def call() -> Any:
                    got = handle.acquire(timeout=10)
                    served.append(name)
                    return got
                return call

            async def acall() -> Any:
                got = await handle.acquire(timeout=10)
                served.append(name)
                return got
            return acall

        first = recipes.ReadWriteLock(client, KEY, ttl=30).read_lock()
        writer = recipes.ReadWriteLock(clients.new_client(), KEY, ttl=30).write_lock()
        later = recipes.ReadWriteLock(clients.new_client(), KEY, ttl=30).read_lock()
        assert await value(first.acquire()) is True
        writing = start(clients, waiter("writer", writer))
        assert await eventually(lambda: info(clients).waiting == 1)
        # The lock is read-held, yet a new reader does not pass the waiting writer.
        assert await value(later.acquire()) is False
        reading = start(clients, waiter("reader", later))
        assert await eventually(lambda: info(clients).waiting == 2)
        assert await value(first.release()) is True
        assert await writing is True
        assert served == ["writer"]
        state = info(clients)
        assert state.mode == "write" and list(state.holders) == [writer.token] and state.waiting == 1
        await asyncio.sleep(0.2)
        assert served == ["writer"] and not reading.done()
        assert await value(writer.release()) is True
        assert await reading is True
        assert served == ["writer", "reader"]
        assert info(clients).mode == "read"
        assert await value(later.release()) is True

    run(clients, body)


def test_readers_at_the_head_of_the_queue_are_admitted_together(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        writer = recipes.ReadWriteLock(client, KEY, ttl=30).write_lock()
        assert await value(writer.acquire()) is True
        readers = [recipes.ReadWriteLock(clients.new_client(), KEY, ttl=30).read_lock() for _ in range(3)]
        reading = [start(clients, lambda r=r: r.acquire(timeout=10)) for r in readers]
        assert await eventually(lambda: info(clients).waiting == 3)
        assert await value(writer.release()) is True
        assert await asyncio.gather(*reading) == [True, True, True]
        state = info(clients)
        assert state.mode == "read" and set(state.holders) == {r.token for r in readers} and state.waiting == 0

    run(clients, body)


def test_a_write_lock_downgrades_to_a_read_lock(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        rw = recipes.ReadWriteLock(client, "{rw}:lock", ttl=30, fence="{rw}:fence")
        writer = rw.write_lock()
        assert await value(writer.acquire()) is True and writer.fencing_token == 1
        reader = recipes.ReadWriteLock(clients.new_client(), "{rw}:lock", ttl=30).read_lock()
        reading = start(clients, lambda: reader.acquire(timeout=10))
        assert await eventually(lambda: info(clients, "{rw}:lock").waiting == 1)
        assert await value(writer.downgrade()) is True  # the waiting reader is admitted with it
        assert writer.mode == "read" and writer.fencing_token == 1
        assert await reading is True
        state = info(clients, "{rw}:lock")
        assert state.mode == "read" and set(state.holders) == {writer.token, reader.token}
        with pytest.raises(ValueError):
            await value(writer.downgrade())
        assert await value(writer.release()) is True
        assert await value(reader.release()) is True

    run(clients, body)


def test_fencing_tokens(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        rw = recipes.ReadWriteLock(client, "{rw}:lock", ttl=30, fence="{rw}:fence")
        reader = rw.read_lock()
        assert await value(reader.acquire()) is True
        assert reader.fencing_token == 0  # no writer yet
        assert clients.plain.exists("{rw}:fence") == 0
        assert await value(reader.release()) is True
        writer = rw.write_lock()
        assert await value(writer.acquire()) is True and writer.fencing_token == 1
        assert await value(writer.acquire()) is True and writer.fencing_token == 1  # a retry keeps it
        assert await value(writer.release()) is True
        second = rw.write_lock()
        assert await value(second.acquire()) is True and second.fencing_token == 2
        assert await value(second.release()) is True
        assert await value(reader.acquire()) is True
        assert reader.fencing_token == 2  # the last writer's
        assert clients.plain.get("{rw}:fence") == b"2"
        assert await value(reader.release()) is True

    run(clients, body)


def test_extend(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        handle = recipes.ReadWriteLock(client, KEY, ttl=0.5).write_lock()
        assert await value(handle.acquire()) is True
        assert 0 < clients.plain.pttl(KEY) <= 500
        assert await value(handle.extend(30)) is True
        assert 10_000 < clients.plain.pttl(KEY) <= 30_000
        assert await value(handle.extend()) is True  # the lock's ttl
        assert 0 < clients.plain.pttl(KEY) <= 500
        assert await value(handle.release()) is True
        assert await value(handle.extend(30)) is False
        with pytest.raises(ValueError):
            await value(recipes.ReadWriteLock(client, KEY).read_lock().extend())

    run(clients, body)


def test_context_managers(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        rw = recipes.ReadWriteLock(client, KEY, ttl=30, wait=0.2)
        async with holding(clients, rw.read_lock()) as reader:
            assert reader.mode == "read"
            async with holding(clients, rw.read_lock()) as other:
                assert set(info(clients).holders) == {reader.token, other.token}
            assert list(info(clients).holders) == [reader.token]
            started = time.monotonic()
            with pytest.raises(redis_recipes.LockNotAcquired):
                async with holding(clients, rw.write_lock()):
                    pytest.fail("the block ran")
            assert time.monotonic() - started >= 0.15  # it waited `wait`
        assert clients.plain.exists(KEY) == 0
        async with holding(clients, rw.write_lock()) as writer:
            assert info(clients) == RwLockInfo("write", {writer.token: info(clients).holders[writer.token]}, 0)
            with pytest.raises(redis_recipes.LockNotAcquired):
                async with holding(clients, rw.read_lock()):
                    pytest.fail("the block ran")
        assert clients.plain.exists(KEY) == 0
        # wait=None waits as long as it takes: here until a lease ends.
        short = recipes.ReadWriteLock(client, KEY, ttl=0.3).write_lock()
        assert await value(short.acquire()) is True
        started = time.monotonic()
        async with holding(clients, recipes.ReadWriteLock(client, KEY, ttl=30).read_lock()) as reader:
            assert 0.15 < time.monotonic() - started < 3
            assert list(info(clients).holders) == [reader.token]
        assert clients.plain.exists(KEY) == 0

    run(clients, body)


def hold_past_ttl(clients: Clients, kind: str, renew: bool, on_lost: Any = None) -> Any:
    async def body(client: Any, recipes: Any) -> None:
        rw = recipes.ReadWriteLock(client, KEY, ttl=0.3, renew=renew, on_lost=on_lost)
        handle = rw.read_lock() if kind == "read" else rw.write_lock()
        async with holding(clients, handle):
            await asyncio.sleep(1.0)
            held = handle.token in info(clients).holders
        assert held is renew

    run(clients, body)


@pytest.mark.parametrize("kind", ["read", "write"])
def test_renewal_keeps_a_short_lease_alive(clients: Clients, kind: str) -> None:
    before = commands(clients.plain, "rwlock.extend")
    hold_past_ttl(clients, kind, renew=True)
    assert clients.plain.exists(KEY) == 0  # released on exit
    assert commands(clients.plain, "rwlock.extend") - before >= 2  # every 0.1 s for 1 s


def test_without_renewal_the_block_learns_the_lease_was_lost(clients: Clients) -> None:
    with pytest.raises(redis_recipes.LockLost):
        hold_past_ttl(clients, "write", renew=False)
    lost: List[Any] = []
    hold_past_ttl(Clients(clients.server, clients.mode), "read", renew=False, on_lost=lost.append)
    assert len(lost) == 1 and lost[0].mode == "read"


def test_on_lost_is_called_once_when_the_lock_is_deleted(clients: Clients) -> None:
    lost: List[Any] = []

    async def body(client: Any, recipes: Any) -> None:
        rw = recipes.ReadWriteLock(client, KEY, ttl=0.6, renew=True, on_lost=lost.append)
        async with holding(clients, rw.write_lock()) as handle:
            await asyncio.sleep(0.3)
            assert clients.plain.delete(KEY) == 1
            assert await eventually(lambda: bool(lost), 3)
            assert lost == [handle] and handle.lost
            before = commands(clients.plain, "rwlock.extend")
            await asyncio.sleep(0.6)
            assert commands(clients.plain, "rwlock.extend") == before, "the renewer went on after the loss"
        assert lost == [handle]  # not again when the block ended

    run(clients, body)
    # Without on_lost, the block raises when it ends.
    with pytest.raises(redis_recipes.LockLost):
        async def unreported(client: Any, recipes: Any) -> None:
            async with holding(clients, recipes.ReadWriteLock(client, KEY, ttl=5, renew=True).read_lock()):
                clients.plain.delete(KEY)

        run(Clients(clients.server, clients.mode), unreported)


def test_with_instead_of_async_with_raises(server: Server) -> None:
    plain = server.client()
    plain.flushall()

    async def body() -> None:
        client = redis.asyncio.Redis(port=server.port)
        try:
            handle = redis_recipes.asyncio.ReadWriteLock(client, KEY, ttl=5).write_lock()
            with pytest.raises(TypeError, match="RwLockHandle .*use 'async with'"):
                with handle:
                    pytest.fail("the block ran")
            assert plain.exists(KEY) == 0
            async with handle as held:
                assert held is handle and plain.exists(KEY) == 1
            assert plain.exists(KEY) == 0
        finally:
            await aclose(client)

    asyncio.run(body())
