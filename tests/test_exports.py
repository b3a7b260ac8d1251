"""The public surface: exactly these modules, exactly these names, each documented; the rest behind a `_`.

A name is public when it is importable from a module whose path has no `_` in it. Those modules are the
ones below, and their names are their `__all__`: what users import (`flower`), match on
(`flower.events`), build reports with (`flower.report`), trace with (`flower.tracing`), test with
(`flower.testing`) and store sessions in (`flower.stores`). Everything else is flower's machinery, behind
a `_` (`flower._wall`, `flower.report._metrics`...), free to change. A new public name is a decision:
add it here, to its module's `__all__`, and to a page of docs/api/.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import flower

PUBLIC: dict[str, list[str]] = {
    "flower": [
        "CLI_TOOLS",
        "COORDINATOR_PROMPT",
        "COORDINATOR_RULES",
        "DEFAULT_WORKERS",
        "HANDOFF_PROMPT",
        "MANDATE_LINE",
        "SPILL_OMISSION",
        "SPILL_POINTER",
        "SPILL_READ_LINES",
        "SPILL_READ_OFFSET",
        "SPILL_TOOLS",
        "TAKEOVER_PROMPT",
        "WORKBENCH_RULES",
        "WORKER_RULES",
        "AgentSpec",
        "CachePolicy",
        "CompactPolicy",
        "CredentialsError",
        "DeliveryPolicy",
        "EconomyReport",
        "EphemeralPolicy",
        "FailureReason",
        "FlowerError",
        "GlanceVerdict",
        "Handoff",
        "HandoffPolicy",
        "Heartbeat",
        "KeepWarm",
        "KeepWarmPolicy",
        "Lease",
        "LeaseError",
        "LoadReport",
        "PostgresSessionStore",
        "PrunePolicy",
        "PruningSessionStore",
        "ReportOptions",
        "RunStream",
        "Runtime",
        "SpecError",
        "SpillPolicy",
        "SqliteSessionStore",
        "StepResult",
        "StepUsage",
        "StoreError",
        "TokenUsage",
        "TracingPolicy",
        "TrimPolicy",
        "TrimmingSessionStore",
        "Workbench",
        "WorkbenchError",
        "__version__",
        "build_options",
        "build_report",
        "build_report_sync",
        "coordinator",
        "coordinator_rules",
        "delegate_guard",
        "glance_run",
        "glance_verdict",
        "index_guard",
        "index_hooks",
        "instrument",
        "is_ephemeral",
        "lease_session",
        "mandate_guard",
        "merge_hooks",
        "parse_handoff",
        "report_cut",
        "report_guard",
        "report_hooks",
        "spill_guard",
        "spill_hooks",
        "start_guard",
        "worker",
    ],
    "flower.events": [
        "ApiError",
        "Event",
        "GlanceWarning",
        "HandoffDone",
        "HandoffWarning",
        "KeepWarmPing",
        "Result",
        "SessionStarted",
        "StoreReport",
        "StoreWarning",
        "SubagentFinished",
        "SubagentStarted",
        "TaskFinished",
        "TaskStarted",
        "Text",
        "ToolCall",
        "ToolResult",
        "TracingWarning",
        "VersionWarning",
        "WorkbenchWarning",
    ],
    "flower.report": [
        "ContextGrowth",
        "Cost",
        "CostBreakdown",
        "Delegation",
        "DelegationAssumptions",
        "EconomyReport",
        "FleetReport",
        "FleetSession",
        "Mandates",
        "PromptCache",
        "ReportOptions",
        "Reports",
        "ResumeSummary",
        "Scripts",
        "SessionSummary",
        "SessionWhatIf",
        "Spills",
        "Split",
        "Tokens",
        "WhatIfOptions",
        "WhatIfReport",
        "WhatIfTotal",
        "build_fleet_report",
        "build_report",
        "build_report_sync",
        "build_what_if",
        "build_what_if_sync",
        "estimate",
        "price",
    ],
    "flower.stores": [
        "CachePolicy",
        "Change",
        "DeliveryPolicy",
        "EphemeralPolicy",
        "Lease",
        "LoadReport",
        "OutboxDelivery",
        "PostgresSessionStore",
        "PrunePolicy",
        "PruningSessionStore",
        "SqliteSessionStore",
        "TrimPolicy",
        "TrimmingSessionStore",
        "deliver_outbox",
    ],
    "flower.testing": [
        "ClearToolUses",
        "OtlpReceiver",
        "RecordedRequest",
        "Reply",
        "ScriptTimeout",
        "ScriptedModel",
        "ScriptedRun",
        "Text",
        "ToolUse",
        "UnconsumedSteps",
        "UnexpectedRequest",
        "Usage",
        "agent",
        "bash",
        "drop_connection",
        "hang_guard",
        "http_error",
        "pass_time",
        "prompt_too_long",
        "read",
        "reply",
        "stream_error",
        "tool_use",
    ],
    "flower.tracing": [
        "ExportSummary",
        "StoredSession",
        "TracingPolicy",
        "export_sessions",
        "flush",
        "session_runs",
    ],
}

LIMIT = 150
"""About what a user can hold in mind: the issue that narrowed the surface set it."""


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then everything else."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def test_no_module_without_an_underscore_is_public_unless_listed() -> None:
    found = {"flower"}
    for info in pkgutil.walk_packages(flower.__path__, "flower.", onerror=lambda name: None):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            found.add(info.name)
    assert found == set(PUBLIC), "a module without `_` in its path is public: list it here or rename it"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_the_public_names_are_exactly_these(name: str) -> None:
    module = importlib.import_module(name)
    assert list(module.__all__) == PUBLIC[name]


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key), "keep __all__ sorted (constants, classes, functions)"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.{attr} is in __all__ but missing"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_names_have_docstrings(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        value = getattr(module, attr)
        if callable(value) and not isinstance(value, str):
            assert (value.__doc__ or "").strip(), f"{name}.{attr} has no docstring"


def test_the_public_surface_stays_small() -> None:
    names = {name for exported in PUBLIC.values() for name in exported}
    assert len(names) <= LIMIT, f"{len(names)} public names: more than {LIMIT}"
