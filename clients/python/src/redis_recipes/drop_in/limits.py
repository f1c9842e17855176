"""Storages for the ``limits`` package (and so for Flask-Limiter and SlowAPI)
on the module's RATE commands. Importing ``redis_recipes.drop_in`` registers
them with ``limits``::

    import redis_recipes.drop_in
    from limits.storage import storage_from_string

    storage = storage_from_string("recipes://localhost:6379/0")        # sync
    storage = storage_from_string("async+recipes://localhost:6379/0")  # asyncio

(``recipes+unix:///path/to/redis.sock`` and ``async+recipes+unix://…`` for a
Unix socket; Flask-Limiter takes ``storage_uri="recipes://…"``, SlowAPI
``Limiter(…, storage_uri="recipes://…")``.) Options are those of ``limits``'
Redis storages (``key_prefix``, ``wrap_exceptions``, and redis-py's
connection options); the asyncio storage runs on ``redis.asyncio``.

The moving-window strategy is one command per call: ``hit`` is ``RATE.LIMIT
key limit expiry_ms SLIDING COST amount`` (exact, all or nothing for the
``amount``), ``test`` and ``get_window_stats`` one ``RATE.PEEK … SLIDING
WITHREFILL``. No Lua script and no list of timestamps: the key holds the
window as one entry per millisecond in which hits were allowed. The
fixed-window and sliding-window-counter strategies, ``incr``, ``get``,
``get_expiry``, ``check``, ``reset`` and ``clear`` are ``limits``' own Redis
storage's, on the same keys.

Differences from ``limits``' Redis storage, in the moving window only:

- Times are the server's clock in milliseconds (``limits`` stores the
  client's ``time.time()``); hits in the same millisecond count as one entry.
  A hit exactly ``expiry`` seconds old has left the window (``limits`` still
  counts it in that instant).
- The key holds a rate limiter, not a list: a moving-window key that
  ``limits``' Redis storage left (a list) answers ``WRONGTYPE`` until it
  expires; switch with another ``key_prefix`` or after the keys expire.
- A limit of more than 100,000 needs a window of at most 100 seconds
  (``1000000/2 seconds`` works; ``200000/hour`` raises ``ResponseError``),
  and limits and costs are at most 2,147,483,647.

Without the module (a managed Redis, or a server before the module is
loaded) the moving window is ``limits``' own as well (its Lua scripts and
its list of timestamps), so code can ship before the server changes. It is
learnt once per storage's connection pool, from the first ``RATE``
command's reply ``unknown command`` (which changes nothing): that call is
made again ``limits``' way, and the pool's later calls go ``limits``' way
at once. The mark stays for the pool's life, so a server that gains the
module is used by storages made after it (and the two ways' keys differ:
see the ``WRONGTYPE`` point above). A server with the module is never
marked and costs no command more.
"""

import time
from typing import Any, Optional, Tuple

import redis
from limits.aio.storage import RedisStorage as AsyncRedisStorage
from limits.errors import ConfigurationError
from limits.storage import RedisStorage
from redis.exceptions import ResponseError

from .._core import as_dict
from ..errors import ModuleNotLoaded, translate
from ._servers import found_without_module, without_module

__all__ = ["AsyncRecipesStorage", "RecipesStorage"]

# Our schemes and the ``limits`` Redis storage scheme each one stands for.
SCHEMES = {
    "recipes": "redis",
    "recipes+unix": "redis+unix",
    "async+recipes": "async+redis",
    "async+recipes+unix": "async+redis+unix",
}


def redis_uri(uri: str) -> str:
    """``recipes://…`` as the ``redis://…`` uri ``limits`` understands (any
    other uri unchanged)."""
    scheme, separator, rest = uri.partition("://")
    if not separator or scheme not in SCHEMES:
        return uri
    return f"{SCHEMES[scheme]}://{rest}"


def window_ms(expiry: float) -> int:
    """A limit's expiry in seconds as RATE's period in milliseconds."""
    return max(1, int(round(expiry * 1000)))


def acquiring(key: str, limit: int, expiry: float, amount: int) -> Tuple[Any, ...]:
    """``RATE.LIMIT`` for ``amount`` hits, at most ``limit`` per ``expiry``
    seconds."""
    words: Tuple[Any, ...] = ("RATE.LIMIT", key, limit, window_ms(expiry), "SLIDING")
    return words if amount == 1 else (*words, "COST", amount)


def peeking(key: str, limit: int, expiry: float) -> Tuple[Any, ...]:
    """``RATE.PEEK`` of the hits in the last ``expiry`` seconds."""
    return ("RATE.PEEK", key, limit, window_ms(expiry), "SLIDING", "WITHREFILL")


def allowed(reply: Any) -> bool:
    """Whether a ``RATE.LIMIT`` reply (RESP2 array or RESP3 map) allows."""
    if isinstance(reply, dict):
        return not as_dict(reply)["limited"]
    return not reply[0]


def moving_window(reply: Any, limit: int, expiry: float, now: float) -> Tuple[float, int]:
    """``(start, count)`` from a ``RATE.PEEK … WITHREFILL`` reply made at
    ``now`` (Unix seconds) for a window of ``expiry`` seconds: the hits the
    window counts, and when the oldest of them was allowed (``now`` when it
    counts none)."""
    if isinstance(reply, dict):
        fields = as_dict(reply)
        remaining, refill_ms = fields["remaining"], fields["refill_after_ms"]
    else:
        remaining, refill_ms = reply[2], reply[5]
    count = max(0, limit - int(remaining))
    if not count:
        return now, 0
    # The oldest hit leaves the window refill_after_ms from now.
    return now + int(refill_ms) / 1000 - expiry, count


