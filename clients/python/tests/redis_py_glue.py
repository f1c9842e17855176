"""A pytest plugin (``-p redis_py_glue``) that points redis-py's own lock
tests at the drop-ins: in ``tests/test_lock.py`` and
``tests/test_asyncio/test_lock.py`` of redis-py's source distribution, the
class ``TestLock`` is collected as a subclass whose ``get_lock`` passes
``lock_class=redis_recipes.drop_in.Lock`` (``AsyncLock`` for asyncio)
instead of redis-py's own ``Lock``. Every other line of those tests, their
fixtures and their conftest files run as redis-py ships them.

``test_drop_in_lock_redis_py_suite.py`` runs that suite in a subprocess
with this directory on ``PYTHONPATH``."""

from typing import Any

import pytest

from redis_recipes.drop_in import AsyncLock, Lock

# redis-py's test modules (imported as the package ``tests``) and the
# drop-in each one's TestLock gets.
DROP_INS = {"tests.test_lock": Lock, "tests.test_asyncio.test_lock": AsyncLock}


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: Any) -> None:
    if name != "TestLock" or not isinstance(collector, pytest.Module):
        return
    drop_in = DROP_INS.get(collector.obj.__name__)
    if drop_in is None or getattr(obj, "get_lock", None) is None:
        return

    def get_lock(self: Any, redis: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["lock_class"] = drop_in
        lock = redis.lock(*args, **kwargs)
        assert type(lock) is drop_in
        return lock

    # The module's TestLock becomes the subclass; pytest's own hook then
    # collects it (a class node looks its class up in the module).
    setattr(collector.obj, name, type(name, (obj,), {"get_lock": get_lock, "__module__": obj.__module__}))
    return None
