"""The classic Redis recipes as Python classes on the redis-recipes module's
native commands. Change ``from book import IdGenerator`` to
``from redis_recipes import IdGenerator``: same names, same methods, one
atomic command per call. ``redis_recipes.asyncio`` has the same classes for
``redis.asyncio`` clients."""

from .article import Article, SlugIndex
from .autocomplete import AutoComplete
from .cache import Cache, HashCache, JsonCache
from .errors import (
    CannotShrink,
    CannotUpgrade,
    CostTooHigh,
    GeneratorExhausted,
    InvalidJson,
    InvalidSlug,
    KeyExists,
    LeaseLost,
    LimiterMismatch,
    LockLost,
    LockNotAcquired,
    ModuleNotLoaded,
    NoPosition,
    NoResourceFree,
    PoolMissing,
    RecipeError,
    SlugTaken,
    WrongType,
)
from .idgen import HashIdGenerator, IdGenerator, UrlShorty
from .idpool import IdPool
from .latch import CountDownLatch
from .lock import AutoReleaseLock, IdentityLock, Lock
from .nearby import Location
from .pool import Lease, ResourcePool
from .queue import FadedQueue, FifoQueue, FixedLengthQueue
from .rate import Decision, Limiter, RateLimiter
from .rwlock import ReadWriteLock, RwLockHandle, RwLockInfo
from .uqueue import CircularQueue, UniqueCircularQueue

__version__ = "0.7.0"

__all__ = [
    "Article",
    "AutoComplete",
    "AutoReleaseLock",
    "Cache",
    "CannotShrink",
    "CannotUpgrade",
    "CircularQueue",
    "CostTooHigh",
    "CountDownLatch",
    "Decision",
    "FadedQueue",
    "FifoQueue",
    "FixedLengthQueue",
    "GeneratorExhausted",
    "HashCache",
    "HashIdGenerator",
    "IdGenerator",
    "IdPool",
    "IdentityLock",
    "InvalidJson",
    "InvalidSlug",
    "JsonCache",
    "KeyExists",
    "Lease",
    "LeaseLost",
    "Limiter",
    "LimiterMismatch",
    "Location",
    "Lock",
    "LockLost",
    "LockNotAcquired",
    "ModuleNotLoaded",
    "NoPosition",
    "NoResourceFree",
    "PoolMissing",
    "RateLimiter",
    "ReadWriteLock",
    "RecipeError",
    "ResourcePool",
    "RwLockHandle",
    "RwLockInfo",
    "SlugIndex",
    "SlugTaken",
    "UniqueCircularQueue",
    "UrlShorty",
    "WrongType",
]
