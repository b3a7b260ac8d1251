"""Every public callable refuses a bad argument with a `SpecError` naming it: a table over `flower.__all__`.

For each callable a valid call is written once (`VALID`); each of its parameters is then replaced in turn
by the values of `tests.arguments.EDGE_VALUES`. A value that does not fit the parameter's type hint must
raise `SpecError` naming the parameter; one that fits (an empty string, a negative or huge number, NaN)
may be accepted, or refused the same way. Any other exception (a raw `TypeError`, an `AttributeError`,
an `OverflowError`) fails. A public name without a row fails `test_every_public_callable_has_a_row`:
add a row for it (or, for a result flower builds itself, a line in `RESULTS`).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import ClaudeAgentOptions, SessionStore

import flower
from flower import SpecError, SqliteSessionStore
from flower.report import ReportOptions
from flower.report._build import compute_report
from flower.report._load import Loaded
from tests.arguments import Parameter, bad_values, parameters, shown

Call = tuple[tuple[Any, ...], dict[str, Any]]
"""Positional and keyword arguments of a valid call."""


class Reached(Exception):
    """Raised by a Runtime's `configure`: the run got past every check, so the arguments were accepted."""


def _refuse_to_run(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
    raise Reached


def _database(tmp: Path) -> Path:
    path = tmp / "store" / "sessions.db"

    async def write() -> None:
        async with SqliteSessionStore(path) as store:
            await store.append({"project_key": "p", "session_id": "s"}, [{"type": "user", "uuid": "u"}])

    anyio.run(write)
    return path


def _spec() -> flower.AgentSpec:
    return flower.coordinator("lead", "Goal.", {"w": flower.worker("Counts.", "You count.")})


HANDOFF = "## Doing now\nCounting.\n## Next step\nCount more."

VALID: dict[str, Callable[[Path], Call]] = {
    "AgentSpec": lambda tmp: ((), {"instructions": "Do it."}),
    "CachePolicy": lambda tmp: ((), {}),
    "CompactPolicy": lambda tmp: ((), {}),
    "DeliveryPolicy": lambda tmp: ((), {}),
    "EphemeralPolicy": lambda tmp: ((), {}),
    "Handoff": lambda tmp: ((), {"doing": "Counting.", "next": "Count more."}),
    "HandoffPolicy": lambda tmp: ((), {}),
    "Heartbeat": lambda tmp: (("working",), {}),
    "KeepWarm": lambda tmp: ((ClaudeAgentOptions(),), {"records": tmp / "keep-warm.jsonl"}),
    "KeepWarmPolicy": lambda tmp: ((), {}),
    "PostgresSessionStore": lambda tmp: (("postgresql://127.0.0.1:1/none",), {}),
    "PrunePolicy": lambda tmp: ((), {}),
    "PruningSessionStore": lambda tmp: ((tmp / "s.db",), {}),
    "ReportOptions": lambda tmp: ((), {}),
    "Runtime": lambda tmp: ((tmp,), {}),
    "SpillPolicy": lambda tmp: ((), {}),
    "SqliteSessionStore": lambda tmp: ((tmp / "s.db",), {}),
    "TracingPolicy": lambda tmp: ((), {}),
    "TrimPolicy": lambda tmp: ((), {}),
    "TrimmingSessionStore": lambda tmp: ((tmp / "s.db",), {"spill_dir": tmp / "spill"}),
    "Workbench": lambda tmp: ((tmp,), {}),
    "build_options": lambda tmp: ((_spec(),), {}),
    "build_report": lambda tmp: ((_database(tmp),), {}),
    "build_report_sync": lambda tmp: ((_database(tmp),), {}),
    "coordinator": lambda tmp: (("lead", "Goal.", {"w": flower.worker("Counts.", "You count.")}), {}),
    "coordinator_rules": lambda tmp: ((), {}),
    "delegate_guard": lambda tmp: ((), {}),
    "glance_run": lambda tmp: (("ls",), {"cwd": str(tmp)}),
    "glance_verdict": lambda tmp: (("ls",), {}),
    "index_guard": lambda tmp: ((flower.Workbench(tmp),), {}),
    "index_hooks": lambda tmp: ((flower.Workbench(tmp),), {}),
    "instrument": lambda tmp: ((ClaudeAgentOptions(),), {"workspace": tmp}),
    "is_ephemeral": lambda tmp: (("ls",), {}),
    "lease_session": lambda tmp: (
        (ClaudeAgentOptions(session_store=flower.SqliteSessionStore(tmp / "s.db"), resume="s"),),
        {"cwd": tmp},
    ),
    "mandate_guard": lambda tmp: ((), {}),
    "merge_hooks": lambda tmp: ((), {}),
    "parse_handoff": lambda tmp: ((HANDOFF,), {}),
    "report_cut": lambda tmp: ((tmp / "reports",), {}),
    "report_guard": lambda tmp: ((tmp / "reports",), {}),
    "report_hooks": lambda tmp: ((tmp / "reports",), {}),
    "spill_guard": lambda tmp: ((tmp / "spill",), {}),
    "spill_hooks": lambda tmp: ((tmp / "spill",), {}),
    "start_guard": lambda tmp: ((), {}),
    "worker": lambda tmp: (("Counts.", "You count."), {}),
}
"""A valid call of every public callable of `flower` that takes a user's arguments."""

RESULTS = {
    "EconomyReport": "what build_report computes",
    "FailureReason": "what StepResult.reason holds when a run failed",
    "GlanceVerdict": "what glance_verdict answers",
    "Lease": "what lease_session yields",
    "LoadReport": "what a rewriting store's load() reports",
    "RunStream": "what Runtime.stream returns",
    "StepResult": "what Runtime.run returns",
    "StepUsage": "StepResult.usage",
    "TokenUsage": "the token counts in StepResult.usage",
}
"""Public classes that flower builds and hands out; a caller never builds one."""

INSTANCES: dict[str, Callable[[Path], Any]] = {
    "EconomyReport": lambda tmp: compute_report(Loaded("x", []), ReportOptions()),
    "EphemeralPolicy": lambda tmp: flower.EphemeralPolicy(),
    "Heartbeat": lambda tmp: flower.Heartbeat("working"),
    "HandoffPolicy": lambda tmp: flower.HandoffPolicy(),
    "KeepWarm": lambda tmp: flower.KeepWarm(ClaudeAgentOptions()),
    "LoadReport": lambda tmp: flower.LoadReport(
        project_key="p", session_id="s", subpath=None, entries_in=0, entries_out=0
    ),
    "PostgresSessionStore": lambda tmp: flower.PostgresSessionStore("postgresql://127.0.0.1:1/none"),
    "Runtime": lambda tmp: flower.Runtime(tmp, configure=_refuse_to_run, check_credentials=False),
    "SqliteSessionStore": lambda tmp: flower.SqliteSessionStore(tmp / "s.db"),
    "TokenUsage": lambda tmp: flower.TokenUsage(input=1),
    "TracingPolicy": lambda tmp: flower.TracingPolicy(),
    "Workbench": lambda tmp: flower.Workbench(tmp),
}
"""An instance of each public class whose methods take arguments."""

METHODS: dict[str, Callable[[Path], Call]] = {
    "EconomyReport.render_text": lambda tmp: ((), {}),
    "EconomyReport.to_json": lambda tmp: ((), {}),
    "EphemeralPolicy.is_ephemeral": lambda tmp: (("ls",), {}),
    "Heartbeat.say": lambda tmp: (("a line",), {}),
    "Heartbeat.step": lambda tmp: (("a step",), {}),
    "HandoffPolicy.threshold": lambda tmp: ((200_000,), {}),
    "HandoffPolicy.warn_at": lambda tmp: ((200_000,), {}),
    "KeepWarm.feed": lambda tmp: (("not a message",), {}),
    "LoadReport.of_kind": lambda tmp: (("expired",), {}),
    "PostgresSessionStore.attach_workbench": lambda tmp: ((tmp, tmp / ".flower"), {}),
    "PostgresSessionStore.follow": lambda tmp: (("s",), {"cwd": tmp}),
    "PostgresSessionStore.holding": lambda tmp: (("s",), {}),
    "PostgresSessionStore.lease": lambda tmp: (("s",), {}),
    "Runtime.options": lambda tmp: ((_spec(),), {}),
    "Runtime.run": lambda tmp: ((_spec(), "Start."), {}),
    "Runtime.run_sync": lambda tmp: ((_spec(), "Start."), {}),
    "Runtime.stream": lambda tmp: ((_spec(), "Start."), {}),
    "SqliteSessionStore.follow": lambda tmp: (("s",), {"cwd": tmp}),
    "SqliteSessionStore.holding": lambda tmp: (("s",), {}),
    "SqliteSessionStore.lease": lambda tmp: (("s",), {}),
    "TokenUsage.minus": lambda tmp: ((flower.TokenUsage(),), {}),
    "TracingPolicy.metrics_on": lambda tmp: (({},), {}),
    "Workbench.contains": lambda tmp: ((tmp / "x",), {}),
    "Workbench.preface": lambda tmp: (("Go on.",), {}),
}
"""A valid call of every public method that takes arguments (the store protocol's aside, see below)."""

PROTOCOL = frozenset(name for name in dir(SessionStore) if not name.startswith("_")) | {"append_keyed"}
"""The SDK's `SessionStore` methods, and the outbox's append beside them: the SDK (or the outbox) calls
them, and a bad key or entry is a `StoreError`."""


def _public_callables() -> dict[str, Any]:
    found = {}
    for name in flower.__all__:
        value = getattr(flower, name)
        if callable(value) and not (isinstance(value, type) and issubclass(value, BaseException)):
            found[name] = value
    return found


def _methods(cls: type) -> dict[str, Callable[..., Any]]:
    """Public methods with arguments, defined by flower (inherited ones included), protocol ones aside."""
    found = {}
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith("_") or name in PROTOCOL or not member.__module__.startswith("flower"):
            continue
        if len(inspect.signature(member).parameters) > 1:
            found[f"{cls.__name__}.{name}"] = member
    return found


def _rows() -> list[tuple[str, Parameter]]:
    rows = []
    for name, value in _public_callables().items():
        if name in VALID:
            rows += [(name, param) for param in parameters(value)]
        if isinstance(value, type):
            for label, method in _methods(value).items():
                if label in METHODS:
                    rows += [(label, param) for param in parameters(method)]
    return rows


def test_every_public_callable_has_a_row() -> None:
    missing = [name for name in _public_callables() if name not in VALID and name not in RESULTS]
    assert not missing, f"add a valid call to VALID (and @checked to the callable) for: {', '.join(missing)}"
    methods = [
        label
        for value in _public_callables().values()
        if isinstance(value, type)
        for label in _methods(value)
    ]
    missing = [label for label in methods if label not in METHODS]
    assert not missing, (
        f"add a valid call to METHODS (and an instance to INSTANCES) for: {', '.join(missing)}"
    )
    assert not set(METHODS) - set(methods), "METHODS names a method that is gone"


def _invoke(label: str, tmp: Path, param: Parameter, value: Any) -> None:
    """Call `label` validly, but with `param` set to `value` (a fresh tmp directory each time)."""
    if "." in label:
        owner, method = label.split(".")
        function = getattr(INSTANCES[owner](tmp), method)
        args, kwargs = METHODS[label](tmp)
    else:
        function = getattr(flower, label)
        args, kwargs = VALID[label](tmp)
    bound = inspect.signature(function).bind_partial(*args, **kwargs)
    bound.arguments[param.name] = (value,) if param.kind is inspect.Parameter.VAR_POSITIONAL else value
    outcome = function(*bound.args, **bound.kwargs)
    if inspect.iscoroutine(outcome):
        anyio.run(lambda: outcome)
    elif inspect.isasyncgen(outcome):  # a stream: its checks run at the first item

        async def first() -> object:
            return await outcome.__anext__()

        anyio.run(first)


def _names(message: str, name: str) -> bool:
    words = {name, name.rstrip("s")}  # `*groups`: "each group must be..."
    return any(re.search(rf"\b{re.escape(word)}\b", message) for word in words)


@pytest.mark.parametrize(("label", "param"), _rows(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_a_bad_argument_is_a_spec_error_that_names_it(label: str, param: Parameter, tmp_path: Path) -> None:
    problems = []
    for index, (value, must_refuse) in enumerate(bad_values(param)):
        tmp = tmp_path / str(index)
        tmp.mkdir()
        try:
            _invoke(label, tmp, param, value)
        except SpecError as exc:
            if not _names(str(exc), param.name):
                problems.append(f"{param.name}={shown(value)}: SpecError does not name {param.name!r}: {exc}")
            continue
        except Reached:
            pass
        except Exception as exc:
            problems.append(f"{param.name}={shown(value)}: raised {type(exc).__name__}: {str(exc)[:200]}")
            continue
        if must_refuse:
            problems.append(f"{param.name}={shown(value)}: accepted, but it is not a {param.hint}")
    assert not problems, f"{label}:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda tmp: flower.SpillPolicy(pointer=None), "pointer"),
        (lambda tmp: flower.Runtime(tmp, env=""), "env"),
        (lambda tmp: flower.build_options(_spec(), compact=""), "compact"),
        (lambda tmp: flower.build_report_sync(_database(tmp), options=-1), "options"),
        (lambda tmp: flower.TrimmingSessionStore(tmp / "s.db", spill_dir=""), "spill_dir"),
    ],
    ids=[
        "SpillPolicy-pointer",
        "Runtime-env",
        "build_options-compact",
        "build_report_sync-options",
        "spill_dir",
    ],
)
def test_the_audits_examples(call: Callable[[Path], object], named: str, tmp_path: Path) -> None:
    """The audit's examples: raw TypeError/AttributeError before, or (spill_dir="") the current directory."""
    with pytest.raises(SpecError, match=rf"\b{named}\b"):
        call(tmp_path)


def test_spec_error_is_both_a_value_error_and_a_type_error() -> None:
    with pytest.raises(TypeError):
        flower.SpillPolicy(head="300")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"SpillPolicy\.head"):
        flower.SpillPolicy(head=-1)


def test_rows_cover_dataclass_fields() -> None:
    """Sanity: the rows come from signatures, so a new field of a policy is tried without a new row."""
    labels = {(label, param.name) for label, param in _rows()}
    for field in dataclasses.fields(flower.SpillPolicy):
        assert ("SpillPolicy", field.name) in labels
