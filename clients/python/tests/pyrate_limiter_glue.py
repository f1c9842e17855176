"""A pytest plugin (``-p pyrate_limiter_glue``) that runs pyrate-limiter's
own Redis tests against ``redis_recipes.drop_in.pyrate_limiter.RedisBucket``.

Loaded before pyrate-limiter's conftest and test modules are imported, it
puts the drop-in where they take the library's bucket from
(``pyrate_limiter.RedisBucket``, and ``pyrate_limiter.buckets``'), which is
the application's one-line change, and points every Redis client the tests
make at the server under test, ``REDIS`` in the environment (set by the
runner, ``test_drop_in_pyrate_limiter_suite.py``): their conftest reads it,
and the few cases that build ``Redis.from_url("redis://localhost:6379")``
themselves are sent there by this plugin. Both are done as the plugin is
imported, before pytest imports the tests' conftest."""

import os
from typing import Any

import pyrate_limiter
import pyrate_limiter.buckets
import redis
import redis.asyncio

from redis_recipes.drop_in.pyrate_limiter import RedisBucket

LOCAL = "redis://localhost:6379"


URL = os.environ["REDIS"]
pyrate_limiter.RedisBucket = RedisBucket  # type: ignore[misc]
pyrate_limiter.buckets.RedisBucket = RedisBucket  # type: ignore[misc]


def pointed(method: Any) -> Any:
    """``from_url`` that reads ``LOCAL`` as ``URL``."""

    def from_url(cls: Any, given: str, *args: Any, **kwargs: Any) -> Any:
        if given.startswith(LOCAL):
            given = URL + given[len(LOCAL) :]
        return method.__func__(cls, given, *args, **kwargs)

    return classmethod(from_url)


for owner in (redis.Redis, redis.ConnectionPool, redis.asyncio.Redis, redis.asyncio.ConnectionPool):
    owner.from_url = pointed(owner.__dict__["from_url"])
