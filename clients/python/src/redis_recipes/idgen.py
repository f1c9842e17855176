"""IDGEN: auto-increment ID generators (the book's ``IdGenerator``)."""

from typing import Any

from ._core import Recipe, Steps, recipe

MAX_ID = 2**63 - 1


def _floor(n: Any) -> int:
    """``n`` as an ID floor: a whole number from 0 to 2**63 - 1 (an int or
    its digits), else ValueError, so the counter stays one ``INCR`` reads."""
    try:
        floor = int(n) if isinstance(n, (int, str, bytes)) else -1
    except ValueError:
        floor = -1
    if not 0 <= floor <= MAX_ID:
        raise ValueError(f"an ID floor is a whole number from 0 to 2**63 - 1, not {n!r}")
    return floor


class IdGenerator(Recipe):
    """IDs from a counter key, as ``INCR`` makes them; the key stays a plain
    integer that other clients may read. ``produce`` and ``reserve`` are the
    book's; ``produce_many``, ``raise_floor`` and ``current`` are beyond it."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def produce(self) -> Steps[int]:
        """The next ID."""
        return int((yield ("IDGEN.NEXT", self.key)))

    @recipe
    def produce_many(self, count: int) -> Steps[range]:
        """``count`` consecutive IDs at once (a segment to hand out locally)."""
        first = int((yield ("IDGEN.NEXT", self.key, "COUNT", count)))
        return range(first, first + count)

    @recipe
    def reserve(self, n: int) -> Steps[bool]:
        """The book's: reserves IDs up to ``n`` before the generator is first
        used. True when reserved, False when the generator already has a value
        (IDs produced or reserved; nothing changes). ``raise_floor`` works at
        any time."""
        return (yield ("SET", self.key, _floor(n), "NX")) is not None

    @recipe
    def raise_floor(self, n: int) -> Steps[bool]:
        """Makes sure IDs up to ``n`` are never handed out, at any time: True
        when the generator was raised to ``n``, False when it was already
        there (it never lowers the generator)."""
        return bool((yield ("IDGEN.RESERVE", self.key, n)) == 1)

    @recipe
    def current(self) -> Steps[int]:
        """The last ID handed out or reserved (0 when never used)."""
        return int((yield ("IDGEN.CURRENT", self.key)))


class HashIdGenerator(Recipe):
    """Many generators in one hash, one field each (as ``HINCRBY`` makes them).
    ``produce`` and ``reserve`` are the book's."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def produce(self, name: str) -> Steps[int]:
        """The next ID of generator ``name``."""
        return int((yield ("IDGEN.NEXT", self.key, "FIELD", name)))

    @recipe
    def produce_many(self, name: str, count: int) -> Steps[range]:
        """``count`` consecutive IDs of generator ``name`` at once."""
        first = int((yield ("IDGEN.NEXT", self.key, "FIELD", name, "COUNT", count)))
        return range(first, first + count)

    @recipe
    def reserve(self, name: str, n: int) -> Steps[bool]:
        """The book's: True when IDs up to ``n`` are reserved for ``name``,
        False when that generator already has a value (nothing changes)."""
        return bool((yield ("HSETNX", self.key, name, _floor(n))) == 1)

    @recipe
    def raise_floor(self, name: str, n: int) -> Steps[bool]:
        """``IdGenerator.raise_floor`` for ``name``: at any time, never lowering."""
        return bool((yield ("IDGEN.RESERVE", self.key, n, "FIELD", name)) == 1)

    @recipe
    def current(self, name: str) -> Steps[int]:
        """The last ID of generator ``name`` handed out or reserved (0 when
        never used)."""
        return int((yield ("IDGEN.CURRENT", self.key, "FIELD", name)))
