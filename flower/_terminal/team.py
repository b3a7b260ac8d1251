"""The team `flower run` starts: a strict coordinator and its workers (flower's two, or a project's own).

The default workers cover what a person asks of Claude Code in a repository: `builder` changes code and runs
commands; `analyst` reads and analyses. A project gives its own with `--workers FILE`: a TOML file, or a
Python file that defines `WORKERS`. TOML (read with the standard library's `tomllib`)::

    [workers.tester]
    description = "Runs the test suite and reports the failures. Give it any job that runs tests."
    instructions = "You run the tests with `pytest -q`; report each failure in one line."
    tools = ["Bash", "Read", "Grep"]       # optional: worker()'s default set
    # model = "inherit"                   # optional (the default: the coordinator's model)
    # max_turns = 40                      # optional

Python::

    from flower import worker
    from flower._terminal import DEFAULT_WORKERS

    WORKERS = {**DEFAULT_WORKERS, "tester": worker("Runs the test suite...", "You run the tests...")}
"""

from __future__ import annotations

import runpy
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._agents import AgentSpec, coordinator, worker
from .._errors import SpecError

__all__ = ["ANALYST", "BUILDER", "DEFAULT_WORKERS", "RUN_INSTRUCTIONS", "lead", "load_workers"]

BUILDER = worker(
    "Changes code and runs commands: edits and writes files, runs tests, builds, git. Give it any job that "
    "changes the repository or needs a command's result.",
    "You work in the repository, hands on. Make the change the mandate asks for, run what proves it works "
    "(the tests, a build), and report what you changed and what the check showed.",
    tools=("Bash", "Read", "Write", "Edit", "Glob", "Grep"),
)
"""The worker that changes things: Bash, Read, Write, Edit, Glob, Grep."""

ANALYST = worker(
    "Reads and analyses: searches the code, reads files and logs, counts, compares, explains. Give it any "
    "job that only needs to look.",
    "You read and analyse; you never change a file of the repository. Use the command line for counts and "
    "searches (never estimate by hand), and report your conclusions with the paths and lines behind them.",
    tools=("Bash", "Read", "Glob", "Grep"),
)
"""The worker that reads: Bash (for searches and counts), Read, Glob, Grep; its instructions forbid
changing files."""

DEFAULT_WORKERS: Mapping[str, AgentSpec] = {"builder": BUILDER, "analyst": ANALYST}
"""The workers `flower run` starts with when no `--workers FILE` is given."""

RUN_INSTRUCTIONS = (
    "A person started you from a terminal in their repository (the working directory) with the goal in "
    "their message. Reach it through your workers; then answer them in a few lines: what was done, what "
    "it showed, what is left, and where the details are."
)
"""The coordinator's instructions under `flower run` (the goal itself is the prompt)."""

_FIELDS = frozenset({"description", "instructions", "tools", "model", "max_turns"})


def lead(
    workers: Mapping[str, AgentSpec], *, model: str | None = None, inline_until: int | None = None
) -> AgentSpec:
    """The coordinator of `flower run`: strict (`own_steps=0`: every hands-on call of the main thread is
    refused and delegated), with glances, over `workers`; `model` for the whole team (workers inherit).
    `inline_until` (`--inline-until`, opt-in): the run starts as an inline session that works hands-on
    itself, and hands off to this coordinator once its context reaches that many tokens."""
    return coordinator(
        "lead",
        RUN_INSTRUCTIONS,
        dict(workers),
        own_steps=0,
        glance=True,
        model=model,
        inline_until=inline_until,
    )


def load_workers(path: str | Path) -> dict[str, AgentSpec]:
    """The workers a `--workers FILE` defines: a `.toml` file's `[workers.NAME]` tables, or the `WORKERS`
    mapping of a `.py` file (run as a script). `SpecError` names the file and what is wrong."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise SpecError(f"--workers {file}: no such file (give a .toml or .py file)")
    if file.suffix == ".toml":
        return _from_toml(file)
    if file.suffix == ".py":
        return _from_python(file)
    raise SpecError(f"--workers {file}: a .toml or a .py file, not {file.suffix or 'a file without suffix'}")


def _from_toml(file: Path) -> dict[str, AgentSpec]:
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SpecError(f"--workers {file}: not valid TOML: {exc}") from exc
    tables = data.get("workers")
    if not isinstance(tables, dict) or not tables:
        raise SpecError(f"--workers {file}: define at least one [workers.NAME] table")
    found: dict[str, AgentSpec] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise SpecError(f"--workers {file}: workers.{name} must be a table")
        unknown = set(table) - _FIELDS
        if unknown:
            raise SpecError(
                f"--workers {file}: workers.{name} has unknown key(s) {', '.join(sorted(unknown))} "
                f"(known: {', '.join(sorted(_FIELDS))})"
            )
        for key in ("description", "instructions"):
            if not isinstance(table.get(key), str) or not table[key].strip():
                raise SpecError(f"--workers {file}: workers.{name}.{key} must be a non-empty string")
        options: dict[str, Any] = {k: table[k] for k in ("tools", "model", "max_turns") if k in table}
        try:
            found[name] = worker(table["description"], table["instructions"], **options)
        except SpecError as exc:
            raise SpecError(f"--workers {file}: workers.{name}: {exc}") from exc
    return found


def _from_python(file: Path) -> dict[str, AgentSpec]:
    namespace = runpy.run_path(str(file), run_name="flower_workers")
    workers = namespace.get("WORKERS")
    if not isinstance(workers, Mapping) or not workers:
        raise SpecError(f"--workers {file}: define WORKERS, a dict of names to worker() specs")
    bad = [str(name) for name, spec in workers.items() if not isinstance(spec, AgentSpec)]
    if bad:
        raise SpecError(f"--workers {file}: WORKERS[{bad[0]!r}] is not a worker() spec")
    return {str(name): spec for name, spec in workers.items()}
