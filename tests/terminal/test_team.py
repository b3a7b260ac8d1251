"""The team `flower run` starts: flower's two workers under a strict coordinator, or a project's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import SpecError
from flower._terminal import ANALYST, BUILDER, DEFAULT_WORKERS, lead, load_workers


def test_the_coordinator_is_strict_whatever_the_default_of_coordinator() -> None:
    spec = lead(DEFAULT_WORKERS, model="claude-sonnet-4-6")
    assert spec.delegate_only and spec.own_steps == 0 and spec.glance
    assert set(spec.workers) == {"builder", "analyst"} and spec.model == "claude-sonnet-4-6"
    assert all(w.model == "inherit" for w in spec.workers.values())


def test_the_builder_changes_things_and_the_analyst_only_looks() -> None:
    assert {"Write", "Edit", "Bash"} <= set(BUILDER.tools)
    assert not {"Write", "Edit"} & set(ANALYST.tools)


def test_workers_from_toml(tmp_path: Path) -> None:
    file = tmp_path / "workers.toml"
    file.write_text(
        '[workers.tester]\ndescription = "Runs the tests."\ninstructions = "You run pytest."\n'
        'tools = ["Bash", "Read"]\nmax_turns = 30\n'
        '[workers.writer]\ndescription = "Edits files."\ninstructions = "You edit."\n'
    )
    workers = load_workers(file)
    assert list(workers) == ["tester", "writer"]
    assert workers["tester"].tools == ("Bash", "Read") and workers["tester"].max_turns == 30
    assert lead(workers).own_steps == 0


def test_workers_from_python(tmp_path: Path) -> None:
    file = tmp_path / "workers.py"
    file.write_text(
        "from flower import worker\nfrom flower._terminal import DEFAULT_WORKERS\n"
        "WORKERS = {**DEFAULT_WORKERS, 'tester': worker('Runs the tests.', 'You run pytest.')}\n"
    )
    assert list(load_workers(file)) == ["builder", "analyst", "tester"]


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("w.toml", "[workers.x]\ndescription = 'd'\n", "workers.x.instructions must be a non-empty string"),
        ("w.toml", "[workers.x]\ndescription='d'\ninstructions='i'\ncolour='red'\n", "unknown key(s) colour"),
        ("w.toml", "[workers.x]\ndescription='d'\ninstructions='i'\ntools=['Shell']\n", "workers.x:"),
        ("w.toml", "title = 'no workers'\n", "define at least one [workers.NAME] table"),
        ("w.toml", "[workers\n", "not valid TOML"),
        ("w.py", "WORKERS = {'x': 1}\n", "WORKERS['x'] is not a worker() spec"),
        ("w.py", "TEAM = {}\n", "define WORKERS"),
        ("w.yaml", "workers: {}\n", "a .toml or a .py file"),
    ],
)
def test_a_bad_workers_file_is_named_with_what_is_wrong(
    tmp_path: Path, name: str, text: str, said: str
) -> None:
    file = tmp_path / name
    file.write_text(text)
    with pytest.raises(SpecError, match="--workers") as raised:
        load_workers(file)
    assert said in str(raised.value)


def test_a_missing_workers_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such file"):
        load_workers(tmp_path / "nope.toml")
