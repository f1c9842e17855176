"""The same classes for ``redis.asyncio`` clients: every method returns a
coroutine (``await IdGenerator(client, "user::id").produce()``), and
``Lock``, ``ResourcePool.lease`` and the handles of ``ReadWriteLock`` are
async context managers (``async with Lock(client, key, ttl=30):``,
``async with rwlock.read_lock():``); ``with`` on them raises ``TypeError``. Their
renewers are tasks of the running loop. Arguments and units (seconds) are
the sync classes'."""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import Any, Callable, Dict, NoReturn, Optional

import redis.asyncio
from redis.exceptions import SlotNotCoveredError, TimeoutError

from .. import article, autocomplete, cache, idgen, idpool, latch, lock, nearby, pool, queue, rate, rwlock, uqueue
from .._core import LONG_READS, REROUTED, Pause, Request, Run, Steps, read_timeout, split
from .._held import Holder
from ..rate import Decision
from ..rwlock import RwLockInfo


def _twin_doc(cls: type) -> None:
    """Gives an asyncio class without a docstring its sync class's (its
    last base)."""
    if cls.__doc__ is None:
        cls.__doc__ = cls.__bases__[-1].__doc__


class AsyncDriver:
    """Runs a class's command generators on an asyncio client (see
    ``redis_recipes._core``)."""

    client: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _twin_doc(cls)

    async def _drive(self, steps: Steps[Any]) -> Any:
        run = Run(steps)
        while not run.done:
            try:
                reply = await self._send(run.request)
            except Exception as error:
                run.throw(error)
            else:
                run.send(reply)
        return run.value

    async def _send(self, request: Request) -> Any:
        if isinstance(request, Pause):
            return await asyncio.sleep(request.seconds)
        words, options, wait = split(request)
        if wait is None:
            return await self.client.execute_command(*words, **options)
        return await send_waiting(self.client, words, options, wait)

    def _background(self, steps: Steps[None], name: str) -> BackgroundTask:
        """Runs ``steps`` as a task of the running loop, on this client."""
        return BackgroundTask(self, steps, name)


class BackgroundTask:
    """Steps driven as a task until they end or ``stop()`` cancels it."""

    def __init__(self, driver: AsyncDriver, steps: Steps[None], name: str) -> None:
        self._task = asyncio.get_running_loop().create_task(driver._drive(steps), name=name)

    def stop(self) -> None:
        """Cancels the task (it stops at its next pause or command)."""
        self._task.cancel()


async def send_waiting(client: Any, words: Request, options: Dict[str, Any], wait: float) -> Any:
    """The asyncio form of ``send_waiting`` in ``redis_recipes._core``: a
    command that waits up to ``wait`` seconds in the server, sent once, its
    reply read with ``read_timeout(wait)``."""
    if not LONG_READS:
        return await client.execute_command(*words, **options)
    await client.initialize()
    if isinstance(client, redis.asyncio.RedisCluster):
        try:
            node = client.get_node_from_key(words[1])
            if node is None:  # not in the client's map yet
                raise SlotNotCoveredError(f"no node known for {words[1]!r}")
            connection = node.acquire_connection()
            try:
                reply = await exchange(connection, words, wait)
            finally:
                node.release(connection)
        except REROUTED:
            return await client.execute_command(*words, **options)
    else:
        single = client.connection
        connection = single or await client.connection_pool.get_connection()
        try:
            # A single-connection client's lock for its connection.
            async with client._single_conn_lock if single else contextlib.nullcontext():
                reply = await exchange(connection, words, wait)
        finally:
            if not single:
                await client.connection_pool.release(connection)
    callback = client.response_callbacks.get(words[0])
    return reply if callback is None else callback(reply, **options)


async def exchange(connection: Any, words: Request, wait: float) -> Any:
    """Sends ``words`` once on ``connection`` and reads the reply. A dropped
    connection or a timeout disconnects it and raises."""
    await connection.send_command(*words)
    # math.inf: no read timeout of the connection's own; the limit is ours.
    reading = connection.read_response(timeout=math.inf)
    limit = read_timeout(wait)
    if limit is None:
        return await reading
    try:
        return await asyncio.wait_for(reading, limit)
    except asyncio.TimeoutError:
        await connection.disconnect()
        raise TimeoutError(f"{words[0]}: no reply {limit:g} s after it was sent (its wait: {wait:g} s)") from None


