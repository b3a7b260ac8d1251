"""A wrong type for any argument of a public factory is refused in one place, `@checked`, in its words.

Each argument's type is checked once: by the `@checked` decorator (a policy's `check_fields`), never again
by hand. So a value of no type flower knows, given for any argument, raises the one `SpecError` (a
`TypeError` and a `ValueError`) that `@checked` words, naming the callable and the argument:
"Runtime: env must be a mapping of str to str or None, got <Bad>". A hand-written branch that fired first
would word it otherwise. `tests/test_arguments.py` tries every edge value on every public callable; this
table pins who answers a wrong type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions

import flower
from flower import SpecError
from flower._util.check import describe, fits
from tests.arguments import BAD, parameters

Call = tuple[tuple[Any, ...], dict[str, Any]]


def _team() -> dict[str, flower.AgentSpec]:
    return {"w": flower.worker("Counts.", "You count.")}


FACTORIES: dict[str, Callable[[Path], Call]] = {
    "coordinator": lambda tmp: (("lead", "Goal.", _team()), {}),
    "worker": lambda tmp: (("Counts.", "You count."), {}),
    "Runtime": lambda tmp: ((tmp,), {}),
    "instrument": lambda tmp: ((ClaudeAgentOptions(),), {"workspace": tmp}),
    "spill_guard": lambda tmp: ((tmp,), {}),
    "spill_hooks": lambda tmp: ((tmp,), {}),
    "SqliteSessionStore": lambda tmp: ((tmp / "s.db",), {}),
    "PostgresSessionStore": lambda tmp: (("postgresql://127.0.0.1:1/none",), {}),
    "PruningSessionStore": lambda tmp: ((tmp / "s.db",), {}),
    "TrimmingSessionStore": lambda tmp: ((tmp / "s.db",), {"spill_dir": tmp}),
    "Workbench": lambda tmp: ((tmp,), {}),
    "build_options": lambda tmp: ((flower.worker("Counts.", "You count."),), {}),
    "delegate_guard": lambda tmp: ((), {}),
    "report_guard": lambda tmp: ((tmp,), {}),
    "report_cut": lambda tmp: ((tmp,), {}),
    "index_guard": lambda tmp: ((flower.Workbench(tmp),), {}),
    "glance_verdict": lambda tmp: (("ls",), {}),
    "mandate_guard": lambda tmp: ((), {}),
}
"""A valid call of each public factory; each argument is then replaced in turn by a value of no type."""

POLICIES = (
    "AgentSpec",
    "SpillPolicy",
    "EphemeralPolicy",
    "PrunePolicy",
    "TrimPolicy",
    "CachePolicy",
    "HandoffPolicy",
    "KeepWarmPolicy",
    "CompactPolicy",
)
"""The dataclasses typed by `check_fields` (`DeliveryPolicy` and `TracingPolicy` check theirs by hand,
in one place too, with words of their own)."""


def _rows() -> list[tuple[str, str]]:
    rows = []
    for label in FACTORIES:
        # not `Any`, nor `dsn`'s "anything with a pool's acquire": those have no type to refuse
        rows += [(label, p.name) for p in parameters(getattr(flower, label)) if not fits(BAD, p.hint)]
    return rows


def _hint(function: Any, name: str) -> Any:
    return next(param.hint for param in parameters(function) if param.name == name)


@pytest.mark.parametrize(("label", "name"), _rows(), ids=lambda value: str(value))
def test_a_wrong_type_is_refused_once_by_checked(label: str, name: str, tmp_path: Path) -> None:
    function = getattr(flower, label)
    hint = _hint(function, name)
    args, kwargs = FACTORIES[label](tmp_path)
    positional = [p.name for p in parameters(function)][: len(args)]
    if name in positional:
        args = tuple(BAD if given == name else value for given, value in zip(positional, args, strict=True))
    else:
        kwargs = {**kwargs, name: BAD}
    with pytest.raises(SpecError) as raised:
        function(*args, **kwargs)
    expected = f"{label}: {name} must be {describe(hint)}, got <Bad>"
    assert str(raised.value).startswith(expected), str(raised.value)
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, ValueError)


@pytest.mark.parametrize("label", POLICIES)
def test_a_policy_field_of_the_wrong_type_is_refused_once_by_check_fields(label: str) -> None:
    cls = getattr(flower, label)
    required = {"AgentSpec": {"instructions": "Do it."}}.get(label, {})
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        hint = _hint(cls, field.name)
        if fits(BAD, hint):
            continue
        with pytest.raises(SpecError) as raised:
            cls(**{**required, field.name: BAD})
        assert str(raised.value) == f"{label}.{field.name} must be {describe(hint)}, got <Bad>"
