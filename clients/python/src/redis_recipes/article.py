"""ARTICLE: records created only if absent, with unique slugs and page views
(the book's ``Article``)."""

from typing import Any, Dict, Optional

from ._core import Recipe, Request, Steps, as_dict, recipe, text

_NUMBERS = ("created_at", "updated_at", "views")


class Article(Recipe):
    """One article in one hash (``article::<id>``, as the book names it). With
    ``slug_index``, slugs are claimed in that index; in Redis Cluster give the
    article and its index one hash tag (``{blog}article::1``, ``{blog}slugs``).

    ``create``, ``get``, ``update`` and ``is_exists`` are the book's and
    return what the book's do; ``id`` is the ID as text, as the book keeps
    it. ``record``, ``set_slug``, ``view`` and ``delete`` are beyond it."""

    def __init__(
        self,
        client: Any,
        article_id: Any,
        *,
        key: Optional[str] = None,
        slug_index: Optional[str] = None,
    ) -> None:
        super().__init__(client)
        self.id = str(article_id)  # the book's: the ID as text
        self.key = key if key is not None else f"article::{self.id}"
        self.slug_index = slug_index

    def _slug_index(self) -> str:
        if self.slug_index is None:
            raise ValueError("this Article has no slug_index")
        return self.slug_index

    @recipe
    def create(self, title: str, content: str, author: str, slug: Optional[str] = None) -> Steps[bool]:
        """True when created, False when the article already exists (nothing
        changes). A slug taken by another article raises ``SlugTaken``."""
        words: Request = ("ARTICLE.CREATE", self.key, title, content, author)
        if slug is not None:
            words += ("SLUG", self._slug_index(), slug)
        return bool((yield words) == 1)

    @recipe
    def get(self) -> Steps[Dict[str, Any]]:
        """The book's: ``{'id': '10086', 'title': …, 'content': …, 'author':
        …, 'create_at': '1551199163.429'}``, the ID as text, the fields as
        the client reads them (text with ``decode_responses=True``, else
        bytes) and ``create_at`` the creation time in Unix seconds, as text
        like the book's ``time()``. Without an article, only ``{'id': …}``
        (see ``is_exists()``). ``record()`` has every field the module keeps."""
        fields: Dict[str, Any] = as_dict((yield ("HGETALL", self.key)))
        article: Dict[str, Any] = {"id": self.id}
        for name in ("title", "content", "author"):
            if name in fields:
                article[name] = fields[name]
        if "create_at" in fields:  # a hash the book's own code wrote
            article["create_at"] = fields["create_at"]
        elif "created_at" in fields:
            article["create_at"] = _seconds(fields["created_at"])
        return article

    @recipe
    def is_exists(self) -> Steps[bool]:
        """The book's: True when the article exists."""
        return bool((yield ("HEXISTS", self.key, "title")) == 1)

    @recipe
    def record(self) -> Steps[Optional[Dict[str, Any]]]:
        """Beyond the book: every field the module keeps (``title``,
        ``content``, ``author``, ``created_at``, and when set ``updated_at``,
        ``slug``, ``views``), times (Unix ms) and views as ints, ``id``
        added; None without an article."""
        reply = yield ("ARTICLE.GET", self.key)
        if reply is None:
            return None
        fields: Dict[str, Any] = as_dict(reply)
        for name in _NUMBERS:
            if name in fields:
                fields[name] = int(fields[name])
        fields["id"] = self.id
        return fields

    @recipe
    def update(
        self,
        title: Optional[str] = None,
        content: Optional[str] = None,
        author: Optional[str] = None,
    ) -> Steps[bool]:
        """True when updated, False when there is no such article (none is
        created)."""
        words: Request = ("ARTICLE.UPDATE", self.key)
        for token, value in (("TITLE", title), ("CONTENT", content), ("AUTHOR", author)):
            if value is not None:
                words += (token, value)
        if len(words) == 2:
            raise ValueError("update needs at least one of title, content, author")
        return bool((yield words) == 1)

    @recipe
    def set_slug(self, slug: str) -> Steps[bool]:
        """Moves the article to ``slug`` (claims it, releases the old one)."""
        return bool((yield ("ARTICLE.SETSLUG", self.key, self._slug_index(), slug)) == 1)

    @recipe
    def view(self) -> Steps[Optional[int]]:
        """Counts one page view: the new count, or None without an article."""
        views = yield ("ARTICLE.VIEW", self.key)
        return None if views is None else int(views)

    @recipe
    def delete(self) -> Steps[bool]:
        """True when the article existed and is deleted (its slug released)."""
        words: Request = ("ARTICLE.DELETE", self.key)
        if self.slug_index is not None:
            words += ("SLUG", self.slug_index)
        return bool((yield words) == 1)


def _seconds(ms: Any) -> Any:
    """Unix ms as stored (``b'1551199163429'`` or text) → seconds as the book
    stores ``time()`` (``'1551199163.429'``), in the same type."""
    try:
        seconds = repr(int(ms) / 1000)
    except (TypeError, ValueError):
        return ms
    return seconds.encode() if isinstance(ms, bytes) else seconds


class SlugIndex(Recipe):
    """Looks articles up by slug."""

    def __init__(self, client: Any, key: str) -> None:
        super().__init__(client)
        self.key = key

    @recipe
    def lookup(self, slug: str) -> Steps[Optional[str]]:
        """The key of the article holding ``slug``, or None."""
        return text((yield ("ARTICLE.BYSLUG", self.key, slug)))
