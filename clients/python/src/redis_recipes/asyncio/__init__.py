"""The same classes for ``redis.asyncio`` clients: every method returns a
coroutine (``await IdGenerator(client, "user::id").produce()``), and ``Lock``
is an async context manager (``async with Lock(client, key, ttl=30):``)."""

import asyncio
from typing import Any

from redis.exceptions import ResponseError

from .. import article, cache, idgen, idpool, lock, pool, rate
from .._core import Steps, ms, split
from ..errors import LockNotAcquired, translate
from ..rate import Decision


class AsyncDriver:
    """Runs a class's command generators on an asyncio client."""

    client: Any

    async def _drive(self, steps: Steps) -> Any:
        try:
            request = next(steps)
            while True:
                words, options = split(request)
                try:
                    reply = await self.client.execute_command(*words, **options)
                except ResponseError as error:
                    request = steps.throw(translate(error))
                else:
                    request = steps.send(reply)
        except StopIteration as done:
            return done.value


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
        if not await self.acquire(timeout=self.wait if self.wait is not None else 10**9):
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
