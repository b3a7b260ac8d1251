"""flower: keep a long-horizon Claude Agent SDK run economical with its context.

Example::

    from flower import Runtime, coordinator, worker

    analyst = worker("Analyse files: counts, searches, comparisons.",
                     "You do text analysis. Use the command line; never estimate by hand.",
                     tools=["Read", "Write", "Bash", "Glob", "Grep"])
    lead = coordinator("lead", "Goal: measure the size of data/.", {"analyst": analyst})
    result = Runtime(workspace="repo").run_sync(lead, "Start.")
"""

from ._errors import CredentialsError, FlowerError, SpecError, StoreError
from ._version import __version__
from .agents import AgentSpec, coordinator, worker
from .compact import CompactPolicy
from .glance import GlanceVerdict, glance_verdict, is_ephemeral
from .handoff import HANDOFF_PROMPT, TAKEOVER_PROMPT, Handoff, HandoffPolicy, parse_handoff
from .hooks.delegate import delegate_guard
from .hooks.index import index_guard, index_hooks
from .hooks.mandate import MANDATE_LINE, mandate_guard
from .hooks.report import report_guard, report_hooks
from .hooks.spill import SpillPolicy, spill_guard, spill_hooks
from .instrument import instrument
from .options import build_options, merge_hooks
from .report import EconomyReport, ReportOptions, build_report, build_report_sync
from .result import StepResult
from .rules import COORDINATOR_RULES, WORKER_RULES
from .runtime import Runtime
from .stores import (
    EphemeralPolicy,
    LoadReport,
    PrunePolicy,
    PruningSessionStore,
    SqliteSessionStore,
    TrimmingSessionStore,
    TrimPolicy,
)
from .workbench import WORKBENCH_RULES, Workbench

__all__ = [
    "COORDINATOR_RULES",
    "HANDOFF_PROMPT",
    "MANDATE_LINE",
    "TAKEOVER_PROMPT",
    "WORKBENCH_RULES",
    "WORKER_RULES",
    "AgentSpec",
    "CompactPolicy",
    "CredentialsError",
    "EconomyReport",
    "EphemeralPolicy",
    "FlowerError",
    "GlanceVerdict",
    "Handoff",
    "HandoffPolicy",
    "LoadReport",
    "PrunePolicy",
    "PruningSessionStore",
    "ReportOptions",
    "Runtime",
    "SpecError",
    "SpillPolicy",
    "SqliteSessionStore",
    "StepResult",
    "StoreError",
    "TrimPolicy",
    "TrimmingSessionStore",
    "Workbench",
    "__version__",
    "build_options",
    "build_report",
    "build_report_sync",
    "coordinator",
    "delegate_guard",
    "glance_verdict",
    "index_guard",
    "index_hooks",
    "instrument",
    "is_ephemeral",
    "mandate_guard",
    "merge_hooks",
    "parse_handoff",
    "report_guard",
    "report_hooks",
    "spill_guard",
    "spill_hooks",
    "worker",
]
