"""The documentation site's links, without the network.

* In the built site, every link and asset (`href`, `src`) that is not an
  absolute URL opens a file of the site, and its `#anchor` an id of that page;
  a link leaving the site (a repository file outside docs/, which the site
  does not carry) fails: name such a file as plain text instead.
* The README and the packages' READMEs, read on the repository's host: each
  relative link opens a file of the repository; an anchor into a page of the
  site is an id of the built page, one into another Markdown file a heading's.
* Every page under docs/src is in SUMMARY.md (mdBook builds no other) or, if
  generated from the module's spec into docs/src/reference/, included by one;
  each family's page ends with its command reference.
"""

import re
import unicodedata
from pathlib import Path
from typing import Dict, List, Set
from urllib.parse import unquote, urljoin, urlsplit

from conftest import ROOT, SOURCES, Page, chapters

FAMILIES = ("idgen", "lock", "article", "cache", "idpool", "rate", "pool", "rwlock", "latch", "autocomplete",
            "queue", "uqueue")
READMES = ["README.md", "clients/python/README.md", "clients/node/README.md"]
# Where the site is taken to be served, for resolving its relative links (never fetched): a folder deep enough that
# a link climbing out of the site stays a URL, and shows.
SITE = "http://site.invalid/repository/target/book/"


def test_every_link_of_the_site_opens_a_page_and_its_anchor(book: Path, pages: Dict[str, Page]) -> None:
    broken: List[str] = []
    for name, page in pages.items():
        base = urljoin(SITE, page.base.lstrip("/")) if page.base else urljoin(SITE, name)
        for attribute, value in page.links:
            if re.match(r"^[a-z][a-z0-9+.-]*:", value) and not value.startswith(SITE):
                continue  # an absolute URL: not followed (no network)
            # A fragment alone is this page's (mdBook's 404 page has a <base>, and its heading links to itself).
            target = urlsplit(urljoin(urljoin(SITE, name) if value.startswith("#") else base, value))
            if not target.geturl().startswith(SITE):
                broken.append(f"{name}: {attribute}={value!r} leaves the site")
                continue
            path = unquote(target.path[len(urlsplit(SITE).path):])
            if path == "" or path.endswith("/"):
                path += "index.html"
            if path.endswith(".html"):
                if path not in pages:
                    broken.append(f"{name}: {attribute}={value!r}: no page {path}")
                elif target.fragment and unquote(target.fragment) not in pages[path].ids:
                    broken.append(f"{name}: {attribute}={value!r}: {path} has no id {target.fragment!r}")
            elif not (book / path).is_file():
                broken.append(f"{name}: {attribute}={value!r}: no file {path}")
    assert not broken, "broken links in the built site:\n" + "\n".join(broken)


def github_anchor(heading: str) -> str:
    """The anchor a repository host gives a Markdown heading (the text, lower
    case, without punctuation but `-` and `_`, spaces as `-`)."""
    text = re.sub(r"`|\*\*|<[^>]+>", "", heading).strip().lower()
    kept = "".join(c for c in text if c in "-_ " or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def heading_anchors(path: Path) -> Set[str]:
    anchors: Set[str] = set()
    counts: Dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = re.match(r"^#{1,6} (.+)$", line)
        if heading and not fenced:
            anchor = github_anchor(heading.group(1))
            seen = counts.get(anchor, 0)
            counts[anchor] = seen + 1
            anchors.add(anchor if seen == 0 else f"{anchor}-{seen}")
    return anchors


MARKDOWN_LINK = re.compile(r"\]\(([^()\s]+)\)")


def test_the_readmes_links_open_files_and_anchors(pages: Dict[str, Page]) -> None:
    broken: List[str] = []
    for readme in READMES:
        source = ROOT / readme
        text = source.read_text(encoding="utf-8")
        for at, line in enumerate(text.splitlines(), 1):
            for link in MARKDOWN_LINK.findall(line):
                if re.match(r"^[a-z]+:", link):
                    continue
                file, _, anchor = link.partition("#")
                target = (source.parent / unquote(file)).resolve() if file else source
                where = f"{readme} line {at}: ({link})"
                if not target.is_relative_to(ROOT) or not target.exists():
                    broken.append(f"{where}: no file {file}")
                    continue
                if not anchor:
                    continue
                if target.is_relative_to(SOURCES) and target.suffix == ".md":
                    page = str(target.relative_to(SOURCES).with_suffix(".html"))
                    ids = pages[page].ids if page in pages else set()
                else:
                    ids = heading_anchors(target)
                if unquote(anchor) not in ids:
                    broken.append(f"{where}: no anchor #{anchor}")
    assert not broken, "broken links in the READMEs:\n" + "\n".join(broken)


def test_every_page_is_in_the_summary() -> None:
    listed = {chapter.page for chapter in chapters()}
    sources = {str(path.relative_to(SOURCES).with_suffix(".html")) for path in SOURCES.rglob("*.md")}
    generated = {page for page in sources if page.startswith("reference/")}
    missing = sorted(sources - listed - generated - {"SUMMARY.html"})
    assert not missing, f"pages under docs/src that SUMMARY.md does not list (mdBook skips them): {missing}"


def test_every_generated_page_is_included() -> None:
    """A page generated into docs/src/reference/ shows only where another page includes it."""
    pages = [path.read_text(encoding="utf-8") for path in SOURCES.glob("*.md")]
    for generated in sorted((SOURCES / "reference").glob("*.md")):
        include = f"{{{{#include reference/{generated.name}}}}}"
        included = any(include in page for page in pages)
        assert included, f"no page includes docs/src/reference/{generated.name} ({include})"


def test_each_family_page_ends_with_its_reference() -> None:
    for family in FAMILIES:
        page = (SOURCES / f"{family}.md").read_text(encoding="utf-8")
        include = f"{{{{#include reference/{family}.md}}}}"
        ends_with_it = page.rstrip().endswith(include)
        assert ends_with_it, f"docs/src/{family}.md does not end with {include}"
        assert (SOURCES / "reference" / f"{family}.md").is_file(), f"docs/src/reference/{family}.md is missing"
