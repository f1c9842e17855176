"""The module's errors as exceptions.

Every error the server answers comes back as a subclass of redis-py's
``ResponseError``, so code that catches ``ResponseError`` keeps working; the
subclasses name what went wrong.
"""

from redis.exceptions import ResponseError

from ._catalogue import *  # noqa: F403 - the classes, generated from the module's spec
from ._catalogue import CODES, FAMILIES, LOAD_HINT, ModuleNotLoaded, RecipeError


class LockNotAcquired(Exception):
    """``with Lock(...)`` could not take the lock in time."""


class LockLost(Exception):
    """The lock's lease ended (or another client took it) while the block ran."""


class NoResourceFree(Exception):
    """``with pool.lease(...)`` got no resource of the pool in time."""


class LeaseLost(Exception):
    """A pool resource's lease ended (or it was removed) while the block ran."""


def translate(error: ResponseError) -> ResponseError:
    """The most specific exception for a server error: the class of its code
    (its first word; ``CODES``, generated from the module's catalogue of
    errors), ``ModuleNotLoaded`` for an unknown command of the module's
    (``FAMILIES``), else the error itself."""
    if isinstance(error, RecipeError):
        return error
    message = str(error)
    cls = CODES.get(message.split(" ", 1)[0])
    if cls is not None:
        return cls(message)
    lowered = message.lower()
    if lowered.startswith(("unknown command", "err unknown command")) and any(
        f"'{family}" in lowered for family in FAMILIES
    ):
        return ModuleNotLoaded(f"{LOAD_HINT} ({message})")
    return error
