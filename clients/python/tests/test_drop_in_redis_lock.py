"""redis_recipes.drop_in.redis_lock next to python-redis-lock itself: the same
names and signatures, the same outcomes and errors for the same calls, the
same stored keys (the lock, its signal list), the two excluding and waking
each other on one name; with the module a wait served at the holder's
release or lease end in arrival order, and fencing tokens; without it the
library's commands. python-redis-lock's own tests run against the drop-in
in test_drop_in_redis_lock_suite.py."""

import inspect
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
import redis
from conftest import FLAVORS, Server, binary
from test_drop_in_lock import lock_info

from redis_recipes.drop_in import redis_lock as drop_in

library = pytest.importorskip(
    "redis_lock", reason="python-redis-lock is not installed (pip install './clients/python[test]')"
)

PROMPT = 0.05  # seconds: a waiter has the lock this soon after the release


@pytest.fixture(scope="module", params=sorted(FLAVORS))
def plain(request: Any) -> Iterator[Server]:
    """A server of each flavor without the module."""
    started = Server(binary(request.param), module=False)
    yield started
    started.stop()


def calls(client: redis.Redis) -> Dict[str, int]:
    stats = client.info("commandstats")
    return {name[len("cmdstat_"):]: count["calls"] for name, count in stats.items() if name.startswith("cmdstat_")}


def test_the_same_names_and_signatures_as_the_library() -> None:
    """Every public class and function of the library's module, the same
    kind; its exceptions ``RuntimeError``s; ``Lock``'s public methods with
    the same parameters (the drop-in's extra ``fence`` is keyword-only)."""
    names = {name for name, value in vars(library).items()
             if not name.startswith("_") and inspect.getmodule(value) is library
             and (inspect.isclass(value) or inspect.isfunction(value))}
    assert names == set(drop_in.__all__)
    for name in names:
        ours, theirs = getattr(drop_in, name), getattr(library, name)
        assert inspect.isclass(ours) == inspect.isclass(theirs), name
        if inspect.isclass(theirs) and issubclass(theirs, Exception):
            assert ours.__mro__[1:] == theirs.__mro__[1:], name
    public = {name for name in vars(library.Lock) if not name.startswith("_")} - {
        "unlock_script", "extend_script", "reset_script", "reset_all_script", "blocking"}
    assert public <= set(vars(drop_in.Lock)), public - set(vars(drop_in.Lock))
    for name in public | {"__init__", "__enter__", "__exit__"}:
        theirs_member = getattr(library.Lock, name)
        if callable(theirs_member):
            ours_params = dict(inspect.signature(getattr(drop_in.Lock, name)).parameters)
            ours_params.pop("fence", None)
            assert list(ours_params) == list(inspect.signature(theirs_member).parameters), name
            assert [p.default for p in ours_params.values()] == [
                p.default for p in inspect.signature(theirs_member).parameters.values()], name


