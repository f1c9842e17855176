"""How every class talks to the server, once for sync and asyncio clients.

A method is written as a generator that yields the commands it sends and
receives their replies (``reply = yield ("IDGEN.NEXT", key)``) and returns
its result. A request may end with a dict of redis-py options for the reply
callback of a built-in (``("SET", key, value, "GET", {"get": True})``), or
be a ``Pause(seconds)`` (a background renewal's period). ``@recipe`` makes
such a generator a method: ``Recipe`` runs it on a ``redis.Redis`` or
``redis.RedisCluster`` and returns its value; ``AsyncDriver`` (in
``redis_recipes.asyncio``) returns a coroutine that runs it on a
``redis.asyncio`` client. The classes are written once.

A drive loop is the same for both: an exception raised by a command is
thrown into the generator where it waits (a server error as its most
specific class, see ``errors``), so a generator may catch it; one it does
not catch comes out of the call. A background run (``_background``: a
thread, or an asyncio task) drives steps the same way until they end or
are stopped.

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

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import threading
import time
import types
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Coroutine,
    Dict,
    Generator,
    Generic,
    NamedTuple,
    Optional,
    Protocol,
    Tuple,
    TypeVar,
    Union,
    overload,
)

import redis
import redis.connection
from redis.exceptions import AskError, ClusterDownError, ResponseError, SlotNotCoveredError, TryAgainError

from .errors import translate

if sys.version_info >= (3, 10):
    from typing import Concatenate, ParamSpec

    P = ParamSpec("P")
else:  # before 3.10 the parameters are only checked by a type checker
    P = TypeVar("P")

if TYPE_CHECKING:
    from .asyncio import AsyncDriver

T = TypeVar("T")
Request = Tuple[Any, ...]
"""A command's words (see ``waiting`` for the options that may end them),
or a ``Pause``."""
Steps = Generator[Request, Any, T]
"""A method's commands, ending with its result (of type ``T``)."""

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


class Pause(NamedTuple):
    """A request to wait ``seconds`` before the next one. In a background
    run, ``stop()`` ends the run there."""

    seconds: float


class recipe(Generic[P, T]):
    """Makes a generator of commands a method: called on a sync class, it
    runs the commands and returns the result; on an asyncio class
    (``redis_recipes.asyncio``), it returns a coroutine that does. ``steps``
    is the generator function itself, for a method that runs another's
    commands among its own (``yield from Lock.acquire.steps(self, 5)``)."""

    def __init__(self, steps: Callable[Concatenate[Any, P], Steps[T]]) -> None:
        self.steps = steps

        def call(instance: Any, *args: Any, **kwargs: Any) -> Any:
            return instance._drive(steps(instance, *args, **kwargs))

        self._call = functools.wraps(steps)(call)
        functools.update_wrapper(self, steps)

    @overload
    def __get__(self, instance: None, owner: Any) -> recipe[P, T]: ...

    @overload
    def __get__(self, instance: AsyncDriver, owner: Any) -> Callable[P, Coroutine[Any, Any, T]]: ...

    @overload
    def __get__(self, instance: Recipe, owner: Any) -> Callable[P, T]: ...

    def __get__(self, instance: Any, owner: Any) -> Any:
        if instance is None:
            return self
        return types.MethodType(self._call, instance)

    def __call__(self, instance: Any, *args: P.args, **kwargs: P.kwargs) -> Any:
        """The method called through its class (``Lock.acquire(lock, 5)``)."""
        return self._call(instance, *args, **kwargs)


class Background(Protocol):
    """Steps running in the background (see ``Recipe._background``)."""

    def stop(self) -> None:
        """Ends the run at its next pause; the steps run no further."""


class Stopped(BaseException):
    """Raised where a stopped background run pauses. Not an ``Exception``,
    so that steps catching failed commands do not catch it."""


class Run:
    """One method's generator as a driver runs it: ``request`` is the
    request it waits on until ``done``; then ``value`` is its result."""

    def __init__(self, steps: Steps[Any]) -> None:
        self._steps = steps
        self.done = False
        self.value: Any = None
        self.request: Request = ()
        self._resume(next, steps)

    def send(self, reply: Any) -> None:
        """Gives the generator the reply to its request."""
        self._resume(self._steps.send, reply)

    def throw(self, error: Exception) -> None:
        """Raises ``error`` (a server error as its most specific class)
        where the generator waits."""
        self._resume(self._steps.throw, translate(error) if isinstance(error, ResponseError) else error)

    def _resume(self, step: Callable[[Any], Request], argument: Any) -> None:
        try:
            self.request = step(argument)
        except StopIteration as end:
            self.done, self.value = True, end.value


class Recipe:
    """The base of every class: holds the client and runs the commands."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def _drive(self, steps: Steps[Any]) -> Any:
        run = Run(steps)
        while not run.done:
            try:
                reply = self._send(run.request)
            except Exception as error:
                run.throw(error)
            else:
                run.send(reply)
        return run.value

    def _send(self, request: Request) -> Any:
        if isinstance(request, Pause):
            return self._pause(request.seconds)
        words, options, wait = split(request)
        if wait is None:
            return self.client.execute_command(*words, **options)
        return send_waiting(self.client, words, options, wait)

    def _pause(self, seconds: float) -> None:
        time.sleep(seconds)

    def _background(self, steps: Steps[None], name: str) -> Background:
        """Runs ``steps`` on a daemon thread of their own, on this client."""
        return BackgroundThread(self.client, steps, name)


class BackgroundThread(Recipe):
    """Steps driven on a daemon thread until they end or ``stop()`` is
    called; a pause ends at once on ``stop()``, and the steps end there."""

    def __init__(self, client: Any, steps: Steps[None], name: str) -> None:
        super().__init__(client)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._main, args=(steps,), name=name, daemon=True)
        self._thread.start()

    def _main(self, steps: Steps[None]) -> None:
        try:
            self._drive(steps)
        except Stopped:
            steps.close()

    def _pause(self, seconds: float) -> None:
        if self._stopped.wait(seconds):
            raise Stopped

    def stop(self) -> None:
        """Ends the run and waits for its thread (unless called from it)."""
        self._stopped.set()
        if self._thread is not threading.current_thread():
            self._thread.join()


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
    """How long (seconds) to wait for the reply of a command that waits
    ``wait`` seconds in the server (None: no end)."""
    return None if wait >= FOREVER else wait + MARGIN


def send_waiting(client: Any, words: Request, options: Dict[str, Any], wait: float) -> Any:
    """Runs a command that waits up to ``wait`` seconds in the server: sent
    once, its reply read with ``read_timeout(wait)`` (see the module's
    docstring)."""
    if not LONG_READS:
        return client.execute_command(*words, **options)
    if isinstance(client, redis.RedisCluster):
        cluster: Any = client  # (redis-py's cluster client is not typed)
        try:
            node = cluster.get_redis_connection(cluster.get_node_from_key(words[1]))
            reply = exchange(node, words, wait)
        except REROUTED:
            return cluster.execute_command(*words, **options)
        callbacks = cluster.cluster_response_callbacks
    else:
        reply = exchange(client, words, wait)
        callbacks = client.response_callbacks
    callback = callbacks.get(words[0])
    return reply if callback is None else callback(reply, **options)


def exchange(client: redis.Redis, words: Request, wait: float) -> Any:
    """Sends ``words`` once on a connection of ``client`` and reads the
    reply. A dropped connection or a timeout disconnects it and raises."""
    single: Any = client.connection
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
