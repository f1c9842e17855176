"""pyrate-limiter's ``RedisBucket`` on the module's RATE commands, one import
away: ``from redis_recipes.drop_in.pyrate_limiter import RedisBucket`` for
``from pyrate_limiter import RedisBucket``, built as the library's is
(``RedisBucket.init(rates, redis, bucket_key)``, awaited for a
``redis.asyncio`` client) and used by pyrate-limiter's own ``Limiter``,
``BucketFactory`` and ``try_acquire``/``try_acquire_async``.

With the default algorithm (``SlidingWindowLog``) a ``put`` is one
``RATE.LIMIT key limit interval [AND limit interval …] COST weight
SLIDING``: the bucket's rates are the limits of one key, checked and
consumed all or nothing, by the server's clock (the library's script
counts by each client's clock, and ``EVALSHA`` answers ``NOSCRIPT`` on a
server that lost its script cache). A refused ``put`` records the server's
``retry_after_ms``. ``count`` and ``peek`` are ``RATE.PEEK`` (nothing is
consumed); ``leak`` has nothing to do (the window drops old entries as it
records new ones, and the key expires once no rate sees them); ``flush``
deletes the key, as the library's.

A blocking acquire of ``Limiter(bucket)`` waits in the server's queue: the
bucket's ``limiter_lock()`` (which pyrate-limiter's ``Limiter`` takes around
each put) tells the bucket that the caller blocks, and until when; nobody
waits on that lock. A refused blocking put queues, first come first served,
in ``LOCK.ACQUIRE <bucket_key>:queue … WAIT`` with its ``RATE.LIMIT``
pipelined behind it (the server runs it the moment the wait ends); the
client at the head keeps the head until admitted, trying again when the
server's ``retry_after_ms`` says there is room (``RATE.LIMIT`` itself cannot
wait, so the head sleeps that long in the client: one timer on the server's
time, not polling), then hands it on. For a second after a refusal, a
bucket's blocking puts start in the queue rather than with a try of their
own. Under a ``BucketFactory`` the ``Limiter`` takes no lock of the bucket's:
its puts are tries, and it sleeps the server's wait (plus its ``buffer_ms``)
between them, as with the library.

Stored: under ``bucket_key``, RATE's sliding window (a string: a tag and
one 12-byte entry per millisecond with actions), where the library keeps a
sorted set of one member per unit; while clients wait, the lock
``{<bucket_key>}:queue`` (in the bucket key's hash slot). The two formats cannot be shared: this bucket on a
key of the library's, or the library's on one of this bucket's, raises a
``WRONGTYPE`` error and changes nothing, so a fleet switches with another
``bucket_key`` (or once the library's processes have stopped and the key
is flushed).

Other algorithms (``FixedWindow``, one of the application's) run the
library's own code and keys, as does every call on a server without the
module: it is learnt once per server a client talks to, from the first
RATE command's ``unknown command`` (see ``redis_recipes.drop_in``), and the
call is made again the library's way (its script, loaded by ``init`` as
the library loads it).
"""

import inspect
import threading
import time
import uuid
from typing import Any, Callable, List, Optional, Tuple, TypeVar, Union

import redis
import redis.asyncio
import redis.asyncio.cluster
from pyrate_limiter import RateItem, SlidingWindowLog
from pyrate_limiter import RedisBucket as LibraryBucket
from pyrate_limiter.abstracts.algorithm import ADMITTED, Decision

from .._catalogue import WrongType
from .._core import Pause, Recipe, Request, Steps, as_dict, ms
from ..asyncio import AsyncDriver
from ..errors import ModuleNotLoaded, translate
from ._servers import found_without_module, without_module
from .lock import wait_slice

T = TypeVar("T")

MAX_COUNT = 2**31 - 1
"""RATE's largest ``max``: the limit ``count`` reads the window with."""
MAX_PERIOD_MS = 36_525 * 86_400_000
"""RATE's longest period (100 years): ``count`` and ``peek`` see every
entry the window keeps."""
HEAD_MARGIN_S = 0.5
"""Seconds of its lease the head keeps past its next try; less, and it
extends the lease (``LOCK.EXTEND``) before sleeping."""
CONTENDED_S = 1.0
"""Seconds a bucket refused in a blocking put sends its blocking puts
through the queue first (see ``RedisBucket._queued``)."""
_library: Any = LibraryBucket
"""The library's bucket, for its methods that are not typed."""
HEAD_LEASE_MS = 2_000
"""The lease of the head of the queue (``<bucket_key>:queue``) past its
next try: a head that dies holds the queue no longer than this."""


