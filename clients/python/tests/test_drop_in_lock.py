"""redis_recipes.drop_in.Lock and AsyncLock next to redis-py's own lock:
the same keys (each excludes the other, both ways), a wait served at the
holder's release in arrival order, waits with no end past the socket
timeout, extend/reacquire, and Redis Cluster. redis-py's own lock tests run
against them in test_drop_in_lock_redis_py_suite.py."""

import asyncio
import concurrent.futures
import os
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
import redis
import redis.asyncio
import redis.asyncio.lock
import redis.lock
from conftest import FLAVORS, MODULE, Server, aclose
from recipes_helpers import until
from redis.exceptions import LockError, LockNotOwnedError

from redis_recipes._core import FOREVER
from redis_recipes.drop_in import AsyncLock, Lock
from redis_recipes.drop_in.lock import wait_slice

PROMPT = 0.05  # seconds: a waiter has the lock this soon after the release
# What redis-py's release() (the drop-ins keep it) says without a token: its
# wording since redis-py 6.0, and before.
UNLOCKED = "not owned or is already unlocked" if redis.VERSION >= (6,) else "Cannot release an unlocked lock"
THREADS = concurrent.futures.ThreadPoolExecutor(max_workers=32)


def classes(mode: str) -> Tuple[type, type]:
    """(the drop-in, redis-py's lock) for a mode."""
    if mode == "sync":
        return Lock, redis.lock.Lock
    return AsyncLock, redis.asyncio.lock.Lock


def new_client(server: Server, mode: str, **options: Any) -> Any:
    if mode == "sync":
        return redis.Redis(port=server.port, **options)
    return redis.asyncio.Redis(port=server.port, **options)


async def call(mode: str, function: Callable[[], Any]) -> Any:
    """``function()``'s result, awaited for an asyncio client. A sync call
    runs here, in the thread that holds the lock's thread-local token."""
    if mode == "sync":
        return function()
    return await function()


def background(mode: str, function: Callable[[], Any]) -> "asyncio.Future[Any]":
    """``function()`` started: on a thread of its own for a sync client (its
    lock then needs ``thread_local=False`` for the token to be seen here)."""
    if mode == "sync":
        return asyncio.get_running_loop().run_in_executor(THREADS, function)
    return asyncio.ensure_future(function())


async def close(mode: str, clients: List[Any]) -> None:
    for client in clients:
        if mode == "sync":
            client.close()
        else:
            await aclose(client)


def lock_info(client: redis.Redis) -> Dict[str, int]:
    info = client.info("recipes")
    return {name: info[name] for name in
            ("recipes_lock_waits", "recipes_lock_waits_timed_out", "recipes_clients_waiting")}


# ---- the same keys as redis-py's lock ---------------------------------------


def test_redis_py_lock_and_drop_in_exclude_each_other(server: Server, mode: str) -> None:
    drop_in, stock = classes(mode)
    plain = server.client()
    plain.flushall()

    async def body() -> None:
        client = new_client(server, mode)
        try:
            theirs = client.lock("Lock:mixed", timeout=10, lock_class=stock)
            ours = client.lock("Lock:mixed", timeout=10, lock_class=drop_in)
            assert type(ours) is drop_in and isinstance(ours, stock)
            # redis-py's lock holds it: the drop-in gets nothing, waiting or not.
            assert await call(mode, lambda: theirs.acquire(blocking=False))
            assert not await call(mode, lambda: ours.acquire(blocking=False))
            assert not await call(mode, lambda: ours.acquire(blocking_timeout=0.2))
            assert ours.local.token is None
            await call(mode, theirs.release)
            # The drop-in holds it: redis-py's lock gets nothing.
            assert await call(mode, lambda: ours.acquire(blocking=False))
            assert plain.get("Lock:mixed") == ours.local.token  # the token, as a plain string
            assert 9000 < plain.pttl("Lock:mixed") <= 10000  # the lease, as the key's TTL
            assert not await call(mode, lambda: theirs.acquire(blocking=False))
            assert not await call(mode, lambda: theirs.acquire(blocking_timeout=0.2))
            assert await call(mode, ours.owned) and not await call(mode, theirs.owned)
            assert await call(mode, ours.locked) and await call(mode, theirs.locked)
            await call(mode, ours.release)
            assert plain.exists("Lock:mixed") == 0
            assert await call(mode, lambda: theirs.acquire(blocking=False))
            await call(mode, theirs.release)
        finally:
            await close(mode, [client])

    asyncio.run(body())


