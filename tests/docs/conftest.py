"""The documentation site, built once for the checks of this folder.

`book` builds it from docs/ with the pinned mdBook that `make docs` installs
(`.tools/bin/mdbook`; MDBOOK=/path/to/mdbook for another) into a directory of
the test run, so that what is checked is what the pages build to now.
"""

import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "docs" / "src"


class Chapter(NamedTuple):
    name: str  # as SUMMARY.md names it (the sidebar's entry and the page's <title>)
    page: str  # the built page, relative to the book: lock.html


def chapters() -> List[Chapter]:
    """The chapters of SUMMARY.md, in order."""
    found = []
    for line in (SOURCES / "SUMMARY.md").read_text(encoding="utf-8").splitlines():
        entry = re.match(r"^\s*(?:- )?\[(.+)\]\((.+)\.md\)\s*$", line)
        if entry:
            found.append(Chapter(entry.group(1), entry.group(2) + ".html"))
    return found


class Page(NamedTuple):
    ids: Set[str]  # every id (and <a name>) of the page
    links: List[Tuple[str, str]]  # (tag.attribute, value) of every href and src
    base: Optional[str]  # its <base href>, if any


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: Set[str] = set()
        self.links: List[Tuple[str, str]] = []
        self.base: Optional[str] = None

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif tag == "base" and name == "href":
                self.base = value
            elif name in ("href", "src") and tag != "base":
                self.links.append((f"{tag}.{name}", value))


def parse(path: Path) -> Page:
    parser = _Parser()
    parser.feed(path.read_text(encoding="utf-8"))
    return Page(parser.ids, parser.links, parser.base)


def mdbook() -> str:
    path = os.environ.get("MDBOOK") or str(ROOT / ".tools" / "bin" / "mdbook")
    if not Path(path).exists():
        pytest.fail(f"no mdBook at {path}: `make docs` installs it")
    return path


@pytest.fixture(scope="session")
def book() -> Iterator[Path]:
    """The site built from docs/ now, in a directory of its own."""
    out = Path(tempfile.mkdtemp(prefix="book-"))
    try:
        done = subprocess.run([mdbook(), "build", str(ROOT / "docs"), "--dest-dir", str(out)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"mdbook build failed:\n{done.stdout}\n{done.stderr}"
        # mdBook writes a warning for a link or an include it cannot follow, and builds on.
        warnings = [line for line in (done.stdout + done.stderr).splitlines() if re.search(r"\b(WARN|ERROR)\b", line)]
        assert not warnings, "mdbook build warned:\n" + "\n".join(warnings)
        yield out
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="session")
def pages(book: Path) -> Dict[str, Page]:
    """Every HTML file of the site, by its path relative to the book."""
    return {str(path.relative_to(book)): parse(path) for path in sorted(book.rglob("*.html"))}