class _Waiting:
    """What the ``Limiter`` told the bucket about the acquire under way in
    this thread: whether it blocks and until when (``time.monotonic()``,
    None for no end). Set by the ``limiter_lock`` around each put."""

    def __init__(self) -> None:
        self.local = threading.local()

    def get(self) -> Optional[Tuple[bool, Optional[float]]]:
        mode: Optional[Tuple[bool, Optional[float]]] = getattr(self.local, "mode", None)
        return mode


class LimiterLock:
    """The lock ``RedisBucket.limiter_lock()`` gives pyrate-limiter's
    ``Limiter``: it never blocks anybody (taking it always succeeds at
    once); taking it records whether the acquire it guards blocks, and its
    deadline, for the bucket's ``put`` in this thread."""

    def __init__(self, waiting: _Waiting) -> None:
        self._waiting = waiting

    def acquire(self, blocking: bool = True, timeout: Union[float, int, None] = -1) -> bool:
        deadline = None if not blocking or timeout is None or timeout < 0 else time.monotonic() + timeout
        self._waiting.local.mode = (blocking, deadline)
        return True

    def release(self) -> None:
        self._waiting.local.mode = None

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _queue_of(key: str) -> str:
    """The queue's key: ``<bucket_key>:queue``, in the bucket key's hash
    slot (its tag, or ``{<bucket_key>}:queue`` for a key without one), so
    that a cluster sends both of a batch's keys to one node."""
    opened = key.find("{")
    closed = key.find("}", opened + 1)
    if opened != -1 and closed > opened + 1:
        return f"{key}:queue"
    return f"{{{key}}}:queue"


def _untyped(value: Any) -> Any:
    return value


def _is_async(client: Any) -> bool:
    return isinstance(client, (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster))


class _Batch(Tuple[Request, ...]):
    """Requests sent together, in one round trip (a pipeline, not a
    transaction); the reply is the list of their replies, an error reply
    as its exception (not raised)."""


def _replies(replies: List[Any]) -> List[Any]:
    return [translate(reply) if isinstance(reply, redis.ResponseError) else reply for reply in replies]


class _Driver(Recipe):
    def _send(self, request: Request) -> Any:
        if isinstance(request, _Batch):
            pipe = self.client.pipeline(transaction=False)
            for words in request:
                pipe.execute_command(*words)
            return _replies(pipe.execute(raise_on_error=False))
        return super()._send(request)


class _AsyncRunner(AsyncDriver):
    def __init__(self, client: Any) -> None:
        self.client = client

    async def _send(self, request: Request) -> Any:
        if isinstance(request, _Batch):
            pipe = self.client.pipeline(transaction=False)
            for words in request:
                pipe.execute_command(*words)
            return _replies(await pipe.execute(raise_on_error=False))
        return await super()._send(request)


def _fields(reply: Any) -> Tuple[int, int, int, int]:
    """``limited``, ``limit``, ``remaining`` and ``retry_after_ms`` of a
    ``RATE.LIMIT``/``RATE.PEEK`` reply (an array, or a map under RESP3)."""
    if isinstance(reply, dict):
        named = as_dict(reply)
        return (int(named["limited"]), int(named["limit"]), int(named["remaining"]), int(named["retry_after_ms"]))
    return int(reply[0]), int(reply[1]), int(reply[2]), int(reply[3])


