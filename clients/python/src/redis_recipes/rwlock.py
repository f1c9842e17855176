"""RWLOCK: a fair readers-writer lock whose holders each have a lease
(Redisson's ``RReadWriteLock``, on the module's native commands)."""

import uuid
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from ._core import FOREVER, Recipe, Request, Steps, as_dict, ms, recipe, text, waiting
from ._held import Held, Runner
from .errors import LockLost, LockNotAcquired

READ = "read"
WRITE = "write"


class RwLockInfo(NamedTuple):
    """What ``ReadWriteLock.info()`` answers."""

    mode: str
    """``"read"``, ``"write"`` or ``"none"`` (free)."""
    holders: Dict[str, Optional[int]]
    """Each holder's token and its lease end (Unix ms; None: no lease)."""
    waiting: int
    """How many clients wait for the lock."""


class ReadWriteLock(Recipe):
    """A readers-writer lock at ``key``: many readers at once, or one
    writer. ``read_lock()`` and ``write_lock()`` give handles
    (``RwLockHandle``), each with a token of its own (or ``token=``), that
    are used as ``Lock`` is: ``acquire(timeout=None)``, ``release()``,
    ``extend(ttl)``, ``fencing_token``, ``lost``, and ``with``.

    The lock is fair: clients waiting for it (``acquire(timeout=s)``, or a
    ``with`` block) are served in arrival order, and a newcomer never passes
    a waiter, so a waiting writer is served before any reader that comes
    after it (no writer starvation); the readers at the head of the queue
    are admitted together.

    ``ttl`` (seconds) is each holder's lease: a holder that dies releases
    its hold by itself, alone. ``fence`` names a counter key (in the lock's
    slot in a cluster): a write acquisition then sets ``fencing_token`` to a
    strictly increasing number, and a read acquisition to the last writer's
    (for a reader to show the storage it reads). ``wait`` is how long a
    ``with`` block waits (None: forever) before raising
    ``LockNotAcquired``; ``renew=True`` (with a ``ttl``) renews the lease of
    a handle in a ``with`` block, and ``on_lost(handle)`` learns of its
    loss, exactly as ``Lock``'s do."""

    def __init__(
        self,
        client: Any,
        key: str,
        *,
        ttl: Optional[float] = None,
        wait: Optional[float] = None,
        fence: Optional[str] = None,
        renew: bool = False,
        on_lost: Optional[Callable[["RwLockHandle"], Any]] = None,
    ) -> None:
        super().__init__(client)
        self.key = key
        self.ttl = ttl
        self.wait = wait
        self.fence = fence
        self.renew = renew
        self.on_lost = on_lost

    def read_lock(self, *, token: Optional[str] = None) -> "RwLockHandle":
        """A handle that takes the lock for reading (shared with other
        readers); its own token unless ``token`` is given."""
        return RwLockHandle(self, READ, token)

    def write_lock(self, *, token: Optional[str] = None) -> "RwLockHandle":
        """A handle that takes the lock for writing (alone); its own token
        unless ``token`` is given."""
        return RwLockHandle(self, WRITE, token)

    @recipe
    def info(self) -> Steps[RwLockInfo]:
        """The lock's mode, its holders and how many clients wait."""
        fields = as_dict((yield ("RWLOCK.INFO", self.key)))
        holders: Dict[str, Optional[int]] = {}
        rows: List[Any] = fields.get("holders") or []
        for token, until in rows:
            holders[text(token) or ""] = None if int(until) < 0 else int(until)
        return RwLockInfo(text(fields.get("mode")) or "none", holders, int(fields.get("waiting") or 0))


