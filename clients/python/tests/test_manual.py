"""The examples of the README and of every page of the documentation site
(``docs/src/**/*.md``), run as written on every server.

Each redis-cli transcript (a fenced block whose lines start with the prompt
``127.0.0.1:6379> ``) runs in order, on a fresh server with the module, through
``redis-cli -p PORT --no-raw`` itself, so replies are printed by redis-cli
exactly as a user sees them; the prompt is only text. Each reply must equal the
lines below its command in the page, except for values that depend on the
clock, which follow these rules and no others:

* a line ``(N.NNs)`` (redis-cli prints one after a command that took 0.5 s or
  more) must appear exactly where the page has one, and within 0.5 s of it;
* a number of 13 digits, anywhere in a reply line (an integer, or inside a
  string such as an article's JSON), is a Unix time in milliseconds: it matches
  any 13-digit number within a day of the test's clock;
* durations counted down by the clock match within 250 ms: the reply of
  ``PTTL``, and the fields ``retry_after_ms``, ``reset_after_ms`` and
  ``refill_after_ms`` (lines ``4)``, ``5)``, ``6)``) of ``RATE.LIMIT`` and
  ``RATE.PEEK``, and the ttl (line ``2)``) of ``RATE.FIXED``, when the page
  shows a positive value there.

Each ```python block runs on a fresh server with ``client`` bound to a
``redis.Redis`` and ``aclient`` to a ``redis.asyncio.Redis`` of that server (the
Python package's page says so), and the address ``localhost:6379`` in its text
replaced by the server's. A one-line expression whose comment starts with a
Python literal (``ids.produce()  # 1000001``, ``seats.acquire()  # 1 (None
when …)``, or ``range(a, b)``) must evaluate to that value.

A block preceded by ``<!-- not run: <why> -->`` is skipped: the way to keep an
example that needs a replica, a cluster or a second client (today the replica
and cluster examples are shell commands, which are not run, and every
transcript and Python block runs). A failure names the file and the line.
"""

import ast
import asyncio
import contextlib
import gc
import os
import re
import shutil
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

import pytest
import redis
import redis.asyncio
from conftest import FLAVORS, ROOT, Server, aclose, serve, servers_required

# The README, then the site's pages in the order of their paths.
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs" / "src").rglob("*.md"))
FAMILIES = ("idgen", "lock", "article", "cache", "idpool", "rate", "pool", "rwlock", "latch", "autocomplete",
            "queue", "uqueue")
PROMPT = "127.0.0.1:6379> "
ELAPSED = re.compile(r"^\((\d+\.\d\d)s\)$")
UNIX_MS = re.compile(r"(?<!\d)\d{13}(?!\d)")
DURATIONS = {
    "PTTL": None,
    "RATE.LIMIT": ("4) ", "5) ", "6) "),
    "RATE.PEEK": ("4) ", "5) ", "6) "),
    "RATE.FIXED": ("2) ",),
}
DURATION_SLACK_MS = 250
ELAPSED_SLACK_S = 0.5


class Block(NamedTuple):
    kind: str  # "transcript" or "python"
    name: str  # the page and the block's rank in it, for the test's id
    file: str  # the page, relative to the repository
    line: int  # its first line in the page
    text: str


def page_name(path: Path) -> str:
    """``README``, or the page's path under docs/src without ``.md`` (``lock``, ``reference.lock``)."""
    if path.parent == ROOT:
        return path.stem
    return ".".join(path.relative_to(ROOT / "docs" / "src").with_suffix("").parts)


def blocks() -> List[Block]:
    found: List[Block] = []
    for path in PAGES:
        found.extend(blocks_of(path))
    return found


