"""What running a peer library's own test suite takes, for every such suite:
its tests fetched from the installed version's source distribution on PyPI,
and a pytest subprocess running them with our glue plugin, leaving out the
listed cases. Nothing of the peer's is kept in this repository."""

import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import pytest
from conftest import FLAVORS, MODULE, Server

HERE = Path(__file__).resolve().parent


def servers_found() -> List[str]:
    """The flavors whose server binary is here, once the module is built."""
    if not os.path.isfile(MODULE):
        pytest.fail(f"module not built at {MODULE} (run `make test`)")
    return [flavor for flavor in sorted(FLAVORS) if FLAVORS[flavor] and os.path.isfile(FLAVORS[flavor])]


WITHOUT_MODULE = ("redis",)
"""The servers the peer suites also run on without the module: plain Redis
7.0. Without the module a drop-in is the library's own code, so one server
shows it; the runs with the module cover every server."""


def has_module(server: Server) -> bool:
    """Whether ``server`` has the recipes module loaded (MODULE LIST)."""
    return any(module[b"name"] == b"recipes" for module in server.client().module_list())


def summary(output: str) -> str:
    """The closing line of a pytest run (``92 passed, 4 deselected in …``)."""
    lines = [line.strip("= ") for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def fetch_tests(package: str, version: str, keep: Sequence[str], into: Path) -> Path:
    """``package``'s sources at ``version``, unpacked under ``into`` with only
    the top-level entries named in ``keep`` (its ``tests`` and its pytest
    settings: the sources' own package must not shadow the installed one).
    Returns the directory holding them. Skips the test when PyPI cannot be
    reached, and fails it under ``CI=true``."""
    download = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
         f"{package}=={version}", "-d", str(into)],
        capture_output=True, text=True, timeout=300,
    )
    # An sdist's file name spells the project's name with underscores (PEP 625).
    sdists = list(into.glob(f"{package}-*.tar.gz")) + list(into.glob(f"{package.replace('-', '_')}-*.tar.gz"))
    if download.returncode != 0 or not sdists:
        message = f"could not fetch {package} {version}'s sources: {download.stderr.strip()[-500:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    with tarfile.open(sdists[0]) as archive:
        members = [
            member for member in archive.getmembers()
            if member.isfile() and len(Path(member.name).parts) > 1 and Path(member.name).parts[1] in keep
        ]
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(into / "src", members=members, **safe)
    (root,) = (into / "src").iterdir()
    return root


class PytestRun:
    """Peer tests running in a pytest subprocess in ``root`` with the glue
    plugin ``glue`` (a module beside this file) and ``deselected`` left out."""

    TIMEOUT = 300

    def __init__(self, root: Path, glue: str, args: Sequence[str], deselected: Dict[str, str]) -> None:
        deselect: List[str] = []
        for case in deselected:
            deselect += ["--deselect", case]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", glue, "-p", "no:cacheprovider", *args, "-q", "-rfE", *deselect],
            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )

    def result(self) -> Tuple[int, str]:
        """The exit status and output (-1 when killed after ``TIMEOUT``)."""
        try:
            output, _ = self.process.communicate(timeout=self.TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            output, _ = self.process.communicate()
            return -1, output + f"\n(killed after {self.TIMEOUT} s)"
        return self.process.returncode, output

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def passed(run: "PytestRun", what: str, capsys: Any, after: str = "") -> None:
    """Asserts that ``run`` passed, printing its summary line between
    ``what`` and ``after``; on a failure the assertion shows the end of its
    output."""
    code, output = run.result()
    line = summary(output)
    with capsys.disabled():
        print(f"\n{what}: {line}{after}")
    assert code == 0 and " passed" in line and "failed" not in line and "error" not in line, output[-6000:]


def command_calls(server: Server) -> Dict[str, int]:
    """The calls per command ``server`` counted (``INFO commandstats``)."""
    stats = server.client().info("commandstats")
    return {name[len("cmdstat_") :]: stat["calls"] for name, stat in stats.items() if name.startswith("cmdstat_")}
