"""redis-py's ``Lock`` on the module's LOCK commands, one argument away:
``r.lock(name, timeout=…, blocking_timeout=…, lock_class=Lock)`` for a
``redis.Redis`` or ``redis.RedisCluster``, ``lock_class=AsyncLock`` for their
``redis.asyncio`` twins.

Same constructor, methods, exceptions and key contents as redis-py's lock:
the key holds the token as a plain string and the lease is the key's TTL
(``LOCK.ACQUIRE key token PX ms`` makes exactly what ``SET key token NX PX
ms`` makes), so redis-py's lock and this one on the same name exclude each
other and a fleet can switch one process at a time. Each method is one
command: ``acquire`` is ``LOCK.ACQUIRE``, ``release`` ``LOCK.RELEASEIF``,
``extend`` and ``reacquire`` ``LOCK.EXTEND``; no Lua script is loaded.
Times are in seconds, as redis-py's (``timeout``, ``blocking_timeout``,
``extend``'s ``additional_time``), sent to the server in milliseconds.

What differs: a blocking ``acquire`` waits in the server's
first-come-first-served queue and gets the lock when its holder releases it
(or its lease ends), instead of polling every ``sleep`` seconds; ``sleep``
is accepted and unused.

Known differences from redis-py's lock, all in corner cases:

- ``acquire(token=t)`` while ``t`` already holds the lock succeeds at once
  and restarts the lease (``SET NX`` would fail and, when blocking, poll).
- ``extend`` and ``reacquire`` with a duration of under 1 ms (which
  redis-py turns into shortening or deleting the lock) raise the server's
  ``ResponseError: invalid expire time``.
- ``extend(t, replace_ttl=True)`` on a lock whose key has no TTL (taken
  with ``timeout=0``, or made persistent by another command) gives it one
  and returns True; redis-py's script raises ``LockNotOwnedError`` there.
  ``extend(t)`` (adding) raises ``LockNotOwnedError`` there, as redis-py's.
- An empty token is refused (``ResponseError: token must not be empty``).

Without the module (a managed Redis, or a server before the module is
loaded) each method is redis-py's own: ``SET NX PX``, its Lua scripts,
polling every ``sleep`` seconds, its errors, so code can ship before the
server changes. It is learnt once per server a client talks to (a
``Redis``'s connection pool; each node of a ``RedisCluster``, so a
cluster whose nodes differ uses the module where it is loaded) and costs
no command: the first LOCK command's reply ``unknown command``, which
changes nothing, marks that pool (or node), the call is made again
redis-py's way, and from then on that pool's calls go redis-py's way at
once. The mark stays for the pool's life: a server that gains the module
is used by new clients. A server with the module is never marked. The
keys are the same either way, so locks taken on the module and redis-py's
way exclude each other.
"""

import inspect
import uuid
from typing import Any, Awaitable, Callable, Literal, Optional, Type, TypeVar, Union, cast

import redis.asyncio.lock
import redis.lock
from redis.exceptions import LockError, LockNotOwnedError

from .._core import FOREVER, Recipe, Request, Steps, ms, waiting
from ..asyncio import AsyncDriver
from ..errors import ModuleNotLoaded
from ._servers import found_without_module, without_module

Number = Union[int, float]
Token = Union[str, bytes]
B = TypeVar("B", bound=bool)

SLICE_MARGIN = 1.0
"""Seconds a wait with no end leaves between one slice's end and the
connection's socket timeout (on clients whose timeout is 2 s or more; below
that a slice is half the timeout)."""
DEFAULT_SOCKET_TIMEOUT: Optional[float] = inspect.signature(redis.Redis.__init__).parameters["socket_timeout"].default
"""The socket timeout of a client that does not say: ``redis.Redis``'s
default (5 s from redis-py 8 on, none before; a sync ``RedisCluster`` passes
none of its own to its nodes' clients)."""
NAMED_ERRORS = "lock_name" in inspect.signature(LockError.__init__).parameters
"""Whether redis-py's lock errors take the lock's name (``lock_name``, from
redis-py 5.0.2 on; 5.0.0 and 5.0.1 take the message alone)."""


