"""How every class talks to the server, once for sync and asyncio clients.

A method is written as a generator that yields the commands it sends and
receives their replies (``reply = yield ("IDGEN.NEXT", key)``) and returns
its result. A request may end with a dict of redis-py options for the reply
callback of a built-in (``("SET", key, value, "GET", {"get": True})``). ``Recipe`` runs such generators on a ``redis.Redis`` or
``redis.RedisCluster``; ``AsyncRecipe`` (in ``redis_recipes.asyncio``) awaits
them on a ``redis.asyncio`` client. The classes are written once.
"""

import functools
import threading
from typing import Any, Callable, Dict, Generator, Optional, Tuple, TypeVar, Union

from redis.exceptions import ResponseError

from .errors import translate

Request = Tuple[Any, ...]
Steps = Generator[Request, Any, Any]
T = TypeVar("T")


def recipe(method: Callable[..., Steps]) -> Callable[..., Any]:
    """Turns a generator method into a call: the value on a sync client, a
    coroutine on an asyncio client."""

    @functools.wraps(method)
    def run(self: "Recipe", *args: Any, **kwargs: Any) -> Any:
        return self._drive(method(self, *args, **kwargs))

    return run


class Recipe:
    """The base of every class: holds the client and runs the commands."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def _drive(self, steps: Steps) -> Any:
        try:
            request = next(steps)
            while True:
                words, options = split(request)
                try:
                    reply = self.client.execute_command(*words, **options)
                except ResponseError as error:
                    request = steps.throw(translate(error))
                else:
                    request = steps.send(reply)
        except StopIteration as done:
            return done.value


def split(request: Request) -> Tuple[Request, Dict[str, Any]]:
    """A request's words, and the redis-py options that may end it."""
    if request and isinstance(request[-1], dict):
        return request[:-1], request[-1]
    return request, {}


def text(value: Union[bytes, str, None]) -> Optional[str]:
    """A reply as text (clients may or may not decode responses)."""
    if value is None or isinstance(value, str):
        return value
    return value.decode("utf-8", "replace")


def as_dict(reply: Any) -> Dict[str, Any]:
    """A map reply (a dict under RESP3, a flat field/value list under RESP2)
    with text keys."""
    if isinstance(reply, dict):
        return {text(name) or "": value for name, value in reply.items()}
    items = list(reply or [])
    return {text(items[i]) or "": items[i + 1] for i in range(0, len(items) - 1, 2)}


def ms(seconds: float) -> int:
    """Seconds (the book's unit) to whole milliseconds, at least 1."""
    return max(1, int(round(seconds * 1000)))


class Renewer:
    """Sends ``words`` (an extend or renew that answers 1 while the lease is
    held) every ``period`` seconds on a daemon thread until stopped; calls
    ``lost()`` once, and stops, when the answer says the lease is gone. A
    dropped connection is tried again the next period."""

    def __init__(self, client: Any, words: Request, period: float, lost: Callable[[], Any]) -> None:
        self._stop = threading.Event()

        def renew() -> None:
            while not self._stop.wait(period):
                try:
                    held = client.execute_command(*words) == 1
                except Exception:  # a dropped connection: try again next period
                    continue
                if not held:
                    lost()
                    return

        self._thread = threading.Thread(target=renew, name=f"renew {words[1]}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
