"""redis-py's own lock tests, run against the drop-ins on every server.

The source distribution of the installed redis-py is fetched with pip (its
``tests/`` and its ``pyproject.toml``, which holds its pytest settings, go
to a temporary directory; nothing of it is kept in this repository), and
``tests/test_lock.py`` and ``tests/test_asyncio/test_lock.py`` run there in
a pytest subprocess per server, with redis-py's own conftest files and
fixtures. The plugin ``redis_py_glue`` (beside this file) makes their
``TestLock.get_lock`` pass ``lock_class=redis_recipes.drop_in.Lock`` (or
``AsyncLock``). The three servers' runs go at once.

After each run the server's ``INFO commandstats`` must show the module's
LOCK commands and no Lua script: the tests ran on the drop-ins.

The suite runs a second time per server on one started without the module,
where the drop-ins are redis-py's own lock: there nothing is left out (the
polling the deselected cases count is redis-py's), and the server must show
redis-py's ``SET`` and scripts, and no LOCK command."""

from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest
import redis
from conftest import FLAVORS, Server, binary
from peer_suite import WITHOUT_MODULE, PytestRun, command_calls, fetch_tests, has_module, passed, servers_found

SUITE = ["tests/test_lock.py", "tests/test_asyncio/test_lock.py"]

# Tests left out, each with the reason. Only the cases that count the
# polling loop's sleep calls under a fake clock: the drop-ins do not poll
# (they wait in the server's queue), so there are no sleeps to count.
DESELECTED = {
    "tests/test_lock.py::TestLock::test_blocking_timeout":
        "counts the polling loop's sleeps under a fake clock (8 sleeps of 0.05 s in a 0.4 s blocking_timeout); "
        "the drop-in waits in the server instead, and the fake clock never moves",
    "tests/test_lock.py::TestLock::test_context_manager_blocking_timeout":
        "the same count of sleeps, with the first lock held by a context manager",
    "tests/test_asyncio/test_lock.py::TestLock::test_blocking_timeout":
        "the asyncio form: counts 4 sleeps of 0.05 s in a 0.2 s blocking_timeout ([single] and [pool])",
}


def fetch_redis_py_tests(into: Path) -> Path:
    """redis-py's tests for the installed version, unpacked under ``into``:
    the directory holding ``tests/`` and ``pyproject.toml``."""
    return fetch_tests("redis", redis.__version__, ("tests", "pyproject.toml"), into)


class Run(PytestRun):
    """redis-py's lock suite running in a subprocess against one server,
    with the module or without it."""

    def __init__(self, flavor: str, root: Path, module: bool) -> None:
        self.flavor = flavor
        self.server = Server(binary(flavor), module=module)
        url = f"redis://127.0.0.1:{self.server.port}/0"
        # redis-py's settings also ignore a warning of coverage's by its
        # class, which without coverage installed warns once per test.
        super().__init__(
            root,
            "redis_py_glue",
            [*SUITE, "-o", "filterwarnings=always", "--redis-url", url, "--redis-mod-url", url],
            DESELECTED if module else {},
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.server.stop()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: Any) -> Iterator[Dict[Tuple[str, bool], Run]]:
    """One run per server found, with the module and without it, all
    started at once."""
    flavors = servers_found()
    root = fetch_redis_py_tests(tmp_path_factory.mktemp("redis-py"))
    started: Dict[Tuple[str, bool], Run] = {}
    try:
        for flavor in flavors:
            for module in (True, False) if flavor in WITHOUT_MODULE else (True,):
                started[flavor, module] = Run(flavor, root, module)
        yield started
    finally:
        for run in started.values():
            run.stop()


def passes(run: Run, title: str, capsys: Any) -> Dict[str, int]:
    """Checks that ``run`` passed; the calls per command its server counted."""
    passed(run, f"redis-py {redis.__version__} lock tests on {title}", capsys)
    return command_calls(run.server)


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_redis_py_lock_suite_passes_on_the_drop_ins(
    flavor: str, runs: Dict[Tuple[str, bool], Run], capsys: Any
) -> None:
    binary(flavor)  # skips (fails under CI=true) when this server is missing
    calls = passes(runs[flavor, True], flavor, capsys)
    for command in ("lock.acquire", "lock.releaseif", "lock.extend"):
        assert calls.get(command, 0) > 0, f"{command} never ran: {sorted(calls)}"
    for command in ("eval", "evalsha", "eval_ro", "evalsha_ro", "script|load", "script"):
        assert command not in calls, f"a Lua script ran ({command}): {sorted(calls)}"


@pytest.mark.parametrize("flavor", [flavor for flavor in sorted(FLAVORS) if flavor in WITHOUT_MODULE])
def test_redis_py_lock_suite_passes_on_the_drop_ins_without_the_module(
    flavor: str, runs: Dict[Tuple[str, bool], Run], capsys: Any
) -> None:
    binary(flavor)
    calls = passes(runs[flavor, False], f"{flavor} without the module (nothing deselected)", capsys)
    assert calls.get("set", 0) > 0 and calls.get("evalsha", 0) > 0, sorted(calls)
    assert not has_module(runs[flavor, False].server)