def socket_timeout(client: Any) -> Optional[float]:
    """The socket timeout (seconds, None for none) of ``client``'s
    connections: a ``Redis`` keeps it in its pool's connection arguments, a
    ``RedisCluster`` in its own (sync: in its nodes manager)."""
    for owner in (
        getattr(client, "connection_pool", None),
        getattr(client, "nodes_manager", None),
        client,
    ):
        kwargs = getattr(owner, "connection_kwargs", None)
        if isinstance(kwargs, dict) and "socket_timeout" in kwargs:
            return cast(Optional[float], kwargs["socket_timeout"])
    return DEFAULT_SOCKET_TIMEOUT


def wait_slice(client: Any) -> float:
    """Seconds one ``LOCK.ACQUIRE … WAIT`` may wait when the caller waits
    with no end: shorter than the connection's socket timeout, so the reply
    always comes before redis-py gives up reading it; without a socket
    timeout, one wait with no end."""
    timeout = socket_timeout(client)
    if timeout is None or timeout <= 0:
        return FOREVER
    return max(timeout - SLICE_MARGIN, timeout / 2)


def acquiring(client: Any, name: Any, lease: Optional[Number], token: Token,
              blocking: bool, blocking_timeout: Optional[Number]) -> Steps[bool]:
    """The steps of ``acquire``: True once ``token`` holds the lock.

    Not blocking, or a ``blocking_timeout`` of 0 or less: one try. A finite
    ``blocking_timeout``: one ``LOCK.ACQUIRE … WAIT`` in the server's queue,
    sent once and read past its wait (``waiting``), so it keeps its place.
    None (no end): ``LOCK.ACQUIRE … WAIT`` in slices shorter than the
    socket timeout, sent through the client's ``execute_command``, until one
    gets the lock; each new slice joins the queue at the back."""
    words: Request = ("LOCK.ACQUIRE", name, token)
    if lease:
        words += ("PX", int(lease * 1000))
    if not blocking or (blocking_timeout is not None and blocking_timeout <= 0):
        return (yield words) is not None
    if blocking_timeout is not None and blocking_timeout < FOREVER:
        return (yield waiting((*words, "WAIT", ms(blocking_timeout)), blocking_timeout)) is not None
    wait = ms(wait_slice(client))
    while (yield (*words, "WAIT", wait)) is None:
        pass
    return True


def lock_error(kind: Type[LockError], message: str, name: Optional[str]) -> LockError:
    """``kind(message, lock_name=name)``, as redis-py's lock raises it; the
    message alone on a redis-py whose lock errors take no name."""
    make: Any = kind
    error: LockError = make(message, lock_name=name) if NAMED_ERRORS else make(message)
    return error


def releasing(name: Any, token: Token) -> Steps[bool]:
    """True when ``token`` held the lock and released it."""
    return bool((yield ("LOCK.RELEASEIF", name, token)) == 1)


def extending(name: Any, token: Token, milliseconds: int, add: bool) -> Steps[bool]:
    """True when ``token`` holds the lock and its lease now ends
    ``milliseconds`` after its current end (``add``) or from now."""
    words: Request = ("LOCK.EXTEND", name, token, "PX", milliseconds)
    return bool((yield (words + ("ADD",) if add else words)) == 1)


