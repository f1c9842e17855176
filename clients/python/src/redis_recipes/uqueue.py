"""Circular queues (the book's chapter 30): ``CircularQueue`` on a plain
list, as the book's, and ``UniqueCircularQueue`` on the module's
``UQUEUE.*`` commands (one atomic command per call)."""

from typing import Any, List

from ._core import FOREVER, Recipe, Request, Steps, ms, recipe, waiting

NON_BLOCK = -1
"""``rotate``'s ``block_time`` for a rotation that does not wait (the
book's)."""


def _wait(block_time: float) -> float:
    """The book's ``block_time`` (seconds, 0: forever) as a wait in
    seconds."""
    return FOREVER if block_time == 0 else block_time


class CircularQueue(Recipe):
    """The book's circular queue at ``key``, a plain list: ``insert`` pushes
    to the tail, ``rotate`` moves the head to the tail and returns it
    (``LMOVE key key``; ``BLMOVE`` with a ``block_time``). Items may repeat.
    Replies are the client's (text with ``decode_responses=True``)."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def insert(self, *items: Any) -> Steps[int]:
        """Pushes ``items`` to the tail (``RPUSH``); the queue's length."""
        return int((yield ("RPUSH", self.key, *items)))

    @recipe
    def remove(self, item: Any, count: int = 0) -> Steps[int]:
        """Removes ``item`` (``LREM``: every one with ``count`` 0, the first
        ``count`` from the head, or the last ``-count`` from the tail); how
        many went."""
        return int((yield ("LREM", self.key, count, item)))

    @recipe
    def rotate(self, block_time: float = NON_BLOCK) -> Steps[Any]:
        """Moves the head to the tail and returns it; None when the queue is
        empty. With ``block_time`` (seconds; 0: forever), waits up to that
        long for an item (``BLMOVE``), None if none came."""
        if block_time == NON_BLOCK:
            return (yield ("LMOVE", self.key, self.key, "LEFT", "RIGHT"))
        words: Request = ("BLMOVE", self.key, self.key, "LEFT", "RIGHT", block_time)
        return (yield waiting(words, _wait(block_time)))

    @recipe
    def front(self) -> Steps[Any]:
        """The head, None when the queue is empty."""
        return (yield ("LINDEX", self.key, 0))

    @recipe
    def rear(self) -> Steps[Any]:
        """The tail, None when the queue is empty."""
        return (yield ("LINDEX", self.key, -1))

    @recipe
    def length(self) -> Steps[int]:
        """How many items the queue holds."""
        return int((yield ("LLEN", self.key)))


class UniqueCircularQueue(Recipe):
    """The book's unique circular queue at ``key``, on ``UQUEUE.*`` (data
    type ``rr-uqueue``): no item twice; inserting a queued item moves it to
    the tail. Each method is one command, O(1) but ``items``; the book's
    sends ``LREM`` per item (O(N) each) in a transaction. A queue left
    without items is deleted; a missing key is an empty queue. A rotation
    that waits waits first come first served, sent once (see
    ``redis_recipes._core``). Replies are the client's (text with
    ``decode_responses=True``)."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def insert(self, *items: Any) -> Steps[int]:
        """Puts ``items`` at the tail in order, a queued one moved there;
        the queue's length. ``ValueError`` (nothing sent) when an item is
        given twice, as the book's."""
        if len(items) != len(set(items)):
            raise ValueError("Input items must be unique!")
        return int((yield ("UQUEUE.INSERT", self.key, *items)))

    @recipe
    def remove(self, item: Any) -> Steps[int]:
        """Removes ``item``: 1, or 0 when it was not queued."""
        return int((yield ("UQUEUE.REMOVE", self.key, item)))

    @recipe
    def rotate(self, block_time: float = NON_BLOCK) -> Steps[Any]:
        """Moves the head to the tail and returns it; None when the queue is
        empty. With ``block_time`` (seconds; 0: forever), waits up to that
        long for an item, None if none came."""
        if block_time == NON_BLOCK:
            return (yield ("UQUEUE.ROTATE", self.key))
        wait = _wait(block_time)
        return (yield waiting(("UQUEUE.ROTATE", self.key, "WAIT", ms(wait)), wait))

    @recipe
    def front(self) -> Steps[Any]:
        """The head, None when the queue is empty."""
        return (yield ("UQUEUE.FRONT", self.key))

    @recipe
    def rear(self) -> Steps[Any]:
        """The tail, None when the queue is empty."""
        return (yield ("UQUEUE.REAR", self.key))

    @recipe
    def length(self) -> Steps[int]:
        """How many items the queue holds."""
        return int((yield ("UQUEUE.LEN", self.key)))

    @recipe
    def items(self) -> Steps[List[Any]]:
        """Every item, head first (O(N); not the book's)."""
        return list((yield ("UQUEUE.ITEMS", self.key)) or [])