def test_either_lock_works_on_what_the_other_wrote(server: Server, mode: str) -> None:
    """A lock taken by one with a token is extended and released by the
    other holding the same token: the key holds nothing else."""
    drop_in, stock = classes(mode)
    plain = server.client()
    plain.flushall()

    async def body() -> None:
        client = new_client(server, mode, decode_responses=True)
        try:
            for first, second in ((drop_in, stock), (stock, drop_in)):
                taker = client.lock("Lock:shared", timeout=5, lock_class=first)
                other = client.lock("Lock:shared", timeout=5, lock_class=second)
                assert await call(mode, lambda: taker.acquire(blocking=False, token="the-token"))
                assert plain.get("Lock:shared") == b"the-token"
                other.local.token = taker.local.token  # b"the-token", as redis-py encodes it
                assert await call(mode, other.owned)
                assert await call(mode, lambda: other.extend(10))
                assert 14000 < plain.pttl("Lock:shared") <= 15000
                await call(mode, other.release)
                assert plain.exists("Lock:shared") == 0
        finally:
            await close(mode, [client])

    asyncio.run(body())


# ---- the wait: at the holder's release, first come first served -------------


@pytest.mark.parametrize("holder", ["drop-in", "redis-py"])
def test_waiters_get_the_lock_at_its_release_in_arrival_order(server: Server, mode: str, holder: str) -> None:
    """Three waiters (a finite blocking_timeout, none, and a finite one with
    sleep=1, which is unused) queue in turn; each gets the lock within
    PROMPT of the previous holder's release, in the order they came, where
    redis-py's lock would poll every `sleep` seconds."""
    drop_in, stock = classes(mode)
    plain = server.client()
    plain.flushall()
    key = f"Lock:fifo:{holder}"

    def sync_waiter(lock: Any) -> Tuple[float, float]:
        assert lock.acquire()
        acquired = time.monotonic()
        time.sleep(0.05)
        releasing = time.monotonic()
        lock.release()
        return acquired, releasing

    async def async_waiter(lock: Any) -> Tuple[float, float]:
        assert await lock.acquire()
        acquired = time.monotonic()
        await asyncio.sleep(0.05)
        releasing = time.monotonic()
        await lock.release()
        return acquired, releasing

    async def body() -> None:
        clients = [new_client(server, mode) for _ in range(4)]
        try:
            first = clients[0].lock(key, timeout=10, lock_class=drop_in if holder == "drop-in" else stock)
            assert await call(mode, lambda: first.acquire(blocking=False))
            before = lock_info(plain)
            waiters = []
            for client, options in zip(clients[1:], [{"blocking_timeout": 5}, {}, {"blocking_timeout": 5, "sleep": 1}]):
                lock = client.lock(key, timeout=10, lock_class=drop_in, **options)
                if mode == "sync":
                    waiters.append(asyncio.get_running_loop().run_in_executor(THREADS, sync_waiter, lock))
                else:
                    waiters.append(asyncio.ensure_future(async_waiter(lock)))
                count = len(waiters)
                await until(lambda: lock_info(plain)["recipes_lock_waits"] - before["recipes_lock_waits"] == count)
            assert lock_info(plain)["recipes_clients_waiting"] == 3
            releasing = time.monotonic()
            await call(mode, first.release)
            times = await asyncio.wait_for(asyncio.gather(*waiters), 10)
            for n, (acquired, next_release) in enumerate(times):
                assert 0 <= acquired - releasing < PROMPT, (n, acquired - releasing)
                releasing = next_release
            after = lock_info(plain)
            assert after["recipes_lock_waits"] - before["recipes_lock_waits"] == 3  # each queued once
            assert after["recipes_lock_waits_timed_out"] == before["recipes_lock_waits_timed_out"]
        finally:
            await close(mode, clients)

    asyncio.run(body())


