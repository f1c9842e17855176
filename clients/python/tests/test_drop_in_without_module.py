"""The drop-ins on servers without the module, sync and asyncio, on every
server: ``Lock``/``AsyncLock`` give what redis-py's own lock gives, and the
``recipes://`` storages what ``limits``' own Redis storage gives, call for
call (the same story told to both, side by side on one server). The module
is looked for once per connection pool: the first call's ``unknown
command`` is the only error the server counts (``INFO errorstats``), and a
client sharing the pool sends none; a server that gains the module
(``MODULE LOAD``) is used by a new client while the old one keeps the
library's way; one restarted without it is learnt from the next call; a
cluster whose nodes differ uses the module on the nodes that have it.
(redis-py's and limits' own tests also run against a server without the
module: test_drop_in_lock_redis_py_suite.py and
test_drop_in_limits_suite.py.)"""

import asyncio
import time
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
import redis
import redis.asyncio
from conftest import FLAVORS, MODULE, Server, aclose, binary, nodes_for_cluster, value
from peer_suite import has_module
from test_drop_in_lock import classes, new_client

from redis_recipes.drop_in import AsyncLock, Lock

limits = pytest.importorskip("limits", reason="limits is not installed (pip install './clients/python[test]')")

import limits.aio.strategies  # noqa: E402, F811
import limits.strategies  # noqa: E402
from limits import parse  # noqa: E402
from limits.storage import storage_from_string  # noqa: E402
from test_drop_in_limits import needs_the_asyncio_storage  # noqa: E402

import redis_recipes.drop_in  # noqa: E402,F401  (registers the schemes)
from redis_recipes.drop_in.limits import AsyncRecipesStorage, RecipesStorage  # noqa: E402


def start_plain(flavor: str) -> Server:
    """A server of ``flavor`` without the module, which may load it later."""
    return Server(binary(flavor), "--enable-module-command", "yes", module=False)


@pytest.fixture(scope="module", params=sorted(FLAVORS))
def plain(request: Any) -> Iterator[Server]:
    started = start_plain(request.param)
    yield started
    started.stop()


OBSERVERS: Dict[int, redis.Redis] = {}


def observer(server: Server) -> redis.Redis:
    """The test's one client of ``server``, connected once: a connection's
    set-up may count errors (``CLIENT SETINFO`` before Redis 7.2)."""
    if server.port not in OBSERVERS:
        OBSERVERS[server.port] = server.client()
        OBSERVERS[server.port].ping()
    return OBSERVERS[server.port]


def errors(server: Server) -> int:
    """The ``ERR`` replies the server has sent (an unknown command is one)."""
    entry: Any = observer(server).info("errorstats").get("errorstat_ERR", {})
    if isinstance(entry, str):  # redis-py 5.0 leaves "count=N" unparsed
        entry = dict(field.split("=") for field in entry.split(","))
    return int(entry.get("count", 0))


def calls(server: Server) -> Dict[str, int]:
    stats = observer(server).info("commandstats")
    return {name[len("cmdstat_"):]: count["calls"] for name, count in stats.items() if name.startswith("cmdstat_")}


async def outcome(results: List[Any], function: Callable[[], Any]) -> None:
    """Appends ``function()``'s result (awaited under asyncio), or the
    class and text of what it raised."""
    try:
        results.append(await value(function()))
    except Exception as error:  # noqa: BLE001  (the story records every outcome)
        results.append((type(error).__name__, str(error)))


