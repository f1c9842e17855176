"""``redis_recipes.article`` on every server, sync and asyncio: ``Article``
and ``SlugIndex`` (the book's transcript, and what the book's code returns,
types included)."""

import time
from typing import Any

from conftest import Book, Clients, value
from recipes_helpers import run, same


def test_article(clients: Clients) -> None:
    async def body(client: Any, recipes: Any) -> None:
        article = recipes.Article(client, 10086, slug_index="slug.to.id")
        assert await value(article.get()) == {"id": "10086"}
        assert await value(article.create("greeting", "hello world", "peter", slug="hello")) is True
        assert await value(article.create("again", "x", "y")) is False
        got = await value(article.get())
        assert got["id"] == "10086"
        assert got["title"] in (b"greeting", "greeting")
        assert isinstance(got["create_at"], bytes) and float(got["create_at"]) > 1_600_000_000
        assert await value(article.update(title="hi")) is True
        assert await value(recipes.Article(client, 1).update(title="no such")) is False
        assert await value(article.view()) == 1
        assert await value(article.view()) == 2
        index = recipes.SlugIndex(client, "slug.to.id")
        assert await value(index.lookup("hello")) == "article::10086"
        assert await value(article.set_slug("hi-there")) is True
        assert await value(index.lookup("hello")) is None
        assert await value(article.delete()) is True
        assert await value(index.lookup("hi-there")) is None

    run(clients, body)


# ---- What the book's code returns: redis-manual-code hash/article.py (one
# hash, article::<id>) and string/article.py; the transcript of 代码清单 2-3.


def test_article_returns_what_the_book_returns(book: Book) -> None:
    async def body(client: Any, recipes: Any) -> None:
        article = recipes.Article(client, 10086)
        assert article.id == "10086"  # the book's self.id = str(article_id)
        await same(article.is_exists(), False)
        await same(article.create("message", "hello world", "peter"), True)
        got = await value(article.get())
        assert list(got) == ["id", "title", "content", "author", "create_at"]
        create_at = got.pop("create_at")
        assert got == {"id": "10086", "title": "message", "content": "hello world", "author": "peter"}
        assert all(type(v) is str for v in got.values())
        assert type(create_at) is str and abs(float(create_at) - time.time()) < 60  # '1551199163.4296808'
        await same(article.update(author="john"), True)
        again = await value(article.get())
        assert again == {**got, "author": "john", "create_at": create_at}
        await same(article.create("message", "hello world", "peter"), False)
        await same(article.is_exists(), True)
        missing = recipes.Article(client, 10087)
        await same(missing.get(), {"id": "10087"})  # HGETALL of nothing, the ID added
        await same(missing.update(title="x"), False)
        assert book.plain.exists("article::10087") == 0
        # A hash the book's own code wrote reads the same.
        book.plain.hset("article::1", mapping={"title": "t", "content": "c", "author": "a",
                                                "create_at": "1551199163.4296808"})
        await same(recipes.Article(client, 1).get(),
                   {"id": "1", "title": "t", "content": "c", "author": "a", "create_at": "1551199163.4296808"})
        # Beyond the book: every field as the module keeps it, page views.
        await same(article.view(), 1)
        record = await value(article.record())
        assert record["id"] == "10086" and record["author"] == "john" and record["views"] == 1
        assert type(record["created_at"]) is int and abs(record["created_at"] - float(create_at) * 1000) < 1
        assert type(record["updated_at"]) is int and record["updated_at"] >= record["created_at"]
        await same(missing.record(), None)
        await same(article.delete(), True)
        await same(article.get(), {"id": "10086"})

    book.run(body)