class RecipesStorage(RedisStorage):
    """``recipes://host:port[/db]``: ``limits``' Redis storage with the moving
    window on ``RATE.LIMIT`` and ``RATE.PEEK``."""

    STORAGE_SCHEME = ["recipes", "recipes+unix"]

    def __init__(
        self,
        uri: str,
        connection_pool: Optional[redis.connection.ConnectionPool] = None,
        key_prefix: str = RedisStorage.PREFIX,
        wrap_exceptions: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(
            redis_uri(uri),
            connection_pool=connection_pool,
            key_prefix=key_prefix,
            wrap_exceptions=wrap_exceptions,
            **options,
        )

    def _run(self, words: Tuple[Any, ...], readonly: bool = False) -> Any:
        try:
            connection: Any = self.get_connection(readonly)
            return connection.execute_command(*words)
        except ResponseError as error:
            raise translate(error) from None

    def _module(self, key: str) -> bool:
        """Whether the moving window of ``key`` goes to a server not found
        without the module (nothing is sent)."""
        return not without_module(self.get_connection(), self.prefixed_key(key))

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        """Allows ``amount`` hits if the last ``expiry`` seconds hold at most
        ``limit - amount``; all or nothing."""
        if not self._module(key):
            return super().acquire_entry(key, limit, expiry, amount)
        if amount > limit:
            return False
        if amount < 1:
            return True
        try:
            reply = self._run(acquiring(self.prefixed_key(key), limit, expiry, amount))
        except ModuleNotLoaded:
            found_without_module(self.get_connection(), self.prefixed_key(key))
            return super().acquire_entry(key, limit, expiry, amount)
        return allowed(reply)

    def get_moving_window(self, key: str, limit: int, expiry: int) -> Tuple[float, int]:
        """``(when the oldest hit in the last ``expiry`` seconds was
        allowed, the hits they count)``; ``(now, 0)`` for an empty window."""
        if not self._module(key):
            return super().get_moving_window(key, limit, expiry)
        now = time.time()
        if limit < 1:
            return now, 0
        try:
            reply = self._run(peeking(self.prefixed_key(key), limit, expiry), readonly=True)
        except ModuleNotLoaded:
            found_without_module(self.get_connection(), self.prefixed_key(key))
            return super().get_moving_window(key, limit, expiry)
        return moving_window(reply, limit, expiry, now)


class AsyncRecipesStorage(AsyncRedisStorage):
    """``async+recipes://host:port[/db]``: ``limits``' asyncio Redis storage
    (on ``redis.asyncio``) with the moving window on ``RATE.LIMIT`` and
    ``RATE.PEEK``."""

    STORAGE_SCHEME = ["async+recipes", "async+recipes+unix"]

    def __init__(
        self,
        uri: str,
        wrap_exceptions: bool = False,
        implementation: str = "redispy",
        key_prefix: str = AsyncRedisStorage.PREFIX,
        **options: Any,
    ) -> None:
        if implementation != "redispy":
            raise ConfigurationError(
                f"async+recipes:// runs on redis.asyncio (implementation='redispy'), not {implementation!r}"
            )
        super().__init__(
            redis_uri(uri),
            wrap_exceptions=wrap_exceptions,
            implementation="redispy",
            key_prefix=key_prefix,
            **options,
        )

    async def _run(self, words: Tuple[Any, ...], readonly: bool = False) -> Any:
        try:
            bridge: Any = self.bridge  # the redis.asyncio bridge
            return await bridge.get_connection(readonly).execute_command(*words)
        except ResponseError as error:
            raise translate(error) from None

    def _client(self) -> Any:
        """The ``redis.asyncio`` client the storage sends through."""
        bridge: Any = self.bridge  # the redis.asyncio bridge
        return bridge.get_connection()

    def _module(self, key: str) -> bool:
        """Whether the moving window of ``key`` goes to a server not found
        without the module (nothing is sent)."""
        return not without_module(self._client(), self.bridge.prefixed_key(key))

    async def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        """Allows ``amount`` hits if the last ``expiry`` seconds hold at most
        ``limit - amount``; all or nothing."""
        if not self._module(key):
            return await super().acquire_entry(key, limit, expiry, amount)
        if amount > limit:
            return False
        if amount < 1:
            return True
        try:
            reply = await self._run(acquiring(self.bridge.prefixed_key(key), limit, expiry, amount))
        except ModuleNotLoaded:
            found_without_module(self._client(), self.bridge.prefixed_key(key))
            return await super().acquire_entry(key, limit, expiry, amount)
        return allowed(reply)

    async def get_moving_window(self, key: str, limit: int, expiry: int) -> Tuple[float, int]:
        """``(when the oldest hit in the last ``expiry`` seconds was
        allowed, the hits they count)``; ``(now, 0)`` for an empty window."""
        if not self._module(key):
            return await super().get_moving_window(key, limit, expiry)
        now = time.time()
        if limit < 1:
            return now, 0
        try:
            reply = await self._run(peeking(self.bridge.prefixed_key(key), limit, expiry), readonly=True)
        except ModuleNotLoaded:
            found_without_module(self._client(), self.bridge.prefixed_key(key))
            return await super().get_moving_window(key, limit, expiry)
        return moving_window(reply, limit, expiry, now)