class RedisBucket(LibraryBucket):
    """pyrate-limiter's ``RedisBucket`` on RATE (see the module's
    docstring): same constructor, ``init``, methods, results and errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting = _Waiting()
        self._queue = _queue_of(self.bucket_key)
        self._contended_until = 0.0

    # -- which way -----------------------------------------------------------

    def _native(self) -> bool:
        """Whether this bucket's calls go to RATE: the sliding-window log
        (the library's default algorithm) on a server not found without
        the module."""
        return type(self._algorithm) is SlidingWindowLog and not without_module(self.redis, self.bucket_key)

    def _run(self, steps: Steps[T], stock: Callable[[], Any]) -> Any:
        """``steps`` on the module (a coroutine for an asyncio client), or
        ``stock()`` (the library's way) on a server without it."""
        if not self._native():
            steps.close()
            return stock()
        if _is_async(self.redis):
            return self._run_async(steps, stock)
        try:
            return _Driver(self.redis)._drive(steps)
        except ModuleNotLoaded:
            found_without_module(self.redis, self.bucket_key)
            return stock()

    async def _run_async(self, steps: Steps[T], stock: Callable[[], Any]) -> Any:
        try:
            return await _AsyncRunner(self.redis)._drive(steps)
        except ModuleNotLoaded:
            found_without_module(self.redis, self.bucket_key)
            done = stock()
            return await done if inspect.isawaitable(done) else done

    def _limits(self) -> Request:
        words: Tuple[Any, ...] = ()
        for rate in self.rates:
            words += (("AND",) if words else ()) + (rate.limit, rate.interval)
        return words

    def _checked(self, words: Request, failed: Optional[WrongType] = None) -> Steps[Any]:
        """``words``' reply; a key holding the library's sorted set raises
        a ``WRONGTYPE`` error that says so (``failed``: the error a batch
        already had)."""
        try:
            if failed is not None:
                raise failed
            return (yield words)
        except WrongType as error:
            raise WrongType(
                f"WRONGTYPE {self.bucket_key!r} does not hold a RATE window (pyrate-limiter's own RedisBucket "
                "keeps a sorted set there): give this bucket another bucket_key, or flush it once no process "
                f"of the library uses it ({error})"
            ) from None

    # -- put -------------------------------------------------------------------

    def _limit_words(self, item: RateItem) -> Request:
        return ("RATE.LIMIT", self.bucket_key, *self._limits(), "COST", item.weight, "SLIDING")

    def _never_fits(self, item: RateItem) -> Optional[Decision]:
        """The library's verdict for a weight above a rate's limit (no
        wait), or None."""
        for rate in self.rates:
            if item.weight > rate.limit:
                return Decision(failing_rate=rate)
        return None

    def _decision(self, reply: Any) -> Decision:
        """The library's verdict from a ``RATE.LIMIT`` reply."""
        limited, limit, _, retry_after_ms = _fields(reply)
        if not limited:
            return ADMITTED
        failing = next(rate for rate in self.rates if rate.limit == limit)
        return Decision(failing_rate=failing, retry_after_ms=retry_after_ms)

    def _limiting(self, item: RateItem) -> Steps[Decision]:
        """One ``RATE.LIMIT``: the library's verdict for ``item``."""
        never = self._never_fits(item)
        if never is not None:
            return never
        return self._decision((yield from self._checked(self._limit_words(item))))

    def _putting(self, item: RateItem, mode: Optional[Tuple[bool, Optional[float]]]) -> Steps[bool]:
        if mode is None or not mode[0] or self._never_fits(item) is not None:
            decision = yield from self._limiting(item)
        elif time.monotonic() < self._contended_until:
            decision = yield from self._queued(item, mode[1])
        else:
            decision = yield from self._limiting(item)
            if not decision.allowed and decision.retry_after_ms is not None:
                decision = yield from self._queued(item, mode[1])
        return self._record(item, decision)

    def _batch(self, *requests: Request) -> Steps[List[Any]]:
        """``requests`` sent together (one round trip), their replies in
        order; an error reply raises once all are in (as its class)."""
        replies: List[Any] = yield _Batch(requests)
        for reply in replies:
            if isinstance(reply, ModuleNotLoaded):
                raise reply
        for reply in replies:
            if isinstance(reply, WrongType):
                yield from self._checked(("TYPE", self.bucket_key), reply)
            if isinstance(reply, Exception):
                raise reply
        return replies

    def _queued(self, item: RateItem, deadline: Optional[float]) -> Steps[Decision]:
        """A blocking put, first come first served through the queue
        ``<bucket_key>:queue`` (a LOCK whose holder is the head).

        One round trip: ``LOCK.ACQUIRE … WAIT`` (behind the waiters already
        there), then ``RATE.LIMIT``, which the server runs the moment the
        wait ends (a client's next command waits behind its blocked one).
        Admitted at the head: ``LOCK.RELEASEIF`` hands the head on. Refused
        at the head: it keeps it, and tries again when the server's
        ``retry_after_ms`` says there is room, until admitted (or the
        deadline passes: the last refusal). A wait that runs out (in slices
        shorter than the socket timeout, or at the deadline) is followed by
        its ``RATE.LIMIT`` all the same: a try at that moment.

        A bucket refused in a blocking put stays *contended* for
        ``CONTENDED_S``: its blocking puts start here, in the queue, instead
        of with a try of their own that could pass the waiters."""
        token = uuid.uuid4().hex
        limit = self._limit_words(item)
        slice_s = wait_slice(self.redis)
        while True:
            left = slice_s if deadline is None else min(slice_s, deadline - time.monotonic())
            acquire = ("LOCK.ACQUIRE", self._queue, token, "PX", HEAD_LEASE_MS, "WAIT", ms(max(left, 0.001)))
            granted, reply = yield from self._batch(acquire, limit)
            decision = self._decision(reply)
            lease_end = time.monotonic() + HEAD_LEASE_MS / 1000
            while granted is not None:  # at the head
                if decision.allowed or decision.retry_after_ms is None:
                    yield ("LOCK.RELEASEIF", self._queue, token)
                    return decision
                self._contended_until = time.monotonic() + CONTENDED_S
                pause = decision.retry_after_ms / 1000
                if deadline is not None and time.monotonic() + pause > deadline:
                    yield ("LOCK.RELEASEIF", self._queue, token)
                    return decision
                if time.monotonic() + pause + HEAD_MARGIN_S > lease_end:  # the lease would end first
                    yield ("LOCK.EXTEND", self._queue, token, "PX", decision.retry_after_ms + HEAD_LEASE_MS)
                    lease_end = time.monotonic() + pause + HEAD_LEASE_MS / 1000
                yield Pause(pause)
                decision = yield from self._limiting(item)
            if decision.allowed or decision.retry_after_ms is None:
                return decision
            self._contended_until = time.monotonic() + CONTENDED_S
            if deadline is not None and time.monotonic() >= deadline:
                return decision

    def put(self, item: RateItem) -> Any:
        """``item`` into the bucket: True when every rate has room for its
        weight (then consumed in all of them), else False with the failing
        rate and its wait recorded. Inside a blocking ``Limiter`` acquire,
        a refused put waits in the server's queue (see the module)."""
        if item.weight <= 0:  # nothing to count: RATE counts a weight of at least 1
            return self._run(self._admitted(item), lambda: LibraryBucket.put(self, item))
        mode = self._waiting.get()
        blocking = mode is not None and mode[0]
        if (
            (not blocking or time.monotonic() >= self._contended_until)
            and not _is_async(self.redis)
            and self._native()
            and self._never_fits(item) is None
        ):
            # The common case in one call, without the generators' machinery.
            try:
                reply = self.redis.execute_command(*self._limit_words(item))
            except redis.ResponseError:
                pass  # sent again below, which raises it as its class or goes the library's way
            else:
                decision = self._decision(reply)
                if decision.allowed or not blocking or decision.retry_after_ms is None:
                    return self._record(item, decision)
                assert mode is not None
                return self._run(self._recorded(item, self._queued(item, mode[1])), lambda: False)
        return self._run(self._putting(item, mode), lambda: LibraryBucket.put(self, item))

    def _recorded(self, item: RateItem, deciding: Steps[Decision]) -> Steps[bool]:
        return self._record(item, (yield from deciding))

    def _admitted(self, item: RateItem) -> Steps[bool]:
        if False:  # a generator that sends no command
            yield ()
        return self._record(item, ADMITTED)

    def limiter_lock(self) -> Optional[object]:
        """The ``Limiter``'s signal to this bucket that an acquire blocks
        (``LimiterLock``); it holds nobody back."""
        return LimiterLock(self._waiting)

    # -- reading -----------------------------------------------------------------

    def _counting(self) -> Steps[int]:
        reply = yield from self._checked(("RATE.PEEK", self.bucket_key, MAX_COUNT, MAX_PERIOD_MS, "SLIDING"))
        return MAX_COUNT - _fields(reply)[2]

    def count(self) -> Any:
        """The units the window holds (``RATE.PEEK``): those of the longest
        rate's interval, and older ones until the next put drops them."""
        return self._run(self._counting(), lambda: _library.count(self))

    def _peeking(self, index: int) -> Steps[Optional[RateItem]]:
        if index < 0:
            return None
        words = ("RATE.PEEK", self.bucket_key, index + 1, MAX_PERIOD_MS, "COST", 1, "SLIDING")
        # With the server's TIME, read in the same round trip: the units'
        # times are on the clock that recorded them, so two peeks order them
        # as they were recorded, however long each round trip took.
        reply, now = yield from self._batch(words, ("TIME",))
        limited, _, _, retry_after_ms = _fields(reply)
        if not limited:  # fewer than index + 1 units
            return None
        seconds, micros = (int(part) for part in now)
        # The unit leaves a window of MAX_PERIOD_MS in retry_after_ms: it was
        # recorded MAX_PERIOD_MS - retry_after_ms before the server's now.
        return RateItem(self.bucket_key, seconds * 1000 + micros // 1000 + retry_after_ms - MAX_PERIOD_MS)

    def peek(self, index: int) -> Any:
        """The unit ``index`` places before the newest (0: the newest),
        None past the oldest: a ``RateItem`` with the time it was recorded
        (on this bucket's clock) and the bucket's key as its name (the
        window keeps times, not names)."""
        return self._run(self._peeking(index), lambda: LibraryBucket.peek(self, index))

    def leak(self, current_timestamp: Optional[int] = None) -> Any:
        """Nothing to leak with the module (0): the window forgets what no
        rate sees as it records, and the key expires with its last entry."""
        if not self._native():
            return LibraryBucket.leak(self, current_timestamp)
        if _is_async(self.redis):
            return _nothing()
        return 0


async def _nothing() -> int:
    return 0


__all__ = ["LimiterLock", "RedisBucket"]
