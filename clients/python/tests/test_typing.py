"""The package is typed (it ships ``py.typed``): ``mypy --strict`` passes on
its sources, and on code that uses the sync and asyncio classes, whose
methods give their results' types (an asyncio method a coroutine of it)."""

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List

import redis_recipes

SOURCES = Path(__file__).resolve().parents[1] / "src" / "redis_recipes"

USER = textwrap.dedent('''
    from typing import Optional

    import redis
    import redis.asyncio

    import redis_recipes
    import redis_recipes.asyncio


    def sync(client: redis.Redis) -> None:
        produced: int = redis_recipes.IdGenerator(client, "ids").produce()
        lease: Optional[int] = redis_recipes.IdPool(client, "seats").acquire(ttl=60, timeout=5)
        with redis_recipes.Lock(client, "lock", ttl=30, renew=True) as lock:
            held: bool = lock.extend(10)
        with redis_recipes.ResourcePool(client, "pool").lease(timeout=1) as resource:
            name: str = resource


    async def asynchronous(client: redis.asyncio.Redis) -> None:
        produced: int = await redis_recipes.asyncio.IdGenerator(client, "ids").produce()
        lease: Optional[int] = await redis_recipes.asyncio.IdPool(client, "seats").acquire(ttl=60, timeout=5)
        async with redis_recipes.asyncio.Lock(client, "lock", ttl=30, renew=True) as lock:
            held: bool = await lock.extend(10)
        async with redis_recipes.asyncio.ResourcePool(client, "pool").lease(timeout=1) as resource:
            name: str = resource
''')

WRONG = textwrap.dedent('''
    import redis.asyncio

    import redis_recipes.asyncio


    async def asynchronous(client: redis.asyncio.Redis) -> None:
        produced: int = redis_recipes.asyncio.IdGenerator(client, "ids").produce()
        redis_recipes.asyncio.IdPool(client, "seats").acquire(ttl="60")
''')


def mypy(*arguments: str, cache: Path) -> "subprocess.CompletedProcess[str]":
    command: List[str] = [sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                          "--cache-dir", str(cache), *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def sources() -> Path:
    """The sources under test: this checkout's, else the installed package."""
    return SOURCES if SOURCES.is_dir() else Path(redis_recipes.__file__).parent


def test_the_package_installs_with_its_types() -> None:
    import importlib.resources

    assert (importlib.resources.files("redis_recipes") / "py.typed").is_file()


def test_the_package_passes_mypy_strict(tmp_path: Path) -> None:
    # In a checkout, mypy's cache is the one `make lint` keeps (the same
    # command and options, run from the checkout's root): after the lints, a
    # check of what did not change takes a second instead of 20 with both
    # cores busy. mypy re-checks whatever changed since.
    checkout_cache = SOURCES.parents[3] / ".mypy_cache"
    cache = checkout_cache if SOURCES.is_dir() else tmp_path / "cache"
    checked = mypy(str(sources()), cache=cache)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_code_using_the_classes_is_checked_against_their_types(tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text(USER)
    (tmp_path / "wrong.py").write_text(WRONG)
    good = mypy(str(tmp_path / "user.py"), cache=tmp_path / "cache")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(str(tmp_path / "wrong.py"), cache=tmp_path / "cache")
    assert 'Incompatible types in assignment (expression has type "Coroutine[Any, Any, int]"' in bad.stdout, bad.stdout
    assert 'Argument "ttl" has incompatible type "str"' in bad.stdout, bad.stdout


# ---- ReadWriteLock, CountDownLatch, UrlShorty ------------------------------


USER_RWLOCK_LATCH_SHORTY = textwrap.dedent('''
    from typing import Optional

    import redis
    import redis.asyncio

    import redis_recipes
    import redis_recipes.asyncio


    def sync(client: redis.Redis) -> None:
        rw = redis_recipes.ReadWriteLock(client, "rw", ttl=30, renew=True)
        with rw.read_lock() as reader:
            fence: Optional[int] = reader.fencing_token
        with rw.write_lock(token="me") as writer:
            held: bool = writer.extend(10)
            down: bool = writer.downgrade()
        state: redis_recipes.RwLockInfo = rw.info()
        latch = redis_recipes.CountDownLatch(client, "latch")
        armed: bool = latch.try_set_count(3, ttl=60)
        left: int = latch.count_down()
        opened: bool = latch.wait(5.5)
        short: str = redis_recipes.UrlShorty(client).shorten("https://example.com/")
        url: Optional[str] = redis_recipes.UrlShorty(client, "links").restore(short)


    async def asynchronous(client: redis.asyncio.Redis) -> None:
        rw = redis_recipes.asyncio.ReadWriteLock(client, "rw", ttl=30)
        async with rw.write_lock() as writer:
            held: bool = await writer.extend(10)
        got: bool = await rw.read_lock().acquire(timeout=1)
        opened: bool = await redis_recipes.asyncio.CountDownLatch(client, "latch").wait()
        short: str = await redis_recipes.asyncio.UrlShorty(client).shorten("https://example.com/")
''')

WRONG_RWLOCK_LATCH_SHORTY = textwrap.dedent('''
    import redis.asyncio

    import redis_recipes.asyncio


    async def asynchronous(client: redis.asyncio.Redis) -> None:
        left: int = redis_recipes.asyncio.CountDownLatch(client, "latch").count_down()
        redis_recipes.asyncio.UrlShorty(client).restore(62)
''')


def test_code_using_rwlock_latch_and_url_shorty_is_checked_against_their_types(tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text(USER_RWLOCK_LATCH_SHORTY)
    (tmp_path / "wrong.py").write_text(WRONG_RWLOCK_LATCH_SHORTY)
    good = mypy(str(tmp_path / "user.py"), cache=tmp_path / "cache")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(str(tmp_path / "wrong.py"), cache=tmp_path / "cache").stdout
    assert 'Incompatible types in assignment (expression has type "Coroutine[Any, Any, int]"' in bad, bad
    assert 'has incompatible type "int"; expected "str"' in bad, bad
