"""CACHE: the book's ``Cache``, ``JsonCache`` and ``HashCache``."""

import json
from typing import Any, Dict, Mapping, Optional

from ._core import Recipe, Request, Steps, as_dict, ms, recipe


class Cache(Recipe):
    """Text or bytes under a key, byte-exact (the built-in ``SET``/``GET``)."""

    @recipe
    def set(self, key: str, value: Any, ttl: Optional[float] = None) -> Steps[None]:
        """Stores ``value``; ``ttl`` in seconds (None: no TTL). None, as the
        book's."""
        words: Request = ("SET", key, value)
        if ttl is not None:
            words += ("PX", ms(ttl))
        yield words

    @recipe
    def get(self, key: str) -> Steps[Any]:
        """The value, as the client reads it, or None."""
        return (yield ("GET", key))

    @recipe
    def update(self, key: str, new_value: Any) -> Steps[Any]:
        """Replaces the value and returns the old one (None if there was none)."""
        return (yield ("SET", key, new_value, "GET", {"get": True}))


class JsonCache(Recipe):
    """Python values as JSON documents, checked by the server
    (``CACHE.SETJSON``: an invalid document raises ``InvalidJson``)."""

    @recipe
    def set(self, key: str, value: Any, ttl: Optional[float] = None) -> Steps[None]:
        """Stores ``value`` as JSON; ``ttl`` in seconds (None: no TTL). None,
        as the book's."""
        words: Request = ("CACHE.SETJSON", key, json.dumps(value))
        if ttl is not None:
            words += ("PX", ms(ttl))
        yield words

    @recipe
    def get(self, key: str, *fields: str) -> Steps[Any]:
        """The value, or None; with ``fields``, only those top-level fields."""
        words: Request = ("CACHE.GETJSON", key)
        if fields:
            words += ("FIELD",) + fields
        document = yield words
        return None if document is None else json.loads(document)


class HashCache(Recipe):
    """A hash, written together with its TTL (``CACHE.HSET``) when it has
    one."""

    @recipe
    def set(self, key: str, mapping: Mapping[str, Any], ttl: Optional[float] = None) -> Steps[None]:
        """Sets the fields and, with ``ttl`` (seconds), the key's TTL in the
        same step. None, as the book's."""
        words: Request = ("HSET", key) if ttl is None else ("CACHE.HSET", key, "PX", ms(ttl))
        for field, value in mapping.items():
            words += (field, value)
        yield words

    @recipe
    def get(self, key: str) -> Steps[Optional[Dict[str, Any]]]:
        """The fields, or None when the hash is gone (expired)."""
        fields: Dict[str, Any] = as_dict((yield ("HGETALL", key)))
        return fields or None