class _Commands:
    """The drop-ins' methods as command generators, written once for
    ``Lock`` and ``AsyncLock`` (each runs them with its client and gives
    redis-py's signatures)."""

    redis: Any
    name: Any
    timeout: Optional[Number]
    blocking: bool
    blocking_timeout: Optional[Number]
    local: Any

    def _encode(self, token: Token) -> bytes:
        """``token`` as the client sends it."""
        raise NotImplementedError

    def _error_name(self) -> Optional[str]:
        """The ``lock_name`` of a ``LockNotOwnedError`` (redis-py's sync lock
        gives one, its asyncio lock none)."""
        return None

    def _acquiring(self, blocking: Optional[bool], blocking_timeout: Optional[Number],
                   token: Optional[Token]) -> Steps[bool]:
        held = uuid.uuid1().hex.encode() if token is None else self._encode(token)
        if blocking is None:
            blocking = self.blocking
        if blocking_timeout is None:
            blocking_timeout = self.blocking_timeout
        if (yield from acquiring(self.redis, self.name, self.timeout, held, blocking, blocking_timeout)):
            self.local.token = held
            return True
        return False

    def _trying(self, token: Token) -> Steps[bool]:
        return (yield from acquiring(self.redis, self.name, self.timeout, token, False, None))

    def _owned(self, doing: str, steps: Steps[bool]) -> Steps[Literal[True]]:
        """True when ``steps`` are; else ``LockNotOwnedError``."""
        if not (yield from steps):
            raise lock_error(LockNotOwnedError, f"Cannot {doing} a lock that's no longer owned", self._error_name())
        return True

    def _releasing(self, token: Token) -> Steps[Literal[True]]:
        return (yield from self._owned("release", releasing(self.name, token)))

    def _extending(self, additional_time: Number, replace_ttl: bool) -> Steps[Literal[True]]:
        milliseconds = int(additional_time * 1000)
        return (yield from self._owned("extend", extending(self.name, self.local.token, milliseconds, not replace_ttl)))

    def _reacquiring(self) -> Steps[Literal[True]]:
        if self.timeout is None:  # redis-py's reacquire checks it first
            raise lock_error(LockError, "Cannot reacquire a lock with no timeout", self._error_name())
        milliseconds = int(self.timeout * 1000)
        return (yield from self._owned("reacquire", extending(self.name, self.local.token, milliseconds, False)))


class Lock(_Commands, redis.lock.Lock):
    """redis-py's ``redis.lock.Lock`` on the module's LOCK commands: pass
    ``lock_class=Lock`` to ``Redis.lock`` or ``RedisCluster.lock``.

    Everything is redis-py's (arguments, methods, errors, the token in
    thread-local storage, the key's contents) except how ``acquire`` waits:
    in the server's first-come-first-served queue, which hands the lock to
    the oldest waiter when its holder releases it or its lease ends; there
    is no polling, and ``sleep`` is accepted and unused.

    A finite ``blocking_timeout`` is one command that waits that long in the
    queue; it is sent once, outside redis-py's retries (a command sent again
    would join the queue again at the back), and its reply is read with a
    timeout 2 s past the wait, so it may be longer than the client's socket
    timeout. ``blocking_timeout=None`` waits with no end, as redis-py's
    lock does: in waits of ``socket_timeout - 1`` seconds (half the socket
    timeout below 2 s; a single wait on a client without one), each through
    the client's ``execute_command``, one after another until the lock is
    taken. When one of these waits runs out, the next one joins the queue
    at the back, behind clients that started waiting meanwhile.

    On a server without the module every method is redis-py's own (``SET
    NX PX``, its Lua scripts, polling every ``sleep`` seconds); see the
    module's docstring.
    """

    def register_scripts(self) -> None:
        """Nothing to load while the module answers (redis-py's scripts are
        registered on a server found without it)."""

    def _run(self, steps: Steps[B], stock: Callable[[], B]) -> B:
        """``steps`` on the module, or ``stock()`` (redis-py's way) on a
        server without it."""
        if without_module(self.redis, self.name):
            return stock()
        try:
            done: B = Recipe(self.redis)._drive(steps)
        except ModuleNotLoaded:
            found_without_module(self.redis, self.name)
            return stock()
        return done

    def _scripted(self) -> "redis.lock.Lock":
        """This lock with redis-py's scripts registered, for its methods."""
        redis.lock.Lock.register_scripts(self)
        return self

    def _encode(self, token: Token) -> bytes:
        encoded: bytes = self.redis.get_encoder().encode(token)
        return encoded

    def _error_name(self) -> Optional[str]:
        return cast(Optional[str], self.name)

    def acquire(
        self,
        sleep: Optional[Number] = None,
        blocking: Optional[bool] = None,
        blocking_timeout: Optional[Number] = None,
        token: Optional[Token] = None,
    ) -> bool:
        """Takes the lock; True once held (see the class for how it waits).

        ``blocking=False`` tries once. ``blocking_timeout`` is the most
        seconds to wait (None: no end). ``token`` is the value to hold the
        lock with (str or bytes), a new UUID by default. ``sleep`` is
        accepted for redis-py's signature and unused (but on a server
        without the module, where it is redis-py's polling period)."""
        return self._run(
            self._acquiring(blocking, blocking_timeout, token),
            lambda: redis.lock.Lock.acquire(self, sleep, blocking, blocking_timeout, cast(Optional[str], token)),
        )

    def do_acquire(self, token: Token) -> bool:
        """One try, without waiting."""
        return self._run(self._trying(token), lambda: redis.lock.Lock.do_acquire(self, cast(str, token)))

    def do_release(self, expected_token: Token) -> None:
        def stock() -> Literal[True]:
            redis.lock.Lock.do_release(self._scripted(), cast(str, expected_token))
            return True

        self._run(self._releasing(expected_token), stock)

    def do_extend(self, additional_time: Number, replace_ttl: bool) -> Literal[True]:
        """``additional_time``: seconds."""
        return self._run(
            self._extending(additional_time, replace_ttl),
            lambda: redis.lock.Lock.do_extend(self._scripted(), additional_time, replace_ttl),
        )

    def do_reacquire(self) -> Literal[True]:
        return self._run(self._reacquiring(), lambda: redis.lock.Lock.do_reacquire(self._scripted()))