async def lock_story(server: Server, client: Any, lock_class: type, name: str) -> List[Any]:
    """Every method of redis-py's lock, with its corner cases: what each
    call returned or raised, and the key's contents and lease after it."""
    plain = observer(server)
    seen: List[Any] = []

    def key() -> Tuple[Any, int]:
        return plain.get(name), round(plain.pttl(name) / 1000)

    lock = client.lock(name, timeout=10, sleep=0.05, lock_class=lock_class)
    other = client.lock(name, timeout=10, sleep=0.02, blocking_timeout=0.1, lock_class=lock_class)
    await outcome(seen, lambda: lock.acquire(blocking=False))
    took = time.monotonic()
    await outcome(seen, other.acquire)  # polls until its blocking_timeout
    seen.append(time.monotonic() - took >= 0.06)
    await outcome(seen, lambda: other.do_acquire(b"other"))
    await outcome(seen, lock.locked)
    await outcome(seen, lock.owned)
    await outcome(seen, other.owned)
    await outcome(seen, lambda: lock.extend(5))
    seen.append(key()[1])
    await outcome(seen, lambda: lock.extend(3, replace_ttl=True))
    seen.append(key()[1])
    await outcome(seen, lock.reacquire)
    seen.append(key()[1])
    await outcome(seen, lock.release)
    await outcome(seen, lock.release)
    seen.append(key())
    await outcome(seen, lambda: lock.acquire(token="mine"))
    seen.append(key())
    plain.set(name, "stolen", px=5000)
    await outcome(seen, lambda: lock.extend(1))
    await outcome(seen, lock.reacquire)
    await outcome(seen, lock.release)
    plain.delete(name)
    forever = client.lock(name, lock_class=lock_class)  # no timeout
    await outcome(seen, forever.acquire)
    seen.append((plain.get(name) == forever.local.token, plain.pttl(name)))
    await outcome(seen, lambda: forever.extend(1))
    await outcome(seen, forever.reacquire)
    await outcome(seen, forever.release)
    # A blocking acquire gets the lock when the holder's lease ends.
    short = client.lock(name, timeout=0.15, lock_class=lock_class)
    waiter = client.lock(name, timeout=5, sleep=0.02, lock_class=lock_class)
    await outcome(seen, short.acquire)
    await outcome(seen, lambda: waiter.acquire(blocking_timeout=3))
    seen.append(key()[1])
    await outcome(seen, waiter.release)
    return seen


def test_the_lock_is_redis_pys_and_looks_for_the_module_once(plain: Server, mode: str) -> None:
    drop_in, stock = classes(mode)
    plain.client().flushall()

    async def body() -> None:
        ours, theirs = new_client(plain, mode), new_client(plain, mode)
        # A client on the drop-in client's pool (its own pool is not closed with it).
        shared = (redis.Redis if mode == "sync" else redis.asyncio.Redis)(connection_pool=ours.connection_pool)
        try:
            for each in (ours, theirs, shared):
                await value(each.ping())  # connected: a connection's set-up errors are counted by now
            before = errors(plain)
            expected = await lock_story(plain, theirs, stock, "Lock:stock")
            assert errors(plain) == before
            assert await lock_story(plain, ours, drop_in, "Lock:drop-in") == expected
            assert errors(plain) == before + 1  # the first LOCK.ACQUIRE's unknown command, and no other
            # Later calls, on new locks and on a client sharing the pool, look no more.
            assert await lock_story(plain, ours, drop_in, "Lock:again") == expected
            assert await lock_story(plain, shared, drop_in, "Lock:shared") == expected
            assert errors(plain) == before + 1
            assert expected[:3] == [True, False, True] and expected[-3:] == [True, 5, None]
            assert not has_module(plain)
        finally:
            for each in (ours, theirs):
                await value(aclose(each) if mode == "asyncio" else each.close())

    asyncio.run(body())


async def limits_story(storage: Any, mode: str, key: str) -> List[Any]:
    """``limits``' moving window through its strategy: what each call gave."""
    strategies = limits.strategies if mode == "sync" else limits.aio.strategies
    limiter = strategies.MovingWindowRateLimiter(storage)
    item = parse("3/2 seconds")
    seen: List[Any] = []
    for _ in range(4):
        seen.append(await value(limiter.hit(item, key)))
    seen.append(await value(limiter.test(item, key)))
    stats = await value(limiter.get_window_stats(item, key))
    seen.append((stats.remaining, round(stats.reset_time - time.time())))
    seen.append(await value(limiter.hit(item, key, "other", cost=2)))
    seen.append(await value(limiter.hit(item, key, "other", cost=2)))
    seen.append(await value(limiter.hit(item, key, "other", cost=1)))
    seen.append(await value(limiter.hit(item, key, "big", cost=4)))
    stats = await value(limiter.get_window_stats(item, key, "empty"))
    seen.append(stats.remaining)
    await value(limiter.clear(item, key))
    seen.append(await value(limiter.test(item, key)))
    return seen


