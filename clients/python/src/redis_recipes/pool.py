"""POOL: the book's resource pool (chapter 10) with owners, leases and a
first-come-first-served wait."""

import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._core import FOREVER, Recipe, Request, Steps, as_dict, ms, recipe, text, waiting
from ._held import Held, Runner
from .errors import LeaseLost, NoResourceFree


class ResourcePool(Recipe):
    """Named resources (connections, API keys, seats), each free or held by
    one owner.

    ``associate``/``disassociate`` add and remove resources; ``acquire()``
    takes the one free the longest for this object's ``owner`` (None when
    none is free; with ``timeout=s`` it waits up to ``s`` seconds in the
    server's first-come-first-served queue, no polling); ``release`` and
    ``renew`` only work for the owner that holds the resource. ``ttl``
    (seconds) makes a holding end by itself, so a crashed holder's resource
    comes back. The book's methods (``associate``, ``disassociate``,
    ``acquire``, ``release``, ``available_count``, ``occupied_count``,
    ``total_count``, ``is_available``, ``is_occupied``, ``has``) return what
    the book's do.

    ``with pool.lease(timeout=5) as resource:`` acquires, waiting up to
    ``timeout`` seconds (raising ``NoResourceFree`` if none comes free in
    time), and releases at the end; with ``renew=True`` (and a ``ttl``) a
    background renewer (a thread; a task with ``redis_recipes.asyncio``)
    extends the lease to ``ttl`` seconds every ``ttl / 3`` seconds while the
    block runs, trying a failed renewal again while the lease lasts. A lease
    lost (the server answers that this owner no longer holds the resource,
    renewals failed until the lease's end, or the block outlived an unrenewed
    ``ttl``) stops the renewer and calls ``on_lost(resource)`` once, or
    without it raises ``LeaseLost`` when the block ends (see ``Lock``).

    A wait is sent once and read past its end, whatever the client's
    ``socket_timeout``, keeping its place in the queue (see ``Lock``)."""

    def __init__(
        self,
        client: Any,
        key: str,
        *,
        owner: Optional[str] = None,
        ttl: Optional[float] = None,
    ) -> None:
        super().__init__(client)
        self.key = key
        self.owner = owner if owner is not None else uuid.uuid4().hex
        self.ttl = ttl

    @recipe
    def associate(self, resource: str, *more: str) -> Steps[bool]:
        """The book's: adds ``resource`` to the pool, free. True when it was
        new to the pool, False when it was already there. Beyond the book,
        several at once: True when every one was new."""
        resources = (resource, *more)
        return int((yield ("POOL.ADD", self.key, *resources))) == len(resources)

    @recipe
    def disassociate(self, resource: str, *more: str) -> Steps[bool]:
        """The book's: removes ``resource`` from the pool (free or held). True
        when it was there, False when it was not. Beyond the book, several at
        once: True when every one was there."""
        resources = (resource, *more)
        return int((yield ("POOL.REMOVE", self.key, *resources))) == len(resources)

    def _acquire_words(self, timeout: Optional[float], ttl: Optional[float]) -> Request:
        words: Request = ("POOL.ACQUIRE", self.key, self.owner)
        lease = ttl if ttl is not None else self.ttl
        if lease is not None:
            words += ("PX", ms(lease))
        if timeout is not None:
            words += ("WAIT", ms(timeout))
        return words

    @recipe
    def acquire(self, timeout: Optional[float] = None, ttl: Optional[float] = None) -> Steps[Optional[str]]:
        """The resource now held by this owner, or None. ``timeout``: the
        most seconds to wait for one in the server's queue (None: one try);
        ``ttl``: the lease in seconds (default: the pool object's)."""
        return text((yield waiting(self._acquire_words(timeout, ttl), timeout)))

    @recipe
    def release(self, resource: str) -> Steps[bool]:
        """True when this owner held ``resource`` and freed it."""
        return bool((yield ("POOL.RELEASE", self.key, resource, self.owner)) == 1)

    @recipe
    def renew(self, resource: str, ttl: Optional[float] = None) -> Steps[bool]:
        """Makes this owner's lease on ``resource`` end ``ttl`` (default: the
        pool object's) seconds from now; False when it no longer holds it."""
        seconds = ttl if ttl is not None else self.ttl
        if seconds is None:
            raise ValueError("renew needs a ttl")
        return bool((yield ("POOL.RENEW", self.key, resource, self.owner, "PX", ms(seconds))) == 1)

    @recipe
    def info(self) -> Steps[Dict[str, int]]:
        """``size``, ``free``, ``held`` and ``waiting``."""
        return {name: int(value) for name, value in as_dict((yield ("POOL.INFO", self.key))).items()}

    @recipe
    def size(self) -> Steps[int]:
        """How many resources the pool has, free or held."""
        return int(as_dict((yield ("POOL.INFO", self.key)))["size"])

    @recipe
    def total_count(self) -> Steps[int]:
        """The book's name for ``size()``."""
        return int(as_dict((yield ("POOL.INFO", self.key)))["size"])

    @recipe
    def available_count(self) -> Steps[int]:
        """How many resources are free."""
        return int(as_dict((yield ("POOL.INFO", self.key)))["free"])

    @recipe
    def occupied_count(self) -> Steps[int]:
        """How many resources are held."""
        return int(as_dict((yield ("POOL.INFO", self.key)))["held"])

    @recipe
    def status(self, resource: str) -> Steps[Optional[str]]:
        """``"free"``, ``"held"`` (by a live lease), or None when the pool
        lacks ``resource`` (``POOL.STATUS``; a lease that ended is free)."""
        return text((yield ("POOL.STATUS", self.key, resource)))

    @recipe
    def is_available(self, resource: str) -> Steps[bool]:
        """The book's: True when ``resource`` is in the pool and free."""
        return text((yield ("POOL.STATUS", self.key, resource))) == "free"

    @recipe
    def is_occupied(self, resource: str) -> Steps[bool]:
        """The book's: True when ``resource`` is in the pool and held."""
        return text((yield ("POOL.STATUS", self.key, resource))) == "held"

    @recipe
    def has(self, resource: str) -> Steps[bool]:
        """The book's: True when ``resource`` is in the pool, free or held."""
        return (yield ("POOL.STATUS", self.key, resource)) is not None

    @recipe
    def holders(self) -> Steps[Dict[str, Tuple[str, Optional[int]]]]:
        """``{resource: (owner, lease end in Unix ms or None)}``."""
        rows: List[Any] = (yield ("POOL.HOLDERS", self.key)) or []
        held: Dict[str, Tuple[str, Optional[int]]] = {}
        for resource, owner, until in rows:
            held[text(resource) or ""] = (text(owner) or "", None if int(until) < 0 else int(until))
        return held

    def lease(
        self,
        timeout: Optional[float] = None,
        *,
        ttl: Optional[float] = None,
        renew: bool = False,
        on_lost: Optional[Callable[[str], Any]] = None,
    ) -> "Lease":
        """A context manager holding one resource for the block: it waits
        up to ``timeout`` seconds for one (None: forever), leased for
        ``ttl`` seconds (default: the pool object's); see the class."""
        return Lease(self, timeout, ttl if ttl is not None else self.ttl, renew, on_lost)


