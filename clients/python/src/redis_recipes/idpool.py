"""IDPOOL: cyclic ID pools with expiring leases."""

from typing import Any, Dict, Optional

from ._core import Recipe, Request, Steps, as_dict, ms, recipe, waiting
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
    def create(self, maximum: int, ttl: Optional[float] = None) -> Steps[bool]:
        """IDs ``1..maximum``, each lease ``ttl`` seconds by default (None:
        leases without an end unless ``acquire`` gives one). True when
        created, False when the key already exists."""
        words: Request = ("IDPOOL.CREATE", self.key, maximum)
        if ttl is not None:
            words += ("TTL", ms(ttl))
        try:
            yield words
        except KeyExists:
            return False
        return True

    @recipe
    def acquire(self, ttl: Optional[float] = None, timeout: Optional[float] = None) -> Steps[Optional[int]]:
        """The next free ID, leased for ``ttl`` seconds (default: the pool's),
        or None when every ID is leased. With ``timeout`` (seconds) a full
        pool is waited on (``IDPOOL.NEXT … WAIT``) in the server's
        first-come-first-served queue: the first ID freed within it, or
        None when none is."""
        words: Request = ("IDPOOL.NEXT", self.key)
        if ttl is not None:
            words += ("TTL", ms(ttl))
        if timeout is not None:
            words += ("WAIT", ms(timeout))
        taken = yield waiting(words, timeout)
        return None if taken is None else int(taken)

    @recipe
    def release(self, id: int) -> Steps[bool]:
        """True when ``id`` was leased and is now free."""
        return bool((yield ("IDPOOL.RELEASE", self.key, id)) == 1)

    @recipe
    def renew(self, id: int, ttl: float) -> Steps[bool]:
        """Makes a live lease end ``ttl`` seconds from now; False when ``id``
        is not leased."""
        return bool((yield ("IDPOOL.RENEW", self.key, id, ms(ttl))) == 1)

    @recipe
    def resize(self, maximum: int) -> Steps[bool]:
        """Makes the pool ``1..maximum``: True. A live lease above
        ``maximum`` raises ``CannotShrink``."""
        yield ("IDPOOL.RESIZE", self.key, maximum)
        return True

    @recipe
    def info(self) -> Steps[Dict[str, Optional[int]]]:
        """``max``, ``leased``, ``next`` and ``default_ttl`` (ms or None)."""
        fields: Dict[str, Any] = as_dict((yield ("IDPOOL.INFO", self.key)))
        return {name: None if value is None else int(value) for name, value in fields.items()}
