"""``redis_recipes.autocomplete`` on every server, sync and asyncio: the
book's ``AutoComplete`` (chapter 16) answers what the book's layout answers
(one sorted set per prefix, driven here by the test itself on the same
server), its entries fade one by one, and the extras beyond the book."""

import asyncio
import random
from typing import Any, List, Optional, Tuple

import pytest
from conftest import Book, value

BOOK_METHODS = ("feed", "hint", "set", "feedex")
"""The methods of the book's ``AutoComplete`` (its companion repository's
``auto_complete.py``)."""


class BooksLayout:
    """The book's recipe, as its chapter describes it: one sorted set per
    prefix of the content (``AutoComplete:<subject>:<prefix>``)."""

    def __init__(self, client: Any, subject: str) -> None:
        self.client = client
        self.subject = subject

    def key(self, segment: str) -> str:
        return f"AutoComplete:{self.subject}:{segment}"

    def feed(self, content: str, weight: float = 1.0) -> None:
        with self.client.pipeline() as tx:
            for end in range(1, len(content) + 1):
                tx.zincrby(self.key(content[:end]), weight, content)
            tx.execute()

    def set(self, content: str, weight: float) -> None:
        with self.client.pipeline() as tx:
            for end in range(1, len(content) + 1):
                tx.zadd(self.key(content[:end]), {content: weight})
            tx.execute()

    def hint(self, segment: str, num: int = 10) -> List[str]:
        return list(self.client.zrange(self.key(segment), 0, num - 1, desc=True))


WORDS = ["redis", "red", "reddit", "react", "rust", "ruby", "r", "re", "黄健宏", "黄晓明", "黄埔军校", "黄",
         "中国", "中国人", "中国银行", "中", "ab", "abc", "abd", "a", "b"]


def dictionary(rng: random.Random) -> List[str]:
    """Known words and random ones of 1 to 6 characters, English-like and
    Chinese, sharing prefixes."""
    latin, han = "abcdre", "黄中国人晓明"
    out = list(WORDS)
    for _ in range(120):
        letters = latin if rng.random() < 0.6 else han
        out.append("".join(rng.choice(letters) for _ in range(rng.randint(1, 6))))
    return sorted(set(out))


def test_the_books_methods_are_all_there() -> None:
    import redis_recipes
    import redis_recipes.asyncio

    for module in (redis_recipes, redis_recipes.asyncio):
        for method in BOOK_METHODS:
            assert callable(getattr(module.AutoComplete, method)), (module.__name__, method)


def test_hints_are_the_books(book: Book) -> None:
    rng = random.Random(16)
    words = dictionary(rng)
    reference = BooksLayout(book.plain, "ref")

    async def body(client: Any, recipes: Any) -> None:
        ours = recipes.AutoComplete(client, "ours")
        weights = [1, 2, 3, 0.5, -1, 2.25, 10]
        for step in range(600):
            word = rng.choice(words)
            weight = rng.choice(weights)
            if step % 7 == 0:
                assert await value(ours.set(word, weight)) is None
                reference.set(word, weight)
            elif step % 3 == 0:
                assert await value(ours.feed(word)) is None
                reference.feed(word)
            else:
                assert await value(ours.feed(word, weight)) is None
                reference.feed(word, weight)
        segments = sorted({w[:end] for w in words for end in range(1, len(w) + 1)}) + ["", "x", "黄x", "zz"]
        compared = 0
        for segment in segments:
            for num in (1, 3, 10, 0, -1, -4):
                got = await value(ours.hint(segment, num))
                want = [] if segment == "" else reference.hint(segment, num)
                assert got == want, (segment, num)
                compared += 1
            assert await value(ours.hint(segment)) == ([] if segment == "" else reference.hint(segment))
        assert compared > 500
        # Every entry has the weight its tables have.
        for word in words:
            score: Optional[float] = book.plain.zscore(reference.key(word), word)
            assert await value(ours.weight(word)) == score, word

    book.run(body)


def test_replies_are_the_books(book: Book) -> None:
    """The book's types: None from the writes, a list of the client's
    strings from hint."""

    async def body(client: Any, recipes: Any) -> None:
        ac = recipes.AutoComplete(client, "search")
        assert await value(ac.feed("黄健宏")) is None
        assert await value(ac.feed("黄晓明", 3)) is None
        assert await value(ac.set("黄埔军校", 2)) is None
        assert await value(ac.feedex("黄河", 5, 300)) is None
        assert await value(ac.hint("黄")) == ["黄河", "黄晓明", "黄埔军校", "黄健宏"]
        assert await value(ac.hint("黄", 2)) == ["黄河", "黄晓明"]
        assert await value(ac.hint("黄晓")) == ["黄晓明"]
        assert await value(ac.hint("晓")) == []
        assert await value(ac.hint(b"\xe9\xbb\x84")) == ["黄河", "黄晓明", "黄埔军校", "黄健宏"]

    book.run(body)


