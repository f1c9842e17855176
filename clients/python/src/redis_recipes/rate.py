"""RATE: rate limiters (the book's ``RateLimiter``), GCRA or an exact
sliding window, several limits at once; and the book's fixed-window
``Limiter``."""

import math
from typing import Any, Iterable, NamedTuple, Optional, Sequence, Tuple

from ._core import Recipe, Request, Steps, as_dict, ms, recipe


class Decision(NamedTuple):
    """One decision, as ``RATE.LIMIT`` answers it (times in milliseconds)."""

    limited: bool
    limit: int
    remaining: int
    retry_after_ms: int
    reset_after_ms: int

    @property
    def allowed(self) -> bool:
        return not self.limited


_FIELDS = ("limited", "limit", "remaining", "retry_after_ms", "reset_after_ms")


def _decision(reply: Any) -> Decision:
    if isinstance(reply, dict):
        fields = as_dict(reply)
        values = [int(fields[name]) for name in _FIELDS]
    else:
        values = [int(value) for value in reply]
    limited, limit, remaining, retry, reset = values
    return Decision(bool(limited), limit, remaining, retry, reset)


class RateLimiter(Recipe):
    """At most ``maximum`` actions per ``interval`` seconds for each user of
    an ``action``, kept at ``RateLimiter:<action>:<uid>``.

    ``is_permitted``, ``remaining``, ``duration`` and ``revoke`` are the
    book's and return what the book's do. Beyond the book: ``limit`` and
    ``peek`` answer a ``Decision``; ``also=[(interval, maximum), …]`` adds
    limits checked with the first all at once, ``burst`` lets an idle user
    act that many times at once (GCRA; default ``maximum``), ``sliding=True``
    counts an exact sliding window instead. Every ``interval`` is in seconds
    (sent to the server in milliseconds)."""

    def __init__(
        self,
        client: Any,
        action: str,
        interval: float,
        maximum: int,
        *,
        also: Iterable[Tuple[float, int]] = (),
        burst: Optional[int] = None,
        sliding: bool = False,
    ) -> None:
        super().__init__(client)
        self.action = action
        self.limits: Sequence[Tuple[float, int]] = [(interval, maximum), *also]
        self.burst = burst
        self.sliding = sliding

    def key(self, uid: Any) -> str:
        return f"RateLimiter:{self.action}:{uid}"

    def _words(self, command: str, uid: Any, cost: int) -> Request:
        words: Request = (command, self.key(uid))
        for at, (interval, maximum) in enumerate(self.limits):
            if at:
                words += ("AND",)
            words += (maximum, ms(interval))
            if at == 0 and self.burst is not None:
                words += ("BURST", self.burst)
        if cost != 1:
            words += ("COST", cost)
        if self.sliding:
            words += ("SLIDING",)
        return words

    @recipe
    def limit(self, uid: Any, cost: int = 1) -> Steps[Decision]:
        """Decides an action of weight ``cost`` and consumes it if allowed."""
        return _decision((yield self._words("RATE.LIMIT", uid, cost)))

    @recipe
    def peek(self, uid: Any, cost: int = 1) -> Steps[Decision]:
        """Whether an action would be allowed now, consuming nothing."""
        return _decision((yield self._words("RATE.PEEK", uid, cost)))

    @recipe
    def is_permitted(self, uid: Any) -> Steps[bool]:
        """The book's check: True (and counted) when the user may act now."""
        return not _decision((yield self._words("RATE.LIMIT", uid, 1))).limited

    @recipe
    def remaining(self, uid: Any) -> Steps[int]:
        """How many more actions the user may take now."""
        return _decision((yield self._words("RATE.PEEK", uid, 1))).remaining

    @recipe
    def duration(self, uid: Any) -> Steps[Optional[int]]:
        """The book's: how many seconds (rounded up) until the user may act
        again, or None when the user may act now."""
        decision = _decision((yield self._words("RATE.PEEK", uid, 1)))
        if not decision.limited:
            return None
        return max(1, math.ceil(decision.retry_after_ms / 1000))

    @recipe
    def revoke(self, uid: Any) -> Steps[None]:
        """The book's: forgets the user's limiter (the next action starts
        from full limits). None, as the book's."""
        yield ("RATE.RESET", self.key(uid))


class Limiter(Recipe):
    """The second edition's fixed window (chapter 8): at most ``maximum``
    actions from the first one until ``timeout`` seconds after it, counted
    at ``key`` as the book counts them (a string counter that expires), so
    a key the book's code wrote is read and counted on.

    ``is_valid`` is one ``RATE.FIXED key <timeout ms>``: the book's ``INCR``
    and ``EXPIRE … NX`` in one atomic command (the same counter, a window
    of ``timeout`` opened by the first action, or given to a counter left
    without a TTL), as the book's transaction.
    ``remaining_time`` returns what the book's does despite its name: how
    many more actions are allowed in the window (0 when over), or None when
    no window is open (the key is missing)."""

    def __init__(self, client: Any, key: str, timeout: float, maximum: int) -> None:
        super().__init__(client)
        self.key = key
        self.timeout = timeout
        self.maximum = maximum

    @recipe
    def is_valid(self) -> Steps[bool]:
        """The book's: counts an action (opening a window of ``timeout``
        seconds if none is open); True when it is within ``maximum``."""
        counted = yield ("RATE.FIXED", self.key, ms(self.timeout))
        return int(counted[0]) <= self.maximum

    @recipe
    def remaining_time(self) -> Steps[Optional[int]]:
        """The book's: the actions left in the open window (0 when over the
        maximum), or None when no window is open."""
        count = yield ("GET", self.key)
        if count is None:
            return None
        return max(0, self.maximum - int(count))
