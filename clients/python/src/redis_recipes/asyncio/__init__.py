"""The same classes for ``redis.asyncio`` clients: every method returns a
coroutine (``await IdGenerator(client, "user::id").produce()``), and ``Lock``
is an async context manager (``async with Lock(client, key, ttl=30):``)."""

import asyncio
import contextlib
import math
from typing import Any, Dict

import redis.asyncio
from redis.exceptions import ResponseError, TimeoutError

from .. import article, cache, idgen, idpool, lock, pool, rate
from .._core import FOREVER, LONG_READS, REROUTED, Request, Steps, ms, read_timeout, split
from ..errors import LockNotAcquired, translate
from ..rate import Decision


class AsyncDriver:
    """Runs a class's command generators on an asyncio client."""

    client: Any

    async def _drive(self, steps: Steps) -> Any:
        try:
            request = next(steps)
            while True:
                words, options, wait = split(request)
                try:
                    if wait is None:
                        reply = await self.client.execute_command(*words, **options)
                    else:
                        reply = await send_waiting(self.client, words, options, wait)
                except ResponseError as error:
                    request = steps.throw(translate(error))
                else:
                    request = steps.send(reply)
        except StopIteration as done:
            return done.value


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


def _twin(cls: type) -> type:
    return type(cls.__name__, (AsyncDriver, cls), {"__doc__": cls.__doc__, "__module__": __name__})


IdGenerator: Any = _twin(idgen.IdGenerator)
HashIdGenerator: Any = _twin(idgen.HashIdGenerator)
Article: Any = _twin(article.Article)
SlugIndex: Any = _twin(article.SlugIndex)
Cache: Any = _twin(cache.Cache)
JsonCache: Any = _twin(cache.JsonCache)
HashCache: Any = _twin(cache.HashCache)
IdPool: Any = _twin(idpool.IdPool)
RateLimiter: Any = _twin(rate.RateLimiter)
AutoReleaseLock: Any = _twin(lock.AutoReleaseLock)
IdentityLock: Any = _twin(lock.IdentityLock)


class ResourcePool(AsyncDriver, pool.ResourcePool):
    __doc__ = pool.ResourcePool.__doc__

    def lease(self, timeout: Any = None, *, ttl: Any = None, renew: bool = False, on_lost: Any = None) -> "Lease":
        """An async context manager holding one resource for the block."""
        return Lease(self, timeout, ttl if ttl is not None else self.ttl, renew, on_lost)


class Lease(pool.Lease):
    __doc__ = pool.Lease.__doc__

    async def __aenter__(self) -> str:
        resource = self._taken(await self.pool.acquire(timeout=self.timeout, ttl=self.ttl))
        if self.renew and self.ttl is not None:
            self._renewer = _renewer(self.pool.client, self._renew_words(), self.ttl / 3, self._lose)
        return resource

    async def __aexit__(self, kind: Any, error: Any, trace: Any) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            self._renewer = None
        self._finish(await self.pool.release(self.resource), kind is None)


class Lock(AsyncDriver, lock.Lock):
    __doc__ = lock.Lock.__doc__

    async def __aenter__(self) -> "Lock":
        if not await self.acquire(timeout=self.wait if self.wait is not None else FOREVER):
            raise LockNotAcquired(f"lock {self.key!r} is held by another client")
        if self.renew and self.ttl is not None:
            self._start_renewer()
        return self

    async def __aexit__(self, kind: Any, error: Any, trace: Any) -> None:
        self._stop_renewer()
        released = await self.release()
        self._finish(released, kind is None)

    def _start_renewer(self) -> None:
        words = ("LOCK.EXTEND", self.key, self.token, "PX", ms(self.ttl or 0))
        self._renewer = _renewer(self.client, words, (self.ttl or 0) / 3, self._lose)

    def _stop_renewer(self) -> None:
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            renewer.cancel()


def _renewer(client: Any, words: tuple, period: float, lost: Any) -> "asyncio.Task[None]":
    """The asyncio form of ``Renewer``: a task sending ``words`` every
    ``period`` seconds until cancelled, calling ``lost()`` once the lease is
    gone."""

    async def renew() -> None:
        while True:
            await asyncio.sleep(period)
            try:
                held = await client.execute_command(*words) == 1
            except asyncio.CancelledError:
                raise
            except Exception:  # a dropped connection: try again next period
                continue
            if not held:
                lost()
                return

    return asyncio.get_running_loop().create_task(renew())


__all__ = [
    "Article",
    "AutoReleaseLock",
    "Cache",
    "Decision",
    "HashCache",
    "HashIdGenerator",
    "IdGenerator",
    "IdPool",
    "IdentityLock",
    "JsonCache",
    "Lock",
    "Lease",
    "RateLimiter",
    "ResourcePool",
    "SlugIndex",
]
