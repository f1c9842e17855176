"""The layout of docs/src/development.md is true to the tree: every source
file of the module is named there by its path, every path named there
exists, and every family of the module's spec has its files listed."""

import json
import re
from pathlib import Path
from typing import Set

ROOT = Path(__file__).resolve().parents[2]


def layout() -> str:
    text = (ROOT / "docs" / "src" / "development.md").read_text(encoding="utf-8")
    start = text.index("\n## Layout\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def named() -> Set[str]:
    """Every path in backticks in the layout (`src/lock.rs`, `tests/docs/`)."""
    return {path for path in re.findall(r"`((?:src|tests|clients|tools|bench|docs)/[^`\s]*)`", layout())}


def test_every_source_file_is_named() -> None:
    sources = {str(path.relative_to(ROOT)) for path in (ROOT / "src").rglob("*.rs")}
    missing = sorted(sources - named())
    assert not missing, f"source files the layout of docs/src/development.md does not name: {missing}"


def test_every_path_named_exists() -> None:
    """A path is the repository's, or a package's (`src/adapter.ts` of
    clients/node); `<family>` stands for any family."""
    bases = [ROOT, ROOT / "clients" / "node", ROOT / "clients" / "python"]
    gone = sorted(path for path in named()
                  if "<" not in path and not any((base / path.rstrip("/")).exists() for base in bases))
    assert not gone, f"paths in the layout of docs/src/development.md that are not in the tree: {gone}"


def test_every_family_is_in_the_layout() -> None:
    spec = json.loads((ROOT / "docs" / "spec.json").read_text(encoding="utf-8"))
    paths = named()
    for family in spec["families"]:
        name = family["name"].lower()
        for path in (f"src/{name}.rs", f"src/{name}/errors.rs"):
            assert path in paths, f"{family['name']}: docs/src/development.md's layout lacks {path}"