def test_replies_on_a_client_that_does_not_decode(raw: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        ac = recipes.AutoComplete(client, "search")
        assert await value(ac.feed("redis")) is None
        assert await value(ac.feed("黄河")) is None
        assert await value(ac.hint("re")) == [b"redis"]
        assert await value(ac.hint("黄")) == ["黄河".encode()]

    raw.run(body)


def test_entries_fade_one_by_one(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        ac = recipes.AutoComplete(client, "fading")
        await value(ac.feed("redis", 10))
        await value(ac.feedex("react", 5, ttl=0.3))
        await value(ac.feedex("rust", 1, ttl=30))
        assert await value(ac.hint("r")) == ["redis", "react", "rust"]
        # A feed without a lifetime keeps the one it has.
        await value(ac.feed("react"))
        assert await value(ac.weight("react")) == 6.0
        await asyncio.sleep(0.45)
        assert await value(ac.hint("r")) == ["redis", "rust"]
        assert await value(ac.hint("re")) == ["redis"]
        assert await value(ac.weight("react")) is None
        assert await value(ac.count()) == 2
        # Fed again, it starts over.
        await value(ac.feed("react"))
        assert await value(ac.weight("react")) == 1.0
        assert await value(ac.hint("r")) == ["redis", "rust", "react"]  # equal weights: content descending
        info = book.plain.execute_command("AUTOCOMPLETE.INFO", ac.key)
        fields = info if isinstance(info, dict) else dict(zip(info[::2], info[1::2]))
        assert fields["entries"] == 3

    book.run(body)


def test_beyond_the_book(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        ac = recipes.AutoComplete(client, "extra", key="suggest:{extra}")
        assert ac.key == "suggest:{extra}"
        assert recipes.AutoComplete(client, "s").key == "AutoComplete:s"
        await value(ac.set("a", 1.5))
        await value(ac.feed("ab", -2))
        assert await value(ac.weight("a")) == 1.5
        assert await value(ac.weight("ab")) == -2.0
        assert await value(ac.weight("zz")) is None
        assert await value(ac.count()) == 2
        assert await value(ac.remove("a", "zz")) == 1
        assert await value(ac.remove()) == 0
        assert await value(ac.remove("ab")) == 1
        assert book.plain.exists("suggest:{extra}") == 0
        assert await value(ac.count()) == 0
        assert await value(ac.hint("a")) == []

    book.run(body)


@pytest.mark.parametrize("bad,error", [
    ("", "content must not be empty"),
    ("x" * 257, "content must be at most 256 characters"),
])
def test_bad_content_is_refused_and_changes_nothing(book: Book, bad: str, error: str) -> None:
    import redis

    async def body(client: Any, recipes: Any) -> None:
        ac = recipes.AutoComplete(client, "bad")
        await value(ac.feed("ok"))
        with pytest.raises(redis.ResponseError, match=error):
            await value(ac.feed(bad))
        with pytest.raises(redis.ResponseError, match=error):
            await value(ac.set(bad, 1))
        assert await value(ac.hint("o")) == ["ok"]
        assert await value(ac.count()) == 1

    book.run(body)


def test_weights_that_are_not_finite_are_refused(book: Book) -> None:
    import redis

    async def body(client: Any, recipes: Any) -> None:
        ac = recipes.AutoComplete(client, "w")
        await value(ac.set("big", 1e308))
        with pytest.raises(redis.ResponseError, match="resulting weight is not a finite number"):
            await value(ac.feed("big", 1e308))
        with pytest.raises(redis.ResponseError, match="weight must be a finite number"):
            await value(ac.feed("x", float("inf")))
        with pytest.raises(redis.ResponseError, match="weight must be a finite number"):
            await value(ac.set("x", float("nan")))
        assert await value(ac.weight("big")) == 1e308
        assert await value(ac.count()) == 1

    book.run(body)


def test_hint_with_weights_is_zrange_withscores(book: Book) -> None:
    """``AUTOCOMPLETE.HINT … WITHWEIGHTS`` answers as ``ZRANGE … WITHSCORES``
    does on the same server (RESP2 here: a flat array, weights as strings)."""
    plain = book.plain
    for content, weight in [("a", 0.1), ("ab", 1 / 3), ("abc", 1e300), ("abd", -5)]:
        plain.execute_command("AUTOCOMPLETE.SET", "k", content, repr(weight))
        plain.execute_command("ZADD", "z", repr(weight), content)
    ours: List[Tuple[Any, ...]] = plain.execute_command("AUTOCOMPLETE.HINT", "k", "a", "WITHWEIGHTS")
    zset = plain.execute_command("ZRANGE", "z", "0", "-1", "REV", "WITHSCORES")
    assert ours == zset
