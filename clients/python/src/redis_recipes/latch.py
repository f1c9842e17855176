"""LATCH: a count-down latch that can expire (Redisson's
``RCountDownLatch``, on the module's native commands)."""

import time
from typing import Any, Optional

from ._core import Recipe, Request, Steps, ms, recipe, waiting

CHUNK = 60.0
"""Seconds: a longer wait is sent as waits of at most this long, one after
the other, each read with a timeout a little past its own end."""


class CountDownLatch(Recipe):
    """A latch at ``key`` that opens when its count reaches 0.

    ``try_set_count(n)`` arms it (only when it is not armed already);
    ``count_down()`` lowers the count; ``wait()`` returns once the count is
    0, waiting in the server (no polling). The key is a plain string
    holding the count; a latch that reaches 0 is deleted, so a missing
    latch is open (it counts 0, and waiting on it returns at once) and can
    be armed again. With a ``ttl`` the latch opens by itself when it ends.

    A wait holds one connection while it waits, and is read past its end
    whatever the client's ``socket_timeout`` (see ``Lock``); a wait longer
    than ``CHUNK`` seconds (or forever) is sent as several shorter ones."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def try_set_count(self, count: int, ttl: Optional[float] = None) -> Steps[bool]:
        """Arms the latch with ``count`` (at least 1), ending after ``ttl``
        seconds if given. True when armed; False when the latch is armed
        already (nothing changes, its TTL included)."""
        words: Request = ("LATCH.SET", self.key, count)
        if ttl is not None:
            words += ("PX", ms(ttl))
        return bool((yield words) == 1)

    @recipe
    def count_down(self, n: int = 1) -> Steps[int]:
        """Lowers the count by ``n`` (at least 1), never below 0, and
        returns the count after it; at 0 the latch opens (every waiter
        returns). On an open latch: 0, nothing changes."""
        return int((yield ("LATCH.COUNTDOWN", self.key, n)))

    @recipe
    def count(self) -> Steps[int]:
        """The count (0 when the latch is open)."""
        return int((yield ("LATCH.COUNT", self.key)))

    @recipe
    def wait(self, timeout: Optional[float] = None) -> Steps[bool]:
        """True once the latch is open (at once when it is); False when
        ``timeout`` seconds ran out first (None: waits until it opens)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            # The last wait: the server's nil is the answer (its clock may
            # end a wait a few ms before this one would).
            last = left is not None and left <= CHUNK
            seconds = max(left, 0.001) if left is not None and last else CHUNK
            if (yield waiting(("LATCH.WAIT", self.key, ms(seconds)), seconds)) is not None:
                return True
            if last:
                return False
