"""flower's layers as SDK pieces, shared by `Runtime` and `instrument()`.

Both install the same things, built the same way, so a run made either way leaves the same records: spill,
index and report hooks (layers 1 to 3) over one workbench, and the layer-4 store (a `PruningSessionStore`
over any `SessionStore`, or over SQLite at `<workspace>/.flower/sessions.db`). The argument checks live here
too, so both entry points refuse the same bad values with the same words (`owner` names the caller).
Both callers are `@checked`, so an argument's type is refused there; these check what types cannot say.
"""

from __future__ import annotations

import os
from pathlib import Path

from claude_agent_sdk import HookMatcher
from claude_agent_sdk.types import HookEvent, SessionStore

from .._errors import SpecError
from .._options import merge_hooks
from .._spill.guard import spill_hooks
from .._spill.spill_policy import SpillPolicy
from .._wall.report_cut import report_hooks
from .._workbench.bench import Workbench
from .._workbench.index import index_hooks
from ..stores import EphemeralPolicy, PrunePolicy, PruningSessionStore, TrimmingSessionStore, TrimPolicy
from ..stores._rewriting_stores import ReportCallback

FLOWER_DIR = ".flower"
"""flower's directory in a workspace: the default workbench root, spill directory and database."""


def check_workbench(value: bool | Workbench, workspace: Path) -> Workbench | None:
    """`True` (a workbench at `<workspace>/.flower`), `False` (none) or a `Workbench` of the caller's."""
    if isinstance(value, Workbench):
        return value
    return Workbench(workspace) if value else None


def check_spill(value: int | SpillPolicy | None, owner: str) -> SpillPolicy:
    """A spill threshold (`int` >= 0, `None` or `0` for none) or a `SpillPolicy`, as a policy."""
    if isinstance(value, SpillPolicy):
        return value
    if value is not None and value < 0:
        raise SpecError(f"{owner}: spill_threshold must be an int >= 0, None or a SpillPolicy, got {value!r}")
    return SpillPolicy(threshold=value)


def check_store(value: SessionStore | str | os.PathLike[str] | None, owner: str) -> None:
    """A store to wrap: a `SessionStore`, a database path (not empty) or None."""
    if isinstance(value, str | os.PathLike) and not os.fspath(value):
        raise SpecError(f"{owner}: store must be a SessionStore, a database path or None, got ''")


def check_keep_denials(value: int, owner: str) -> int:
    """How many denied calls layer 4 keeps: an int >= 0."""
    if value < 0:
        raise SpecError(f"{owner}: keep_denials must be an int >= 0, got {value!r}")
    return value


def check_report_limit(value: int | None, owner: str) -> int | None:
    """The length at which a worker's report is sent back: a positive int, or None / 0 for no limit."""
    if value is None or value == 0:
        return None
    if value < 0:
        raise SpecError(f"{owner}: report_limit must be a positive int, 0 or None, got {value!r}")
    return value


def spill_dir(workbench: Workbench | None, workspace: Path) -> Path:
    """Where spilled and trimmed bodies go: the workbench's `spill/`, else `<workspace>/.flower/spill`."""
    return workbench.spill if workbench is not None else workspace / FLOWER_DIR / "spill"


def layer_hooks(
    workbench: Workbench | None, workspace: Path, spill: SpillPolicy, report_limit: int | None = None
) -> dict[HookEvent, list[HookMatcher]]:
    """Layers 2 and 3 as hooks: spill (into the workbench, else a plain directory), then the index, then
    the cap on workers' reports (kept in the workbench's `artifacts/reports/`, else the spill directory)."""
    target: Workbench | Path = workbench if workbench is not None else spill_dir(None, workspace)
    index = index_hooks(workbench) if workbench is not None else {}
    return merge_hooks(spill_hooks(target, spill), index, report_hooks(target, limit=report_limit))


def check_inner_store(inner: object, owner: str, argument: str, hint: str = "") -> None:
    """Refuse a store that already is a flower layer-4 store: layering twice rewrites twice (an expiry
    counted against a history already rewritten) and reports only the outer layer's changes."""
    if isinstance(inner, TrimmingSessionStore | PruningSessionStore):
        raise SpecError(
            f"{owner}: {argument} is already a flower layer-4 store ({inner!r}); {owner} adds one itself: "
            f"pass the store it wraps ({argument}.inner), and choose the rewrites with trim=, ephemeral= "
            f"and keep_denials={hint}"
        )


def layer_store(
    inner: SessionStore | str | os.PathLike[str] | None,
    workspace: Path,
    workbench: Workbench | None,
    *,
    keep_denials: int,
    ephemeral: bool | EphemeralPolicy,
    trim: bool | TrimPolicy,
    on_report: ReportCallback | None = None,
    config_dir: str | None = None,
) -> PruningSessionStore:
    """Layer 4: a `PruningSessionStore` over `inner` (default SQLite at `<workspace>/.flower/sessions.db`).

    `config_dir` is the `CLAUDE_CONFIG_DIR` the CLI runs with, where sessions that predate the store are
    imported from (None: the environment's, else `~/.claude`).
    """
    return PruningSessionStore(
        inner if inner is not None else workspace / FLOWER_DIR / "sessions.db",
        prune=PrunePolicy(keep_denials=keep_denials),
        ephemeral=ephemeral,
        trim=trim,
        spill_dir=spill_dir(workbench, workspace),
        on_report=on_report,
        config_dir=config_dir,
    )
