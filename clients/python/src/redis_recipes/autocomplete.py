"""AUTOCOMPLETE: search-box suggestions (the book's chapter 16) on one key
per subject, on the module's native commands."""

from typing import Any, List, Optional, Union

from ._core import Recipe, Request, Steps, ms, recipe

DEFAULT_WEIGHT = 1.0
DEFAULT_NUM = 10
DEFAULT_TTL = 300

ALL = 2147483647
"""The largest ``COUNT`` of ``AUTOCOMPLETE.HINT``: every entry."""

Content = Union[str, bytes]


def _weight(weight: float) -> str:
    """A weight as the server parses it back exactly."""
    return repr(float(weight))


class AutoComplete(Recipe):
    """Suggestions for a search box on ``subject``: ``feed(content)`` counts
    what users typed, ``hint(segment)`` gives the heaviest entries starting
    with ``segment`` (characters, so Chinese works), weight descending.

    The book's class keeps one sorted set per prefix
    (``AutoComplete:<subject>:<prefix>``); this one keeps every entry once in
    one key, ``AutoComplete:<subject>`` (or ``key``), so a feed is one
    command on one key (cluster-safe) whatever the length of the content.
    ``feedex`` gives the entry a lifetime: it fades (disappears from every
    prefix) ``ttl`` seconds after it was last fed with one, instead of the
    book's whole prefix tables expiring."""

    def __init__(self, client: Any, subject: str, key: Optional[str] = None) -> None:
        super().__init__(client)
        self.subject = subject
        self.key = key if key is not None else f"AutoComplete:{subject}"

    @recipe
    def feed(self, content: Content, weight: float = DEFAULT_WEIGHT) -> Steps[None]:
        """Adds ``weight`` to ``content``'s weight (creating it). Returns
        None, as the book's."""
        yield ("AUTOCOMPLETE.FEED", self.key, content, _weight(weight))

    @recipe
    def hint(self, segment: Content, num: int = DEFAULT_NUM) -> Steps[List[Any]]:
        """The ``num`` heaviest entries starting with ``segment``, heaviest
        first (equal weights: content descending), as the book's
        ``ZRANGE … 0 num-1 REV`` gives them: ``num`` 0 or below counts from
        the end (0: all of them), and an empty segment has no table."""
        if segment in ("", b""):
            return []
        count = num if num > 0 else ALL
        found: List[Any] = list((yield ("AUTOCOMPLETE.HINT", self.key, segment, "COUNT", count)))
        if num <= 0:
            # ZRANGE 0 num-1: the last -num entries left out.
            found = found[: max(len(found) + num, 0)]
        return found

    @recipe
    def set(self, content: Content, weight: float) -> Steps[None]:
        """Gives ``content`` exactly ``weight``. Returns None, as the book's."""
        yield ("AUTOCOMPLETE.SET", self.key, content, _weight(weight))

    @recipe
    def feedex(self, content: Content, weight: float = DEFAULT_WEIGHT, ttl: float = DEFAULT_TTL) -> Steps[None]:
        """``feed``, and the entry fades ``ttl`` seconds from now unless fed
        again with a lifetime. Returns None, as the book's."""
        words: Request = ("AUTOCOMPLETE.FEED", self.key, content, _weight(weight), "PX", ms(ttl))
        yield words

    # Beyond the book.

    @recipe
    def weight(self, content: Content) -> Steps[Optional[float]]:
        """``content``'s weight, or None when it has none (or faded)."""
        reply = yield ("AUTOCOMPLETE.WEIGHT", self.key, content)
        return None if reply is None else float(reply)

    @recipe
    def remove(self, *contents: Content) -> Steps[int]:
        """Removes the entries; returns how many there were."""
        if not contents:
            return 0
        return int((yield ("AUTOCOMPLETE.REMOVE", self.key, *contents)))

    @recipe
    def count(self) -> Steps[int]:
        """The number of entries (faded ones not counted)."""
        return int((yield ("AUTOCOMPLETE.CARD", self.key)))
