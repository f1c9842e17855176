"""Real servers for the package's tests: the servers ``make test`` installs
(``REDIS_SERVER``, ``REDIS8_SERVER``, ``VALKEY_SERVER``) with the built module
(``RECIPES_MODULE``), on free loopback ports, standalone and as a 3-node
cluster. Under ``make test`` (``RECIPES_REQUIRE_SERVERS=1``) or ``CI=true`` a
missing server fails instead of skipping.

The fixtures give a test each server (``server``, ``cluster``) and, with
``mode``, its clients and the package's classes for ``sync`` and ``asyncio``
(``clients``; ``book``: a client configured as the book's code configures it,
``decode_responses=True``, and ``raw``: one that does not decode). Each test
module covers one module of the package, sync and asyncio together;
``recipes_helpers`` holds what they share besides fixtures."""

import asyncio
import inspect
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, Iterator, List, Optional, Tuple

import pytest
import redis

ROOT = Path(__file__).resolve().parents[3]
MODULE = os.environ.get("RECIPES_MODULE", str(ROOT / "target/release/librecipes.so"))
FLAVORS = {
    "redis": os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "",
    "redis8": os.environ.get("REDIS8_SERVER") or str(ROOT / ".servers/redis-8.6.3/src/redis-server"),
    "valkey": os.environ.get("VALKEY_SERVER") or "",
}
# RECIPES_FLAVORS=redis (a comma-separated list) runs the tests on those servers only: `make test`'s run on the
# oldest redis-py, which tests the client, not the servers the newest run covered.
if os.environ.get("RECIPES_FLAVORS"):
    FLAVORS = {flavor: FLAVORS[flavor] for flavor in os.environ["RECIPES_FLAVORS"].split(",")}


def free_port() -> int:
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port < 55_000:  # the cluster bus listens at port + 10000
            return port


class Server:
    """One server process in a directory of its own; stopped by ``stop()`` or,
    at the latest, when the test session ends, whatever failed."""

    running: "Dict[int, Server]" = {}

    def __init__(self, binary: str, *extra: str, module: bool = True) -> None:
        self.dir = tempfile.mkdtemp(prefix="recipes-py-")
        Server.running[id(self)] = self
        # A free port can be taken by another test's server before ours binds it (ours then exits): try a few.
        for _ in range(5):
            self.port = free_port()
            args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                    "--save", "", "--appendonly", "no", "--logfile", "server.log", *extra]
            if module:
                args += ["--loadmodule", MODULE]
            self.process = subprocess.Popen(args, cwd=self.dir, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL)
            if self._answers(binary):
                return
            self.process.kill()
            self.process.wait()
        raise RuntimeError(f"{binary} did not start on a port of its own: {self.log()}")

    def _answers(self, binary: str) -> bool:
        """Whether the process started answers on its port (not another server that had the port first)."""
        deadline = time.time() + 20
        while True:
            try:
                return int(redis.Redis(port=self.port).info("server")["process_id"]) == self.process.pid
            except redis.ConnectionError:
                pass
            if self.process.poll() is not None:
                return False
            if time.time() > deadline:
                raise RuntimeError(f"{binary} did not start: {self.log()}")
            time.sleep(0.02)

    def log(self) -> str:
        try:
            return Path(self.dir, "server.log").read_text()
        except OSError:
            return ""

    def client(self, **options: Any) -> redis.Redis:
        return redis.Redis(port=self.port, **options)

    def stop(self) -> None:
        Server.running.pop(id(self), None)
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Stops the servers that a failed test or fixture left running."""
    for server in list(Server.running.values()):
        server.stop()


def servers_required() -> bool:
    """Whether a missing server fails rather than skips: ``make test`` sets
    ``RECIPES_REQUIRE_SERVERS=1``; CI sets ``CI=true``."""
    return os.environ.get("RECIPES_REQUIRE_SERVERS") == "1" or os.environ.get("CI") == "true"


def binary(flavor: str) -> str:
    path = FLAVORS[flavor]
    if not path or not os.path.isfile(path):
        if servers_required():
            pytest.fail(f"{flavor} server not found, and RECIPES_REQUIRE_SERVERS=1 or CI=true "
                        "requires every server (run `make test`)")
        pytest.skip(f"{flavor} server not found (run `make test`)")
    return path


def serve(flavor: str) -> Iterator[Server]:
    """A server of `flavor` with the module, stopped afterwards."""
    if not os.path.isfile(MODULE):
        pytest.fail(f"module not built at {MODULE} (run `make test`)")
    started = Server(binary(flavor))
    yield started
    started.stop()


@pytest.fixture(scope="session", params=sorted(FLAVORS))
def server(request: Any) -> Iterator[Server]:
    yield from serve(request.param)


@pytest.fixture(params=["sync", "asyncio"])
def mode(request: Any) -> str:
    return request.param


class Clients:
    """A flushed server's clients in one mode, and the package's classes for
    that mode (``redis_recipes`` or ``redis_recipes.asyncio``)."""

    def __init__(self, server: Server, mode: str) -> None:
        import redis.asyncio

        import redis_recipes
        import redis_recipes.asyncio

        self.server = server
        self.mode = mode
        self.plain = server.client()
        self.plain.flushall()
        if mode == "sync":
            self.client: Any = server.client()
            self.recipes: Any = redis_recipes
        else:
            self.client = redis.asyncio.Redis(port=server.port)
            self.recipes = redis_recipes.asyncio

    def new_client(self) -> Any:
        if self.mode == "sync":
            return self.server.client()
        import redis.asyncio

        return redis.asyncio.Redis(port=self.server.port)


@pytest.fixture
def clients(server: Server, mode: str) -> Clients:
    return Clients(server, mode)


class Book:
    """A flushed server's client made as the book makes it
    (``decode_responses=True``; ``decode=False`` for one that does not
    decode), and the package's classes for the mode."""

    def __init__(self, server: Server, mode: str, decode: bool = True) -> None:
        import redis.asyncio

        import redis_recipes
        import redis_recipes.asyncio

        self.plain = server.client(decode_responses=True)
        self.plain.flushall()
        self.mode = mode
        if mode == "sync":
            self.client: Any = server.client(decode_responses=decode)
            self.recipes: Any = redis_recipes
        else:
            self.client = redis.asyncio.Redis(port=server.port, decode_responses=decode)
            self.recipes = redis_recipes.asyncio

    def run(self, body: Callable[[Any, Any], Awaitable[None]]) -> None:
        async def main() -> None:
            try:
                await body(self.client, self.recipes)
            finally:
                if self.mode == "asyncio":
                    await aclose(self.client)
                else:
                    self.client.close()

        asyncio.run(main())


