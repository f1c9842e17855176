"""A pytest plugin (``-p redis_lock_glue``) for python-redis-lock's own
tests run against ``redis_recipes.drop_in.redis_lock``: after each test
that started a server (the suite's ``redis_server`` fixture, one server per
test on a Unix socket), it appends the server's calls per command
(``INFO commandstats``) as a JSON line to ``$REDIS_LOCK_SUITE_STATS``, so
test_drop_in_redis_lock_suite.py can check which commands ran. Every line
of the suite, its fixtures and its conftest runs as shipped."""

import json
import os
from typing import Any, Iterator

import pytest
import redis


@pytest.fixture(autouse=True)
def _commands_counted(request: Any) -> Iterator[None]:
    if "redis_server" not in request.fixturenames or "redis_socket" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("redis_server")  # so this ends before the server stops
    socket = request.getfixturevalue("redis_socket")
    yield
    with redis.Redis(unix_socket_path=socket) as client:
        stats = client.info("commandstats")
    calls = {name[len("cmdstat_"):]: value["calls"] for name, value in stats.items() if name.startswith("cmdstat_")}
    with open(os.environ["REDIS_LOCK_SUITE_STATS"], "a") as out:
        out.write(json.dumps(calls) + "\n")
