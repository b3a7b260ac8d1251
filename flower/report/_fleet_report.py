"""The fleet report: the economy of every session in a shared PostgreSQL store, per session and in total.

Example::

    from flower.report._fleet_report import build_fleet_report

    fleet = await build_fleet_report("postgresql://flower@db.internal/runs", since="2026-11-30")
    print(fleet.render_text())     # one row per session (runners, turns, context, cost), then the totals
    fleet.to_json()
    fleet.write_plots("plots/")

The totals are an `EconomyReport` over all the sessions read, computed exactly as for one store; each
session's row comes from the same computation over that session alone. Filters: `project_key`,
`sessions`, and a time range (`since`, `until`: a session counts when it was active in it). Also
`flower report postgresql://...` on the command line.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio

from .._errors import SpecError
from ..stores._postgres._connection import is_dsn
from ..stores._postgres.store import PostgresSessionStore
from ._build import ReportOptions, compute_report
from ._economy import EconomyReport
from ._fleet_load import FleetData, load_fleet, parse_time
from ._load import Loaded, spills_of
from ._parts import Split
from ._text import human

__all__ = ["FleetReport", "FleetSession", "build_fleet_report"]


@dataclass(frozen=True, kw_only=True)
class FleetSession:
    """One session of the fleet: where it ran, and its economy."""

    session_id: str
    project_key: str
    runners: tuple[str, ...]
    """The runners it ran on, in order (the store's `runner`, `$FLOWER_RUNNER` or the host name)."""
    workspaces: tuple[str, ...]
    """The workspace directories it ran in, in order."""
    started: str
    """The first timestamp of its main transcript (ISO)."""
    ended: str
    """The last timestamp of its main transcript (ISO)."""
    turns: Split
    tool_calls: Split
    spills: int
    resumes: int
    peak_context: int
    """The largest main-thread context of any reply (tokens)."""
    cost_usd: float
    """Estimated from the usage, as in `EconomyReport.cost`."""
    cost_lower_bound: bool = False
    """Some of its output counts were recorded mid-stream: the cost is a lower bound (`Cost.lower_bound`)."""


@dataclass(frozen=True, kw_only=True)
class FleetReport:
    """Every session read, and the totals over them."""

    source: str
    """The store (DSN without password, and schema)."""
    filters: dict[str, Any]
    """The filters applied (project_key, sessions, since, until)."""
    sessions: tuple[FleetSession, ...]
    """One row per session, oldest first."""
    total: EconomyReport
    """The economy of all of them together."""

    @property
    def runners(self) -> tuple[str, ...]:
        """Every runner that ran one of the sessions, sorted."""
        return tuple(sorted({runner for s in self.sessions for runner in s.runners}))

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the source, the filters, the sessions' rows and the total report."""
        return {
            "source": self.source,
            "filters": self.filters,
            "runners": list(self.runners),
            "sessions": [_plain(s) for s in self.sessions],
            "total": self.total.to_dict(),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def render_text(self, *, width: int = 100) -> str:
        """The sessions' table, then the totals as the economy report shows them."""
        rule = "-" * min(width, 100)
        lines = [
            f"flower fleet report: {self.source}",
            f"{len(self.sessions)} session(s) on {len(self.runners)} runner(s): "
            f"{', '.join(self.runners) or '-'}",
            rule,
            f"  {'session':<10}{'started':<18}{'project':<20}{'runners':<22}{'turns':>6}{'sub':>5}"
            f"{'calls':>6}{'spills':>7}{'resumes':>8}{'peak ctx':>9}{'cost':>9}",
        ]
        for s in self.sessions:
            started = s.started[:16].replace("T", " ")
            runners = ", ".join(s.runners) or "-"
            lines.append(
                f"  {s.session_id[:8]:<10}{started:<18}{_clip(s.project_key, 19, left=True):<20}"
                f"{_clip(runners, 21):<22}{s.turns.main:>6}{s.turns.subagents:>5}{s.tool_calls.total:>6}"
                f"{s.spills:>7}{s.resumes:>8}{human(s.peak_context):>9}{_cost(s):>9}"
            )
        lines += [rule, "totals:", self.total.render_text(width=width)]
        return "\n".join(lines)

    def write_plots(self, directory: str | os.PathLike[str]) -> list[Path]:
        """The economy report's plots of the totals (needs the `plots` extra)."""
        from ._plots import write_plots

        return write_plots(self.total, directory)


def _cost(session: FleetSession) -> str:
    return f"{'≥' if session.cost_lower_bound else ''}${session.cost_usd:,.2f}"


def _clip(text: str, width: int, *, left: bool = False) -> str:
    """`text` in `width` chars: its end kept (`left`: a project key ends with the directory's name)."""
    if len(text) <= width:
        return text
    return "…" + text[-(width - 1) :] if left else text[: width - 1] + "…"


def _plain(session: FleetSession) -> dict[str, Any]:
    data = dataclasses.asdict(session)
    for name in ("turns", "tool_calls"):
        split: Split = getattr(session, name)
        data[name] = {"main": split.main, "subagents": split.subagents, "total": split.total}
    for name in ("runners", "workspaces"):
        data[name] = list(data[name])
    return data


def compute_fleet(data: FleetData, options: ReportOptions, filters: dict[str, Any]) -> FleetReport:
    """The fleet report of what `load_fleet` read (pure: no I/O)."""
    loaded = data.loaded
    roots = {os.path.join(p.workbench, "scripts") for places in data.places.values() for p in places}
    options = dataclasses.replace(options, scripts=(*options.scripts, *sorted(roots)))
    total = compute_report(loaded, options)
    rows: list[FleetSession] = []
    for session in loaded.sessions:
        ids = [session.session_id]
        alone = compute_report(
            Loaded(loaded.source, [session], [dict(row) for row in spills_of(loaded.spills, ids)], None),
            options,
        )
        places = data.places.get(session.session_id, [])
        rows.append(
            FleetSession(
                session_id=session.session_id,
                project_key=session.project_key,
                runners=tuple(dict.fromkeys(p.runner for p in places)),
                workspaces=tuple(dict.fromkeys(p.workspace for p in places)),
                started=session.started,
                ended=session.ended,
                turns=alone.turns,
                tool_calls=alone.tool_calls,
                spills=alone.spills.count,
                resumes=len(alone.resumes),
                peak_context=alone.context.peak,
                cost_usd=alone.cost.usd,
                cost_lower_bound=alone.cost.lower_bound,
            )
        )
    notes = tuple(n for n in total.notes if not n.startswith("no workbench beside the store"))
    total = dataclasses.replace(total, notes=notes)
    return FleetReport(source=loaded.source, filters=filters, sessions=tuple(rows), total=total)


async def build_fleet_report(
    source: str | PostgresSessionStore,
    *,
    schema: str = "flower",
    options: ReportOptions | None = None,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
) -> FleetReport:
    """The fleet report of a PostgreSQL store: a `postgresql://` DSN (with `schema`) or a store object.

    `since` and `until` take a datetime or an ISO date / date-time (UTC when no zone is given). Raises
    `SpecError` for bad arguments and `StoreError` when the store cannot be read.
    """
    start, end = parse_time(since, "since"), parse_time(until, "until")
    if isinstance(source, PostgresSessionStore):
        store, owned = source, False
    elif is_dsn(source):
        store, owned = PostgresSessionStore(str(source), schema=schema), True
    else:
        raise SpecError(
            f"a fleet report reads a postgresql:// DSN or a PostgresSessionStore, got {source!r:.80}"
        )
    try:
        data = await load_fleet(store, project_key=project_key, sessions=sessions, since=start, until=end)
    finally:
        if owned:
            await store.aclose()
    filters = {
        "project_key": project_key,
        "sessions": list(sessions) if sessions is not None else None,
        "since": start.isoformat() if start else None,
        "until": end.isoformat() if end else None,
    }
    return await anyio.to_thread.run_sync(compute_fleet, data, options or ReportOptions(), filters)
