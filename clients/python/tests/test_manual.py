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

import asyncio
import contextlib
import gc
import os
import re
import shutil
import subprocess
import time
import warnings
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
import redis
import redis.asyncio
from conftest import FLAVORS, ROOT, Server, aclose, serve, servers_required
from manual_blocks import PROMPT, Block, blocks_of, run_python

# The README, then the site's pages in the order of their paths.
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs" / "src").rglob("*.md"))
FAMILIES = ("idgen", "lock", "article", "cache", "idpool", "rate", "pool", "rwlock", "latch", "autocomplete",
            "queue", "uqueue")
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


def blocks() -> List[Block]:
    found: List[Block] = []
    for path in PAGES:
        found.extend(blocks_of(path))
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


@pytest.mark.parametrize("block", PYTHON, ids=[b.name for b in PYTHON])
def test_python(fresh: Server, block: Block) -> None:
    client = fresh.client()
    aclient = redis.asyncio.Redis(port=fresh.port)
    namespace: Dict[str, Any] = {"__name__": "manual", "client": client, "aclient": aclient}
    try:
        run_python(block, fresh.port, namespace)
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