class _AsyncRunner(AsyncDriver):
    def __init__(self, client: Any) -> None:
        self.client = client


class AsyncLock(_Commands, redis.asyncio.lock.Lock):
    """redis-py's ``redis.asyncio.lock.Lock`` on the module's LOCK commands:
    pass ``lock_class=AsyncLock`` to a ``redis.asyncio`` client's ``lock``.
    It waits as ``Lock`` does: in the server's first-come-first-served
    queue, with no polling (``sleep`` is unused); a finite
    ``blocking_timeout`` is one wait, sent once and read past its end; with
    ``blocking_timeout=None``, waits shorter than the socket timeout follow
    one another until the lock is taken, each new one at the back of the
    queue. On a server without the module every method is redis-py's own."""

    def register_scripts(self) -> None:
        """Nothing to load while the module answers (redis-py's scripts are
        registered on a server found without it)."""

    async def _run(self, steps: Steps[B], stock: Callable[[], Awaitable[B]]) -> B:
        """``steps`` on the module, or ``stock()`` (redis-py's way) on a
        server without it."""
        if without_module(self.redis, self.name):
            return await stock()
        try:
            done: B = await _AsyncRunner(self.redis)._drive(steps)
        except ModuleNotLoaded:
            found_without_module(self.redis, self.name)
            return await stock()
        return done

    def _scripted(self) -> "redis.asyncio.lock.Lock":
        """This lock with redis-py's scripts registered, for its methods."""
        register: Any = redis.asyncio.lock.Lock.register_scripts  # (untyped in redis-py)
        register(self)
        return self

    def _encode(self, token: Token) -> bytes:
        try:
            encoder = self.redis.connection_pool.get_encoder()
        except AttributeError:  # a cluster client has no pool of its own
            encoder = self.redis.get_encoder()
        encoded: bytes = encoder.encode(token)
        return encoded

    async def acquire(
        self,
        blocking: Optional[bool] = None,
        blocking_timeout: Optional[Number] = None,
        token: Optional[Token] = None,
    ) -> bool:
        """Takes the lock; True once held (see ``Lock.acquire``)."""
        return await self._run(
            self._acquiring(blocking, blocking_timeout, token),
            lambda: redis.asyncio.lock.Lock.acquire(self, blocking, blocking_timeout, token),
        )

    async def do_acquire(self, token: Token) -> bool:
        """One try, without waiting."""
        return await self._run(self._trying(token), lambda: redis.asyncio.lock.Lock.do_acquire(self, token))

    async def do_release(self, expected_token: Token) -> None:
        async def stock() -> Literal[True]:
            await redis.asyncio.lock.Lock.do_release(self._scripted(), cast(bytes, expected_token))
            return True

        await self._run(self._releasing(expected_token), stock)

    async def do_extend(self, additional_time: Number, replace_ttl: bool) -> Literal[True]:
        """``additional_time``: seconds."""
        return await self._run(
            self._extending(additional_time, replace_ttl),
            lambda: redis.asyncio.lock.Lock.do_extend(self._scripted(), additional_time, replace_ttl),
        )

    async def do_reacquire(self) -> Literal[True]:
        return await self._run(self._reacquiring(), lambda: redis.asyncio.lock.Lock.do_reacquire(self._scripted()))


__all__ = ["AsyncLock", "Lock"]