def test_a_finite_wait_ends_at_its_blocking_timeout(server: Server, mode: str) -> None:
    drop_in, _ = classes(mode)
    plain = server.client()
    plain.flushall()
    plain.set("Lock:busy", "someone")

    async def body() -> None:
        client = new_client(server, mode)
        try:
            before = lock_info(plain)
            for blocking_timeout, low, high in ((0.3, 0.29, 0.5), (0, 0, 0.05), (-1, 0, 0.05)):
                lock = client.lock("Lock:busy", lock_class=drop_in, blocking_timeout=blocking_timeout)
                started = time.monotonic()
                assert not await call(mode, lock.acquire)
                assert low <= time.monotonic() - started < high, blocking_timeout
            lock = client.lock("Lock:busy", lock_class=drop_in, blocking=False)
            assert not await call(mode, lambda: lock.acquire(blocking_timeout=5))  # blocking=False: one try
            after = lock_info(plain)
            # Only the 0.3 s wait queued; 0, a negative time and blocking=False try once.
            assert after["recipes_lock_waits"] - before["recipes_lock_waits"] == 1
            assert after["recipes_lock_waits_timed_out"] - before["recipes_lock_waits_timed_out"] == 1
        finally:
            await close(mode, [client])

    asyncio.run(body())


def test_a_wait_with_no_end_comes_in_slices_shorter_than_the_socket_timeout() -> None:
    assert wait_slice(redis.Redis(socket_timeout=5)) == 4
    assert wait_slice(redis.Redis(socket_timeout=1.5)) == 0.75
    assert wait_slice(redis.Redis(socket_timeout=1)) == 0.5
    assert wait_slice(redis.Redis(socket_timeout=None)) == FOREVER  # one wait with no end
    assert wait_slice(redis.asyncio.Redis(socket_timeout=3)) == 2
    if redis.VERSION >= (8,):
        assert wait_slice(redis.Redis()) == 4 and wait_slice(redis.asyncio.Redis()) == 4


def test_a_cancelled_asyncio_wait_leaves_the_queue(server: Server) -> None:
    """An asyncio acquire cancelled while it waits (a finite wait and one
    with no end) drops its connection, so the server takes it out of the
    queue, and the client goes on with a fresh connection."""
    plain = server.client()
    plain.flushall()
    plain.set("Lock:cancelled", "someone", px=10000)

    async def body() -> None:
        for options in ({"single_connection_client": True}, {}):
            client = redis.asyncio.Redis(port=server.port, **options)
            try:
                for blocking_timeout in (5, None):
                    lock = client.lock("Lock:cancelled", blocking_timeout=blocking_timeout, lock_class=AsyncLock)
                    with pytest.raises(asyncio.TimeoutError):
                        await asyncio.wait_for(lock.acquire(), 0.2)
                    await until(lambda: lock_info(plain)["recipes_clients_waiting"] == 0, 2)
                    assert await client.get("Lock:cancelled") == b"someone"
                    assert lock.local.token is None
            finally:
                await aclose(client)

    asyncio.run(body())


@pytest.fixture(scope="module")
def every_server() -> Iterator[Dict[str, Server]]:
    """A server of each flavor found, for tests that run on all at once."""
    if not os.path.isfile(MODULE):
        pytest.fail(f"module not built at {MODULE} (run `make test`)")
    started: Dict[str, Server] = {}
    for flavor in sorted(FLAVORS):
        path = FLAVORS[flavor]
        if path and os.path.isfile(path):
            started[flavor] = Server(path)
        elif os.environ.get("CI") == "true":
            pytest.fail(f"{flavor} server not found under CI=true (run `make test`)")
    if not started:
        pytest.skip("no server found (run `make test`)")
    yield started
    for server in started.values():
        server.stop()


