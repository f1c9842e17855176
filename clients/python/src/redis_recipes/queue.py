"""QUEUE: the book's first-in-first-out queues (chapter 27) on plain lists,
the bounded ones pushing with the module's ``QUEUE.RPUSH`` (one command:
only what is kept is written, and what falls out is returned)."""

from typing import Any, List, Tuple

from ._core import FOREVER, Recipe, Steps, recipe, waiting

NON_BLOCK = -1
"""``dequeue``'s default ``timeout``: do not wait (the book's constant)."""


class FifoQueue(Recipe):
    """A first-in-first-out queue on the list at ``key``: ``enqueue`` pushes
    at the tail, ``dequeue`` pops from the head. The key is a plain list,
    which ``LRANGE``, ``LLEN``, ``BLPOP`` and the book's own code read."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def enqueue(self, *items: Any) -> Steps[int]:
        """Pushes one or more items; returns the queue's length after."""
        return int((yield ("RPUSH", self.key, *items)))

    @recipe
    def dequeue(self, timeout: float = NON_BLOCK) -> Steps[Any]:
        """The oldest item, popped, or None when the queue is empty.
        ``timeout``: ``NON_BLOCK`` (the default) does not wait; 0 waits until
        an item comes; N > 0 waits at most N seconds (None when none came)."""
        if timeout == NON_BLOCK:
            return (yield ("LPOP", self.key))
        wait = FOREVER if timeout == 0 else timeout
        reply = yield waiting(("BLPOP", self.key, timeout), wait)
        return None if reply is None else reply[1]

    @recipe
    def length(self) -> Steps[int]:
        """How many items the queue holds."""
        return int((yield ("LLEN", self.key)))


class FixedLengthQueue(FifoQueue):
    """A ``FifoQueue`` of at most ``max_length`` items that refuses what
    does not fit: ``enqueue`` writes only the first items that fit and
    returns how many (the rest are thrown away, as the book's are)."""

    def __init__(self, client: Any, key: str, max_length: int) -> None:
        super().__init__(client, key)
        self.max_length = max_length

    @recipe
    def enqueue(self, *items: Any) -> Steps[int]:
        """Pushes the items that fit; returns how many were kept (0 when the
        queue is full)."""
        return int((yield ("QUEUE.RPUSH", self.key, self.max_length, "REFUSE", *items)))


class FadedQueue(FifoQueue):
    """A ``FifoQueue`` of at most ``max_length`` items whose oldest items
    fall out to make room: ``enqueue`` returns how many of the new items
    were kept, ``enqueue_evicting`` also which items fell out."""

    def __init__(self, client: Any, key: str, max_length: int) -> None:
        super().__init__(client, key)
        self.max_length = max_length

    @recipe
    def enqueue(self, *items: Any) -> Steps[int]:
        """Pushes the items, the oldest falling out beyond ``max_length``;
        returns how many of the new items were kept (all of them, or the
        last ``max_length`` when more are given)."""
        kept, _ = yield from FadedQueue.enqueue_evicting.steps(self, *items)
        return kept

    @recipe
    def enqueue_evicting(self, *items: Any) -> Steps[Tuple[int, List[Any]]]:
        """As ``enqueue``, and the items that fell out, oldest first: the
        queue's own, then any of the new ones beyond ``max_length``."""
        kept, evicted = yield ("QUEUE.RPUSH", self.key, self.max_length, "EVICT", *items)
        return int(kept), list(evicted)
