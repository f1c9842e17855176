"""RWLOCK: a fair readers-writer lock whose holders each have a lease
(Redisson's ``RReadWriteLock``, on the module's native commands)."""

from typing import Any, Callable, Dict, List, NamedTuple, Optional

from ._core import Recipe, Request, Steps, as_dict, recipe, text
from ._held import TokenLock

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


class RwLockHandle(TokenLock["RwLockHandle"]):
    """One holder of a ``ReadWriteLock``: its token and mode (``"read"`` or
    ``"write"``), used as a ``Lock`` is (see ``Lock`` for waits, renewal and
    losing the lease); the lock's ``ttl``, ``wait``, ``fence``, ``renew`` and
    ``on_lost`` apply.

    Unlike ``Lock.acquire``, ``acquire`` on a handle that holds the lock
    answers True (and resets its lease): a retry after a lost reply. A
    token holding the read lock cannot ask for the write lock
    (``CannotUpgrade``): release it first."""

    _RELEASE = "RWLOCK.RELEASE"
    _EXTEND = "RWLOCK.EXTEND"
    _REFUSED = "was not acquired in time"

    def __init__(self, rwlock: ReadWriteLock, mode: str, token: Optional[str] = None) -> None:
        if mode not in (READ, WRITE):
            raise ValueError(f'mode is "{READ}" or "{WRITE}", not {mode!r}')
        super().__init__(rwlock.client, rwlock.key, token, rwlock.ttl, rwlock.wait, rwlock.fence,
                         rwlock.renew, rwlock.on_lost)
        self.rwlock = rwlock
        self.mode = mode

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.mode} {self.key!r} token={self.token!r}>"

    def _acquire_words(self, timeout: Optional[float], mode: Optional[str] = None) -> Request:
        """The acquire command, in the handle's mode unless ``mode``."""
        return ("RWLOCK.ACQUIRE", self.key, (mode or self.mode).upper(), self.token, *self._options(timeout))

    def _name(self) -> str:
        return f"{self.mode} lock {self.key!r}"

    @recipe
    def acquire(self, timeout: Optional[float] = None) -> Steps[bool]:
        """True when this token now holds the lock in the handle's mode;
        ``timeout``: the most seconds to wait for it in the server's queue
        (None: one try)."""
        return (yield from self._acquiring(timeout))

    @recipe
    def extend(self, ttl: Optional[float] = None) -> Steps[bool]:
        """Makes this holder's lease end ``ttl`` seconds (default: the
        lock's ``ttl``) from now; False when this token no longer holds the
        lock."""
        return (yield from self._extending(ttl))

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
        granted = self._granted((yield self._acquire_words(None, READ)))
        if granted:
            self.mode = READ
        return granted
