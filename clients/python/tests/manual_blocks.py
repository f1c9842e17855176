"""The examples of the README and of the site's pages (``docs/src/**/*.md``):
their blocks, and a ```python block run as written, each value its comment
shows checked (``test_manual.py``'s docstring has the rules). Nothing but the
standard library here, and redis-py in ``main``, so that it runs as well in a
virtualenv that holds only an installed wheel and what the wheel requires:

    python manual_blocks.py PAGE PORT

runs the first ```python block of PAGE against the server on 127.0.0.1:PORT,
with ``client`` and ``aclient`` bound as the Python package's page says, and
exits 1 if a value differs (``make test``'s test of the release's wheel,
``tests/dist/``).
"""

import ast
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

ROOT = Path(__file__).resolve().parents[3]
PROMPT = "127.0.0.1:6379> "


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


def run_python(block: Block, port: int, namespace: Dict[str, Any]) -> None:
    """Runs ``block`` in ``namespace`` against the server on ``port`` (the
    address ``localhost:6379`` in its text replaced); an AssertionError names
    the page's line whose value differs."""
    source = block.text.replace("localhost:6379", f"127.0.0.1:{port}")
    tree = ast.parse(source, filename=f"{block.file}:{block.line}")
    lines = source.splitlines()
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


def main(argv: List[str]) -> int:
    import redis
    import redis.asyncio

    page, port = Path(argv[0]).resolve(), int(argv[1])
    block = next(block for block in blocks_of(page) if block.kind == "python")
    client = redis.Redis(port=port)
    namespace: Dict[str, Any] = {"__name__": "manual", "client": client, "aclient": redis.asyncio.Redis(port=port)}
    try:
        run_python(block, port, namespace)
    except AssertionError as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        client.close()
    print(f"{block.file} line {block.line}: ran as written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
