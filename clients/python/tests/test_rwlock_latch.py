"""Release 0.5.0's classes on every server, sync and asyncio: the fair
``ReadWriteLock`` (readers share, a writer excludes, a waiting writer is
served before a later reader, ``with`` blocks, fencing tokens, downgrade,
renewal, losing a lease), the ``CountDownLatch`` (count down, wait, arm,
expire), the book's ``UrlShorty`` (chapter 20), the exception classes of
their documented errors, Redis Cluster and the types."""

import asyncio
import contextlib
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, List

import pytest
import redis
import redis.asyncio
from conftest import Clients, Server, value
from redis.crc import key_slot
from redis.exceptions import ResponseError
from test_book import run

import redis_recipes
import redis_recipes.asyncio
import redis_recipes.latch
from redis_recipes import RwLockInfo

KEY = "rw"


# ---- helpers ---------------------------------------------------------------


def info(clients: Clients, key: str = KEY) -> RwLockInfo:
    """The lock's state, as the server reports it."""
    return redis_recipes.ReadWriteLock(clients.plain, key).info()


async def eventually(check: Callable[[], bool], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def start(clients: Clients, call: Callable[[], Any]) -> "asyncio.Future[Any]":
    """Runs a package call in the background: on a thread of its own for a
    sync client, as a task for an asyncio one."""
    if clients.mode == "sync":
        return asyncio.get_running_loop().run_in_executor(None, call)
    return asyncio.ensure_future(call())


@contextlib.asynccontextmanager
async def holding(clients: Clients, handle: Any) -> AsyncIterator[Any]:
    """``with handle`` (sync) or ``async with handle`` (asyncio)."""
    if clients.mode == "sync":
        with handle as held:
            yield held
    else:
        async with handle as held:
            yield held


def commands(plain: redis.Redis, name: str) -> int:
    """How many times the server ran command ``name``."""
    return int(plain.info("commandstats").get(f"cmdstat_{name}", {}).get("calls", 0))


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
            await client.aclose()

    asyncio.run(body())


# ---- CountDownLatch --------------------------------------------------------


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
    monkeypatch.setattr(redis_recipes.latch, "CHUNK", 0.2)

    async def body(client: Any, recipes: Any) -> None:
        latch = recipes.CountDownLatch(client, "latch")
        assert await value(latch.try_set_count(1)) is True
        before = commands(clients.plain, "latch.wait")
        started = time.monotonic()
        assert await value(latch.wait(0.5)) is False
        assert 0.45 < time.monotonic() - started < 2
        assert commands(clients.plain, "latch.wait") - before == 3  # 0.2 + 0.2 + 0.1 s
        clients.plain.pexpire("latch", 700)  # opens in 0.7 s
        before = commands(clients.plain, "latch.wait")
        started = time.monotonic()
        assert await value(latch.wait()) is True
        assert 0.5 < time.monotonic() - started < 3
        assert commands(clients.plain, "latch.wait") - before >= 4

    run(clients, body)


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


# ---- errors ----------------------------------------------------------------


def test_the_documented_errors_raise_their_classes(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        errors = redis_recipes
        rw = recipes.ReadWriteLock(client, KEY, ttl=30)
        reader = rw.read_lock(token="same")
        assert await value(reader.acquire()) is True
        with pytest.raises(errors.CannotUpgrade) as upgrade:
            await value(rw.write_lock(token="same").acquire())
        assert str(upgrade.value) == ("token holds a read lock: release it before asking for WRITE "
                                      "(two readers upgrading would deadlock)")
        assert isinstance(upgrade.value, ResponseError)
        assert info(clients).mode == "read"  # nothing changed
        clients.plain.set("a-string", "x")
        clients.plain.hset("a-hash", "f", "v")
        clients.plain.set("{full}:counter", 2**63 - 1)
        clients.plain.hset("{bad}:ids", "https://example.com/", "not an id")
        cases: List[Any] = [
            (lambda: recipes.ReadWriteLock(client, "a-string").read_lock().acquire(), errors.WrongType, None),
            (lambda: recipes.CountDownLatch(client, "a-hash").count_down(), errors.WrongType, None),
            (lambda: recipes.UrlShorty(client, "full").shorten("https://example.com/"), errors.GeneratorExhausted,
             "ID generator exhausted: taking 1 more ID(s) after 9223372036854775807 would pass "
             "9223372036854775807"),
            (lambda: recipes.ReadWriteLock(client, KEY, fence=KEY).write_lock().acquire(), ResponseError,
             "FENCE key must differ from the lock key"),
            (lambda: recipes.CountDownLatch(client, "latch").try_set_count(0), ResponseError,
             "count must be a positive integer"),
            (lambda: recipes.CountDownLatch(client, "latch").count_down(0), ResponseError,
             "decrement must be a positive integer"),
            (lambda: recipes.CountDownLatch(client, "a-string").count(), ResponseError,
             "value is not an integer or out of range"),
            (lambda: recipes.UrlShorty(client, "bad").shorten("https://example.com/"), ResponseError,
             "hash value is not an integer"),
        ]
        for call, kind, message in cases:
            with pytest.raises(kind) as raised:
                await value(call())
            if kind is ResponseError:
                assert type(raised.value) is ResponseError, raised.value
            if message is not None:
                assert str(raised.value) == message
        # The ID generator's errors write nothing.
        assert clients.plain.exists("{full}:ids", "{full}:urls", "{bad}:urls") == 0
        assert clients.plain.get("{bad}:counter") is None
        # UrlShorty's hashes hold the wrong type.
        clients.plain.set("{typed}:urls", "x")
        with pytest.raises(errors.WrongType):
            await value(recipes.UrlShorty(client, "typed").shorten("u"))
        assert clients.plain.exists("{typed}:counter", "{typed}:ids") == 0

    run(clients, body)


def test_a_server_without_the_module_says_what_to_load(server: Server) -> None:
    plain = Server(server.process.args[0], module=False)
    try:
        client = plain.client()
        calls: List[Callable[[], Any]] = [
            lambda: redis_recipes.ReadWriteLock(client, KEY).write_lock().acquire(),
            lambda: redis_recipes.CountDownLatch(client, "latch").count(),
            lambda: redis_recipes.UrlShorty(client).shorten("u"),
        ]
        for call in calls:
            with pytest.raises(redis_recipes.ModuleNotLoaded, match="loadmodule"):
                call()
    finally:
        plain.stop()


# ---- Redis Cluster ---------------------------------------------------------


def test_redis_cluster(cluster: List[Server]) -> None:
    client = redis.RedisCluster(host="127.0.0.1", port=cluster[0].port)
    try:
        for n in range(10):
            rw = redis_recipes.ReadWriteLock(client, f"{{rw:{n}}}:lock", fence=f"{{rw:{n}}}:fence", ttl=30)
            with rw.write_lock() as writer:
                assert writer.fencing_token == 1
                assert rw.read_lock().acquire(timeout=0.05) is False
            reader = rw.read_lock()
            assert reader.acquire(timeout=1) is True and reader.fencing_token == 1
            assert rw.info().mode == "read"
            assert reader.release() is True
            latch = redis_recipes.CountDownLatch(client, f"latch:{n}")
            assert latch.try_set_count(1) is True
            assert latch.wait(0.05) is False
            assert latch.count_down() == 0 and latch.wait(1) is True
            shorty = redis_recipes.UrlShorty(client, f"short:{n}")
            assert shorty.shorten("https://example.com/") == "1"
            assert shorty.restore("1") == "https://example.com/"
    finally:
        client.close()


def test_redis_cluster_with_asyncio(cluster: List[Server]) -> None:
    import redis.asyncio.cluster

    recipes = redis_recipes.asyncio

    async def body() -> None:
        client = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=cluster[0].port)
        try:
            for n in range(10):
                rw = recipes.ReadWriteLock(client, f"{{arw:{n}}}:lock", fence=f"{{arw:{n}}}:fence", ttl=30)
                async with rw.write_lock() as writer:
                    assert writer.fencing_token == 1
                    assert await rw.read_lock().acquire(timeout=0.05) is False
                async with rw.read_lock() as reader:
                    assert reader.fencing_token == 1
                latch = recipes.CountDownLatch(client, f"alatch:{n}")
                assert await latch.try_set_count(1) is True
                assert await latch.wait(0.05) is False
                assert await latch.count_down() == 0 and await latch.wait(1) is True
                shorty = recipes.UrlShorty(client, f"ashort:{n}")
                assert await shorty.shorten("https://example.com/") == "1"
                assert await shorty.restore("1") == "https://example.com/"
        finally:
            await client.aclose()

    asyncio.run(body())


# ---- the package ------------------------------------------------------------


def test_the_new_classes_are_exported_and_versioned() -> None:
    for name in ("ReadWriteLock", "RwLockHandle", "RwLockInfo", "CountDownLatch", "UrlShorty"):
        assert name in redis_recipes.__all__ and name in redis_recipes.asyncio.__all__
    assert "CannotUpgrade" in redis_recipes.__all__
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert f'\nversion = "{redis_recipes.__version__}"\n' in pyproject
    assert issubclass(redis_recipes.asyncio.RwLockHandle, redis_recipes.RwLockHandle)
    assert redis_recipes.asyncio.CountDownLatch.__doc__ == redis_recipes.CountDownLatch.__doc__


USER = textwrap.dedent('''
    from typing import Optional

    import redis
    import redis.asyncio

    import redis_recipes
    import redis_recipes.asyncio


    def sync(client: redis.Redis) -> None:
        rw = redis_recipes.ReadWriteLock(client, "rw", ttl=30, renew=True)
        with rw.read_lock() as reader:
            fence: Optional[int] = reader.fencing_token
        with rw.write_lock(token="me") as writer:
            held: bool = writer.extend(10)
            down: bool = writer.downgrade()
        state: redis_recipes.RwLockInfo = rw.info()
        latch = redis_recipes.CountDownLatch(client, "latch")
        armed: bool = latch.try_set_count(3, ttl=60)
        left: int = latch.count_down()
        opened: bool = latch.wait(5.5)
        short: str = redis_recipes.UrlShorty(client).shorten("https://example.com/")
        url: Optional[str] = redis_recipes.UrlShorty(client, "links").restore(short)


    async def asynchronous(client: redis.asyncio.Redis) -> None:
        rw = redis_recipes.asyncio.ReadWriteLock(client, "rw", ttl=30)
        async with rw.write_lock() as writer:
            held: bool = await writer.extend(10)
        got: bool = await rw.read_lock().acquire(timeout=1)
        opened: bool = await redis_recipes.asyncio.CountDownLatch(client, "latch").wait()
        short: str = await redis_recipes.asyncio.UrlShorty(client).shorten("https://example.com/")
''')

WRONG = textwrap.dedent('''
    import redis.asyncio

    import redis_recipes.asyncio


    async def asynchronous(client: redis.asyncio.Redis) -> None:
        left: int = redis_recipes.asyncio.CountDownLatch(client, "latch").count_down()
        redis_recipes.asyncio.UrlShorty(client).restore(62)
''')


def test_code_using_the_new_classes_is_checked_against_their_types(tmp_path: Path) -> None:
    def mypy(path: Path) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir",
                               str(tmp_path / "cache"), str(path)], capture_output=True, text=True, timeout=600)

    (tmp_path / "user.py").write_text(USER)
    (tmp_path / "wrong.py").write_text(WRONG)
    good = mypy(tmp_path / "user.py")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(tmp_path / "wrong.py").stdout
    assert 'Incompatible types in assignment (expression has type "Coroutine[Any, Any, int]"' in bad, bad
    assert 'has incompatible type "int"; expected "str"' in bad, bad

