"""``redis_recipes.uqueue`` on every server, sync and asyncio: the book's
``CircularQueue`` (a plain list) and ``UniqueCircularQueue`` (UQUEUE),
each driven through the same operations as the book's code, run here on
a plain list of the same server, and compared reply by reply (values and
types, decoded or not); insert's ``ValueError``; rotations that wait."""

import asyncio
import random
import time
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Tuple

import pytest
from conftest import Book, Server, aclose, value
from recipes_helpers import commands, eventually, same, start
from redis.exceptions import ResponseError

import redis_recipes

Op = Tuple[str, Tuple[Any, ...]]


def book_unique_insert(plain: Any, key: str, *items: Any) -> int:
    """The book's ``UniqueCircularQueue.insert``: LREM each, then RPUSH, in
    one transaction."""
    tx = plain.pipeline()
    for item in items:
        tx.lrem(key, 1, item)
    tx.rpush(key, *items)
    return int(tx.execute()[-1])


def reference(plain: Any, key: str, unique: bool) -> Dict[str, Callable[..., Any]]:
    """The book's methods, on a plain list at ``key``."""
    return {
        "insert": (lambda *items: book_unique_insert(plain, key, *items)) if unique
        else (lambda *items: plain.rpush(key, *items)),
        "remove": (lambda item: plain.lrem(key, 1, item)) if unique
        else (lambda item, count=0: plain.lrem(key, count, item)),
        "rotate": lambda: plain.lmove(key, key),
        "front": lambda: plain.lindex(key, 0),
        "rear": lambda: plain.lindex(key, -1),
        "length": lambda: plain.llen(key),
    }


def operations(unique: bool, seed: int, count: int = 300) -> List[Op]:
    rng = random.Random(seed)
    names = [f"item{i}" for i in range(8)]
    ops: List[Op] = []
    for _ in range(count):
        kind = rng.choice(["insert", "insert", "remove", "rotate", "rotate", "front", "rear", "length"])
        if kind == "insert":
            ops.append((kind, tuple(rng.sample(names, rng.randint(1, 3)))))
        elif kind == "remove":
            args: Tuple[Any, ...] = (rng.choice(names),)
            if not unique and rng.random() < 0.5:
                args += (rng.choice([-1, 0, 1, 2]),)
            ops.append((kind, args))
        else:
            ops.append((kind, ()))
    return ops


@pytest.mark.parametrize("decode", [True, False], ids=["decoded", "bytes"])
@pytest.mark.parametrize("unique", [False, True], ids=["CircularQueue", "UniqueCircularQueue"])
def test_circular_queues_return_what_the_book_returns(server: Server, mode: str, decode: bool, unique: bool) -> None:
    book = Book(server, mode, decode=decode)
    plain = server.client(decode_responses=decode)

    async def body(client: Any, recipes: Any) -> None:
        cls = recipes.UniqueCircularQueue if unique else recipes.CircularQueue
        queue = cls(client, "queue")
        theirs = reference(plain, "book-queue", unique)
        # An empty queue first, then a random run.
        ops: List[Op] = [("rotate", ()), ("front", ()), ("rear", ()), ("length", ()), ("remove", ("x",))]
        for name, args in ops + operations(unique, seed=7):
            expected = theirs[name](*args)
            await same(getattr(queue, name)(*args), expected)
        whole = plain.lrange("book-queue", 0, -1)
        if unique:
            await same(queue.items(), whole)
        else:
            assert plain.lrange("queue", 0, -1) == whole

    try:
        book.run(body)
    finally:
        plain.close()


def test_unique_insert_refuses_a_repeated_item_before_sending(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        queue = recipes.UniqueCircularQueue(client, "queue")
        await same(queue.insert("a", "b"), 2)
        before = commands(book.plain, "uqueue.insert")
        with pytest.raises(ValueError, match="unique"):
            await value(queue.insert("c", "a", "c"))
        assert commands(book.plain, "uqueue.insert") == before  # nothing sent
        await same(queue.items(), ["a", "b"])
        # Items Python tells apart but the server does not: the server refuses.
        with pytest.raises(ResponseError, match="given more than once"):
            await value(queue.insert(1, "1"))
        await same(queue.items(), ["a", "b"])
        await same(queue.insert("a"), 2)  # moved to the tail
        await same(queue.items(), ["b", "a"])
        book.plain.set("a-string", "x")
        with pytest.raises(redis_recipes.WrongType):
            await value(recipes.UniqueCircularQueue(client, "a-string").insert("a"))

    book.run(body)


@pytest.mark.parametrize("unique", [False, True], ids=["CircularQueue", "UniqueCircularQueue"])
def test_rotations_wait_for_an_item(server: Server, mode: str, unique: bool) -> None:
    book = Book(server, mode)

    async def body(client: Any, recipes: Any) -> None:
        cls = recipes.UniqueCircularQueue if unique else recipes.CircularQueue
        queue = cls(client, "queue")
        started = time.monotonic()
        await same(queue.rotate(0.2), None)  # timed out
        assert 0.15 < time.monotonic() - started < 2
        for block_time in (5, 0):  # 0: forever
            other = cls(server.client(decode_responses=True) if mode == "sync" else _async_client(server), "queue")
            waiting = start(SimpleNamespace(mode=mode), lambda: other.rotate(block_time))  # type: ignore[arg-type]
            assert await eventually(lambda: book.plain.info("clients")["blocked_clients"] == 1)
            await value(queue.insert(f"x{block_time}"))
            assert await asyncio.wait_for(waiting, 3) == f"x{block_time}"
            await value(queue.remove(f"x{block_time}"))
            if mode == "asyncio":
                await aclose(other.client)
            else:
                other.client.close()
        await same(queue.length(), 0)

    book.run(body)


def _async_client(server: Server) -> Any:
    import redis.asyncio

    return redis.asyncio.Redis(port=server.port, decode_responses=True)
