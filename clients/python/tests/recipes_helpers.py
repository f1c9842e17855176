"""What the test modules share besides conftest's servers and fixtures:
running a test's body with the sync or the asyncio client and classes,
checking a result and its exact type, waiting for a condition, starting a
call in the background, and counting a server's commands."""

import asyncio
import time
from typing import Any, Awaitable, Callable

import redis
from conftest import Clients, aclose, value


def run(clients: Clients, body: Callable[[Any, Any], Awaitable[None]]) -> None:
    async def main() -> None:
        try:
            await body(clients.client, clients.recipes)
        finally:
            if clients.mode == "asyncio":
                await aclose(clients.client)

    asyncio.run(main())


async def same(call: Any, expected: Any) -> Any:
    """Awaits ``call`` (in either mode) and checks it equals ``expected``
    with exactly its type (``True`` is not ``1``, ``'10086'`` not ``10086``)."""
    got = await value(call)
    assert got == expected and type(got) is type(expected), f"{got!r} is not {expected!r}"
    return got


async def eventually(check: Callable[[], bool], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def start(clients: Clients, call: Callable[[], Any]) -> "asyncio.Future[Any]":
    """Runs a package call in the background: on a thread of its own for a
    sync client, as a task for an asyncio one."""
    if clients.mode == "sync":
        return asyncio.get_running_loop().run_in_executor(None, call)
    return asyncio.ensure_future(call())


def commands(plain: redis.Redis, name: str) -> int:
    """How many times the server ran command ``name``."""
    return int(plain.info("commandstats").get(f"cmdstat_{name}", {}).get("calls", 0))


async def until(condition: Callable[[], bool], seconds: float = 5, what: str = "condition") -> None:
    """Returns once ``condition()`` holds, looking every 10 ms; fails after
    ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} not reached in {seconds:g} s"
        await asyncio.sleep(0.01)