def blocks_of(path: Path) -> List[Block]:
    found: List[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    base = page_name(path)
    rank = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("```"):
            index += 1
            continue
        language = line[3:].strip()
        end = index + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        body = lines[index + 1:end]
        above = index - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        skipped = above >= 0 and lines[above].strip().startswith("<!-- not run:")
        kind = None
        if language == "python":
            kind = "python"
        elif body and body[0].startswith(PROMPT):
            kind = "transcript"
        if kind and not skipped:
            rank += 1
            name = base if rank == 1 else f"{base}-{rank}"
            found.append(Block(kind, name, str(path.relative_to(ROOT)), index + 2, "\n".join(body)))
        index = end + 1
    return found


BLOCKS = blocks()
TRANSCRIPTS = [block for block in BLOCKS if block.kind == "transcript"]
PYTHON = [block for block in BLOCKS if block.kind == "python"]


@pytest.fixture(params=sorted(FLAVORS))
def fresh(request: Any) -> Iterator[Server]:
    """A server of its own for one block."""
    yield from serve(request.param)


# Transcripts ----------------------------------------------------------------


def steps(text: str) -> List[Tuple[str, List[str]]]:
    """(command line, expected reply lines) in order."""
    result: List[Tuple[str, List[str]]] = []
    for line in text.splitlines():
        if line.startswith(PROMPT):
            result.append((line[len(PROMPT):], []))
        else:
            result[-1][1].append(line)
    return result


def redis_cli() -> str:
    path = os.environ.get("REDIS_CLI") or shutil.which("redis-cli")
    if not path:
        if servers_required():
            pytest.fail("redis-cli not found (apt-get install redis-tools)")
        pytest.skip("redis-cli not found")
    return path


def run_cli(port: int, commands: List[str]) -> List[List[str]]:
    """Each command's reply as redis-cli prints it, from one redis-cli session
    (one connection) fed the commands in order, each followed by an ``ECHO`` of
    a marker that splits the output."""
    marker = f"manual-{time.time_ns()}"
    feed = "".join(f"{command}\nECHO {marker}\n" for command in commands)
    done = subprocess.run([redis_cli(), "-p", str(port), "--no-raw"], input=feed.encode(),
                          capture_output=True, timeout=120)
    output = done.stdout.decode("utf-8", "replace").splitlines()
    replies: List[List[str]] = [[]]
    for line in output:
        if line == f'"{marker}"':
            replies.append([])
        else:
            replies[-1].append(line)
    assert replies[-1] == [], f"redis-cli ended early: {done.stdout!r} {done.stderr!r}"
    return replies[:-1]


def numbers_match(command: str, expected: str, actual: str) -> bool:
    """Whether a reply line matches, under the rules of the docstring."""
    if expected == actual:
        return True
    shown = re.split(r"(-?\d+)", expected)
    got = re.split(r"(-?\d+)", actual)
    if len(shown) != len(got):
        return False
    name = command.split()[0].upper() if command.split() else ""
    fields = DURATIONS.get(name, ())
    is_duration = name in DURATIONS and (fields is None or expected.startswith(fields))
    now_ms = time.time() * 1000
    for position, (want, have) in enumerate(zip(shown, got)):
        if want == have:
            continue
        if position % 2 == 0:  # text between numbers: exact
            return False
        if UNIX_MS.fullmatch(want) and UNIX_MS.fullmatch(have):
            if abs(int(have) - now_ms) <= 86_400_000:
                continue
            return False
        # the last number of the line is the value (before it: "4) ")
        if is_duration and position == len(shown) - 2 and int(want) > 0:
            if abs(int(have) - int(want)) <= DURATION_SLACK_MS:
                continue
        return False
    return True


def reply_matches(command: str, expected: List[str], actual: List[str]) -> bool:
    def split(lines: List[str]) -> Tuple[List[str], Optional[float]]:
        timed = [line for line in lines if ELAPSED.match(line)]
        seconds = float(ELAPSED.match(timed[0]).group(1)) if timed else None  # type: ignore[union-attr]
        return [line for line in lines if not ELAPSED.match(line)], seconds

    want, want_s = split(expected)
    have, have_s = split(actual)
    if (want_s is None) != (have_s is None):
        return False
    if want_s is not None and have_s is not None and abs(want_s - have_s) > ELAPSED_SLACK_S:
        return False
    return len(want) == len(have) and all(
        numbers_match(command, w, h) for w, h in zip(want, have))


@pytest.mark.parametrize("block", TRANSCRIPTS, ids=[b.name for b in TRANSCRIPTS])
def test_transcript(fresh: Server, block: Block) -> None:
    script = steps(block.text)
    replies = run_cli(fresh.port, [command for command, _ in script])
    assert len(replies) == len(script)
    for (command, expected), actual in zip(script, replies):
        assert reply_matches(command, expected, actual), (
            f"{block.file} line {block.line}: {PROMPT}{command}\n"
            f"{block.file} shows:\n" + "\n".join(expected) + "\nredis-cli printed:\n" + "\n".join(actual))


# Python blocks --------------------------------------------------------------


def leading_value(comment: str) -> Tuple[bool, Any]:
    """The Python literal a comment starts with, if any: the longest prefix
    that ends where the text goes on with ``:``, ``;``, `` (`` or nothing."""
    text = comment.lstrip("#").strip()
    cuts = [len(text)] + [i for i, c in enumerate(text) if c in ":;" or text[i:i + 2] == " ("]
    for cut in sorted(set(cuts), reverse=True):
        candidate = text[:cut].strip()
        if not candidate:
            continue
        ranged = re.fullmatch(r"range\((-?\d+), (-?\d+)\)", candidate)
        if ranged:
            return True, range(int(ranged.group(1)), int(ranged.group(2)))
        try:
            return True, ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return False, None


def comment_of(source_lines: List[str], node: ast.stmt) -> Optional[str]:
    if node.end_lineno != node.lineno or node.end_col_offset is None:
        return None
    rest = source_lines[node.lineno - 1][node.end_col_offset:].strip()
    return rest if rest.startswith("#") else None


@pytest.mark.parametrize("block", PYTHON, ids=[b.name for b in PYTHON])
def test_python(fresh: Server, block: Block) -> None:
    source = block.text.replace("localhost:6379", f"127.0.0.1:{fresh.port}")
    tree = ast.parse(source, filename=f"{block.file}:{block.line}")
    lines = source.splitlines()
    client = fresh.client()
    aclient = redis.asyncio.Redis(port=fresh.port)
    namespace: Dict[str, Any] = {"__name__": "manual", "client": client, "aclient": aclient}
    try:
        for node in tree.body:
            where = f"{block.file} line {block.line + node.lineno - 1}: {lines[node.lineno - 1].strip()}"
            comment = comment_of(lines, node)
            has_value, value = leading_value(comment) if comment else (False, None)
            if isinstance(node, ast.Expr) and has_value:
                code = compile(ast.Expression(node.value), where, "eval")
                result = eval(code, namespace)  # noqa: S307 - the page's own example
                assert result == value, f"{where}\n{block.file} shows {value!r}, got {result!r}"
            else:
                exec(compile(ast.Module([node], type_ignores=[]), where, "exec"), namespace)  # noqa: S102
    finally:
        client.close()
        # A block that used aclient did so in an event loop of its own, closed
        # since: its connections went with it.
        with contextlib.suppress(RuntimeError):
            asyncio.run(aclose(aclient))
        # What the example left open (a `limits` storage's own connection, as
        # an application keeps it) goes now, not in a later test.
        namespace.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()


def test_blocks_found() -> None:
    """Each family's page has a transcript, the README a transcript and a Python
    example, the Python package's page its examples: all found (and so run)."""
    pages = {block.file for block in TRANSCRIPTS}
    missing = [family for family in FAMILIES if f"docs/src/{family}.md" not in pages]
    assert not missing, f"no transcript found on the pages of {missing}"
    assert "README.md" in pages
    assert "README.md" in {block.file for block in PYTHON}
    assert len([block for block in PYTHON if block.file == "docs/src/python.md"]) >= 2
