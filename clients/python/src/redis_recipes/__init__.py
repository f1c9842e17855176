"""The classic Redis recipes as Python classes on the redis-recipes module's
native commands. Change ``from book import IdGenerator`` to
``from redis_recipes import IdGenerator``: same names, same methods, one
atomic command per call. ``redis_recipes.asyncio`` has the same classes for
``redis.asyncio`` clients."""

from .article import Article, SlugIndex
from .cache import Cache, HashCache, JsonCache
from .errors import (
    CannotShrink,
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
    NoResourceFree,
    PoolMissing,
    RecipeError,
    SlugTaken,
    WrongType,
)
from .idgen import HashIdGenerator, IdGenerator
from .idpool import IdPool
from .lock import AutoReleaseLock, IdentityLock, Lock
from .pool import Lease, ResourcePool
from .rate import Decision, RateLimiter

__version__ = "0.4.0"

__all__ = [
    "Article",
    "AutoReleaseLock",
    "Cache",
    "CannotShrink",
    "CostTooHigh",
    "Decision",
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
    "LimiterMismatch",
    "Lock",
    "LockLost",
    "LockNotAcquired",
    "ModuleNotLoaded",
    "NoResourceFree",
    "PoolMissing",
    "RateLimiter",
    "RecipeError",
    "ResourcePool",
    "SlugIndex",
    "SlugTaken",
    "WrongType",
]
