"""``redis_recipes.queue`` on every server, sync and asyncio: the book's
``FifoQueue``, ``FixedLengthQueue`` and ``FadedQueue`` (chapter 27) return
what the book's return and leave the list as the book's leave it (the book's
pushes, ``RPUSH`` then ``LTRIM`` in a transaction, run here on another key
as the reference), a ``dequeue`` waits in the server, and ``FadedQueue``
also says which items fell out."""

import asyncio
import time
from typing import Any, List

import pytest
import redis
from conftest import Book, Clients, value
from recipes_helpers import commands, run, same, start

import redis_recipes


def book_push(plain: redis.Redis, key: str, items: List[str], start_: int, end: int) -> int:
    """The book's push: RPUSH, then LTRIM, in one transaction; the length
    RPUSH answered."""
    tx = plain.pipeline()
    tx.rpush(key, *items)
    tx.ltrim(key, start_, end)
    length, _ = tx.execute()
    return int(length)


def test_fifo_queue_returns_what_the_book_returns(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        queue = recipes.FifoQueue(client, "fifo")
        assert await value(queue.enqueue("a")) == 1  # the length after, as RPUSH's
        assert await value(queue.enqueue("b", "c")) == 3
        assert await value(queue.length()) == 3
        assert await value(queue.dequeue()) == "a"
        assert await value(queue.dequeue(1)) == "b"
        assert await value(queue.dequeue(0)) == "c"
        assert await value(queue.dequeue()) is None
        started = time.monotonic()
        assert await value(queue.dequeue(1)) is None  # waited a second in BLPOP
        assert time.monotonic() - started >= 0.9
        assert await value(queue.length()) == 0

    book.run(body)


def test_fixed_length_queue_keeps_what_the_books_keeps(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        queue = recipes.FixedLengthQueue(client, "fixed", 5)
        trims = commands(book.plain, "ltrim")
        pushes = [["a"], ["b", "c"], ["d", "e", "f"], ["g"], ["h", "i"]]
        for items in pushes:
            length = book_push(book.plain, "book", items, 0, 4)
            # The book's count from the length RPUSH answered.
            expected = len(items) if length < 5 else len(items) - (length - 5)
            await same(queue.enqueue(*items), expected)
            assert book.plain.lrange("fixed", 0, -1) == book.plain.lrange("book", 0, -1)
        assert book.plain.lrange("fixed", 0, -1) == ["a", "b", "c", "d", "e"]
        assert await value(queue.length()) == 5
        # Inherited from FifoQueue: the oldest goes first, then there is room.
        assert await value(queue.dequeue()) == "a"
        await same(queue.enqueue("x", "y"), 1)
        assert book.plain.lrange("fixed", 0, -1) == ["b", "c", "d", "e", "x"]
        # Only the module's command ran for the pushes: no LTRIM.
        assert commands(book.plain, "ltrim") - trims == len(pushes)

    book.run(body)


def test_faded_queue_keeps_what_the_books_keeps_and_says_what_fell_out(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        queue = recipes.FadedQueue(client, "faded", 3)
        for items in (["a"], ["b", "c"], ["d"], ["e", "f"], ["g", "h", "i", "j"]):
            book_push(book.plain, "book", items, -3, -1)
            # The book's return value: min(len(items), max_length).
            await same(queue.enqueue(*items), min(len(items), 3))
            assert book.plain.lrange("faded", 0, -1) == book.plain.lrange("book", 0, -1)
        assert book.plain.lrange("faded", 0, -1) == ["h", "i", "j"]
        # Beyond the book: which items fell out, oldest first.
        assert await value(queue.enqueue_evicting("k")) == (1, ["h"])
        assert await value(queue.enqueue_evicting("l", "m", "n", "o")) == (3, ["i", "j", "k", "l"])
        empty = recipes.FadedQueue(client, "empty", 3)
        assert await value(empty.enqueue_evicting("x")) == (1, [])
        assert await value(queue.dequeue()) == "m"

    book.run(body)


def test_items_are_bytes_without_decoding(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        queue = recipes.FadedQueue(client, "q", 1)
        assert await value(queue.enqueue_evicting(b"\x00\xff")) == (1, [])
        assert await value(queue.enqueue_evicting("b")) == (1, [b"\x00\xff"])
        assert await value(queue.dequeue()) == b"b"

    run(clients, body)


def test_a_dequeue_waits_for_an_item_pushed_by_a_bounded_queue(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        consumer = recipes.FifoQueue(clients.new_client(), "jobs")
        producer = recipes.FixedLengthQueue(client, "jobs", 10)
        waiting = start(clients, lambda: consumer.dequeue(0))
        for _ in range(500):
            if int(clients.plain.info("clients")["blocked_clients"]) == 1:
                break
            await asyncio.sleep(0.01)
        assert await value(producer.enqueue("job-1", "job-2")) == 2
        assert await asyncio.wait_for(waiting, 5) == b"job-1"
        assert clients.plain.lrange("jobs", 0, -1) == [b"job-2"]

    run(clients, body)


def test_bad_input_raises_and_writes_nothing(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        clients.plain.set("text", "x")
        for queue, items in (
            (recipes.FixedLengthQueue(client, "q", 0), ("a",)),
            (recipes.FadedQueue(client, "q", -1), ("a",)),
        ):
            with pytest.raises(redis.ResponseError, match="maxlen must be a positive integer"):
                await value(queue.enqueue(*items))
        with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
            await value(recipes.FadedQueue(client, "q", 3).enqueue())
        with pytest.raises(redis_recipes.WrongType):
            await value(recipes.FixedLengthQueue(client, "text", 3).enqueue("a"))
        with pytest.raises(redis_recipes.WrongType):
            await value(recipes.FadedQueue(client, "text", 3).enqueue_evicting("a"))
        assert clients.plain.keys("*") == [b"text"]

    run(clients, body)