def test_the_moving_window_is_limits_own_and_looks_for_the_module_once(plain: Server, mode: str) -> None:
    if mode == "asyncio":
        needs_the_asyncio_storage()
    client = plain.client()
    client.flushall()
    prefix = "async+" if mode == "asyncio" else ""
    expected_class = AsyncRecipesStorage if mode == "asyncio" else RecipesStorage

    async def body() -> None:
        options = {"implementation": "redispy"} if mode == "asyncio" else {}
        theirs = storage_from_string(f"{prefix}redis://127.0.0.1:{plain.port}", key_prefix="stock", **options)
        ours = storage_from_string(f"{prefix}recipes://127.0.0.1:{plain.port}", key_prefix="drop")
        assert type(ours) is expected_class
        try:
            for storage in (theirs, ours):
                assert await value(storage.check())  # connected
            before = errors(plain)
            expected = await limits_story(theirs, mode, "user")
            assert await limits_story(ours, mode, "user") == expected
            assert errors(plain) == before + 1  # the first RATE.LIMIT's unknown command, and no other
            assert await limits_story(ours, mode, "again") == expected
            assert errors(plain) == before + 1
            assert expected == [True, True, True, False, False, (0, 2), True, False, True, False, 3, True]
            # limits' own keys: a list of timestamps per moving window.
            assert client.type("drop:LIMITER/again/other/3/2/second") == client.type(
                "stock:LIMITER/user/other/3/2/second") == b"list"
        finally:
            if mode == "asyncio":
                for storage in (theirs, ours):
                    await aclose(storage.bridge.get_connection())

    asyncio.run(body())


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_a_server_that_gains_the_module_is_used_by_new_clients(flavor: str, mode: str) -> None:
    drop_in = Lock if mode == "sync" else AsyncLock
    server = start_plain(flavor)
    prefix = "async+" if mode == "asyncio" else ""
    item = parse("2/minute")
    strategies = limits.strategies if mode == "sync" else limits.aio.strategies

    async def body() -> None:
        old = new_client(server, mode)
        old_storage = storage_from_string(f"{prefix}recipes://127.0.0.1:{server.port}")
        new: Any = None
        new_storage: Any = None
        try:
            old_lock = old.lock("Lock:old", timeout=10, lock_class=drop_in)
            assert await value(old_lock.acquire(blocking=False))
            assert await value(strategies.MovingWindowRateLimiter(old_storage).hit(item, "old"))
            server.client().execute_command("MODULE", "LOAD", MODULE)
            assert has_module(server)
            # The old client keeps redis-py's and limits' way.
            assert await value(old_lock.extend(1))
            assert await value(old_lock.release()) is None
            assert await value(old.lock("Lock:old", timeout=10, lock_class=drop_in).acquire(blocking=False))
            assert await value(strategies.MovingWindowRateLimiter(old_storage).hit(item, "old"))
            assert not [command for command in calls(server) if command.startswith(("lock.", "rate."))]
            assert server.client().type("LIMITS:LIMITER/old/2/1/minute") == b"list"
            # A new client uses the module, and its lock and the old one's exclude each other.
            new = new_client(server, mode)
            new_storage = storage_from_string(f"{prefix}recipes://127.0.0.1:{server.port}")
            assert not await value(new.lock("Lock:old", timeout=10, lock_class=drop_in).acquire(blocking=False))
            new_lock = new.lock("Lock:new", timeout=10, lock_class=drop_in)
            assert await value(new_lock.acquire(blocking=False))
            assert not await value(old.lock("Lock:new", timeout=10, lock_class=drop_in).acquire(blocking=False))
            assert await value(strategies.MovingWindowRateLimiter(new_storage).hit(item, "new"))
            counted = calls(server)
            assert counted.get("lock.acquire") == 2 and counted.get("rate.limit") == 1, counted
            assert server.client().type("LIMITS:LIMITER/new/2/1/minute") != b"list"
        finally:
            clients = [each for each in (old, new) if each is not None]
            if mode == "asyncio":
                for each in clients:
                    await aclose(each)
                for storage in (old_storage, new_storage):
                    if storage is not None:
                        await aclose(storage.bridge.get_connection())
            else:
                for each in clients:
                    each.close()
            server.stop()

    if mode == "asyncio":
        needs_the_asyncio_storage()
    asyncio.run(body())


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_a_cluster_whose_nodes_differ(flavor: str) -> None:
    """The module on the nodes that have it, redis-py's way on the one
    without it, looked for once there per cluster client."""
    nodes = nodes_for_cluster(binary(flavor), modules=(True, True, False))
    port = nodes[0].port
    plain = redis.RedisCluster(host="127.0.0.1", port=port)

    def keys(mode: str) -> List[str]:
        """A key on each node."""
        found: Dict[str, str] = {}
        n = 0
        while len(found) < 3:
            key = f"Lock:{mode}:{n}"
            found.setdefault(plain.get_node_from_key(key).name, key)
            n += 1
        return list(found.values())

    async def story(mode: str, client: Any, drop_in: type) -> None:
        for _ in range(2):
            for key in keys(mode):
                lock = client.lock(key, timeout=10, lock_class=drop_in)
                assert await value(lock.acquire(blocking=False, token="t"))
                assert plain.get(key) == b"t"
                assert not await value(client.lock(key, timeout=10, lock_class=drop_in).acquire(blocking_timeout=0.1))
                assert await value(lock.extend(5))
                assert 14000 < plain.pttl(key) <= 15000
                await value(lock.release())
                assert plain.exists(key) == 0

    async def body(mode: str) -> None:
        drop_in = Lock if mode == "sync" else AsyncLock
        client: Any = (redis.RedisCluster if mode == "sync" else redis.asyncio.RedisCluster)(host="127.0.0.1",
                                                                                           port=port)
        try:
            for key in keys(mode):  # both clients connected to every node
                await value(client.get(key))
                plain.get(key)
            before = [errors(node) for node in nodes]
            await story(mode, client, drop_in)
            assert [errors(node) - count for node, count in zip(nodes, before)] == [0, 0, 1]
        finally:
            await value(aclose(client) if mode == "asyncio" else client.close())

    try:
        for mode in ("sync", "asyncio"):
            asyncio.run(body(mode))
        with_module = [calls(node) for node in nodes[:2]]
        without = calls(nodes[2])
        for counted in with_module:
            assert counted.get("lock.acquire", 0) >= 8 and "evalsha" not in counted and "set" not in counted, counted
        assert without.get("set", 0) >= 8 and without.get("evalsha", 0) >= 8, without
    finally:
        plain.close()
        for node in nodes:
            node.stop()