def story(module: Any, client: redis.Redis) -> List[Any]:
    """The same calls, with ``module``'s ``Lock``; each call's result (or
    the name of what it raised) and the keys it leaves."""
    client.flushall()
    out: List[Any] = []

    def do(function: Callable[[], Any]) -> None:
        try:
            out.append(function())
        except Exception as error:
            out.append(type(error).__name__)

    def keys() -> Dict[str, Any]:
        state: Dict[str, Any] = {}
        for key in sorted(client.keys("*")):
            kind = client.type(key)
            value = client.lrange(key, 0, -1) if kind == b"list" else client.get(key)
            state[key.decode()] = (kind, value, -(-client.pttl(key) // 1000))  # whole seconds left, rounded up
        return state

    first = module.Lock(client, "job", expire=10, id="first")
    other = module.Lock(client, "job", id="other")
    do(lambda: first.acquire(blocking=False))
    out.append(keys())
    do(lambda: first.acquire(blocking=False, timeout=1))  # held by this id: AlreadyAcquired first
    do(lambda: other.acquire(blocking=False, timeout=1))
    do(lambda: other.acquire(timeout=-1))
    do(lambda: other.acquire(timeout="x"))
    do(lambda: module.Lock(client, "job", expire=1).acquire(timeout=2))
    do(lambda: other.acquire(blocking=False))
    do(lambda: other.acquire(timeout=1))
    do(other.locked)
    do(other.get_owner_id)
    do(other.release)
    do(lambda: other.extend(5))
    do(lambda: first.extend(20))
    out.append(keys())
    do(first.release)
    out.append(keys())
    do(first.release)
    do(lambda: other.acquire(blocking=False))
    do(lambda: other.extend(5))
    do(other.reset)
    out.append(keys())
    do(lambda: first.acquire(blocking=False))
    do(lambda: module.reset_all(client))
    out.append(keys())
    with module.Lock(client, "ctx", expire=5, id="c") as held:
        out.append(keys())
        do(lambda: module.Lock(client, "ctx", blocking=False).__enter__())
        do(lambda: held.acquire())
    out.append(keys())
    return out


def test_the_same_outcomes_and_keys_as_the_library(server: Server) -> None:
    """One story told to the library and to the drop-in (with the module):
    the same results, errors and keys (TTLs in whole seconds)."""
    client = server.client()
    assert story(drop_in, client) == story(library, client)


def test_without_the_module_the_same_story_and_the_librarys_commands(plain: Server) -> None:
    """On a server without the module: the same story, the library's
    commands, and one ``unknown command`` in all (the first
    ``LOCK.ACQUIRE``, which marks the client's pool)."""
    client = plain.client()
    client.ping()
    client.config_resetstat()
    assert story(drop_in, client) == story(library, client)
    after = calls(client)
    assert after.get("set", 0) > 0 and after.get("blpop", 0) > 0
    assert not any(command.startswith("lock.") for command in after)
    # (Besides NOSCRIPT, once per script: redis-py's EVALSHA before loading one.)
    assert client.info("errorstats")["errorstat_ERR"] in ({"count": 1}, "count=1")  # (redis-py 5.0: unparsed)


def test_the_library_and_the_drop_in_exclude_each_other(server: Server) -> None:
    client = server.client()
    client.flushall()
    for holder, other in ((library, drop_in), (drop_in, library)):
        lock = holder.Lock(client, "shared", expire=10)
        assert lock.acquire(blocking=False)
        assert other.Lock(client, "shared").acquire(blocking=False) is False
        assert other.Lock(client, "shared", id=lock.id).get_owner_id() == lock.id
        other.Lock(client, "shared", id=lock.id).release()
        assert not lock.locked()


def waiters_served(server: Server, holder_module: Any, name: str) -> List[Tuple[int, float]]:
    """Three drop-in waiters queue in turn behind ``holder_module``'s lock,
    which is then released; each waiter's number and the time it got the
    lock after the previous holder's release."""
    client = server.client()
    client.flushall()
    holder = holder_module.Lock(client, name, id="holder")
    assert holder.acquire(blocking=False)
    served: List[Tuple[int, float]] = []
    released = [0.0]
    guard = threading.Lock()

    def waiter(n: int) -> None:
        lock = drop_in.Lock(server.client(), name, expire=10)
        assert lock.acquire(timeout=10)
        with guard:
            served.append((n, time.monotonic() - released[0]))
        time.sleep(0.05)
        released[0] = time.monotonic()
        lock.release()

    before = lock_info(client)["recipes_lock_waits"]
    threads = []
    for n in range(3):
        threads.append(threading.Thread(target=waiter, args=(n,)))
        threads[-1].start()
        deadline = time.monotonic() + 5
        while lock_info(client)["recipes_lock_waits"] - before < n + 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    released[0] = time.monotonic()
    holder.release()
    for thread in threads:
        thread.join(10)
    return served


@pytest.mark.parametrize("holder", ["drop-in", "library"])
def test_waiters_get_the_lock_at_its_release_in_arrival_order(server: Server, holder: str) -> None:
    """Each waiter gets the lock within PROMPT of the previous release (the
    library's release too: its DEL hands the lock on), first come first
    served."""
    served = waiters_served(server, drop_in if holder == "drop-in" else library, f"fifo-{holder}")
    assert [n for n, _ in served] == [0, 1, 2]
    assert all(0 <= after < PROMPT for _, after in served), served


def test_a_lease_end_hands_the_lock_on(server: Server) -> None:
    """A holder whose ``expire`` ends: the waiter has the lock then (the
    library's waiter would wake at its BLPOP's end, 3 s here)."""
    client = server.client()
    client.flushall()
    assert drop_in.Lock(client, "lease", expire=1).acquire()
    started = time.monotonic()
    assert drop_in.Lock(server.client(), "lease").acquire(timeout=3)
    assert 0.9 <= time.monotonic() - started < 1.5


def test_a_library_waiter_is_woken_by_the_drop_ins_release(server: Server) -> None:
    client = server.client()
    client.flushall()
    holder = drop_in.Lock(client, "mixed")
    assert holder.acquire()
    result: List[Any] = []
    waiter = threading.Thread(target=lambda: result.append(library.Lock(server.client(), "mixed").acquire(timeout=5)))
    waiter.start()
    time.sleep(0.2)
    started = time.monotonic()
    holder.release()
    waiter.join(10)
    assert result == [True] and time.monotonic() - started < 1


@pytest.mark.parametrize("module", [True, False])
def test_fencing_tokens(server: Server, plain: Server, module: bool) -> None:
    """``fence=True``: each acquisition's token, one more than the last,
    counted in ``lock-fence:<name>`` (on the module, in the acquisition's
    own command)."""
    client = (server if module else plain).client()
    client.flushall()
    tokens = []
    for _ in range(3):
        lock = drop_in.Lock(client, "fenced", fence=True)
        assert lock.fencing_token is None
        with lock:
            tokens.append(lock.fencing_token)
    assert tokens == [1, 2, 3]
    assert client.get("lock-fence:fenced") == b"3"
    assert drop_in.Lock(client, "unfenced").acquire() and client.exists("lock-fence:unfenced") == 0
    client.flushall()
