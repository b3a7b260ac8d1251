"""examples/existing_app.py runs offline and shows a plain SDK app keeping everything with flower added."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from flower.testing import hang_guard
from tests.example_runs import assert_says_what_starts
from tests.printed import assert_prints, docs_output

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "existing_app.py"
ANSWER = "Reviewed. The analyst says: 32 ERROR lines in data/app.log."
KEPT = "the app's hook saw ['Read', 'mcp__team__add_note', 'Agent', 'Bash']; its MCP tool stored ['log read']"

pytestmark = pytest.mark.cli


def test_existing_app() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=hang_guard(), check=False
    )
    assert done.returncode == 0, f"existing_app.py failed:\n{done.stdout}\n{done.stderr}"
    assert_says_what_starts("existing_app.py", done.stderr)
    assert_prints(docs_output("examples.md", "existing_app.py"), done.stdout, "existing_app.py")
    plain, flowered = done.stdout.split("with flower: ")
    assert plain.startswith(f"plain SDK  : {ANSWER}") and flowered.startswith(ANSWER)
    assert KEPT in plain and KEPT in flowered  # nothing of the app was lost
    assert "spilled to .flower/spill/: 1 file(s); transcript in .flower/sessions.db: True" in flowered
    sizes = re.findall(r"last request: ([\d,]+) chars", done.stdout)
    before, after = (int(size.replace(",", "")) for size in sizes)
    assert after < before / 3, sizes  # the 20,000-char log stayed out of the main thread