class IdGenerator(AsyncDriver, idgen.IdGenerator): ...


class HashIdGenerator(AsyncDriver, idgen.HashIdGenerator): ...


class UrlShorty(AsyncDriver, idgen.UrlShorty): ...


class Article(AsyncDriver, article.Article): ...


class SlugIndex(AsyncDriver, article.SlugIndex): ...


class Cache(AsyncDriver, cache.Cache): ...


class JsonCache(AsyncDriver, cache.JsonCache): ...


class HashCache(AsyncDriver, cache.HashCache): ...


class IdPool(AsyncDriver, idpool.IdPool): ...


class AutoComplete(AsyncDriver, autocomplete.AutoComplete): ...


class RateLimiter(AsyncDriver, rate.RateLimiter): ...


class Limiter(AsyncDriver, rate.Limiter): ...


class AutoReleaseLock(AsyncDriver, lock.AutoReleaseLock): ...


class IdentityLock(AsyncDriver, lock.IdentityLock): ...


class CountDownLatch(AsyncDriver, latch.CountDownLatch): ...


class FifoQueue(AsyncDriver, queue.FifoQueue): ...


class FixedLengthQueue(AsyncDriver, queue.FixedLengthQueue): ...


class FadedQueue(AsyncDriver, queue.FadedQueue): ...


class CircularQueue(AsyncDriver, uqueue.CircularQueue): ...


class UniqueCircularQueue(AsyncDriver, uqueue.UniqueCircularQueue): ...


class Location(AsyncDriver, nearby.Location): ...


class AsyncHeld:
    """``async with`` for a lock or a lease (the steps are ``_held``'s);
    ``with`` raises ``TypeError`` rather than take nothing."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _twin_doc(cls)

    def __enter__(self) -> NoReturn:
        raise TypeError(
            f"{type(self).__name__} of redis_recipes.asyncio is an async context manager: "
            "use 'async with', not 'with'"
        )

    def __exit__(self, kind: Any, error: Any, trace: Any) -> NoReturn:
        self.__enter__()

    async def __aexit__(self: Holder, kind: Any, error: Any, trace: Any) -> None:
        await self._runner()._drive(self._exiting(kind is None))


class ResourcePool(AsyncDriver, pool.ResourcePool):
    def lease(self, timeout: Optional[float] = None, *, ttl: Optional[float] = None, renew: bool = False,
              on_lost: Optional[Callable[[str], Any]] = None) -> Lease:
        """The sync class's ``lease`` (``timeout`` and ``ttl`` in seconds), for ``async with``."""
        return Lease(self, timeout, ttl if ttl is not None else self.ttl, renew, on_lost)


class Lease(AsyncHeld, pool.Lease):
    async def __aenter__(self) -> str:
        resource: str = await self.pool._drive(self._entering())
        return resource


class Lock(AsyncHeld, AsyncDriver, lock.Lock):
    async def __aenter__(self) -> Lock:
        await self._drive(self._entering())
        return self


class ReadWriteLock(AsyncDriver, rwlock.ReadWriteLock):
    def read_lock(self, *, token: Optional[str] = None) -> RwLockHandle:
        """The sync class's ``read_lock``, for ``async with``."""
        return RwLockHandle(self, rwlock.READ, token)

    def write_lock(self, *, token: Optional[str] = None) -> RwLockHandle:
        """The sync class's ``write_lock``, for ``async with``."""
        return RwLockHandle(self, rwlock.WRITE, token)


class RwLockHandle(AsyncHeld, AsyncDriver, rwlock.RwLockHandle):
    async def __aenter__(self) -> RwLockHandle:
        await self._drive(self._entering())
        return self


__all__ = [
    "Article",
    "AutoComplete",
    "AutoReleaseLock",
    "Cache",
    "CircularQueue",
    "CountDownLatch",
    "Decision",
    "FadedQueue",
    "FifoQueue",
    "FixedLengthQueue",
    "HashCache",
    "HashIdGenerator",
    "IdGenerator",
    "IdPool",
    "IdentityLock",
    "JsonCache",
    "Limiter",
    "Location",
    "Lock",
    "Lease",
    "RateLimiter",
    "ReadWriteLock",
    "ResourcePool",
    "RwLockHandle",
    "RwLockInfo",
    "SlugIndex",
    "UniqueCircularQueue",
    "UrlShorty",
]
