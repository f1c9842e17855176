"""IDGEN: auto-increment ID generators (the book's ``IdGenerator``) and
the book's short-URL generator (``UrlShorty``)."""

from typing import Any, Optional

from ._core import Recipe, Steps, recipe, text

MAX_ID = 2**63 - 1
BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""The digits of a short ID, 0 to 61."""
_DIGIT = {digit: value for value, digit in enumerate(BASE62)}


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


def to_base62(n: int) -> str:
    """``n`` (0 or more) in base 62, digits ``BASE62``, without leading zeros."""
    if n < 0:
        raise ValueError(f"a base-62 number is 0 or more, not {n!r}")
    digits = []
    while True:
        n, digit = divmod(n, 62)
        digits.append(BASE62[digit])
        if n == 0:
            return "".join(reversed(digits))


def from_base62(short: str) -> Optional[int]:
    """The number ``to_base62`` wrote as ``short``, or None for any other
    text (empty, another character, a leading zero, past 2**63 - 1)."""
    if not short or (short[0] == "0" and len(short) > 1) or len(short) > 11:
        return None
    n = 0
    for char in short:
        digit = _DIGIT.get(char)
        if digit is None:
            return None
        n = n * 62 + digit
    return n if n <= MAX_ID else None


class UrlShorty(Recipe):
    """The book's short-URL generator: ``shorten(url)`` gives a short ID,
    and ``restore(short_id)`` the URL back. A URL is given its ID once, so
    the same URL always gets the same short ID (one atomic
    ``IDGEN.ASSIGN``): the ID of an ``IdGenerator`` counter in base 62
    (``0-9a-zA-Z``). A URL the URL-to-ID hash holds without an entry in
    the ID-to-URL hash (put there by other means) gets one when shortened,
    so ``restore`` finds every short ID ``shorten`` gave.

    The counter, the URL-to-ID hash and the ID-to-URL hash are the keys
    ``{key}:counter``, ``{key}:ids`` and ``{key}:urls`` (``counter``,
    ``ids`` and ``urls`` here): one hash tag, so one slot in a cluster."""

    def __init__(self, client: Any, key: str = "UrlShorty") -> None:
        super().__init__(client)
        if not key:
            raise ValueError("UrlShorty needs a non-empty key")
        self.key = key
        self.counter = f"{{{key}}}:counter"
        self.ids = f"{{{key}}}:ids"
        self.urls = f"{{{key}}}:urls"

    @recipe
    def shorten(self, url: str) -> Steps[str]:
        """``url``'s short ID (the same every time for the same URL)."""
        return to_base62(int((yield ("IDGEN.ASSIGN", self.counter, self.ids, url, "REVERSE", self.urls))))

    @recipe
    def restore(self, short_id: str) -> Steps[Optional[str]]:
        """The URL ``short_id`` stands for, or None (an unknown or invalid
        short ID)."""
        n = from_base62(short_id)
        if n is None:
            return None
        return text((yield ("HGET", self.urls, n)))
