"""What a lock and a pool lease share: the block that takes one and gives it
back, the renewal that keeps its lease while the block runs, and learning
that it was lost (``Held``); and what ``Lock`` and a ``ReadWriteLock``'s
handles share beyond that: a token's acquire, release and extend
(``TokenLock``). Written once, as command generators (see ``_core``): the
sync classes run them with ``with``, the asyncio ones with ``async with``."""

from __future__ import annotations

import time
import uuid
from typing import Any, Callable, Generic, Optional, Protocol, TypeVar

from ._core import FOREVER, Background, Pause, Recipe, Request, Steps, ms, recipe, waiting
from .errors import LockLost, LockNotAcquired

X = TypeVar("X")
L = TypeVar("L", bound="TokenLock[Any]")

RETRY = 0.05
"""Seconds: after a failed renewal, the shortest wait before the next try
(unless the lease ends sooner)."""


def renewing(words: Request, ttl: float, lost: Callable[[], None]) -> Steps[None]:
    """The steps of a background renewal of a lease of ``ttl`` seconds.

    ``words`` (an extend or renew that answers 1 while the lease is held and
    makes it end ``ttl`` seconds later) is sent every ``ttl / 3`` seconds.
    The renewal ends, calling ``lost()`` once, when the server answers that
    the lease is no longer held, or when renewals failed (a dropped
    connection, a timeout, an error) until the lease's end as this client
    knows it: ``ttl`` seconds after the last successful renewal was sent (at
    first, after the renewal started). A renewal that failed before then is
    tried again after half the time left (at most ``ttl / 3`` seconds, at
    least ``RETRY``, the last try at the lease's end)."""
    period = ttl / 3
    ends = time.monotonic() + ttl
    wait = period
    while True:
        yield Pause(wait)
        sent = time.monotonic()
        try:
            held = (yield words) == 1
        except Exception:  # a dropped connection, a timeout, a failover: again while the lease lasts
            left = ends - time.monotonic()
            if left > 0:
                wait = min(period, max(left / 2, RETRY), left)
                continue
            held = False
        if not held:
            lost()
            return
        ends, wait = sent + ttl, period


class Runner(Protocol):
    """What runs a holder's steps: a sync class or an asyncio one."""

    def _drive(self, steps: Steps[Any]) -> Any: ...

    def _background(self, steps: Steps[None], name: str) -> Background: ...


class Holder(Protocol):
    """What the ``async with`` of ``redis_recipes.asyncio`` needs of a
    ``Held``."""

    def _runner(self) -> Runner: ...

    def _exiting(self, raise_lost: bool) -> Steps[None]: ...


class Held(Generic[X]):
    """A lock or a lease as a context manager, ``X`` being what the block
    gets and ``on_lost`` is called with. A subclass says how to take it
    (``_taking``: the steps that take it, raising when they cannot, and
    return what the block gets), give it back (``_giving_back``: True when
    it was still held), renew it (``_extension``: the command that makes the
    lease end in so many seconds, sent every ``ttl / 3`` seconds when
    ``renew`` and a ``ttl`` are set), which object runs the steps
    (``_runner``), what a loss reports (``_subject``) and raises
    (``_lost_error``)."""

    on_lost: Optional[Callable[[X], Any]]
    lost: bool
    renew: bool
    ttl: Optional[float]
    _renewer: Optional[Background]

    def __init__(self, ttl: Optional[float], renew: bool, on_lost: Optional[Callable[[X], Any]]) -> None:
        self.ttl = ttl
        self.renew = renew
        self.on_lost = on_lost
        self.lost = False
        self._renewer = None

    def _taking(self) -> Steps[X]:
        raise NotImplementedError

    def _giving_back(self) -> Steps[bool]:
        raise NotImplementedError

    def _extension(self, seconds: float) -> Request:
        raise NotImplementedError

    def _runner(self) -> Runner:
        raise NotImplementedError

    def _subject(self) -> Optional[X]:
        raise NotImplementedError

    def _lost_error(self) -> Exception:
        raise NotImplementedError

    def _entering(self) -> Steps[X]:
        """Takes it (see ``_taking``) and starts the renewal, if any."""
        taken = yield from self._taking()
        if self.renew and self.ttl is not None:
            words = self._extension(self.ttl)
            steps = renewing(words, self.ttl, self._lose)
            self._renewer = self._runner()._background(steps, f"renew {words[1]!r}")
        return taken

    def _exiting(self, raise_lost: bool) -> Steps[None]:
        """Stops the renewal and gives it back. If it was lost (the renewal
        found so, or giving it back did), ``on_lost`` has been called once;
        without ``on_lost``, the loss raises when ``raise_lost``."""
        self._stop_renewer()
        released = yield from self._giving_back()
        if not released and not self.lost:
            self._lose()
        if self.lost and self.on_lost is None and raise_lost:
            raise self._lost_error()

    def _lose(self) -> None:
        self.lost = True
        subject = self._subject()
        if self.on_lost is not None and subject is not None:
            self.on_lost(subject)

    def _stop_renewer(self) -> None:
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            renewer.stop()

    def __enter__(self) -> X:
        taken: X = self._runner()._drive(self._entering())
        return taken

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        self._runner()._drive(self._exiting(kind is None))