class RwLockHandle(Recipe, Held["RwLockHandle"]):
    """One holder of a ``ReadWriteLock``: its token and mode (``"read"`` or
    ``"write"``), used as a ``Lock`` is (see ``Lock`` for waits, renewal and
    losing the lease); the lock's ``ttl``, ``wait``, ``fence``, ``renew`` and
    ``on_lost`` apply.

    Unlike ``Lock.acquire``, ``acquire`` on a handle that holds the lock
    answers True (and resets its lease): a retry after a lost reply. A
    token holding the read lock cannot ask for the write lock
    (``CannotUpgrade``): release it first."""

    def __init__(self, rwlock: ReadWriteLock, mode: str, token: Optional[str] = None) -> None:
        super().__init__(rwlock.client)
        if mode not in (READ, WRITE):
            raise ValueError(f'mode is "{READ}" or "{WRITE}", not {mode!r}')
        self.rwlock = rwlock
        self.key = rwlock.key
        self.mode = mode
        self.token = token if token is not None else uuid.uuid4().hex
        self.ttl = rwlock.ttl
        self.wait = rwlock.wait
        self.fence = rwlock.fence
        self.renew = rwlock.renew
        self.on_lost = rwlock.on_lost
        self.fencing_token: Optional[int] = None
        self.lost = False
        self._renewer = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.mode} {self.key!r} token={self.token!r}>"

    def _acquire_words(self, mode: str, timeout: Optional[float]) -> Request:
        words: Request = ("RWLOCK.ACQUIRE", self.key, mode.upper(), self.token)
        if self.ttl is not None:
            words += ("PX", ms(self.ttl))
        if timeout is not None:
            words += ("WAIT", ms(timeout))
        if self.fence is not None:
            words += ("FENCE", self.fence)
        return words

    def _granted(self, reply: Any) -> bool:
        if reply is None:
            return False
        if self.fence is not None:
            self.fencing_token = int(reply)
        self.lost = False
        return True

    @recipe
    def acquire(self, timeout: Optional[float] = None) -> Steps[bool]:
        """True when this token now holds the lock in the handle's mode;
        ``timeout``: the most seconds to wait for it in the server's queue
        (None: one try)."""
        return self._granted((yield waiting(self._acquire_words(self.mode, timeout), timeout)))

    @recipe
    def release(self) -> Steps[bool]:
        """True when this token held the lock and released it (the
        renewer, if any, stops first)."""
        self._stop_renewer()
        return bool((yield ("RWLOCK.RELEASE", self.key, self.token)) == 1)

    @recipe
    def extend(self, ttl: Optional[float] = None) -> Steps[bool]:
        """Makes this holder's lease end ``ttl`` seconds (default: the
        lock's ``ttl``) from now; False when this token no longer holds the
        lock."""
        seconds = ttl if ttl is not None else self.ttl
        if seconds is None:
            raise ValueError("extend needs a ttl")
        return bool((yield ("RWLOCK.EXTEND", self.key, self.token, "PX", ms(seconds))) == 1)

    @recipe
    def downgrade(self) -> Steps[bool]:
        """Turns a write hold into a read hold at once (the readers waiting
        at the head of the queue are admitted with it); the handle's mode
        becomes ``"read"``, its lease the lock's ``ttl``. True when this
        token now holds the read lock; if it no longer held the lock, this
        is one try to take it for reading. A handle in read mode raises
        ``ValueError``."""
        if self.mode != WRITE:
            raise ValueError("only a write lock can be downgraded")
        granted = self._granted((yield self._acquire_words(READ, None)))
        if granted:
            self.mode = READ
        return granted

    # ---- the context manager (see ``_held``) -------------------------------

    def __enter__(self) -> "RwLockHandle":
        self._drive(self._entering())
        return self

    def _taking(self) -> Steps["RwLockHandle"]:
        if not (yield from RwLockHandle.acquire.steps(self, self.wait if self.wait is not None else FOREVER)):
            raise LockNotAcquired(f"{self.mode} lock {self.key!r} was not acquired in time")
        return self

    def _giving_back(self) -> Steps[bool]:
        return (yield from RwLockHandle.release.steps(self))

    def _renewal(self) -> Optional[Tuple[Request, float]]:
        if not self.renew or self.ttl is None:
            return None
        return ("RWLOCK.EXTEND", self.key, self.token, "PX", ms(self.ttl)), self.ttl

    def _runner(self) -> Runner:
        return self

    def _subject(self) -> "RwLockHandle":
        return self

    def _lost_error(self) -> Exception:
        return LockLost(f"{self.mode} lock {self.key!r} was lost before the block ended")