@pytest.fixture
def book(server: Server, mode: str) -> Book:
    return Book(server, mode)


@pytest.fixture
def raw(server: Server, mode: str) -> Book:
    return Book(server, mode, decode=False)


async def aclose(client: Any) -> None:
    """Closes an asyncio client (or connection): ``aclose()``, which redis-py
    has from 5.0.1 on; 5.0.0, the oldest the package supports, has only
    ``close()``."""
    closing = getattr(client, "aclose", None) or client.close
    await closing()


async def value(result: Any) -> Any:
    """A method's result in either mode (a coroutine under asyncio)."""
    if inspect.isawaitable(result):
        return await result
    return result


def nodes_for_cluster(flavor_binary: str, modules: Tuple[bool, ...] = (True, True, True)) -> List[Server]:
    """A 3-node cluster; ``modules`` says which nodes load the module."""
    nodes = [Server(flavor_binary, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", module=module)
             for module in modules]
    ranges = [(0, 5460), (5461, 10922), (10923, 16383)]
    for node, (first, last) in zip(nodes, ranges):
        node.client().execute_command("CLUSTER", "ADDSLOTS", *range(first, last + 1))
    for node in nodes[1:]:
        nodes[0].client().execute_command("CLUSTER", "MEET", "127.0.0.1", node.port)
    deadline = time.time() + 30
    while not all(
        "cluster_state:ok" in node.client().execute_command("CLUSTER", "INFO").decode()
        and node.client().execute_command("CLUSTER", "INFO").decode().count("cluster_known_nodes:3")
        for node in nodes
    ):
        if time.time() > deadline:
            raise RuntimeError("the cluster did not form")
        time.sleep(0.05)
    return nodes


@pytest.fixture(scope="session", params=sorted(FLAVORS))
def cluster(request: Any) -> Iterator[List[Server]]:
    nodes = nodes_for_cluster(binary(request.param))
    yield nodes
    for node in nodes:
        node.stop()


def first_port(nodes: List[Server]) -> int:
    return nodes[0].port


Options = Optional[Dict[str, Any]]
