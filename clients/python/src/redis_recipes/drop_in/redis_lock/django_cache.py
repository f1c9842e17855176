"""python-redis-lock's Django cache backend (``redis_lock.django_cache``)
on the drop-in's ``Lock``: ``'BACKEND':
'redis_recipes.drop_in.redis_lock.django_cache.RedisCache'`` for
``'redis_lock.django_cache.RedisCache'``. A django-redis cache with
``lock``, ``locked_get_or_set`` and ``reset_all``, as the library's. Needs
Django and django-redis."""

from typing import Any, Callable, Optional

from django.core.cache.backends.base import DEFAULT_TIMEOUT  # type: ignore[import-untyped]
from django_redis.cache import RedisCache as PlainRedisCache  # type: ignore[import-untyped]

from . import Lock, reset_all


class RedisCache(PlainRedisCache):  # type: ignore[misc]
    """django-redis's ``RedisCache`` with the library's lock methods."""

    def _raw_client(self) -> Any:
        """The redis-py client under the cache (django-redis's
        ``DefaultClient`` has one)."""
        try:
            return self.client.get_client()
        except Exception as exc:
            raise NotImplementedError(
                f"RedisCache doesn't have a raw client: {exc}. "
                "Use 'redis_cache.client.DefaultClient' as the CLIENT_CLASS !"
            ) from exc

    def lock(self, key: str, expire: Any = None, id: Any = None, auto_renewal: bool = False) -> Lock:
        """A ``Lock`` named ``key`` on the cache's client."""
        return Lock(self._raw_client(), key, expire=expire, id=id, auto_renewal=auto_renewal)

    def locked_get_or_set(self, key: str, value_creator: Callable[[], Any], version: Optional[int] = None,
                          expire: Any = None, id: Any = None, lock_key: Optional[str] = None,
                          timeout: Any = DEFAULT_TIMEOUT) -> Any:
        """The cached value of ``key``; when missing, ``value_creator()``
        made and stored while holding the lock ``lock_key`` (by default
        ``get_or_set:<key>``), unless another process stored it meanwhile.
        ``ValueError`` when it makes None."""
        if lock_key is None:
            lock_key = "get_or_set:" + key
        value = self.get(key, version=version)
        if value is not None:
            return value
        with self.lock(lock_key, expire=expire, id=id):
            value = self.get(key, version=version)
            if value is None:
                value = value_creator()
                if value is None:
                    raise ValueError("`value_creator` must return a value")
                self.set(key, value, timeout=timeout, version=version)
            return value

    def reset_all(self) -> None:
        """Deletes every lock (see ``redis_lock.reset_all``)."""
        reset_all(self._raw_client())
