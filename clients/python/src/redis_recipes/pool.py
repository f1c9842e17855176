"""POOL: the book's resource pool (chapter 10) with owners, leases and a
first-come-first-served wait."""

import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._core import FOREVER, Recipe, Renewer, Steps, as_dict, ms, recipe, text, waiting
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
    ``total_count``) return what the book's do.

    ``with pool.lease(timeout=5) as resource:`` acquires (raising
    ``NoResourceFree`` if none comes free in time) and releases at the end;
    with ``renew=True`` (and a ``ttl``) a background renewer extends the
    lease every ``ttl / 3`` while the block runs. A lease lost anyway calls
    ``on_lost(resource)``, or without it raises ``LeaseLost`` at the end.

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
    def associate(self, resource: str, *more: str) -> Steps:
        """The book's: adds ``resource`` to the pool, free. True when it was
        new to the pool, False when it was already there. Beyond the book,
        several at once: True when every one was new."""
        resources = (resource, *more)
        return int((yield ("POOL.ADD", self.key, *resources))) == len(resources)

    @recipe
    def disassociate(self, resource: str, *more: str) -> Steps:
        """The book's: removes ``resource`` from the pool (free or held). True
        when it was there, False when it was not. Beyond the book, several at
        once: True when every one was there."""
        resources = (resource, *more)
        return int((yield ("POOL.REMOVE", self.key, *resources))) == len(resources)

    def _acquire_words(self, timeout: Optional[float], ttl: Optional[float]) -> Tuple[Any, ...]:
        words: Tuple[Any, ...] = ("POOL.ACQUIRE", self.key, self.owner)
        lease = ttl if ttl is not None else self.ttl
        if lease is not None:
            words += ("PX", ms(lease))
        if timeout is not None:
            words += ("WAIT", ms(timeout))
        return words

    @recipe
    def acquire(self, timeout: Optional[float] = None, ttl: Optional[float] = None) -> Steps:
        """The resource now held by this owner, or None."""
        return text((yield waiting(self._acquire_words(timeout, ttl), timeout)))

    @recipe
    def release(self, resource: str) -> Steps:
        """True when this owner held ``resource`` and freed it."""
        return (yield ("POOL.RELEASE", self.key, resource, self.owner)) == 1

    @recipe
    def renew(self, resource: str, ttl: Optional[float] = None) -> Steps:
        """Makes this owner's lease on ``resource`` end ``ttl`` (default: the
        pool object's) seconds from now; False when it no longer holds it."""
        seconds = ttl if ttl is not None else self.ttl
        if seconds is None:
            raise ValueError("renew needs a ttl")
        return (yield ("POOL.RENEW", self.key, resource, self.owner, "PX", ms(seconds))) == 1

    @recipe
    def info(self) -> Steps:
        """``size``, ``free``, ``held`` and ``waiting``."""
        return {name: int(value) for name, value in as_dict((yield ("POOL.INFO", self.key))).items()}

    @recipe
    def size(self) -> Steps:
        """How many resources the pool has, free or held."""
        return int(as_dict((yield ("POOL.INFO", self.key)))["size"])

    @recipe
    def total_count(self) -> Steps:
        """The book's name for ``size()``."""
        return int(as_dict((yield ("POOL.INFO", self.key)))["size"])

    @recipe
    def available_count(self) -> Steps:
        return int(as_dict((yield ("POOL.INFO", self.key)))["free"])

    @recipe
    def occupied_count(self) -> Steps:
        return int(as_dict((yield ("POOL.INFO", self.key)))["held"])

    @recipe
    def holders(self) -> Steps:
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
        """A context manager holding one resource for the block."""
        return Lease(self, timeout, ttl if ttl is not None else self.ttl, renew, on_lost)


class Lease:
    """One resource of a ``ResourcePool`` held for a ``with`` block."""

    def __init__(
        self,
        pool: ResourcePool,
        timeout: Optional[float],
        ttl: Optional[float],
        renew: bool,
        on_lost: Optional[Callable[[str], Any]],
    ) -> None:
        self.pool = pool
        self.timeout = timeout if timeout is not None else FOREVER
        self.ttl = ttl
        self.renew = renew
        self.on_lost = on_lost
        self.resource: Optional[str] = None
        self.lost = False
        self._renewer: Any = None

    def _taken(self, resource: Optional[str]) -> str:
        if resource is None:
            raise NoResourceFree(f"no resource of pool {self.pool.key!r} came free in time")
        self.resource = resource
        return resource

    def _renew_words(self) -> Tuple[Any, ...]:
        return ("POOL.RENEW", self.pool.key, self.resource, self.pool.owner, "PX", ms(self.ttl or 0))

    def _lose(self) -> None:
        self.lost = True
        if self.on_lost is not None and self.resource is not None:
            self.on_lost(self.resource)

    def _finish(self, released: bool, raise_lost: bool) -> None:
        if not released and not self.lost:
            self._lose()
        if self.lost and self.on_lost is None and raise_lost:
            raise LeaseLost(f"resource {self.resource!r} of pool {self.pool.key!r} was lost")

    def __enter__(self) -> str:
        resource = self._taken(self.pool.acquire(timeout=self.timeout, ttl=self.ttl))
        if self.renew and self.ttl is not None:
            self._renewer = Renewer(self.pool.client, self._renew_words(), self.ttl / 3, self._lose)
        return resource

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if self._renewer is not None:
            self._renewer.stop()
            self._renewer = None
        self._finish(self.pool.release(self.resource), kind is None)
