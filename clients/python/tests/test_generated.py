"""The files generated from the module's spec (``tools/generate.py``: the
client packages' error classes, the manual's reference pages and error
tables, the packages' versions and licences) are what the spec and
``clients/errors.json`` give: ``make spec`` rewrites them."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_generated_files_are_current() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "generate.py"), "--check"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_generated_file_does_not_depend_on_what_it_held() -> None:
    """An edit by hand is undone, not kept: the file is made from the spec
    alone."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import generate
    finally:
        sys.path.pop(0)
    spec, classes = generate.load()
    made = generate.outputs(spec, classes)
    catalogue = ROOT / "clients" / "python" / "src" / "redis_recipes" / "_catalogue.py"
    current = catalogue.read_text(encoding="utf-8")
    assert made[catalogue](current) == current
    assert made[catalogue](current.replace("class SlugTaken", "class SlugGone")) == current
