"""pyrate-limiter's own Redis tests, run against
``redis_recipes.drop_in.pyrate_limiter.RedisBucket`` on every server, and on
plain Redis 7.0 without the module (where the bucket is the library's own).

The source distribution of the installed pyrate-limiter is fetched with pip;
its ``tests/`` and ``pyproject.toml`` (its pytest settings) go to a
temporary directory, and nothing of it is kept in this repository. Its cases
marked ``redis`` and ``asyncredis`` (``RedisBucket`` sync and asyncio, built
by its conftest and its demo ``BucketFactory``, under its ``Limiter``; the
``FixedWindow`` and ``RedisStateStore`` cases ride along) run in a pytest
subprocess per server, with the plugin ``pyrate_limiter_glue`` (beside this
file), which puts the drop-in where the tests import the library's bucket
from and points their clients at the server. The runs on the module go at
once; the one without it after them (all four at once, the library's own
timing checks in ``test_limiter.py::test_limiter_async_factory_get`` failed
without the module).

After a run on the module the server's ``INFO commandstats`` must show
``RATE.LIMIT`` and ``RATE.PEEK``; without it, the library's script and
sorted sets."""

import os
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest
from conftest import FLAVORS, Server, binary
from peer_suite import WITHOUT_MODULE, PytestRun, command_calls, fetch_tests, has_module, passed, servers_found

pyrate_limiter = pytest.importorskip(
    "pyrate_limiter", reason="pyrate-limiter is not installed (pip install './clients/python[test]', Python 3.10+)"
)

FILES = [
    "tests/test_bucket_all.py",
    "tests/test_redis_bucket.py",
    "tests/test_limiter.py",
    "tests/test_fixed_window.py",
    "tests/test_gcra.py",
    "tests/test_multi_bucket.py",
    "tests/test_closing.py",
]

# Cases left out on the module, each with the reason: what they assert is the
# sorted set's, which RATE's window does not keep. None is left out without it.
LOG_GROWS = (
    "puts until count() reaches 150 (200 for the leak case), which only a log that keeps every unit until leak() "
    "removes it reaches: RATE's window drops the units no rate sees as it records (count() stays at most the "
    "longest rate's limit), so the loop would never end"
)
NAMES = "peek(i).name holds the item's name: RATE's window keeps times, not names (the drop-in names the bucket)"
OWN_TIMES = (
    "puts items stamped now+10, now+20 and now+30 by the test and derives the wait from those stamps: the drop-in "
    "decides by the server's clock, not the items' timestamps (the wait it records is the server's, 26-30 ms off)"
)
DESELECTED = {
    f"tests/test_bucket_all.py::{case}[{maker}]": reason
    for maker in ("create_redis_bucket", "create_async_redis_bucket")
    for case, reason in (
        ("test_bucket_02", LOG_GROWS),
        ("test_bucket_leak", LOG_GROWS),
        ("test_bucket_03", NAMES),
        ("test_bucket_records_retry_after", OWN_TIMES),
    )
}


class Run(PytestRun):
    """pyrate-limiter's Redis tests in a subprocess against ``server``."""

    def __init__(self, server: Server, root: Path, module: bool) -> None:
        os.environ["REDIS"] = f"redis://127.0.0.1:{server.port}/0"  # read by the glue and the tests' conftest
        try:
            super().__init__(
                root,
                "pyrate_limiter_glue",
                [*FILES, "-m", "redis or asyncredis", "-p", "no:warnings"],
                DESELECTED if module else {},
            )
        finally:
            del os.environ["REDIS"]
        self.server = server

    def stop(self) -> None:
        super().stop()
        self.server.stop()


@pytest.fixture(scope="module")
def root(tmp_path_factory: Any) -> Path:
    """pyrate-limiter's tests, fetched once."""
    return fetch_tests("pyrate_limiter", pyrate_limiter.__version__, ("tests", "pyproject.toml"),
                       tmp_path_factory.mktemp("pyrate"))


def start(root: Path, module: bool) -> Iterator[Dict[str, Run]]:
    flavors = [flavor for flavor in servers_found() if module or flavor in WITHOUT_MODULE]
    runs: Dict[str, Run] = {}
    try:
        for flavor in flavors:
            runs[flavor] = Run(Server(FLAVORS[flavor], module=module), root, module)
        yield runs
    finally:
        for run in runs.values():
            run.stop()


@pytest.fixture(scope="module")
def runs(root: Path) -> Iterator[Dict[str, Run]]:
    yield from start(root, True)


@pytest.fixture(scope="module")
def runs_without_module(root: Path) -> Iterator[Dict[str, Run]]:
    """Started when the first test without the module asks, after the runs
    with it."""
    yield from start(root, False)


def passes(run: Run, title: str, deselected: int, capsys: Any) -> Dict[str, int]:
    passed(run, f"pyrate-limiter {pyrate_limiter.__version__} Redis tests on {title}", capsys,
           f" ({deselected} deselected with a reason in DESELECTED, the others not Redis tests)")
    return command_calls(run.server)


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_pyrate_limiter_redis_tests_pass_on_the_drop_in(flavor: str, runs: Dict[str, Run], capsys: Any) -> None:
    binary(flavor)  # skips (fails under CI=true) when this server is missing
    calls = passes(runs[flavor], flavor, len(DESELECTED), capsys)
    for command in ("rate.limit", "rate.peek", "lock.acquire"):
        assert calls.get(command, 0) > 0, f"{command} never ran: {sorted(calls)}"


@pytest.mark.parametrize("flavor", [flavor for flavor in sorted(FLAVORS) if flavor in WITHOUT_MODULE])
def test_pyrate_limiter_redis_tests_pass_without_the_module(
    flavor: str, runs_without_module: Dict[str, Run], capsys: Any
) -> None:
    binary(flavor)
    run = runs_without_module[flavor]
    calls = passes(run, f"{flavor} without the module", 0, capsys)
    assert calls.get("evalsha", 0) > 0 and calls.get("zcard", 0) > 0, sorted(calls)
    assert not has_module(run.server)
