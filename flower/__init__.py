"""flower: keep a long-horizon Claude Agent SDK run economical with its context.

Example::

    from flower import Runtime, coordinator, worker

    analyst = worker("Analyse files: counts, searches, comparisons.",
                     "You do text analysis. Use the command line; never estimate by hand.",
                     tools=["Read", "Write", "Bash", "Glob", "Grep"])
    lead = coordinator("lead", "Goal: measure the size of data/.", {"analyst": analyst})
    result = Runtime(workspace="repo").run_sync(lead, "Start.")
"""

from ._agents import AgentSpec, coordinator, worker
from ._errors import CredentialsError, FlowerError, LeaseError, SpecError, StoreError, WorkbenchError
from ._glance import GlanceVerdict, glance_run, glance_verdict, is_ephemeral
from ._handoff import HANDOFF_PROMPT, TAKEOVER_PROMPT, CompactPolicy, Handoff, HandoffPolicy, parse_handoff
from ._instrument import instrument
from ._lease_session import lease_session
from ._options import build_options, merge_hooks
from ._progress import Heartbeat
from ._result import FailureReason, StepResult
from ._run_stream import RunStream
from ._runtime import Runtime
from ._spill import (
    SPILL_OMISSION,
    SPILL_POINTER,
    SPILL_READ_LINES,
    SPILL_READ_OFFSET,
    SPILL_TOOLS,
    SpillPolicy,
    spill_guard,
    spill_hooks,
)
from ._terminal.team import DEFAULT_WORKERS
from ._usage import StepUsage, TokenUsage
from ._util.flower_log import configure_from_env
from ._version import __version__
from ._wall import (
    CLI_TOOLS,
    COORDINATOR_PROMPT,
    COORDINATOR_RULES,
    MANDATE_LINE,
    WORKER_RULES,
    coordinator_rules,
    delegate_guard,
    mandate_guard,
    report_cut,
    report_guard,
    report_hooks,
    start_guard,
)
from ._warm import KeepWarm, KeepWarmPolicy
from ._workbench import WORKBENCH_RULES, Workbench, index_guard, index_hooks
from .report import EconomyReport, ReportOptions, build_report, build_report_sync
from .stores import (
    CachePolicy,
    DeliveryPolicy,
    EphemeralPolicy,
    Lease,
    LoadReport,
    PostgresSessionStore,
    PrunePolicy,
    PruningSessionStore,
    SqliteSessionStore,
    TrimmingSessionStore,
    TrimPolicy,
)
from .tracing import TracingPolicy

__all__ = [
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
]

configure_from_env()
