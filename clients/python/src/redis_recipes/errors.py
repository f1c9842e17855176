"""The module's errors as exceptions.

Every error the server answers comes back as a subclass of redis-py's
``ResponseError``, so code that catches ``ResponseError`` keeps working; the
subclasses name what went wrong.
"""

from typing import NamedTuple, Tuple, Type

from redis.exceptions import ResponseError


class RecipeError(ResponseError):
    """An error answered by one of the module's commands."""


class ModuleNotLoaded(RecipeError):
    """The server has no ``recipes`` module: the command is unknown to it."""


class SlugTaken(RecipeError):
    """The slug belongs to another article."""


class InvalidSlug(RecipeError):
    """A slug must be 1 to 200 Unicode letters, digits, '-' or '_'."""


class KeyExists(RecipeError):
    """The key already exists (``BUSYKEY``)."""


class PoolMissing(RecipeError):
    """There is no ID pool at the key."""


class CannotShrink(RecipeError):
    """An ID pool cannot shrink below a live lease."""


class GeneratorExhausted(RecipeError):
    """Taking more IDs would pass 2**63 - 1."""


class InvalidJson(RecipeError):
    """The value is not one valid JSON document."""


class LimiterMismatch(RecipeError):
    """The key holds another kind of limiter, or another number of limits."""


class CostTooHigh(RecipeError):
    """An action that can never fit its limit (cost above the burst or max)."""


class WrongType(RecipeError):
    """The key holds a value of another type."""


class CannotUpgrade(RecipeError):
    """A token holding a read lock asked for the write lock: it must release
    the read lock first (two readers upgrading at once would deadlock)."""


class LockNotAcquired(Exception):
    """``with Lock(...)`` could not take the lock in time."""


class LockLost(Exception):
    """The lock's lease ended (or another client took it) while the block ran."""


class NoResourceFree(Exception):
    """``with pool.lease(...)`` got no resource of the pool in time."""


class LeaseLost(Exception):
    """A pool resource's lease ended (or it was removed) while the block ran."""


class Kind(NamedTuple):
    """Errors of one exception class: a message (after an optional "ERR ")
    that starts with ``start`` and, when ``containing`` is given, contains
    it too."""

    start: str
    cls: Type[RecipeError]
    containing: str = ""


KINDS: Tuple[Kind, ...] = (
    Kind("SLUGTAKEN ", SlugTaken),
    Kind("BUSYKEY ", KeyExists),
    Kind("WRONGTYPE ", WrongType),
    Kind("NOPOOL ", PoolMissing),
    Kind("EXHAUSTED ", GeneratorExhausted),
    Kind("MISMATCH ", LimiterMismatch),
    Kind("NOUPGRADE ", CannotUpgrade),
    Kind("cannot shrink the pool", CannotShrink),
    Kind("invalid JSON", InvalidJson),
    Kind("invalid slug", InvalidSlug),
    Kind("cost ", CostTooHigh, containing="such an action can never be allowed"),
)
"""The server's errors that have an exception class of their own, in the
order they are tried: by their code (the reply's first word) where the
module gives them one, else by the start of their text after ``ERR``. It
follows the module's catalogue of errors (``docs/src/errors.md`` in the
repository, generated from the module's source: its "Python" column); the
package's tests check that every error listed there with a class other than
``ResponseError`` is matched here, and no other. A server without the
module answers ``unknown command`` for the module's commands
(``_FAMILIES``), which ``translate`` turns into ``ModuleNotLoaded``."""

_FAMILIES = (
    "autocomplete.", "idgen.", "lock.", "rwlock.", "latch.", "article.", "cache.", "idpool.", "rate.", "pool.",
    "queue.",
    "uqueue.",
)

_LOAD_HINT = (
    "the server has no 'recipes' module, or one older than this command (MODULE LIST shows "
    "its version; each command's release is in its COMMAND DOCS 'since'): load this release "
    "with 'loadmodule /path/to/librecipes.so' in redis.conf, or MODULE LOAD /path/to/librecipes.so"
)


def translate(error: ResponseError) -> ResponseError:
    """The most specific exception for a server error (see ``KINDS``; the
    error itself if none fits)."""
    if isinstance(error, RecipeError):
        return error
    message = str(error)
    text = message[4:] if message.startswith("ERR ") else message
    lowered = text.lower()
    if lowered.startswith("unknown command") and any(
        f"'{family}" in lowered for family in _FAMILIES
    ):
        return ModuleNotLoaded(f"{_LOAD_HINT} ({message})")
    for kind in KINDS:
        if text.startswith(kind.start) and kind.containing in text:
            return kind.cls(message)
    return error
