"""A pytest plugin (``-p limits_glue``) that points the ``limits`` package's
own storage and strategy tests at the ``recipes://`` storages.

``limits`` parametrizes its tests over storages as ``(uri, args, fixture)``
(``TestConcreteStorages`` adds ``expected_instance``), with fixtures that
start docker services. After collection this plugin keeps the cases of the
Redis storage (``redis://localhost:7379``, ``redis+unix:///tmp/…`` and their
``async+`` forms, sync and asyncio) and points each at the server under test:

- ``uri``: ``recipes://127.0.0.1:<port>`` (``recipes+unix://<socket>``,
  ``async+recipes://…``), so ``storage_from_string(uri)`` builds our storage;
- ``args``: without ``implementation`` (``coredis`` there; ours runs on
  ``redis.asyncio``);
- ``expected_instance``: ``RecipesStorage`` / ``AsyncRecipesStorage``;
- ``fixture``: ``recipes_redis``, a client of that server's database, flushed
  (what ``redis_basic`` and ``redis_uds`` give the tests).

The case ids keep their names (``[redis_basic]``, ``[redis]``,
``[redis-uds]``). Every other case (other storages, and tests that use no
storage) is deselected. ``--recipes-port``, ``--recipes-socket`` and
``--recipes-db`` name the server and the database (two runs share a server
on two databases); ``test_drop_in_limits_suite.py`` starts it and runs
this."""

from typing import Any, Dict, Iterator, List

import pytest
import redis
from pytest_lazy_fixtures import lf

import redis_recipes.drop_in  # noqa: F401  (registers the schemes)
from redis_recipes.drop_in.limits import AsyncRecipesStorage, RecipesStorage

# limits' scheme → ours, for a TCP address and for a Unix socket.
TCP = {"redis": "recipes", "async+redis": "async+recipes"}
UNIX = {"redis+unix": "recipes+unix", "async+redis+unix": "async+recipes+unix"}


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("recipes", "limits' tests on the recipes:// storages")
    group.addoption("--recipes-port", type=int, required=True, help="the server's port on 127.0.0.1")
    group.addoption("--recipes-socket", required=True, help="the server's Unix socket")
    group.addoption("--recipes-db", type=int, default=0, help="the database the tests use")


@pytest.fixture
def recipes_redis(request: Any) -> Iterator[redis.Redis]:
    config = request.config
    client = redis.Redis("127.0.0.1", config.getoption("recipes_port"), db=config.getoption("recipes_db"))
    client.flushdb()
    yield client
    client.close()


def ours(uri: str, config: Any) -> str:
    """Our uri for one of limits' Redis uris ("" for any other uri)."""
    scheme = uri.partition("://")[0]
    db = config.getoption("recipes_db")
    if scheme in TCP:
        return f"{TCP[scheme]}://127.0.0.1:{config.getoption('recipes_port')}/{db}"
    if scheme in UNIX:
        return f"{UNIX[scheme]}://{config.getoption('recipes_socket')}?db={db}"
    return ""


def pytest_collection_modifyitems(config: Any, items: List[Any]) -> None:
    import limits.aio.storage
    import limits.storage

    classes = {limits.storage.RedisStorage: RecipesStorage, limits.aio.storage.RedisStorage: AsyncRecipesStorage}
    kept, dropped = [], []
    for item in items:
        params: Dict[str, Any] = getattr(getattr(item, "callspec", None), "params", {})
        uri = params.get("uri")
        new = ours(uri, config) if isinstance(uri, str) else ""
        if not new:
            dropped.append(item)
            continue
        params["uri"] = new
        params["args"] = {name: value for name, value in params.get("args", {}).items() if name != "implementation"}
        if "expected_instance" in params:
            params["expected_instance"] = classes[params["expected_instance"]]
        if "fixture" in params:
            params["fixture"] = lf("recipes_redis")
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
