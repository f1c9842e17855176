"""python-redis-lock's ``redis_lock`` on the module's LOCK commands, one line
away: ``from redis_recipes.drop_in import redis_lock`` for ``import
redis_lock`` (or ``from redis_recipes.drop_in.redis_lock import Lock`` for
``from redis_lock import Lock``).

The same names: ``Lock(redis_client, name, expire=None, id=None,
auto_renewal=False, strict=True, signal_expire=1000, blocking=True)`` with
``acquire(blocking=True, timeout=None)``, ``extend(expire=None)``,
``release()``, ``locked()``, ``get_owner_id()``, ``reset()``, ``id``, the
context manager and the renewal thread; ``reset_all(redis_client)``; the
exceptions ``AlreadyAcquired``, ``NotAcquired``, ``AlreadyStarted``,
``TimeoutNotUsable``, ``InvalidTimeout``, ``TimeoutTooLarge`` and
``NotExpirable`` (``RuntimeError``s); the loggers ``redis_lock.acquire``,
``redis_lock.release`` and ``redis_lock.refresh.*`` with the library's
messages. The same keys: ``lock:<name>`` holds the lock's id (its TTL the
``expire``), and each release, ``reset`` or ``reset_all`` pushes ``1`` onto
``lock-signal:<name>`` for ``signal_expire`` ms, which the library's
waiters ``BLPOP``; so the library and this module on one name exclude each
other and wake each other's waiters, and a fleet can switch one process at
a time.

What changes, on a server with the module: ``acquire`` is ``LOCK.ACQUIRE
lock:<name> <id> [EX expire] NX``, and a blocking one that finds the lock
taken waits in the server's first-come-first-served queue (``… WAIT``),
which gives it the lock the moment the holder releases it (the release's
``DEL``), a ``reset`` deletes it or its ``expire`` ends; no ``BLPOP`` race
between waiters. A ``timeout`` is one wait of that many seconds (the
library's may wait longer: each wake-up that loses the race starts a new
``BLPOP`` of ``timeout``). ``release``, ``extend``, ``reset`` and
``reset_all`` are the library's scripts' steps (their ``DEL`` hands the
lock to the oldest waiter), so ``NotExpirable`` and the signal list stay.

The Django cache backend is ``redis_recipes.drop_in.redis_lock.django_cache
.RedisCache`` (for ``redis_lock.django_cache.RedisCache``).

The extra: ``Lock(…, fence=True)`` takes a fencing token with each
acquisition (``INCR`` of ``lock-fence:<name>``, in the same command as the
acquisition on the module), kept in ``lock.fencing_token``.

Without the module (a managed Redis, or a server before the module is
loaded) ``acquire`` is the library's: ``SET NX EX``, then ``BLPOP`` on the
signal list, learnt from the first ``LOCK.ACQUIRE``'s ``unknown command``
once per connection pool (see ``redis_recipes.drop_in``'s page)."""

import logging
import threading
import weakref
from base64 import b64encode
from os import urandom
from typing import Any, Optional, Union

from redis import StrictRedis

from ..._core import Recipe, Request, Steps, waiting
from ...errors import ModuleNotLoaded
from .._servers import found_without_module, without_module
from ..lock import wait_slice

logger_for_acquire = logging.getLogger("redis_lock.acquire")
logger_for_refresh_thread = logging.getLogger("redis_lock.refresh.thread")
logger_for_refresh_start = logging.getLogger("redis_lock.refresh.start")
logger_for_refresh_shutdown = logging.getLogger("redis_lock.refresh.shutdown")
logger_for_refresh_exit = logging.getLogger("redis_lock.refresh.exit")
logger_for_release = logging.getLogger("redis_lock.release")

# The library's stored keys and what its scripts do to them (written here from
# its documented behaviour). KEYS[1] is the lock, KEYS[2] its signal list.
UNLOCK_SCRIPT = b"""
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then return 1 end
redis.call('DEL', KEYS[2])
redis.call('LPUSH', KEYS[2], 1)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[1])
return 0
"""
"""Release: 1 when ``ARGV[1]`` does not hold the lock; else the signal
list set to ``[1]`` for ``ARGV[2]`` ms, the lock deleted, 0."""

