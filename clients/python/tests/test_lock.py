"""``redis_recipes.lock`` on every server, sync and asyncio: ``Lock`` (the
book's transcripts, a blocking acquire in the server's queue, fencing
tokens, a ``with`` block that outlives its TTL with renewal on and off, 16
threads contending), ``AutoReleaseLock`` and ``IdentityLock``, and what the
book's code returns, types included."""

import asyncio
import threading
import time
from typing import Any, List

import pytest
from conftest import Book, Clients, Server, value
from recipes_helpers import run, same

import redis_recipes


def test_locks(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        # The basic lock: acquire once, a second holder fails, release.
        lock = recipes.Lock(client, "Lock:10086")
        other = recipes.Lock(client, "Lock:10086")
        assert await value(lock.acquire()) is True
        assert await value(other.acquire()) is False
        assert await value(other.release()) is False  # not its lock
        assert await value(lock.release()) is True
        assert await value(other.acquire()) is True
        assert await value(other.release()) is True
        # The auto-release lock: gone after its timeout.
        auto = recipes.AutoReleaseLock(client, "Lock:auto")
        assert await value(auto.acquire(100, unit="ms")) is True
        assert await value(recipes.AutoReleaseLock(client, "Lock:auto").acquire(5)) is False
        await asyncio.sleep(0.2)
        assert await value(recipes.AutoReleaseLock(client, "Lock:auto").acquire(5)) is True
        # The identity lock: only the password releases it.
        identity = recipes.IdentityLock(client, "Lock:identity")
        assert await value(identity.acquire("top_secret")) is True
        assert await value(identity.acquire("wrong")) is False
        assert await value(identity.release("wrong")) is False
        assert await value(identity.release("top_secret")) is True
        # Fencing tokens increase with every acquisition.
        fenced = recipes.Lock(client, "{job}:lock", fence="{job}:fence", ttl=30)
        assert await value(fenced.acquire()) is True
        first = fenced.fencing_token
        assert await value(fenced.release()) is True
        assert await value(fenced.acquire()) is True
        assert fenced.fencing_token == first + 1
        assert await value(fenced.release()) is True

    run(clients, body)


def test_a_blocking_acquire_waits_in_the_servers_queue(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        holder = recipes.Lock(client, "Lock:queue", ttl=0.3)
        assert await value(holder.acquire()) is True
        waiter = recipes.Lock(clients.new_client(), "Lock:queue", ttl=10)
        started = time.monotonic()
        assert await value(waiter.acquire(timeout=5)) is True  # handed over at expiry
        assert 0.15 < time.monotonic() - started < 3
        assert await value(recipes.Lock(client, "Lock:queue").acquire(timeout=0.1)) is False
        assert await value(waiter.release()) is True

    run(clients, body)


# ---- What the book's code returns: code/lock.py, code/auto_release_lock.py,
# code/identity_lock.py; 代码清单 3-1, 3-2, 4-1.


def test_lock_returns_what_the_book_returns(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        locker1 = recipes.Lock(client, "Lock:10086")
        await same(locker1.acquire(), True)  # SET … NX is True
        await same(locker1.release(), True)  # DEL … == 1
        await same(locker1.acquire(), True)
        await same(locker1.acquire(), False)  # SET … NX: held, even by itself
        locker2 = recipes.Lock(client, "Lock:10086")
        await same(locker2.acquire(), False)
        await same(locker1.release(), True)
        await same(locker1.release(), False)  # nothing to release
        # Beyond the book: a wait, a lease, a fencing token (an attribute).
        fenced = recipes.Lock(client, "{f}:lock", fence="{f}:fence", ttl=30)
        await same(fenced.acquire(timeout=0.1), True)
        assert fenced.fencing_token == 1 and type(fenced.fencing_token) is int
        await same(fenced.extend(), True)
        await same(fenced.release(), True)

    book.run(body)


def test_auto_release_lock_returns_what_the_book_returns(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        lock = recipes.AutoReleaseLock(client, "Lock:10086")
        await same(lock.acquire(5), True)  # SET … NX EX is True
        await same(recipes.AutoReleaseLock(client, "Lock:10086").acquire(5), False)
        await same(lock.acquire(5), False)  # held, even by itself
        await same(lock.release(), True)
        await same(lock.acquire(150, unit="ms"), True)  # SET … NX PX
        await asyncio.sleep(0.3)  # released by itself
        await same(lock.acquire(5), True)
        await same(lock.release(), True)
        await same(lock.release(), False)
        with pytest.raises(ValueError):
            await value(lock.acquire(5, unit="min"))

    book.run(body)


def test_identity_lock_returns_what_the_book_returns(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        lock = recipes.IdentityLock(client, "Lock:10086")
        await same(lock.acquire("top_secret"), True)
        await same(lock.acquire("top_secret"), False)  # held, even with the same password
        await same(recipes.IdentityLock(client, "Lock:10086").acquire("another"), False)
        await same(lock.release("wrong_password"), False)
        await same(lock.release("top_secret"), True)
        await same(lock.release("top_secret"), False)  # the lock is gone

    book.run(body)


# ---- A with block past the TTL; threads ------------------------------------


def lease_outlives_ttl(clients: Clients, renew: bool, on_lost: Any = None) -> Any:
    async def body(client: Any, recipes: Any) -> None:
        lock = recipes.Lock(client, "Lock:long", ttl=0.3, renew=renew, on_lost=on_lost)
        if clients.mode == "sync":
            with lock:
                time.sleep(1.0)
                held = clients.plain.get("Lock:long")
        else:
            async with lock:
                await asyncio.sleep(1.0)
                held = clients.plain.get("Lock:long")
        assert (held == lock.token.encode()) is renew

    run(clients, body)


def test_renewal_keeps_the_lock_past_its_ttl(clients: Clients) -> None:
    lease_outlives_ttl(clients, renew=True)
    assert clients.plain.exists("Lock:long") == 0  # released on exit


def test_without_renewal_the_block_learns_the_lock_was_lost(clients: Clients) -> None:
    with pytest.raises(redis_recipes.LockLost):
        lease_outlives_ttl(clients, renew=False)
    lost: List[Any] = []
    lease_outlives_ttl(Clients(clients.server, clients.mode), renew=False, on_lost=lost.append)
    assert len(lost) == 1


def test_sixteen_threads_never_overlap(server: Server) -> None:
    inside, ledger, guard = [0], [], threading.Lock()

    def worker(n: int) -> None:
        client = server.client()
        for _ in range(20):
            with redis_recipes.Lock(client, "Lock:ledger", ttl=10, wait=30):
                with guard:
                    inside[0] += 1
                    ledger.append(inside[0])
                time.sleep(0.0005)
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ledger) == 16 * 20
    assert max(ledger) == 1, "two holders at once"