class TokenLock(Recipe, Held[L]):
    """A lock held by a token (``Lock``, a ``ReadWriteLock``'s handle),
    ``L`` being the class itself: what its block gets and ``on_lost`` is
    called with. ``release`` is written here; a subclass's recipes
    ``acquire`` and ``extend`` (each with its own docstring) run
    ``_acquiring`` and ``_extending``. A subclass builds its acquire command
    (``_acquire_words``, ending with ``_options``), names its release and
    extend commands (``_RELEASE``: key and token; ``_EXTEND``: key, token,
    ``PX ms``), and says what messages call it (``_name``) and how they say
    that a ``with`` did not take it (``_REFUSED``)."""

    _RELEASE: str
    _EXTEND: str
    _REFUSED: str

    def __init__(
        self,
        client: Any,
        key: str,
        token: Optional[str],
        ttl: Optional[float],
        wait: Optional[float],
        fence: Optional[str],
        renew: bool,
        on_lost: Optional[Callable[[L], Any]],
    ) -> None:
        Recipe.__init__(self, client)
        Held.__init__(self, ttl, renew, on_lost)
        self.key = key
        self.token = token if token is not None else uuid.uuid4().hex
        self.wait = wait
        self.fence = fence
        self.fencing_token: Optional[int] = None

    def _acquire_words(self, timeout: Optional[float]) -> Request:
        raise NotImplementedError

    def _name(self) -> str:
        raise NotImplementedError

    def _options(self, timeout: Optional[float]) -> Request:
        """What ends an acquire command: the lease, the wait, the fence."""
        words: Request = ()
        if self.ttl is not None:
            words += ("PX", ms(self.ttl))
        if timeout is not None:
            words += ("WAIT", ms(timeout))
        if self.fence is not None:
            words += ("FENCE", self.fence)
        return words

    def _granted(self, reply: Any) -> bool:
        """True when an acquire's ``reply`` says the lock is held (then the
        fencing token, if any, is its)."""
        if reply is None:
            return False
        if self.fence is not None:
            self.fencing_token = int(reply)
        self.lost = False
        return True

    def _acquiring(self, timeout: Optional[float]) -> Steps[bool]:
        """The steps of ``acquire``."""
        return self._granted((yield waiting(self._acquire_words(timeout), timeout)))

    @recipe
    def release(self) -> Steps[bool]:
        """True when this token held the lock and released it (the
        renewer, if any, stops first)."""
        self._stop_renewer()
        return bool((yield (self._RELEASE, self.key, self.token)) == 1)

    def _giving_back(self) -> Steps[bool]:
        return (yield from TokenLock.release.steps(self))

    def _extending(self, ttl: Optional[float]) -> Steps[bool]:
        """The steps of ``extend``."""
        seconds = ttl if ttl is not None else self.ttl
        if seconds is None:
            raise ValueError("extend needs a ttl")
        return bool((yield self._extension(seconds)) == 1)

    def _extension(self, seconds: float) -> Request:
        return (self._EXTEND, self.key, self.token, "PX", ms(seconds))

    def _taking(self: L) -> Steps[L]:
        if not (yield from self._acquiring(self.wait if self.wait is not None else FOREVER)):
            raise LockNotAcquired(f"{self._name()} {self._REFUSED}")
        return self

    def _runner(self) -> Runner:
        return self

    def _subject(self: L) -> L:
        return self

    def _lost_error(self) -> Exception:
        return LockLost(f"{self._name()} was lost before the block ended")
