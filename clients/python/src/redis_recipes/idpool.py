"""IDPOOL: cyclic ID pools with expiring leases."""

from typing import Any, Dict, Optional

from ._core import Recipe, Steps, as_dict, ms, recipe, waiting
from .errors import KeyExists


class IdPool(Recipe):
    """IDs ``1..max`` handed out in turn, each leased until released or its
    lease (seconds) ends; a full pool answers None, or, with a ``timeout``,
    the first ID freed within it (a wait in the server's
    first-come-first-served queue, sent once and read past its end like
    ``Lock``'s)."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def create(self, maximum: int, ttl: Optional[float] = None) -> Steps:
        """True when created, False when the key already exists."""
        words: tuple = ("IDPOOL.CREATE", self.key, maximum)
        if ttl is not None:
            words += ("TTL", ms(ttl))
        try:
            yield words
        except KeyExists:
            return False
        return True

    @recipe
    def acquire(self, ttl: Optional[float] = None, timeout: Optional[float] = None) -> Steps:
        """The next free ID, leased for ``ttl`` seconds (default: the pool's),
        or None when every ID is leased (after waiting up to ``timeout``
        seconds for one to be freed)."""
        words: tuple = ("IDPOOL.NEXT", self.key)
        if ttl is not None:
            words += ("TTL", ms(ttl))
        if timeout is not None:
            words += ("WAIT", ms(timeout))
        taken = yield waiting(words, timeout)
        return None if taken is None else int(taken)

    @recipe
    def release(self, id: int) -> Steps:
        return (yield ("IDPOOL.RELEASE", self.key, id)) == 1

    @recipe
    def renew(self, id: int, ttl: float) -> Steps:
        """Makes a live lease end ``ttl`` seconds from now."""
        return (yield ("IDPOOL.RENEW", self.key, id, ms(ttl))) == 1

    @recipe
    def resize(self, maximum: int) -> Steps:
        yield ("IDPOOL.RESIZE", self.key, maximum)
        return True

    @recipe
    def info(self) -> Steps:
        """``max``, ``leased``, ``next`` and ``default_ttl`` (ms or None)."""
        fields: Dict[str, Any] = as_dict((yield ("IDPOOL.INFO", self.key)))
        return {name: None if value is None else int(value) for name, value in fields.items()}
