"""The package ``redis_recipes`` and ``redis_recipes.asyncio``: what they
export, and the version (``pyproject.toml``'s)."""

from pathlib import Path

import redis_recipes
import redis_recipes.asyncio


def test_the_new_classes_are_exported_and_versioned() -> None:
    for name in ("ReadWriteLock", "RwLockHandle", "RwLockInfo", "CountDownLatch", "UrlShorty"):
        assert name in redis_recipes.__all__ and name in redis_recipes.asyncio.__all__
    assert "CannotUpgrade" in redis_recipes.__all__
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert f'\nversion = "{redis_recipes.__version__}"\n' in pyproject
    assert issubclass(redis_recipes.asyncio.RwLockHandle, redis_recipes.RwLockHandle)
    assert redis_recipes.asyncio.CountDownLatch.__doc__ == redis_recipes.CountDownLatch.__doc__