class Lease(Held[str]):
    """One resource of a ``ResourcePool`` held for a ``with`` block (see
    ``ResourcePool.lease``); ``timeout`` and ``ttl`` are in seconds."""

    def __init__(
        self,
        pool: ResourcePool,
        timeout: Optional[float],
        ttl: Optional[float],
        renew: bool,
        on_lost: Optional[Callable[[str], Any]],
    ) -> None:
        super().__init__(ttl, renew, on_lost)
        self.pool = pool
        self.timeout = timeout if timeout is not None else FOREVER
        self.resource: Optional[str] = None

    def _taking(self) -> Steps[str]:
        resource = yield from ResourcePool.acquire.steps(self.pool, self.timeout, self.ttl)
        if resource is None:
            raise NoResourceFree(f"no resource of pool {self.pool.key!r} came free in time")
        self.resource = resource
        return resource

    def _giving_back(self) -> Steps[bool]:
        if self.resource is None:
            return False
        return (yield from ResourcePool.release.steps(self.pool, self.resource))

    def _extension(self, seconds: float) -> Request:
        return ("POOL.RENEW", self.pool.key, self.resource, self.pool.owner, "PX", ms(seconds))

    def _runner(self) -> Runner:
        return self.pool

    def _subject(self) -> Optional[str]:
        return self.resource

    def _lost_error(self) -> Exception:
        return LeaseLost(f"resource {self.resource!r} of pool {self.pool.key!r} was lost")
