"""The book's classes, checked mechanically against the package: for every
class of the book's companion repository (GitHub
huangzworks/redis-usage-collection, ``code/``) that ``redis_recipes`` offers,
its public methods, each taking the book's arguments, in ``redis_recipes``
and ``redis_recipes.asyncio``. A missing method fails naming it; a class of
the book added to the package without its methods listed here fails too.

The lists are read from the book's code (the file is named for each class):
a method as its parameters after ``self``, ``=`` marking one with a default
(``*items``: any number, one sent here).
What the methods return is tested per module (``test_<module>.py``, the
tests named ``…_returns_what_the_book_returns``)."""

import inspect
from types import ModuleType
from typing import Any, Dict, List, Tuple

import pytest

import redis_recipes
import redis_recipes.asyncio

Methods = Dict[str, Tuple[str, ...]]

BOOK: Dict[str, Tuple[str, Methods]] = {
    "AutoComplete": ("code/auto_complete.py", {
        "__init__": ("client", "subject"),
        "feed": ("content", "weight="),
        "hint": ("segment", "num="),
        "set": ("content", "weight"),
        "feedex": ("content", "weight=", "ttl="),
    }),
    "AutoReleaseLock": ("code/auto_release_lock.py", {
        "__init__": ("client", "key"),
        "acquire": ("timeout", "unit="),
        "release": (),
    }),
    "Cache": ("code/cache.py", {
        "__init__": ("client",),
        "set": ("name", "content", "ttl="),
        "get": ("name",),
    }),
    "CircularQueue": ("code/circular_queue.py", {
        "__init__": ("client", "key"),
        "insert": ("*items",),
        "remove": ("item", "count="),
        "rotate": ("block_time=",),
        "front": (),
        "rear": (),
        "length": (),
    }),
    "FadedQueue": ("code/faded_queue.py", {
        "__init__": ("client", "key", "max_length"),
        "enqueue": ("*items",),
        "dequeue": ("timeout=",),
        "length": (),
    }),
    "FifoQueue": ("code/fifo_queue.py", {
        "__init__": ("client", "key"),
        "enqueue": ("*items",),
        "dequeue": ("timeout=",),
        "length": (),
    }),
    "FixedLengthQueue": ("code/fixed_length_queue.py", {
        "__init__": ("client", "key", "max_length"),
        "enqueue": ("*items",),
        "dequeue": ("timeout=",),
        "length": (),
    }),
    "HashCache": ("code/hash_cache.py", {
        "__init__": ("client",),
        "set": ("name", "content", "ttl="),
        "get": ("name",),
    }),
    "HashIdGenerator": ("code/hash_id_generator.py", {
        "__init__": ("client", "key"),
        "produce": ("name",),
        "reserve": ("name", "number"),
    }),
    "IdGenerator": ("code/id_generator.py", {
        "__init__": ("client", "name"),
        "produce": (),
        "reserve": ("n",),
    }),
    "IdentityLock": ("code/identity_lock.py", {
        "__init__": ("client", "key"),
        "acquire": ("password",),
        "release": ("password",),
    }),
    "Location": ("code/location.py", {
        "__init__": ("client", "key"),
        "pin": ("user", "long", "lati"),
        "locate": ("user",),
        "distance": ("user_x", "user_y"),
        "size": (),
        "search": ("user", "radius", "limit="),
        "random_neighbour": ("user", "limit="),
        "cached_random_neighbour": ("user", "limit="),
    }),
    "JsonCache": ("code/json_cache.py", {
        "__init__": ("client",),
        "set": ("name", "content", "ttl="),
        "get": ("name",),
    }),
    "Limiter": ("code/limiter.py", {
        "__init__": ("client", "key", "timeout", "maximum"),
        "is_valid": (),
        "remaining_time": (),
    }),
    "Lock": ("code/lock.py", {
        "__init__": ("client", "key"),
        "acquire": (),
        "release": (),
    }),
    "RateLimiter": ("code/rate_limiter.py", {
        "__init__": ("client", "action", "interval", "maximum"),
        "is_permitted": ("uid",),
        "remaining": ("uid",),
        "duration": ("uid",),
        "revoke": ("uid",),
    }),
    "ResourcePool": ("code/resource_pool.py", {
        "__init__": ("client", "pool_name"),
        "associate": ("resource",),
        "disassociate": ("resource",),
        "acquire": (),
        "release": ("resource",),
        "available_count": (),
        "occupied_count": (),
        "total_count": (),
        "is_available": ("resource",),
        "is_occupied": ("resource",),
        "has": ("resource",),
    }),
    "UniqueCircularQueue": ("code/unique_circular_queue.py", {  # and CircularQueue's rotate, front, rear, length
        "__init__": ("client", "key"),
        "insert": ("*items",),
        "remove": ("item",),
        "rotate": ("block_time=",),
        "front": (),
        "rear": (),
        "length": (),
    }),
    "UrlShorty": ("code/url_shorty.py", {
        "__init__": ("client",),
        "shorten": ("url",),
        "restore": ("short_id",),
    }),
}