@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_a_server_that_loses_the_module_is_learnt_from_the_next_call(
    flavor: str, mode: str, monkeypatch: Any
) -> None:
    """A server restarted without the module on the same port: the client
    that used the module goes redis-py's and limits' way from its next
    call."""
    import conftest

    if mode == "asyncio":
        needs_the_asyncio_storage()
    drop_in = Lock if mode == "sync" else AsyncLock
    prefix = "async+" if mode == "asyncio" else ""
    strategies = limits.strategies if mode == "sync" else limits.aio.strategies
    item = parse("2/minute")
    first = Server(binary(flavor))
    servers = [first]

    async def body() -> None:
        client = new_client(first, mode)
        storage = storage_from_string(f"{prefix}recipes://127.0.0.1:{first.port}")
        limiter = strategies.MovingWindowRateLimiter(storage)
        try:
            lock = client.lock("Lock:restart", timeout=10, lock_class=drop_in)
            assert await value(lock.acquire(blocking=False))
            await value(lock.release())
            assert await value(limiter.hit(item, "with"))
            assert calls(first).get("lock.acquire") == 1 and calls(first).get("rate.limit") == 1
            first.stop()
            OBSERVERS.pop(first.port).close()
            monkeypatch.setattr(conftest, "free_port", lambda: first.port)
            second = Server(binary(flavor), module=False)
            servers.append(second)
            for each in (client, storage.get_connection() if mode == "sync" else storage.bridge.get_connection()):
                try:  # reconnected (a redis-py without retries raises once)
                    await value(each.ping())
                except redis.ConnectionError:
                    await value(each.ping())
            before = errors(second)
            for _ in range(2):
                assert await value(lock.acquire(blocking=False))
                assert observer(second).get("Lock:restart") == lock.local.token
                assert await value(lock.extend(1))
                await value(lock.release())
                assert await value(limiter.hit(item, "without"))
            assert errors(second) == before + 2  # one LOCK.ACQUIRE and one RATE.LIMIT, once each
            assert observer(second).type("LIMITS:LIMITER/without/2/1/minute") == b"list"
            assert calls(second).get("set") == 2 and calls(second).get("evalsha", 0) >= 6
        finally:
            if mode == "asyncio":
                await aclose(client)
                await aclose(storage.bridge.get_connection())
            else:
                client.close()

    try:
        asyncio.run(body())
    finally:
        for each in servers:
            each.stop()