EXTEND_SCRIPT = b"""
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then return 1 end
if redis.call('TTL', KEYS[1]) < 0 then return 2 end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 0
"""
"""Extend: 1 when ``ARGV[1]`` does not hold the lock, 2 when it has no
TTL, else its TTL set to ``ARGV[2]`` seconds and 0."""

RESET_SCRIPT = b"""
redis.call('DEL', KEYS[2])
redis.call('LPUSH', KEYS[2], 1)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return redis.call('DEL', KEYS[1])
"""
"""Reset: the signal list set to ``[1]`` for ``ARGV[2]`` ms and the lock
deleted, whoever holds it."""

RESET_ALL_SCRIPT = b"""
local names = redis.call('KEYS', 'lock:*')
for _, name in ipairs(names) do
  local signal = 'lock-signal:' .. string.sub(name, 6)
  redis.call('DEL', signal)
  redis.call('LPUSH', signal, 1)
  redis.call('EXPIRE', signal, 1)
  redis.call('DEL', name)
end
return #names
"""
"""Reset all: every ``lock:*`` key deleted, its signal list set to ``[1]``
for 1 s; the number of locks."""


class AlreadyAcquired(RuntimeError):
    pass


class NotAcquired(RuntimeError):
    pass


class AlreadyStarted(RuntimeError):
    pass


class TimeoutNotUsable(RuntimeError):
    pass


class InvalidTimeout(RuntimeError):
    pass


class TimeoutTooLarge(RuntimeError):
    pass


class NotExpirable(RuntimeError):
    pass


def _owner_text(value: Any) -> Any:
    """A lock's value as ``get_owner_id`` gives it (bytes as ASCII)."""
    return value.decode("ascii", "replace") if isinstance(value, bytes) else value


