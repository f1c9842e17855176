"""LOCK: owner-token locks with leases, a first-come-first-served wait and
fencing tokens (the book's ``Lock``, ``AutoReleaseLock`` and
``IdentityLock``)."""

import uuid
from typing import Any, Callable, Optional, Tuple

from ._core import FOREVER, Recipe, Request, Steps, ms, recipe, waiting
from ._held import Held, Runner
from .errors import LockLost, LockNotAcquired


class Lock(Recipe, Held["Lock"]):
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
        super().__init__(client)
        self.key = key
        self.token = token if token is not None else uuid.uuid4().hex
        self.ttl = ttl
        self.wait = wait
        self.fence = fence
        self.renew = renew
        self.on_lost = on_lost
        self.fencing_token: Optional[int] = None
        self.lost = False
        self._renewer = None

    def _acquire_words(self, timeout: Optional[float]) -> Request:
        # NX: a lock this token already holds is not taken again (False), as
        # the book's SET NX answers.
        words: Request = ("LOCK.ACQUIRE", self.key, self.token, "NX")
        if self.ttl is not None:
            words += ("PX", ms(self.ttl))
        if timeout is not None:
            words += ("WAIT", ms(timeout))
        if self.fence is not None:
            words += ("FENCE", self.fence)
        return words

    @recipe
    def acquire(self, timeout: Optional[float] = None) -> Steps[bool]:
        """True when this token now holds the lock; ``timeout``: the most
        seconds to wait for it in the server's queue (None: one try)."""
        reply = yield waiting(self._acquire_words(timeout), timeout)
        if reply is None:
            return False
        if self.fence is not None:
            self.fencing_token = int(reply)
        self.lost = False
        return True

    @recipe
    def release(self) -> Steps[bool]:
        """True when this token held the lock and released it (the
        renewer, if any, stops first)."""
        self._stop_renewer()
        return bool((yield ("LOCK.RELEASEIF", self.key, self.token)) == 1)

    @recipe
    def extend(self, ttl: Optional[float] = None) -> Steps[bool]:
        """Makes the lease end ``ttl`` seconds (default: the lock's ``ttl``)
        from now; False when this token no longer holds the lock."""
        seconds = ttl if ttl is not None else self.ttl
        if seconds is None:
            raise ValueError("extend needs a ttl")
        return bool((yield ("LOCK.EXTEND", self.key, self.token, "PX", ms(seconds))) == 1)

    # ---- the context manager (see ``_held``) -------------------------------

    def __enter__(self) -> "Lock":
        self._drive(self._entering())
        return self

    def _taking(self) -> Steps["Lock"]:
        if not (yield from Lock.acquire.steps(self, self.wait if self.wait is not None else FOREVER)):
            raise LockNotAcquired(f"lock {self.key!r} is held by another client")
        return self

    def _giving_back(self) -> Steps[bool]:
        return (yield from Lock.release.steps(self))

    def _renewal(self) -> Optional[Tuple[Request, float]]:
        if not self.renew or self.ttl is None:
            return None
        return ("LOCK.EXTEND", self.key, self.token, "PX", ms(self.ttl)), self.ttl

    def _runner(self) -> Runner:
        return self

    def _subject(self) -> "Lock":
        return self

    def _lost_error(self) -> Exception:
        return LockLost(f"lock {self.key!r} was lost before the block ended")


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