HELD = 7.0  # seconds: past redis-py 8's default socket timeout of 5 s
SLICED = {"socket_timeout": 1.5}  # waits with no end come in waits of 0.75 s


# Counts the waits cut into slices by the clients' socket timeouts: a starved event loop re-sends a slice late
# and the count moves.
@pytest.mark.alone
def test_long_waits_with_default_clients(every_server: Dict[str, Server]) -> None:
    """On every server at once: waiters with blocking_timeout=None and =10
    on default clients (redis-py 8: a 5 s socket timeout), and with None on
    a client with a 1.5 s socket timeout, sync and asyncio, each behind a
    holder that releases after 7 s. Each gets the lock at the release. The
    finite wait was one wait in the server's queue; a wait with no end was
    waits of the socket timeout less 1 s (4 s; 0.75 s, half the timeout,
    below 2 s), one after another."""
    if redis.VERSION >= (8,):
        assert redis.Redis().connection_pool.connection_kwargs["socket_timeout"] == 5
    plains = {flavor: server.client() for flavor, server in every_server.items()}
    for plain in plains.values():
        plain.flushall()
    before = {flavor: lock_info(plain) for flavor, plain in plains.items()}
    cases = [(flavor, mode, blocking_timeout, options) for flavor in every_server for mode in ("sync", "asyncio")
             for blocking_timeout, options in ((None, {}), (10, {}), (None, SLICED))]

    async def one(flavor: str, mode: str, blocking_timeout: Any, options: Dict[str, Any]) -> None:
        drop_in, _ = classes(mode)
        key = f"Lock:long:{mode}:{blocking_timeout}:{options}"
        holder = plains[flavor].lock(key, timeout=30, thread_local=False, lock_class=Lock)
        assert holder.acquire(blocking=False)
        client = new_client(every_server[flavor], mode, **options)
        case = (flavor, mode, blocking_timeout, options)
        try:
            waiter = client.lock(key, timeout=30, blocking_timeout=blocking_timeout, thread_local=False,
                                 lock_class=drop_in)
            waiting = background(mode, waiter.acquire)
            await asyncio.sleep(HELD)
            assert not waiting.done(), case
            releasing = time.monotonic()
            await asyncio.get_running_loop().run_in_executor(THREADS, holder.release)
            assert await asyncio.wait_for(waiting, 3) is True, case
            assert time.monotonic() - releasing < 0.5, case
            assert plains[flavor].get(key) == waiter.local.token
        finally:
            await close(mode, [client])

    async def main() -> None:
        outcomes = await asyncio.gather(*(one(*case) for case in cases), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    asyncio.run(main())
    # Per mode: the finite wait, and the waits of each wait with no end.
    waits = 1 + sum(int(HELD // wait_slice(redis.Redis(**options))) + 1 for options in ({}, SLICED))
    assert waits == 1 + 2 + 10 or redis.VERSION < (8,)
    for flavor, plain in plains.items():
        after = lock_info(plain)
        assert after["recipes_lock_waits"] - before[flavor]["recipes_lock_waits"] == 2 * waits, flavor
        # Every wait but the last of each waiter ran out.
        assert (after["recipes_lock_waits_timed_out"] - before[flavor]["recipes_lock_waits_timed_out"]
                == 2 * (waits - 3)), flavor


# ---- extend, reacquire, release ---------------------------------------------


def test_extend_adds_or_replaces_and_reacquire_resets(server: Server, mode: str) -> None:
    drop_in, _ = classes(mode)
    plain = server.client()
    plain.flushall()

    async def body() -> None:
        client = new_client(server, mode)
        try:
            lock = client.lock("Lock:ext", timeout=10, lock_class=drop_in)
            assert await call(mode, lambda: lock.acquire(blocking=False))
            assert await call(mode, lambda: lock.extend(5)) is True  # added to what is left
            assert 14000 < plain.pttl("Lock:ext") <= 15000
            assert await call(mode, lambda: lock.extend(2.5, replace_ttl=True)) is True
            assert 2000 < plain.pttl("Lock:ext") <= 2500
            assert await call(mode, lock.reacquire) is True  # back to `timeout`
            assert 9000 < plain.pttl("Lock:ext") <= 10000
            plain.set("Lock:ext", "another", px=10000)
            for method in (lambda: lock.extend(5), lambda: lock.extend(5, replace_ttl=True), lock.reacquire):
                with pytest.raises(LockNotOwnedError):
                    await call(mode, method)
            assert plain.get("Lock:ext") == b"another" and plain.pttl("Lock:ext") <= 10000
            with pytest.raises(LockNotOwnedError, match="no longer owned"):
                await call(mode, lock.release)
            assert lock.local.token is None and plain.get("Lock:ext") == b"another"
            with pytest.raises(LockError, match="Cannot extend an unlocked lock"):
                await call(mode, lambda: lock.extend(5))
            with pytest.raises(LockError, match="Cannot reacquire an unlocked lock"):
                await call(mode, lock.reacquire)
            with pytest.raises(LockError, match=UNLOCKED):
                await call(mode, lock.release)

            endless = client.lock("Lock:forever", lock_class=drop_in)
            assert await call(mode, lambda: endless.acquire(blocking=False))
            assert plain.ttl("Lock:forever") == -1
            with pytest.raises(LockError, match="Cannot extend a lock with no timeout"):
                await call(mode, lambda: endless.extend(5))
            with pytest.raises(LockError, match="Cannot reacquire a lock with no timeout"):
                await call(mode, endless.reacquire)
            # timeout=0 takes the lock without a lease; adding to it fails as
            # redis-py's script does.
            unleased = client.lock("Lock:zero", timeout=0, lock_class=drop_in)
            assert await call(mode, lambda: unleased.acquire(blocking=False))
            assert plain.ttl("Lock:zero") == -1
            with pytest.raises(LockNotOwnedError):
                await call(mode, lambda: unleased.extend(5))
        finally:
            await close(mode, [client])

    asyncio.run(body())


def test_no_lua_script_runs(server: Server, mode: str) -> None:
    drop_in, _ = classes(mode)
    plain = server.client()
    plain.flushall()
    plain.config_resetstat()

    async def body() -> None:
        client = new_client(server, mode)
        try:
            lock = client.lock("Lock:nolua", timeout=10, lock_class=drop_in)
            async_with = mode == "asyncio"
            if async_with:
                async with lock:
                    assert await lock.extend(1) and await lock.reacquire()
            else:
                with lock:
                    assert lock.extend(1) and lock.reacquire()
        finally:
            await close(mode, [client])

    asyncio.run(body())
    stats = plain.info("commandstats")
    assert not any(name.startswith(("cmdstat_eval", "cmdstat_script")) for name in stats), sorted(stats)
    for command in ("lock.acquire", "lock.releaseif", "lock.extend"):
        assert stats[f"cmdstat_{command}"]["calls"] >= 1


def test_the_token_stays_with_its_thread(server: Server) -> None:
    """thread_local=True (the default): another thread holds no token, as
    with redis-py's lock; thread_local=False shares it."""
    plain = server.client()
    plain.flushall()
    lock = plain.lock("Lock:thread", timeout=10, lock_class=Lock)
    assert lock.acquire(blocking=False)
    seen: List[Any] = []
    thread = threading.Thread(target=lambda: seen.append(getattr(lock.local, "token", None)))
    thread.start()
    thread.join()
    assert seen == [None]
    lock.release()
    shared = plain.lock("Lock:thread", timeout=10, lock_class=Lock, thread_local=False)
    assert shared.acquire(blocking=False)
    thread = threading.Thread(target=shared.release)
    thread.start()
    thread.join()
    assert plain.exists("Lock:thread") == 0


# ---- Redis Cluster ----------------------------------------------------------


def test_redis_cluster(cluster: List[Server]) -> None:
    port = cluster[0].port

    async def body(mode: str) -> None:
        drop_in, stock = classes(mode)
        if mode == "sync":
            client: Any = redis.RedisCluster(host="127.0.0.1", port=port)
            short: Any = redis.RedisCluster(host="127.0.0.1", port=port, socket_timeout=1)
        else:
            client = redis.asyncio.RedisCluster(host="127.0.0.1", port=port)
            short = redis.asyncio.RedisCluster(host="127.0.0.1", port=port, socket_timeout=1)
        plain = redis.RedisCluster(host="127.0.0.1", port=port)
        try:
            # redis-py 8's clients time out a read after 5 s; before 8 a default
            # client has no socket timeout, and a wait with no end is one wait.
            assert wait_slice(client) == (4 if redis.VERSION >= (8,) else FOREVER) and wait_slice(short) == 0.5
            slots = set()
            for n in range(12):  # keys on every node
                key = f"Lock:cluster:{mode}:{n}"
                slots.add(plain.keyslot(key))
                ours = client.lock(key, timeout=10, lock_class=drop_in)
                theirs = client.lock(key, timeout=10, lock_class=stock)
                assert await call(mode, lambda: ours.acquire(blocking=False, token=f"t{n}"))
                assert plain.get(key) == f"t{n}".encode()
                assert not await call(mode, lambda: theirs.acquire(blocking=False))
                assert await call(mode, lambda: ours.extend(5))
                assert 14000 < plain.pttl(key) <= 15000
                assert await call(mode, ours.reacquire)
                assert 9000 < plain.pttl(key) <= 10000
                await call(mode, ours.release)
                assert await call(mode, lambda: theirs.acquire(blocking=False))
                assert not await call(mode, lambda: ours.acquire(blocking=False))
                await call(mode, theirs.release)
            assert len({plain.nodes_manager.get_node_from_slot(slot).name for slot in slots}) == 3
            # Waits at once: a finite one and one with no end (slices of
            # 0.5 s), each served at its holder's release after 0.8 s.
            waits = []
            for waiter_client, blocking_timeout in ((client, 5), (short, None)):
                key = f"Lock:cluster:wait:{mode}:{blocking_timeout}"
                holder = plain.lock(key, timeout=10, lock_class=Lock)
                assert holder.acquire(blocking=False)
                waiter = waiter_client.lock(key, timeout=10, blocking_timeout=blocking_timeout, thread_local=False,
                                            lock_class=drop_in)
                waits.append((key, holder, waiter, background(mode, waiter.acquire)))
            await asyncio.sleep(0.8)
            for key, holder, waiter, waiting in waits:
                assert not waiting.done()
                # Served by the release itself: the server counts a lock it
                # hands to a waiter inside the release (timing it here would
                # time this process's wake-ups, which both cores busy delay).
                # The wait with no end runs in slices of 0.5 s: a release
                # between two slices leaves the lock to the next slice.
                node = plain.get_redis_connection(plain.get_node_from_key(key))
                before = node.info("recipes")["recipes_lock_handoffs_release"]
                holder.release()
                assert await asyncio.wait_for(waiting, 3)
                assert plain.get(key) == waiter.local.token
                handed = node.info("recipes")["recipes_lock_handoffs_release"] - before
                assert handed == 1 or (handed == 0 and waiter.blocking_timeout is None), handed
                await call(mode, waiter.release)
        finally:
            plain.close()
            for each in (client, short):
                if mode == "sync":
                    each.close()
                else:
                    await aclose(each)

    for mode in ("sync", "asyncio"):
        asyncio.run(body(mode))


def test_the_drop_ins_are_redis_py_locks() -> None:
    assert issubclass(Lock, redis.lock.Lock) and issubclass(AsyncLock, redis.asyncio.lock.Lock)
    import redis_recipes.drop_in

    assert redis_recipes.drop_in.Lock is Lock and redis_recipes.drop_in.AsyncLock is AsyncLock
