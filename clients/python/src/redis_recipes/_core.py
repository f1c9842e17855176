"""How every class talks to the server, once for sync and asyncio clients.

A method is written as a generator that yields the commands it sends and
receives their replies (``reply = yield ("IDGEN.NEXT", key)``) and returns
its result. A request may end with a dict of redis-py options for the reply
callback of a built-in (``("SET", key, value, "GET", {"get": True})``).
``Recipe`` runs such generators on a ``redis.Redis`` or
``redis.RedisCluster``; ``AsyncDriver`` (in ``redis_recipes.asyncio``) awaits
them on a ``redis.asyncio`` client. The classes are written once.

A command that waits in the server's first-come-first-served queue (its
``WAIT ms`` option) is yielded as ``waiting(words, seconds)``. The drivers
send it once, outside redis-py's retries (a command sent again would queue
again at the back), and read its reply with a timeout ``MARGIN`` seconds
past the wait instead of the client's ``socket_timeout`` (redis-py 8
defaults to 5 s); a wait of ``FOREVER`` is read with no timeout. A dropped
connection raises: the command is not sent again. On a cluster the command
goes to the node serving its key; a redirect (the slot moved) or TRYAGAIN
falls back to the cluster client's ``execute_command``, which sends it to
the new node, where it queues at the back, and reads it with the client's
``socket_timeout``. redis-py before 8 (no read timeout per reply, and no
``socket_timeout`` by default) sends it through ``execute_command``.
"""

import contextlib
import functools
import inspect
import threading
from typing import Any, Callable, Dict, Generator, Optional, Tuple, TypeVar, Union

import redis
import redis.connection
from redis.exceptions import AskError, ClusterDownError, ResponseError, SlotNotCoveredError, TryAgainError

from .errors import translate

Request = Tuple[Any, ...]
Steps = Generator[Request, Any, Any]
T = TypeVar("T")

FOREVER = 10**9
"""Seconds: a wait with no end (``WAIT`` of about 31 years)."""
MARGIN = 2.0
"""Seconds a waiting command's reply may take past its wait."""
WAIT = "recipes.wait"
"""The request option carrying a waiting command's wait in seconds."""
# redis-py 8 reads a reply with a timeout of the caller's choosing.
LONG_READS = "timeout" in inspect.signature(redis.connection.AbstractConnection.read_response).parameters
# A cluster's answers that the cluster client handles itself (a slot moved or
# moving, a cluster not ready).
REROUTED = (AskError, TryAgainError, ClusterDownError, SlotNotCoveredError)


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
                words, options, wait = split(request)
                try:
                    if wait is None:
                        reply = self.client.execute_command(*words, **options)
                    else:
                        reply = send_waiting(self.client, words, options, wait)
                except ResponseError as error:
                    request = steps.throw(translate(error))
                else:
                    request = steps.send(reply)
        except StopIteration as done:
            return done.value


def waiting(words: Request, seconds: Optional[float]) -> Request:
    """The request for ``words``, a command that waits up to ``seconds`` in
    the server (None: it does not wait)."""
    return words if seconds is None else (*words, {WAIT: seconds})


def split(request: Request) -> Tuple[Request, Dict[str, Any], Optional[float]]:
    """A request's words, the redis-py options that may end it, and its
    wait in seconds (None for a command that does not wait)."""
    if request and isinstance(request[-1], dict):
        options = dict(request[-1])
        return request[:-1], options, options.pop(WAIT, None)
    return request, {}, None


def read_timeout(wait: float) -> Optional[float]:
    """How long to wait for the reply of a command that waits ``wait``
    seconds in the server (None: no end)."""
    return None if wait >= FOREVER else wait + MARGIN


def send_waiting(client: Any, words: Request, options: Dict[str, Any], wait: float) -> Any:
    """Runs a command that waits up to ``wait`` seconds in the server: sent
    once, its reply read with ``read_timeout(wait)`` (see the module's
    docstring)."""
    if not LONG_READS:
        return client.execute_command(*words, **options)
    if isinstance(client, redis.RedisCluster):
        try:
            node = client.get_redis_connection(client.get_node_from_key(words[1]))
            reply = exchange(node, words, wait)
        except REROUTED:
            return client.execute_command(*words, **options)
        callbacks = client.cluster_response_callbacks
    else:
        reply = exchange(client, words, wait)
        callbacks = client.response_callbacks
    callback = callbacks.get(words[0])
    return reply if callback is None else callback(reply, **options)


def exchange(client: redis.Redis, words: Request, wait: float) -> Any:
    """Sends ``words`` once on a connection of ``client`` and reads the
    reply. A dropped connection or a timeout disconnects it and raises."""
    single = client.connection
    connection = single or client.connection_pool.get_connection()
    try:
        with client.single_connection_lock if single else contextlib.nullcontext():
            connection.send_command(*words)
            return connection.read_response(timeout=read_timeout(wait))
    finally:
        if not single:
            client.connection_pool.release(connection)


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
