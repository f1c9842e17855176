"""NEARBY: the book's nearby users (chapter 25) on a plain geo key, its random
neighbour drawn by the module's ``NEARBY.RANDOM``: uniformly among every user
within the radius, not among the nine nearest."""

from typing import Any, List, Optional, Tuple

from ._core import Recipe, Steps, recipe

MAX_SEARCH_SIZE = 10
"""``search``'s default ``limit`` (the book's constant)."""
NEIGHBOUR_RADIUS_KM = 1
"""How far a random neighbour may be, in kilometres (the book's 1 km)."""


class Location(Recipe):
    """Users' positions in the geo key ``key`` (what ``GEOADD`` writes, which
    every geo command reads). ``pin``, ``locate``, ``distance``, ``size`` and
    ``search`` are the book's geo commands; ``random_neighbour`` and
    ``cached_random_neighbour`` draw uniformly among every other user within
    1 km, in one read, and raise ``NoPosition`` for a user without a
    position (the book's raised ``ValueError`` when the user was missing from
    its search)."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def pin(self, user: Any, long: float, lati: float) -> Steps[None]:
        """Records (or moves) ``user`` at longitude ``long``, latitude ``lati``."""
        yield ("GEOADD", self.key, long, lati, user)

    @recipe
    def locate(self, user: Any) -> Steps[Optional[Tuple[float, float]]]:
        """``(longitude, latitude)`` of ``user``, or None when it has none."""
        reply = yield ("GEOPOS", self.key, user)
        position = reply[0] if reply else None
        if position is None:
            return None
        return (float(position[0]), float(position[1]))

    @recipe
    def distance(self, user_x: Any, user_y: Any) -> Steps[Optional[float]]:
        """The distance between two users in kilometres, or None when one has
        no position."""
        reply = yield ("GEODIST", self.key, user_x, user_y, "km")
        return None if reply is None else float(reply)

    @recipe
    def size(self) -> Steps[int]:
        """How many users have a position."""
        return int((yield ("ZCARD", self.key)))

    @recipe
    def search(self, user: Any, radius: float, limit: int = MAX_SEARCH_SIZE) -> Steps[List[Any]]:
        """Other users within ``radius`` km of ``user``: as the book's, the
        ``limit`` nearest of a search that counts ``user`` itself (so at most
        ``limit - 1`` others), nearest first."""
        found = yield ("GEOSEARCH", self.key, "FROMMEMBER", user, "BYRADIUS", radius, "km", "COUNT", limit, "ASC")
        name = user.encode() if isinstance(user, str) else user
        return [other for other in found if other not in (user, name)]

    @recipe
    def random_neighbour(self, user: Any, limit: int = MAX_SEARCH_SIZE) -> Steps[Any]:
        """Another user within 1 km of ``user``, drawn uniformly among all of
        them, or None when nobody is near. ``limit``, the book's bound on the
        users it drew among, is taken and has no effect: the draw covers every
        user within 1 km."""
        return (yield ("NEARBY.RANDOM", self.key, "FROMMEMBER", user, "BYRADIUS", NEIGHBOUR_RADIUS_KM, "km"))

    @recipe
    def cached_random_neighbour(self, user: Any, limit: int = MAX_SEARCH_SIZE) -> Steps[Any]:
        """The book's cached ``random_neighbour``, which drew among a copy of
        the search kept for a minute: here the same draw as
        ``random_neighbour``, over the key itself, so never stale and with
        no second key (in a cluster, none in another slot)."""
        return (yield ("NEARBY.RANDOM", self.key, "FROMMEMBER", user, "BYRADIUS", NEIGHBOUR_RADIUS_KM, "km"))
