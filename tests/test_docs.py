"""The docs build with `mkdocs build --strict`, document every public name, and their first script runs."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_MODULES = [
    "flower",
    "flower.doctor",
    "flower.events",
    "flower.hooks",
    "flower.report",
    "flower.stores",
    "flower.stores.rewrite",
    "flower.testing",
    "flower.versions",
]
"""Every name in these modules' `__all__` must have an entry in the API reference."""


def resolve(dotted: str) -> Any:
    """The object a documented id such as `flower.stores.PruningSessionStore.load` names."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise LookupError(dotted)


def documented_ids(site: Path) -> set[str]:
    ids: set[str] = set()
    for page in (site / "api").rglob("*.html"):
        ids.update(re.findall(r'id="(flower(?:\.[\w]+)+)"', page.read_text(encoding="utf-8")))
    return ids


def undocumented(ids: set[str]) -> list[str]:
    """Public names with no entry, counting an entry for the same object under another path."""
    objects = []
    for dotted in ids:
        try:
            objects.append(resolve(dotted))
        except (LookupError, AttributeError):
            continue
    missing = []
    for module_name in PUBLIC_MODULES:
        module: ModuleType = importlib.import_module(module_name)
        for name in module.__all__:
            if f"{module_name}.{name}" in ids:
                continue
            value = getattr(module, name)
            if not any(value is obj for obj in objects):
                missing.append(f"{module_name}.{name}")
    return missing


def test_the_docs_build_strict_and_document_every_public_name(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"

    missing = undocumented(documented_ids(site))
    assert not missing, (
        f"public names missing from the API reference: {', '.join(missing)}; add a `::: name` block to a "
        "page of docs/api/ (or its module's block covers it once the name is in the module's __all__)"
    )


@pytest.mark.cli
def test_the_getting_started_script_runs(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- docs-test: first\.py -->\n```python\n(.*?)```", page, re.S)
    assert found, (
        "docs/getting-started.md lost its tested script (the block after <!-- docs-test: first.py -->)"
    )
    script = tmp_path / "first.py"
    script.write_text(found.group(1), encoding="utf-8")

    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=180, check=False, cwd=tmp_path
    )

    assert done.returncode == 0, f"the getting-started script failed:\n{done.stdout}\n{done.stderr}"
    assert "SubagentStarted analyst" in done.stdout
    assert "True src/ has 2 TODOs." in done.stdout
    assert "the analyst's grep printed: src/app.py:2" in done.stdout
