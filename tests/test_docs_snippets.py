"""Every Python snippet of the docs runs as copied: read top to bottom, a page's snippets parse and name
nothing they do not define or import.

A page's ```python blocks are taken in order as one program (a reader copies from the top), compiled
with top-level `await` allowed (the SDK's own examples use it), and checked by ruff's undefined-name
rule. A name a page uses must come from an import or a definition in that page's snippets, or be a
builtin: a snippet that leans on a name the docs never define fails here. A signature shown as a
reference, not code to run, goes in a ```text block.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flower.testing import hang_guard

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("**/*.md")])
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def program(page: Path) -> str:
    """The page's Python snippets, in order, as one module."""
    return "\n".join(_BLOCK.findall(page.read_text(encoding="utf-8")))


WITH_CODE = [page for page in PAGES if program(page).strip()]


@pytest.mark.parametrize("page", WITH_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_pages_snippets_parse_and_define_every_name_they_use(page: Path, tmp_path: Path) -> None:
    source = program(page)
    name = str(page.relative_to(ROOT))
    try:
        compile(source, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as error:
        pytest.fail(f"{name}: a snippet does not parse ({error.msg}, line {error.lineno} of its snippets)")
    copied = tmp_path / "snippets.py"
    copied.write_text(source, encoding="utf-8")
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--select",
            "F821",
            "--output-format",
            "concise",
            "--no-cache",
            str(copied),
        ],
        capture_output=True,
        text=True,
        timeout=hang_guard(),
        check=False,
        cwd=tmp_path,
    )
    undefined = sorted(set(re.findall(r"Undefined name `([^`]+)`", checked.stdout)))
    assert checked.returncode in (0, 1), checked.stderr
    assert undefined == [], f"{name}: its snippets use names they never define or import: {undefined}"