# The book's other classes (code/*.py), which the package does not offer.
NOT_OFFERED = (
    "BinaryCache", "BinaryRecorder", "BitmapMatrix", "Chat", "CompactCounter",
    "CompactLogicalMatrix", "CompactString", "Counter", "DbIterator", "DbSampler",
    "FifoQueueR", "HashCounter", "HllUniqueCounter", "HllUniqueCounterMerger", "LifoQueue",
    "ListMatrix", "LogicalMatrix", "Lottery", "Matrix", "MessageQueue", "Pagging", "PriorityQueue",
    "Ranking", "Relation", "Session", "Stack", "StreamIterator", "Tag", "Timeline", "UniqueCounter",
    "UrlShortyWithCache", "Vote",
)

PACKAGES = [redis_recipes, redis_recipes.asyncio]


def gaps(package: ModuleType) -> List[str]:
    """What the package lacks of the book's classes: ``Class.method`` for a
    missing method, ``Class.method(params)`` for one that does not take
    the book's arguments (positionally: the required ones, then all)."""
    found: List[str] = []
    for name, (path, methods) in BOOK.items():
        ours = getattr(package, name, None)
        if ours is None or name not in package.__all__:
            found.append(f"{name} (the book's {path})")
            continue
        for method, params in methods.items():
            attribute = getattr(ours, method, None)
            if not callable(attribute):
                found.append(f"{name}.{method} (the book's {path})")
                continue
            signature = inspect.signature(attribute)
            required = [p for p in params if not p.endswith("=")]
            for given in (required, list(params)):
                try:
                    signature.bind(None, *given)  # None: self
                except TypeError as error:
                    found.append(f"{name}.{method}({', '.join(given)}): {error} (the book's {path})")
    return found


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.__name__)
def test_every_book_class_offered_has_the_books_methods(package: ModuleType) -> None:
    missing = gaps(package)
    assert not missing, f"{package.__name__} lacks what the book has: " + "; ".join(missing)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.__name__)
def test_a_book_class_added_to_the_package_is_listed_here(package: ModuleType) -> None:
    unlisted = [name for name in NOT_OFFERED if hasattr(package, name)]
    assert not unlisted, f"{package.__name__} offers {unlisted}: list their book methods in BOOK"


def test_the_check_fails_naming_what_is_missing() -> None:
    """The check itself: a package lacking a method, or taking fewer
    arguments, is named."""

    class Pool:
        def __init__(self, client: Any, pool_name: str) -> None: ...

        def associate(self) -> None: ...

    fake = ModuleType("fake")
    fake.ResourcePool = Pool  # type: ignore[attr-defined]
    fake.__all__ = ["ResourcePool"]  # type: ignore[attr-defined]
    found = gaps(fake)
    assert "IdGenerator (the book's code/id_generator.py)" in found
    assert "ResourcePool.has (the book's code/resource_pool.py)" in found
    assert any(gap.startswith("ResourcePool.associate(resource): ") for gap in found)
    assert not any(gap.startswith("ResourcePool.__init__") for gap in found)


def test_the_asyncio_methods_return_coroutines() -> None:
    """Every book method of an asyncio class, called with the book's
    arguments, returns a coroutine (closed here unawaited: nothing is sent)."""
    for name, (_, methods) in BOOK.items():
        cls = getattr(redis_recipes.asyncio, name)
        instance = cls.__new__(cls)
        for method, params in methods.items():
            if method == "__init__":
                continue
            call = getattr(instance, method)(*["x" for p in params if not p.endswith("=")])
            assert inspect.iscoroutine(call), f"{name}.{method} returns {call!r}"
            call.close()
