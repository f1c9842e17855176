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


def test_the_package_passes_mypy_strict(tmp_path: Path) -> None:
    checked = mypy(str(sources()), cache=tmp_path / "cache")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_code_using_the_classes_is_checked_against_their_types(tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text(USER)
    (tmp_path / "wrong.py").write_text(WRONG)
    good = mypy(str(tmp_path / "user.py"), cache=tmp_path / "cache")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(str(tmp_path / "wrong.py"), cache=tmp_path / "cache")
    assert 'Incompatible types in assignment (expression has type "Coroutine[Any, Any, int]"' in bad.stdout, bad.stdout
    assert 'Argument "ttl" has incompatible type "str"' in bad.stdout, bad.stdout
