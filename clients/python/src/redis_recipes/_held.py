"""What a lock and a pool lease share: the block that takes one and gives it
back, the renewal that keeps its lease while the block runs, and learning
that it was lost. Written once, as command generators (see ``_core``): the
sync classes run them with ``with``, the asyncio ones with ``async with``."""

from __future__ import annotations

import time
from typing import Any, Callable, Generic, Optional, Protocol, Tuple, TypeVar

from ._core import Background, Pause, Request, Steps

X = TypeVar("X")

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
    """A lock or a lease as a context manager, ``X`` being what ``on_lost``
    is called with. A subclass says how to take it (``_taking``: the steps
    that take it, raising when they cannot, and return what the block gets),
    give it back (``_giving_back``: True when it was still held), renew it
    (``_renewal``: the command and its ttl, or None), which object runs the
    steps (``_runner``), what a loss reports (``_subject``) and raises
    (``_lost_error``)."""

    on_lost: Optional[Callable[[X], Any]]
    lost: bool
    _renewer: Optional[Background]

    def _taking(self) -> Steps[Any]:
        raise NotImplementedError

    def _giving_back(self) -> Steps[bool]:
        raise NotImplementedError

    def _renewal(self) -> Optional[Tuple[Request, float]]:
        raise NotImplementedError

    def _runner(self) -> Runner:
        raise NotImplementedError

    def _subject(self) -> Optional[X]:
        raise NotImplementedError

    def _lost_error(self) -> Exception:
        raise NotImplementedError

    def _entering(self) -> Steps[Any]:
        """Takes it (see ``_taking``) and starts the renewal, if any."""
        taken = yield from self._taking()
        renewal = self._renewal()
        if renewal is not None:
            words, ttl = renewal
            steps = renewing(words, ttl, self._lose)
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

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        self._runner()._drive(self._exiting(kind is None))
