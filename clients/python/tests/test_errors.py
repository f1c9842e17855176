"""``redis_recipes.errors`` on every server, sync and asyncio: each error of
the module raised as its exception class (the table of ``errors.KINDS``
picks each class; any command run through the package's driver is
translated), the documented errors of ``ReadWriteLock``, ``CountDownLatch``
and ``UrlShorty``, and a server without the module saying what to load."""

import json
import re
from pathlib import Path
from typing import Any, Callable, List, Tuple

import pytest
from conftest import Clients, Server, value
from recipes_helpers import run
from redis._parsers import BaseParser
from redis.exceptions import ResponseError

import redis_recipes
import redis_recipes.errors

KEY = "rw"


def test_each_error_has_its_exception(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        errors = redis_recipes
        clients.plain.hset("a-hash", "f", "v")
        clients.plain.set("a-string", "not a limiter")
        clients.plain.set("gen", 2**63 - 1)
        first = recipes.Article(client, 1, slug_index="slugs")
        await value(first.create("t", "c", "a", slug="taken"))
        cases = [
            (lambda: recipes.Article(client, 2, slug_index="slugs").create("t", "c", "a", slug="taken"),
             errors.SlugTaken),
            (lambda: recipes.Article(client, 3, slug_index="slugs").create("t", "c", "a", slug="no spaces"),
             errors.InvalidSlug),
            (lambda: recipes.IdPool(client, "no-pool").acquire(), errors.PoolMissing),
            (lambda: recipes.IdGenerator(client, "gen").produce(), errors.GeneratorExhausted),
            (lambda: recipes.IdGenerator(client, "a-hash").produce(), errors.WrongType),
            (lambda: recipes.RateLimiter(client, "x", 1, 5).limit("y", cost=6), errors.CostTooHigh),
            (lambda: recipes.RateLimiter(client, "x", 1, 5).limit("y", cost=6), ResponseError),
        ]
        for call, kind in cases:
            with pytest.raises(kind):
                await value(call())
        pool = recipes.IdPool(client, "pool")
        await value(pool.create(10))
        await value(pool.acquire())
        await value(pool.acquire())
        with pytest.raises(errors.CannotShrink):
            await value(pool.resize(1))
        limiter = recipes.RateLimiter(client, "act", 1, 5)
        clients.plain.set(limiter.key("u"), "not a limiter")
        with pytest.raises(errors.LimiterMismatch):
            await value(limiter.limit("u"))
        # Any command run through the package's driver is translated.
        broken = recipes.JsonCache(client)
        with pytest.raises(errors.InvalidJson):
            await value(broken._drive(iter_one(("CACHE.SETJSON", "j", "{bad"))))
        assert clients.plain.exists("j") == 0

    run(clients, body)


def test_the_table_of_errors_picks_each_class() -> None:
    from redis_recipes.errors import CODES, translate

    assert len(CODES) >= 11
    for code, cls in CODES.items():
        message = f"{code} (the rest)"
        assert type(translate(ResponseError(message))) is cls, code
        assert str(translate(ResponseError(message))) == message
        # The code decides, not words elsewhere in the text.
        assert type(translate(ResponseError(f"ERR {message}"))) is ResponseError, code
    assert type(translate(ResponseError("cost 7 is not an error of the module"))) is ResponseError
    assert type(translate(ResponseError("syntax error"))) is ResponseError


def iter_one(words: tuple) -> Any:
    reply = yield words
    return reply


def test_a_server_without_the_module_says_what_to_load(server: Server) -> None:
    plain = Server(server.process.args[0], module=False)
    try:
        with pytest.raises(redis_recipes.ModuleNotLoaded, match="loadmodule"):
            redis_recipes.IdGenerator(plain.client(), "id").produce()
    finally:
        plain.stop()


# ---- ReadWriteLock, CountDownLatch, UrlShorty ------------------------------


def test_the_documented_errors_raise_their_classes(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        errors = redis_recipes
        rw = recipes.ReadWriteLock(client, KEY, ttl=30)
        reader = rw.read_lock(token="same")
        assert await value(reader.acquire()) is True
        with pytest.raises(errors.CannotUpgrade) as upgrade:
            await value(rw.write_lock(token="same").acquire())
        assert str(upgrade.value) == ("NOUPGRADE token holds a read lock: release it before asking for WRITE "
                                      "(two readers upgrading would deadlock)")
        assert isinstance(upgrade.value, ResponseError)
        assert redis_recipes.ReadWriteLock(clients.plain, KEY).info().mode == "read"  # nothing changed
        clients.plain.set("a-string", "x")
        clients.plain.hset("a-hash", "f", "v")
        clients.plain.set("{full}:counter", 2**63 - 1)
        clients.plain.hset("{bad}:ids", "https://example.com/", "not an id")
        cases: List[Any] = [
            (lambda: recipes.ReadWriteLock(client, "a-string").read_lock().acquire(), errors.WrongType, None),
            (lambda: recipes.CountDownLatch(client, "a-hash").count_down(), errors.WrongType, None),
            (lambda: recipes.UrlShorty(client, "full").shorten("https://example.com/"), errors.GeneratorExhausted,
             "EXHAUSTED taking 1 more ID(s) after 9223372036854775807 would pass "
             "9223372036854775807"),
            (lambda: recipes.ReadWriteLock(client, KEY, fence=KEY).write_lock().acquire(), ResponseError,
             "FENCE key must differ from the lock key"),
            (lambda: recipes.CountDownLatch(client, "latch").try_set_count(0), ResponseError,
             "count must be a positive integer"),
            (lambda: recipes.CountDownLatch(client, "latch").count_down(0), ResponseError,
             "decrement must be a positive integer"),
            (lambda: recipes.CountDownLatch(client, "a-string").count(), ResponseError,
             "value is not an integer or out of range"),
            (lambda: recipes.UrlShorty(client, "bad").shorten("https://example.com/"), ResponseError,
             "hash value is not an integer"),
        ]
        for call, kind, message in cases:
            with pytest.raises(kind) as raised:
                await value(call())
            if kind is ResponseError:
                assert type(raised.value) is ResponseError, raised.value
            if message is not None:
                assert str(raised.value) == message
        # The ID generator's errors write nothing.
        assert clients.plain.exists("{full}:ids", "{full}:urls", "{bad}:urls") == 0
        assert clients.plain.get("{bad}:counter") is None
        # UrlShorty's hashes hold the wrong type.
        clients.plain.set("{typed}:urls", "x")
        with pytest.raises(errors.WrongType):
            await value(recipes.UrlShorty(client, "typed").shorten("u"))
        assert clients.plain.exists("{typed}:counter", "{typed}:ids") == 0

    run(clients, body)


def test_a_server_without_the_module_says_what_to_load_for_rwlock_latch_and_url_shorty(server: Server) -> None:
    plain = Server(server.process.args[0], module=False)
    try:
        client = plain.client()
        calls: List[Callable[[], Any]] = [
            lambda: redis_recipes.ReadWriteLock(client, KEY).write_lock().acquire(),
            lambda: redis_recipes.CountDownLatch(client, "latch").count(),
            lambda: redis_recipes.UrlShorty(client).shorten("u"),
        ]
        for call in calls:
            with pytest.raises(redis_recipes.ModuleNotLoaded, match="loadmodule"):
                call()
    finally:
        plain.stop()


# ---- the module's error catalogue (docs/spec.json, written from the module's declarations) and the client
# classes (clients/errors.json); both generate redis_recipes/_catalogue.py

_ROOT = Path(__file__).resolve().parents[3]
_SAMPLES = {"name": "idgen.next", "command": "idgen.next", "commands": "IDGEN.NEXT"}


def _catalogue() -> List[Tuple[str, str]]:
    """(error text, Python class) for each error of the module's spec, the
    class named by clients/errors.json for its code (``ResponseError`` when
    none)."""
    spec = json.loads((_ROOT / "docs" / "spec.json").read_text(encoding="utf-8"))
    listed = json.loads((_ROOT / "clients" / "errors.json").read_text(encoding="utf-8"))
    by_code = {code: cls["name"] for cls in listed["classes"] for code in cls["codes"]}
    errors = spec["errors"] + spec.get("shared_errors", []) + [
        error for family in spec["families"] for error in family.get("errors", [])]
    rows = []
    for error in errors:
        if error["text"].startswith("ERR unknown command"):
            rows.append((error["text"], listed["unknown_command"]["name"]))
        else:
            rows.append((error["text"], by_code.get(error["code"], "ResponseError")))
    return rows


def _as_received(text: str) -> ResponseError:
    """The exception redis-py raises for the error reply `text` (a `{name}`
    given a sample value), before the package translates it."""
    for name, sample in _SAMPLES.items():
        text = text.replace("{" + name + "}", sample)
    text = re.sub(r"\{[a-z]+\}", "7", text)
    parsed = BaseParser.parse_error(text)
    assert isinstance(parsed, ResponseError)
    return parsed


def test_the_catalogue_is_read_whole() -> None:
    rows = _catalogue()
    assert len(rows) >= 45
    assert ("NOPOOL no ID pool at key '{key}'", "PoolMissing") in rows


@pytest.mark.parametrize("text,python", _catalogue(), ids=lambda value: str(value)[:40])
def test_each_catalogued_error_becomes_its_class(text: str, python: str) -> None:
    translated = redis_recipes.errors.translate(_as_received(text))
    if python == "ResponseError":
        assert not isinstance(translated, redis_recipes.errors.RecipeError), (text, type(translated))
    else:
        assert type(translated) is getattr(redis_recipes.errors, python), (text, type(translated))


def test_every_exception_class_has_a_catalogued_error() -> None:
    named = {python for _, python in _catalogue()}
    classes = {name for name, value in vars(redis_recipes.errors).items()
               if isinstance(value, type) and issubclass(value, redis_recipes.errors.RecipeError)
               and value is not redis_recipes.errors.RecipeError}
    assert classes == named - {"ResponseError"}


def test_every_family_is_known_to_the_module_check(server: Server) -> None:
    """``ModuleNotLoaded`` is raised for an unknown command of any family: the
    package's list of command prefixes is the module's."""
    # As one word, the command is sent split and read without redis-py's reply callback for COMMAND.
    names = server.client().execute_command("COMMAND LIST FILTERBY MODULE recipes")
    prefixes = {name.decode().split(".")[0] + "." for name in names}
    assert prefixes == set(redis_recipes.errors.FAMILIES)
