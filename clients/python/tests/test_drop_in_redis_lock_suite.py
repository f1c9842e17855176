"""python-redis-lock's own tests, run against
``redis_recipes.drop_in.redis_lock`` on every server.

The source distribution of the python-redis-lock version the tests install
is fetched with pip (its ``tests/`` and its ``pytest.ini``, to a temporary
directory; nothing of it is kept in this repository), and
``tests/test_redis_lock.py`` and ``tests/test_django_integration.py`` (its
Django cache backend, ``redis_lock.django_cache``) run there in a pytest subprocess per server,
with its own conftest and fixtures: each test starts its ``redis-server``
from ``PATH``, here a script that starts the server under test with the
module (or without it). ``redis_lock_alias/`` goes first on ``PYTHONPATH``,
so the tests and the helper processes they start import the drop-in as
``redis_lock``. The runs go at once.

The plugin ``redis_lock_glue`` records each test's server's calls per
command: with the module, ``LOCK.ACQUIRE`` must have run and ``BLPOP`` never
(the library's way of waiting; a ``SET`` runs, from the tests themselves:
test_upgrade writes a lock); without it, the library's ``SET`` and ``BLPOP``
and no LOCK command."""

import json
import os
import shutil
import stat
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest
from conftest import FLAVORS, MODULE, binary
from peer_suite import HERE, WITHOUT_MODULE, PytestRun, fetch_tests, passed, servers_found

pytest.importorskip("process_tests", reason="process-tests is not installed (pip install './clients/python[test]')")
pytest.importorskip("django_redis", reason="django-redis is not installed (pip install './clients/python[test]')")

VERSION = version("python-redis-lock")
SUITE = ["tests/test_redis_lock.py", "tests/test_django_integration.py"]
SUITE_TIMEOUT = 16  # seconds: REDIS_LOCK_TEST_TIMEOUT (see Run)

# Tests left out, each with the reason: none, every case of the two files runs.
DESELECTED: Dict[str, str] = {}


class Run(PytestRun):
    """python-redis-lock's suite in a subprocess, its servers of one flavor,
    with the module or without it."""

    TIMEOUT = 600  # seconds; a run took up to 5 minutes with other jobs on the machine

    def __init__(self, flavor: str, root: Path, module: bool, into: Path) -> None:
        self.flavor = flavor
        bin_dir = into / "bin"
        bin_dir.mkdir()
        script = bin_dir / "redis-server"
        load = f" --loadmodule '{MODULE}'" if module else ""
        script.write_text(f"#!/bin/sh\nexec '{binary(flavor)}' \"$@\"{load}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        self.stats = into / "calls.jsonl"
        os.environ["REDIS_LOCK_SUITE_STATS"] = str(self.stats)
        # The suite's own setting for slow machines (its default 10 s): how
        # long a test waits for a helper process's output, the lease of
        # test_expire (a quarter of it) and test_no_overlap's start (half).
        # Four runs at once on two cores, each forking 125 processes, left
        # a helper process 10 s without output now and then. Not 20: the
        # library's way (without the module) waits out test_expire's lease
        # in one BLPOP of that many seconds, which must end within
        # redis-py 8's default socket timeout of 5 s.
        os.environ["REDIS_LOCK_TEST_TIMEOUT"] = str(SUITE_TIMEOUT)
        os.environ["DJANGO_SETTINGS_MODULE"] = "test_project.settings"  # as its tox.ini sets it
        saved = (os.environ.get("PATH", ""), os.environ.get("PYTHONPATH"))
        os.environ["PATH"] = os.pathsep.join([str(bin_dir), saved[0]])
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE / "redis_lock_alias"), saved[1]]))
        try:
            # pytest-asyncio, when installed, warns at start-up; the suite
            # turns warnings into errors, and needs no asyncio. Three workers
            # each (its tests mostly sleep). A failed case runs again, up to
            # three times in all (flaky's --force-flaky): many cases time
            # their steps to the half second (a signal list that must still
            # exist 0.5 s after a release and be gone 1 s after it, a waiter
            # that must wake within 0.5 s, a server up within 2 s) and miss
            # it now and then on two loaded cores, the library's own way
            # (without the module) as often as the drop-in's.
            # Its servers listen on a Unix socket in their test's tmp_path:
            # under make test's TMPDIR (in the checkout) that path passed the
            # 107 bytes a socket's path may have, and no server started. So
            # its temporary directories go under /tmp, removed by stop().
            self.basetemp = Path(tempfile.mkdtemp(prefix="redis-lock-", dir="/tmp"))
            args = [*SUITE, "-p", "no:asyncio", "-n", "3", "--basetemp", str(self.basetemp / "t"),
                    "--force-flaky", "--max-runs", "3", "--no-success-flaky-report"]
            super().__init__(root, "redis_lock_glue", args, DESELECTED)
        finally:
            os.environ["PATH"] = saved[0]
            if saved[1] is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = saved[1]
            os.environ.pop("REDIS_LOCK_SUITE_STATS")
            os.environ.pop("REDIS_LOCK_TEST_TIMEOUT")
            os.environ.pop("DJANGO_SETTINGS_MODULE")

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.basetemp, ignore_errors=True)

    def calls(self) -> Dict[str, int]:
        """The calls per command, summed over every test's server."""
        total: Dict[str, int] = {}
        for line in self.stats.read_text().splitlines():
            for command, count in json.loads(line).items():
                total[command] = total.get(command, 0) + count
        return total


@pytest.fixture(scope="module")
def runs(tmp_path_factory: Any) -> Iterator[Dict[Tuple[str, bool], Run]]:
    """One run per server found, with the module and without it, all
    started at once."""
    flavors = servers_found()
    root = fetch_tests("python-redis-lock", VERSION, ("tests", "pytest.ini"), tmp_path_factory.mktemp("prl"))
    started: Dict[Tuple[str, bool], Run] = {}
    try:
        for flavor in flavors:
            for module in (True, False) if flavor in WITHOUT_MODULE else (True,):
                started[flavor, module] = Run(flavor, root, module, tmp_path_factory.mktemp(f"prl-{flavor}"))
        yield started
    finally:
        for run in started.values():
            run.stop()


def passes(run: Run, title: str, capsys: Any) -> Dict[str, int]:
    """Checks that ``run`` passed; the calls per command its servers counted."""
    passed(run, f"python-redis-lock {VERSION} tests on {title}", capsys)
    return run.calls()


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_python_redis_lock_suite_passes_on_the_drop_in(
    flavor: str, runs: Dict[Tuple[str, bool], Run], capsys: Any
) -> None:
    binary(flavor)  # skips (fails under CI=true) when this server is missing
    calls = passes(runs[flavor, True], flavor, capsys)
    assert calls.get("lock.acquire", 0) > 0, sorted(calls)
    assert "blpop" not in calls, "the library's way of waiting ran"


@pytest.mark.parametrize("flavor", [flavor for flavor in sorted(FLAVORS) if flavor in WITHOUT_MODULE])
def test_python_redis_lock_suite_passes_on_the_drop_in_without_the_module(
    flavor: str, runs: Dict[Tuple[str, bool], Run], capsys: Any
) -> None:
    binary(flavor)
    calls = passes(runs[flavor, False], f"{flavor} without the module", capsys)
    assert calls.get("set", 0) > 0 and calls.get("blpop", 0) > 0, sorted(calls)
    assert not any(command.startswith("lock.") for command in calls), sorted(calls)