class Lock:
    """A lock on the key ``lock:<name>``: python-redis-lock's ``Lock``,
    waiting in the server's first-come-first-served queue (see the
    module's docstring). ``fence=True`` (an extra) takes a fencing token
    with each acquisition, in ``fencing_token``."""

    unlock_script: Any = None
    extend_script: Any = None
    reset_script: Any = None
    reset_all_script: Any = None

    _lock_renewal_interval: Optional[float]
    _lock_renewal_thread: Optional[threading.Thread]

    def __init__(self, redis_client: Any, name: str, expire: Any = None, id: Union[str, bytes, None] = None,
                 auto_renewal: bool = False, strict: bool = True, signal_expire: int = 1000,
                 blocking: bool = True, *, fence: bool = False) -> None:
        if strict and not isinstance(redis_client, StrictRedis):
            raise ValueError(
                "redis_client must be instance of StrictRedis. Use strict=False if you know what you're doing."
            )
        if auto_renewal and expire is None:
            raise ValueError("Expire may not be None when auto_renewal is set")
        self._client = redis_client
        if expire:
            expire = int(expire)
            if expire < 0:
                raise ValueError("A negative expire is not acceptable.")
        else:
            expire = None
        self._expire: Optional[int] = expire
        self._signal_expire = signal_expire
        if id is None:
            self._id = b64encode(urandom(18)).decode("ascii")
        elif isinstance(id, bytes):
            try:
                self._id = id.decode("ascii")
            except UnicodeDecodeError:
                self._id = b64encode(id).decode("ascii")
        elif isinstance(id, str):
            self._id = id
        else:
            raise TypeError(f"Incorrect type for `id`. Must be bytes/str not {type(id)}.")
        self._name = "lock:" + name
        self._signal = "lock-signal:" + name
        self._fence: Optional[str] = "lock-fence:" + name if fence else None
        self.fencing_token: Optional[int] = None
        """The fencing token of the last acquisition (with ``fence=True``)."""
        self._lock_renewal_interval = float(expire) * 2 / 3 if auto_renewal else None
        self._lock_renewal_thread = None
        self.blocking = blocking

    @classmethod
    def register_scripts(cls, redis_client: Any) -> None:
        """Makes the scripts (once; ``redis_client`` only computes their
        digests: each call runs on its lock's client)."""
        if cls.reset_all_script is None:
            Lock.unlock_script = redis_client.register_script(UNLOCK_SCRIPT)
            Lock.extend_script = redis_client.register_script(EXTEND_SCRIPT)
            Lock.reset_script = redis_client.register_script(RESET_SCRIPT)
            Lock.reset_all_script = redis_client.register_script(RESET_ALL_SCRIPT)

    def _script(self, which: str, keys: Any, args: Any) -> Any:
        self.register_scripts(self._client)
        return getattr(self, which)(client=self._client, keys=keys, args=args)

    @property
    def _held(self) -> bool:
        return bool(self.id == self.get_owner_id())

    def reset(self) -> None:
        """Deletes the lock whoever holds it (its next waiter gets it) and
        signals the library's waiters."""
        self._script("reset_script", (self._name, self._signal), (self.id, self._signal_expire))

    @property
    def id(self) -> str:
        return self._id

    def get_owner_id(self) -> Any:
        return _owner_text(self._client.get(self._name))

    def _checked_timeout(self, blocking: bool, timeout: Any) -> Any:
        """``timeout`` as the library takes it (a whole number of seconds;
        0 or None: no end), or the library's error for it."""
        if not blocking and timeout is not None:
            raise TimeoutNotUsable("Timeout cannot be used if blocking=False")
        if timeout:
            timeout = int(timeout)
            if timeout < 0:
                raise InvalidTimeout(f"Timeout ({timeout}) cannot be less than or equal to 0")
            if self._expire and not self._lock_renewal_interval and timeout > self._expire:
                raise TimeoutTooLarge(f"Timeout ({timeout}) cannot be greater than expire ({self._expire})")
        return timeout

    def acquire(self, blocking: bool = True, timeout: Any = None) -> bool:
        """Takes the lock: True once held, False when ``blocking=False``
        finds it taken or ``timeout`` seconds (a whole number; 0 or None:
        no end) pass in the server's queue."""
        logger_for_acquire.debug("Acquiring Lock(%r) ...", self._name)
        try:
            timeout = self._checked_timeout(blocking, timeout)
        except Exception:
            if self._held:  # the library looks first
                raise AlreadyAcquired("Already acquired from this Lock instance.") from None
            raise
        if without_module(self._client, self._name):
            acquired = self._acquire_as_library(blocking, timeout)
        else:
            try:
                acquired = Recipe(self._client)._drive(self._acquiring(blocking, timeout))
            except ModuleNotLoaded:
                found_without_module(self._client, self._name)
                acquired = self._acquire_as_library(blocking, timeout)
        if not acquired:
            return False
        logger_for_acquire.info("Acquired Lock(%r).", self._name)
        if self._lock_renewal_interval is not None:
            self._start_lock_renewer()
        return True

    def _acquiring(self, blocking: bool, timeout: Any) -> Steps[bool]:
        """``LOCK.ACQUIRE … NX``; taken by another id, one ``… WAIT`` of
        ``timeout`` in the server's queue (no end: waits shorter than the
        socket timeout, one after another)."""
        words: Request = ("LOCK.ACQUIRE", self._name, self._id)
        if self._expire:
            words += ("EX", self._expire)
        if self._fence:
            words += ("FENCE", self._fence)
        words += ("NX",)
        reply = yield words
        if reply is None:
            if _owner_text((yield ("GET", self._name))) == self._id:
                raise AlreadyAcquired("Already acquired from this Lock instance.")
            if not blocking:
                logger_for_acquire.warning("Failed to acquire Lock(%r).", self._name)
                return False
            if timeout:
                reply = yield waiting((*words, "WAIT", timeout * 1000), timeout)
                if reply is None:
                    return False
            else:
                wait = int(wait_slice(self._client) * 1000)
                while reply is None:
                    reply = yield (*words, "WAIT", wait)
        if self._fence:
            self.fencing_token = int(reply)
        return True

    def _acquire_as_library(self, blocking: bool, timeout: Any) -> bool:
        """The library's way: ``SET NX EX``, and ``BLPOP`` on the signal
        list between tries."""
        if self._held:
            raise AlreadyAcquired("Already acquired from this Lock instance.")
        blpop_timeout = timeout or self._expire or 0
        timed_out: Any = False
        while not self._client.set(self._name, self._id, nx=True, ex=self._expire):
            if timed_out:
                return False
            if not blocking:
                logger_for_acquire.warning("Failed to acquire Lock(%r).", self._name)
                return False
            timed_out = not self._client.blpop(self._signal, blpop_timeout) and timeout
        if self._fence:
            self.fencing_token = int(self._client.incr(self._fence))
        return True

    def extend(self, expire: Any = None) -> None:
        """Sets the lock's TTL to ``expire`` seconds (None: the lock's
        ``expire``): ``NotAcquired`` when this id does not hold it,
        ``NotExpirable`` when it has no TTL."""
        if expire:
            expire = int(expire)
            if expire < 0:
                raise ValueError("A negative expire is not acceptable.")
        elif self._expire is not None:
            expire = self._expire
        else:
            raise TypeError(
                "To extend a lock 'expire' must be provided as an argument to extend() method"
                " or at initialization time."
            )
        error = self._script("extend_script", (self._name, self._signal), (self._id, expire))
        if error == 1:
            raise NotAcquired(f"Lock {self._name} is not acquired or it already expired.")
        if error == 2:
            raise NotExpirable(f"Lock {self._name} has no assigned expiration time")
        if error:
            raise RuntimeError(f"Unsupported error code {error} from EXTEND script")

    @staticmethod
    def _lock_renewer(name: str, lockref: "weakref.ref[Lock]", interval: float, stop: threading.Event) -> None:
        """Extends the lock every ``interval`` seconds until ``stop`` is set
        or the lock is garbage-collected."""
        while not stop.wait(timeout=interval):
            logger_for_refresh_thread.debug("Refreshing Lock(%r).", name)
            lock = lockref()
            if lock is None:
                logger_for_refresh_thread.debug("Stopping loop because Lock(%r) was garbage collected.", name)
                break
            lock.extend(expire=lock._expire)
            del lock
        logger_for_refresh_thread.debug("Exiting renewal thread for Lock(%r).", name)

    def _start_lock_renewer(self) -> None:
        if self._lock_renewal_thread is not None:
            raise AlreadyStarted("Lock refresh thread already started")
        logger_for_refresh_start.debug(
            "Starting renewal thread for Lock(%r). Refresh interval: %s seconds.",
            self._name,
            self._lock_renewal_interval,
        )
        self._lock_renewal_stop = threading.Event()
        self._lock_renewal_thread = threading.Thread(
            target=self._lock_renewer,
            kwargs={
                "name": self._name,
                "lockref": weakref.ref(self),
                "interval": self._lock_renewal_interval,
                "stop": self._lock_renewal_stop,
            },
            daemon=True,
        )
        self._lock_renewal_thread.start()

    def _stop_lock_renewer(self) -> None:
        if self._lock_renewal_thread is None or not self._lock_renewal_thread.is_alive():
            return
        logger_for_refresh_shutdown.debug("Signaling renewal thread for Lock(%r) to exit.", self._name)
        self._lock_renewal_stop.set()
        self._lock_renewal_thread.join()
        self._lock_renewal_thread = None
        logger_for_refresh_exit.debug("Renewal thread for Lock(%r) exited.", self._name)

    def __enter__(self) -> "Lock":
        if not self.acquire(blocking=self.blocking):
            if self.blocking:
                raise AssertionError(f"Lock({self._name}) wasn't acquired, but blocking=True was used!")
            raise NotAcquired(f"Lock({self._name}) is not acquired or it already expired.")
        return self

    def __exit__(self, exc_type: Any = None, exc_value: Any = None, traceback: Any = None) -> None:
        self.release()

    def release(self) -> None:
        """Releases the lock this id holds (its next waiter gets it) and
        signals the library's waiters; ``NotAcquired`` when it does not
        hold it."""
        if self._lock_renewal_thread is not None:
            self._stop_lock_renewer()
        logger_for_release.debug("Releasing Lock(%r).", self._name)
        error = self._script("unlock_script", (self._name, self._signal), (self._id, self._signal_expire))
        if error == 1:
            raise NotAcquired(f"Lock({self._name}) is not acquired or it already expired.")
        if error:
            raise RuntimeError(f"Unsupported error code {error} from EXTEND script.")

    def locked(self) -> bool:
        """Whether the lock is held, by any id."""
        return bool(self._client.exists(self._name) == 1)


def reset_all(redis_client: Any) -> None:
    """Deletes every ``lock:*`` key (each one's next waiter gets it) and
    signals the library's waiters."""
    Lock.register_scripts(redis_client)
    Lock.reset_all_script(client=redis_client)


__all__ = [
    "AlreadyAcquired", "AlreadyStarted", "InvalidTimeout", "Lock", "NotAcquired", "NotExpirable",
    "TimeoutNotUsable", "TimeoutTooLarge", "reset_all",
]
