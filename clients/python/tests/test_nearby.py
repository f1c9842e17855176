"""``redis_recipes.nearby`` on every server, sync and asyncio: the book's
``Location`` (chapter 25) returns what the book's returns, on the same plain
geo key, and its random neighbour is drawn among every user within 1 km,
not among the nine nearest."""

from typing import Any

import pytest
from conftest import Book, value

import redis_recipes

PARIS = [
    ("eiffel", 2.2945, 48.8584),
    ("arc-de-triomphe", 2.2950, 48.8738),
    ("louvre", 2.3376, 48.8606),
    ("notre-dame", 2.3499, 48.8530),
]


def test_location_returns_what_the_book_returns(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        location = recipes.Location(client, "paris")
        for user, long, lati in PARIS:
            assert await value(location.pin(user, long, lati)) is None
        assert await value(location.size()) == 4
        long, lati = await value(location.locate("eiffel"))
        assert (round(long, 4), round(lati, 4)) == (2.2945, 48.8584)
        assert await value(location.locate("bastille")) is None
        assert await value(location.distance("eiffel", "arc-de-triomphe")) == pytest.approx(1.7134, abs=1e-4)
        assert await value(location.distance("eiffel", "bastille")) is None
        # As the book's search: GEOSEARCH … COUNT limit, less the user.
        assert await value(location.search("eiffel", 5)) == ["arc-de-triomphe", "louvre", "notre-dame"]
        assert await value(location.search("eiffel", 5, 2)) == ["arc-de-triomphe"]
        assert await value(location.search("eiffel", 0.5)) == []
        # The key is the book's: its own calls read it.
        assert book.plain.geosearch("paris", member="eiffel", radius=2, unit="km") == ["eiffel", "arc-de-triomphe"]
        # Within 1 km of the Louvre: nobody; of the Eiffel Tower: nobody (1.7 km).
        assert await value(location.random_neighbour("eiffel")) is None
        assert await value(location.cached_random_neighbour("eiffel")) is None
        await value(location.pin("trocadero", 2.2885, 48.8620))
        assert await value(location.random_neighbour("eiffel")) == "trocadero"
        assert await value(location.cached_random_neighbour("eiffel", 10)) == "trocadero"
        # A user without a position: the module's error, a ResponseError.
        with pytest.raises(redis_recipes.NoPosition, match="NOPOSITION member 'bastille' has no position"):
            await value(location.random_neighbour("bastille"))
        # No cache key was written: the draw reads the geo key alone.
        assert book.plain.keys("*") == ["paris"]

    book.run(body)


def test_a_random_neighbour_is_any_user_within_a_kilometre(book: Book) -> None:
    # 30 users within 1 km: the book's draw, among the 10 nearest of its
    # search (the user itself one of them), never reached 21 of them.
    async def body(client: Any, recipes: Any) -> None:
        location = recipes.Location(client, "berlin")
        await value(location.pin("me", 13.4, 52.5))
        for i in range(30):
            await value(location.pin(f"u{i}", 13.4 + 0.0002 * (i + 1), 52.5))
        await value(location.pin("far", 13.5, 52.5))
        drawn = set()
        for _ in range(600):
            drawn.add(await value(location.random_neighbour("me")))
        # Each user missed by 600 uniform draws with probability (29/30)**600 < 2e-9.
        assert drawn == {f"u{i}" for i in range(30)}

    book.run(body)
