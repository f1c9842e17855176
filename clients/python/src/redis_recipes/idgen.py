"""IDGEN: auto-increment ID generators (the book's ``IdGenerator``)."""

from typing import Any

from ._core import Recipe, Steps, recipe


class IdGenerator(Recipe):
    """IDs from a counter key, as ``INCR`` makes them; the key stays a plain
    integer that other clients may read."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def produce(self) -> Steps:
        """The next ID."""
        return int((yield ("IDGEN.NEXT", self.key)))

    @recipe
    def produce_many(self, count: int) -> Steps:
        """``count`` consecutive IDs at once (a segment to hand out locally)."""
        first = int((yield ("IDGEN.NEXT", self.key, "COUNT", count)))
        return range(first, first + count)

    @recipe
    def reserve(self, n: int) -> Steps:
        """Makes sure IDs up to ``n`` are never handed out. True when the
        generator was raised to ``n``, False when it was already there (safe at
        any time: it never lowers the generator)."""
        return (yield ("IDGEN.RESERVE", self.key, n)) == 1

    @recipe
    def current(self) -> Steps:
        """The last ID handed out or reserved (0 when never used)."""
        return int((yield ("IDGEN.CURRENT", self.key)))


class HashIdGenerator(Recipe):
    """Many generators in one hash, one field each (as ``HINCRBY`` makes them)."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def produce(self, name: str) -> Steps:
        return int((yield ("IDGEN.NEXT", self.key, "FIELD", name)))

    @recipe
    def produce_many(self, name: str, count: int) -> Steps:
        first = int((yield ("IDGEN.NEXT", self.key, "FIELD", name, "COUNT", count)))
        return range(first, first + count)

    @recipe
    def reserve(self, name: str, n: int) -> Steps:
        return (yield ("IDGEN.RESERVE", self.key, n, "FIELD", name)) == 1

    @recipe
    def current(self, name: str) -> Steps:
        return int((yield ("IDGEN.CURRENT", self.key, "FIELD", name)))
