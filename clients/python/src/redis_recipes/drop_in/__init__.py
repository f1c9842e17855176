"""Drop-ins for the libraries applications already use, on the module's
commands: ``Lock`` and ``AsyncLock`` for redis-py (``r.lock(name, …,
lock_class=Lock)``), the module ``redis_lock`` for python-redis-lock
(``from redis_recipes.drop_in import redis_lock``), and the ``recipes://`` and ``async+recipes://`` storages
for ``limits`` (Flask-Limiter, SlowAPI), registered on import when ``limits``
is installed."""

from .lock import AsyncLock, Lock

try:
    from . import limits as _limits  # noqa: F401  (registers the storages)
except ImportError:  # limits is not installed: the lock drop-ins still work
    pass

__all__ = ["AsyncLock", "Lock"]
