"""LOCK: owner-token locks with leases, a first-come-first-served wait and
fencing tokens (the book's ``Lock``, ``AutoReleaseLock`` and
``IdentityLock``)."""

import uuid
from typing import Any, Callable, Optional

from ._core import Recipe, Request, Steps, ms, recipe, waiting
from ._held import TokenLock


class Lock(TokenLock["Lock"]):
    """A lock held by this object's token.

    ``acquire()`` tries once (the book's); ``acquire(timeout=s)`` waits up to
    ``s`` seconds in the server's first-come-first-served queue (no polling).
    ``ttl`` (seconds) makes the lock end by itself; ``fence`` names a counter
    key, and each acquisition then sets ``fencing_token`` to a strictly
    increasing number for the protected resource to check.

    As a context manager it waits ``wait`` seconds (None: forever) and raises
    ``LockNotAcquired`` if the lock stays taken. With ``renew=True`` (and a
    ``ttl``) a background renewer (a thread; a task with
    ``redis_recipes.asyncio``) extends the lease to ``ttl`` seconds every
    ``ttl / 3`` seconds while the block runs. A renewal that fails (a
    dropped connection, a timeout) is tried again while the lease lasts. The
    lease is lost when the server answers that this token no longer holds
    the lock (another client took it, or it was deleted), when renewals
    failed until the lease's end, or, without renewal, when the block
    outlived ``ttl``; then the renewer stops and ``on_lost(lock)`` is called
    once (from the renewer's thread or task, as soon as it knows; else when
    the block ends), or without it ``LockLost`` is raised when the block
    ends.

    A wait holds one connection until the server answers. The command is
    sent once (never again by redis-py's retries, which would put it at the
    back of the queue) and its reply is read with a timeout 2 s past the
    wait, not the client's ``socket_timeout``, so a client with redis-py 8's
    default of 5 s keeps its place through a longer wait. A connection lost
    meanwhile, or no answer 2 s after the wait, raises
    ``redis.ConnectionError`` or ``redis.TimeoutError``. In a cluster, a
    wait whose slot moves is sent again by the cluster client to the new
    node, at the back of its queue. With redis-py before 8 the client's
    ``socket_timeout`` (none by default) applies: give none shorter than the
    wait."""

    _RELEASE = "LOCK.RELEASEIF"
    _EXTEND = "LOCK.EXTEND"
    _REFUSED = "is held by another client"

    def __init__(
        self,
        client: Any,
        key: str,
        *,
        token: Optional[str] = None,
        ttl: Optional[float] = None,
        wait: Optional[float] = None,
        fence: Optional[str] = None,
        renew: bool = False,
        on_lost: Optional[Callable[["Lock"], Any]] = None,
    ) -> None:
        super().__init__(client, key, token, ttl, wait, fence, renew, on_lost)

    def _acquire_words(self, timeout: Optional[float]) -> Request:
        # NX: a lock this token already holds is not taken again (False), as
        # the book's SET NX answers.
        return ("LOCK.ACQUIRE", self.key, self.token, "NX", *self._options(timeout))

    def _name(self) -> str:
        return f"lock {self.key!r}"

    @recipe
    def acquire(self, timeout: Optional[float] = None) -> Steps[bool]:
        """True when this token now holds the lock; ``timeout``: the most
        seconds to wait for it in the server's queue (None: one try)."""
        return (yield from self._acquiring(timeout))

    @recipe
    def extend(self, ttl: Optional[float] = None) -> Steps[bool]:
        """Makes the lease end ``ttl`` seconds (default: the lock's ``ttl``)
        from now; False when this token no longer holds the lock."""
        return (yield from self._extending(ttl))


class AutoReleaseLock(Recipe):
    """The book's lock that releases itself ``timeout`` seconds (or
    milliseconds, with ``unit="ms"``) after it was taken; only its taker can
    release it early."""

    def __init__(self, client: Any, key: str, *, token: Optional[str] = None) -> None:
        super().__init__(client)
        self.key = key
        self.token = token if token is not None else uuid.uuid4().hex

    @recipe
    def acquire(self, timeout: float, unit: str = "sec") -> Steps[bool]:
        """True when taken, for ``timeout`` seconds (``unit="sec"``) or
        milliseconds (``unit="ms"``); False while another holds it."""
        if unit not in ("sec", "ms"):
            raise ValueError('unit is "sec" or "ms"')
        lease = ms(timeout) if unit == "sec" else max(1, int(timeout))
        return (yield ("LOCK.ACQUIRE", self.key, self.token, "PX", lease, "NX")) is not None

    @recipe
    def release(self) -> Steps[bool]:
        """True when this token held the lock and released it."""
        return bool((yield ("LOCK.RELEASEIF", self.key, self.token)) == 1)


class IdentityLock(Recipe):
    """The book's lock whose value is its owner's password: only the same
    password releases it."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def acquire(self, password: str, timeout: Optional[float] = None) -> Steps[bool]:
        """True when ``password`` now holds the lock (``timeout``: the most
        seconds to wait in the server's queue; None: one try)."""
        words: Request = ("LOCK.ACQUIRE", self.key, password, "NX")
        if timeout is not None:
            words += ("WAIT", ms(timeout))
        return (yield waiting(words, timeout)) is not None

    @recipe
    def release(self, password: str) -> Steps[bool]:
        """True when ``password`` held the lock and released it."""
        return bool((yield ("LOCK.RELEASEIF", self.key, password)) == 1)
