"""Workbench: directories, the generated index, the prompt block, and path containment."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from flower._errors import SpecError, WorkbenchError
from flower._workbench import WORKBENCH_RULES, Workbench


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- construction -----------------------------------------------------------------------------------


def test_the_constructor_does_no_io(tmp_path: Path) -> None:
    wb = Workbench(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()
    assert wb.root == tmp_path / "missing" / ".flower"
    assert (wb.scripts, wb.artifacts, wb.notes, wb.spill) == tuple(
        wb.root / n for n in ("scripts", "artifacts", "notes", "spill")
    )
    assert wb.index_path == wb.root / "INDEX.md"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_entries": 0},
        {"max_entries": True},
        {"rules": "one rule"},
        {"rules": ["{unknown}"]},
        {"root": ""},
    ],
)
def test_bad_arguments(ws: Path, kwargs: dict[str, object]) -> None:
    with pytest.raises(SpecError):
        Workbench(ws, **kwargs)  # type: ignore[arg-type]


def test_bad_workspace(tmp_path: Path) -> None:
    with pytest.raises(SpecError):
        Workbench("")
    with pytest.raises(SpecError, match="not a directory"):
        Workbench(tmp_path / "missing").ensure()
    with pytest.raises(SpecError, match="not a directory"):
        Workbench(write(tmp_path / "file", "x")).refresh()


def test_ensure_creates_private_directories(ws: Path) -> None:
    wb = Workbench(ws).ensure()
    for directory in (wb.root, wb.scripts, wb.artifacts, wb.notes, wb.spill):
        assert directory.is_dir() and stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert Workbench(ws, root="elsewhere").root == ws / "elsewhere"


def test_a_symlinked_directory_is_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    wb = Workbench(ws)
    wb.root.mkdir()
    wb.scripts.symlink_to(outside, target_is_directory=True)
    with pytest.raises(WorkbenchError, match="must be a real directory") as caught:
        wb.refresh()
    assert isinstance(caught.value, OSError) and isinstance(caught.value.__cause__, NotADirectoryError)
    assert list(outside.iterdir()) == []


# -- the index --------------------------------------------------------------------------------------


def test_the_index_lists_files_with_descriptions_and_sizes(ws: Path) -> None:
    wb = Workbench(ws).ensure()
    write(wb.scripts / "count.py", "#!/usr/bin/env python3\n# desc: Count lines per file\nprint(1)\n")
    write(wb.scripts / "lib" / "walk.sh", "# DESC: walk the tree\n")
    write(wb.scripts / "plain.py", "print('no description')\n")
    write(wb.notes / "0001-store.md", "# Use SQLite for the store\n\nBecause...\n")
    write(wb.artifacts / "report.txt", "r" * 3000)
    write(wb.scripts / ".hidden", "# desc: never shown\n")

    text = wb.refresh()

    assert wb.index_path.read_text() == text
    assert f"Root: `{wb.root}`" in text
    assert "- `scripts/count.py` — Count lines per file (" in text
    assert "- `scripts/lib/walk.sh` — walk the tree (" in text
    assert "- `scripts/plain.py` (24 B)" in text
    assert "- `notes/0001-store.md` — Use SQLite for the store (" in text
    assert "- `artifacts/report.txt` (2.9K)" in text
    assert "scripts/ (3)" in text and "never shown" not in text and ".hidden" not in text
    assert "spill/INDEX.jsonl" in text


def test_refresh_writes_only_when_something_changed(ws: Path) -> None:
    wb = Workbench(ws)
    first = wb.refresh()
    before = wb.index_path.stat()
    assert wb.refresh() == first
    after = wb.index_path.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
    write(wb.scripts / "new.py", "# desc: new one\n")
    assert "new one" in wb.refresh()
    write(wb.scripts / "new.py", "# desc: changed description\n")
    assert "changed description" in wb.refresh()
    assert [p.name for p in wb.root.iterdir() if p.name.endswith(".tmp")] == []


def test_a_hundred_files_keep_the_index_bounded(ws: Path) -> None:
    wb = Workbench(ws).ensure()
    for i in range(100):
        write(wb.artifacts / f"run-{i:03d}.log", f"# desc: run {i}\n")
    text = wb.refresh()
    listed = [line for line in text.splitlines() if line.startswith("- `artifacts/")]
    assert len(listed) == 40
    assert "artifacts/ (100)" in text
    assert f"- ... 60 more (list them with `ls -R {wb.artifacts}`)" in text
    assert len(text) < 4000


def test_an_external_root_with_many_files(ws: Path, tmp_path: Path) -> None:
    wb = Workbench(ws, root=tmp_path / "shared-bench", max_entries=5)
    wb.ensure()
    for i in range(12):
        write(wb.notes / f"n{i:02d}.md", f"# note {i}\n")
    assert not wb.inside_workspace
    block = wb.prompt_block()
    assert "7 more" in block and str(tmp_path / "shared-bench") in block


def test_a_symlinked_subdirectory_inside_is_listed_but_not_followed(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "big-tree"
    for i in range(5):
        write(outside / f"f{i}.txt", "x")
    wb = Workbench(ws).ensure()
    (wb.artifacts / "link").symlink_to(outside, target_is_directory=True)
    text = wb.refresh()
    assert "- `artifacts/link`" in text and "f0.txt" not in text


# -- the prompt block -------------------------------------------------------------------------------


def test_the_prompt_block_holds_the_root_the_index_and_the_rules(ws: Path) -> None:
    wb = Workbench(ws)
    wb.ensure()
    write(wb.scripts / "count.py", "# desc: Count lines per file\n")
    block = wb.prompt_block()
    assert f"Your workbench is `{wb.root}`" in block
    assert "- `scripts/count.py` — Count lines per file" in block
    assert f"1. A script you run twice belongs in `{wb.scripts}/`" in block
    assert "2. Long outputs" in block and f"`{wb.artifacts}/`" in block
    assert f"3. Decisions and their reasons go to `{wb.notes}/`" in block
    assert len(WORKBENCH_RULES) == 3
    assert wb.index_path.exists(), "prompt_block() refreshes the index"


def test_rules_are_overridable(ws: Path) -> None:
    block = Workbench(ws, rules=["Keep everything in {root}."]).prompt_block()
    assert block.endswith(f"1. Keep everything in {Workbench(ws).root}.")


def test_preface(ws: Path) -> None:
    wb = Workbench(ws)
    text = wb.preface("Start.")
    assert text.startswith("## Workbench") and text.endswith("\n\n---\n\nStart.")
    assert wb.preface("Go on.", since=wb.prompt_block()) == "Go on.", "unchanged index: nothing to repeat"
    (wb.scripts / "new.py").write_text("# desc: NEW\n")
    assert "NEW" in wb.preface("Go on.", since=text.split("\n\n---\n\n")[0])
    with pytest.raises(SpecError):
        wb.preface("  ")


# -- containment ------------------------------------------------------------------------------------


def test_contains_by_resolved_path(ws: Path, tmp_path: Path) -> None:
    wb = Workbench(ws).ensure()
    assert wb.contains(wb.scripts / "x.py")
    assert wb.contains(wb.root)
    assert wb.contains(".flower/notes/n.md"), "relative paths are taken from the workspace"
    assert not wb.contains(ws / ".flower-old" / "x")
    assert not wb.contains(wb.scripts / ".." / ".." / "x")
    assert not wb.contains(ws / "src" / "a.py")
    assert not wb.contains("")
    assert not wb.contains("bad\x00name")
    (ws / "alias").symlink_to(wb.notes, target_is_directory=True)
    assert wb.contains(ws / "alias" / "n.md"), "a symlink into the workbench is inside"
    (wb.artifacts / "escape").symlink_to(tmp_path, target_is_directory=True)
    assert not wb.contains(wb.artifacts / "escape" / "x"), "a symlink out of it is not"


def test_repr_and_paths_are_absolute(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws.parent)
    wb = Workbench("ws")
    assert wb.workspace == ws and wb.root.is_absolute()
    assert "Workbench(" in repr(wb)
    assert os.fspath(wb.index_path).endswith(os.path.join(".flower", "INDEX.md"))
