"""`EconomyReport`: what a run did with its context, as numbers (docs/report.md says how each is computed).

Every part is a frozen dataclass (`parts`); `to_dict()` / `to_json()` give the same numbers plus the
derived ones (shares, rates) for a machine, `render_text()` gives a table for a human.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from .._errors import SpecError
from .._usage import TokenUsage
from .._util.check import checked
from ._delegation import Delegation
from ._parts import (
    ContextGrowth,
    Cost,
    Mandates,
    Reports,
    ResumeSummary,
    Scripts,
    SessionSummary,
    Spills,
    Split,
    Tokens,
)
from ._text import delegation_lines, human, percent, resume_line, session_row, split_row

__all__ = ["EconomyReport"]


@dataclass(frozen=True, kw_only=True)
class EconomyReport:
    """The measurements behind flower's design, for one run (every session of a store, or the ones asked for).

    Example::

        report = await build_report("repo")      # a workspace, its .flower/, a .db file or a store
        print(report.render_text())
        report.turns.subagent_share              # 0.977 in a 10.4 h run of the original design
    """

    source: str
    """What was read (a path, or the store's repr)."""
    sessions: tuple[SessionSummary, ...]
    """Every session read, oldest first."""
    turns: Split
    """Model replies."""
    body_chars: Split
    """Characters of message bodies: prompts, text, tool inputs and tool results."""
    tool_calls: Split
    denials: Split
    """Calls refused by a hook or rule (`toolDenialKind: permission-rule`)."""
    refusals: Split = field(default_factory=Split)
    """Calls the CLI itself refused before the tool ran (a `<tool_use_error>` result: an unknown tool,
    invalid input, a subagent's Write of a `REPORT*.md`): nothing happened, whatever the call said."""
    subagent_runs: int
    """Workers run, over every session: their transcripts (the compaction worker's are not counted), and
    the Agent/Task calls whose transcript is missing (`SessionSummary.subagent_runs_from_calls`)."""
    compactions: int = 0
    """Compactions of the main thread, over every session."""
    api_errors: int
    """Failed API requests (each retry, and a synthetic reply when retries ran out)."""
    handoffs: int
    """Sessions started by a handoff."""
    mandates: Mandates
    """The main thread's Agent prompts."""
    scripts: Scripts
    """Scripts written into `scripts/` and run."""
    spills: Spills
    """Outputs spilled on the spot."""
    reports: Reports = field(default_factory=Reports)
    """Long worker reports kept out of the main thread."""
    resumes: tuple[ResumeSummary, ...]
    """What layer 4 rewrote at each resume, oldest first."""
    context: ContextGrowth
    """The main thread's context per turn, slope and wall."""
    tokens: Tokens
    """Token usage and cache hit rates."""
    cost: Cost
    """Estimated dollars."""
    delegation: Delegation = field(default_factory=Delegation)
    """What delegating cost: worker starts, every worker reply, mandates and hand-back frames."""
    notes: tuple[str, ...] = ()
    """What could not be measured, and why."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data (derived values included), as `to_json()` writes it."""
        return _plain(self)  # type: ignore[no-any-return]

    @checked
    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON; `indent` is None (one line) or 0 to 16 spaces."""
        if indent is not None and not 0 <= indent <= 16:
            raise SpecError(f"EconomyReport.to_json: indent must be None or 0 to 16, got {indent!r}")
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @checked
    def render_text(self, *, width: int = 100) -> str:
        """The report as a text table."""
        return _render(self, width)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, TokenUsage):
            data["context"] = value.context
        for name in getattr(type(value), "_derived", ()):
            data[name] = _plain(getattr(value, name))
        return data
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


def _render(report: EconomyReport, width: int) -> str:
    """The report as a text table (`width` only bounds the rule lines)."""
    rule = "-" * min(width, 86)
    sessions = report.sessions
    lines = [
        f"flower economy report: {report.source}",
        f"{len(sessions)} session(s), {report.handoffs} handoff(s), {report.subagent_runs} subagent run(s)"
        + (f", {report.compactions} compaction(s)" if report.compactions else ""),
        rule,
        f"  {'session':<10}{'role':<30}{'prompts':>8}{'resumes':>8}{'turns':>7}{'subagents':>11}"
        f"{'peak ctx':>10}",
        *(session_row(s) for s in sessions),
        rule,
        f"  {'division of labour':<18}{'main':>12}{'subagents':>12}{'in subagents':>14}",
        split_row("turns", report.turns),
        split_row("body chars", report.body_chars),
        split_row("tool calls", report.tool_calls),
        split_row("denials", report.denials),
        *([split_row("refused by CLI", report.refusals)] if report.refusals.total else []),
        rule,
    ]
    mandates = report.mandates
    if mandates.count:
        average = mandates.chars / mandates.count
        lines.append(
            f"  mandates      {mandates.count}, {human(mandates.chars)} chars (average {average:,.0f}, "
            f"longest {human(mandates.longest)}); "
            f"{percent(mandates.restated_share)} restates the worker rules"
        )
    else:
        lines.append("  mandates      none")
    scripts = report.scripts
    lines.append(
        f"  scripts       {scripts.written} written ({scripts.writes} writes), run {scripts.runs} times "
        f"({scripts.scripts_run} distinct)"
    )
    spills = report.spills
    lines.append(
        f"  spills        {spills.count} ({spills.main} main, {spills.subagents} subagents): "
        f"{human(spills.chars)} chars, {human(spills.kept_out)} kept out of context"
    )
    reports = report.reports
    if reports.cut or reports.sent_back:
        kinds = [
            f"{reports.cut} cut to {'its' if reports.cut == 1 else 'their'} head" if reports.cut else "",
            f"{reports.sent_back} sent back for a short one" if reports.sent_back else "",
        ]
        lines.append(
            f"  reports       {', '.join(k for k in kinds if k)}: "
            f"{human(reports.chars)} chars kept out of the main thread"
        )
    resumes = report.resumes
    last = list({r.session_id: r for r in resumes}.values())  # a later resume repeats the earlier ones
    expired = sum(r.expired for r in last)
    trimmed = sum(r.trimmed for r in last)
    pruned = sum(r.pruned for r in last)
    warm = sum(1 for r in resumes if r.warm)
    lines.append(
        f"  resumes       {len(resumes)}{f' ({warm} warm)' if warm else ''}: {expired} expired, "
        f"{trimmed} trimmed, {pruned} pruned (last resume of each session, recomputed)"
    )
    lines.extend(resume_line(r) for r in resumes)
    context = report.context
    slope = "-" if context.slope is None else f"{context.slope:+,.0f} tokens/turn"
    wall = "not reached (flat)" if context.wall_turns is None else f"in ~{context.wall_turns:,.0f} turns"
    lines.append(
        f"  main context  {human(context.start)} -> {human(context.last)} tokens "
        f"(peak {human(context.peak)}) over {context.turns} turns; {slope}"
    )
    lines.append(f"                window {human(context.window)} ({context.window_from}): {wall}")
    tokens = report.tokens
    total = tokens.main + tokens.subagents + tokens.compaction
    lines.append(
        f"  cache         hit rate {percent(tokens.hit_rate)} (main {percent(tokens.main_hit_rate)}, "
        f"subagents {percent(tokens.subagent_hit_rate)})"
    )
    at_least = "≥ " if tokens.mid_stream else ""
    hour = f" (1 h: {human(total.cache_creation_1h)})" if total.cache_creation_1h else ""
    lines.append(
        f"  tokens        input {human(total.input)}, cache read {human(total.cache_read)}, "
        f"cache write {human(total.cache_creation + total.cache_creation_1h)}{hour}, "
        f"output {at_least}{human(total.output)}"
    )
    if tokens.pings:
        pinged = tokens.keep_warm
        written = pinged.cache_creation + pinged.cache_creation_1h
        lines.append(
            f"  keep-warm     {tokens.pings} pings while the coordinator waited: cache read "
            f"{human(pinged.cache_read)}, written {human(written)}, "
            f"${report.cost.keep_warm_usd:,.2f}"
        )
    cost = report.cost
    unpriced = f"; unknown price for {', '.join(cost.unpriced)}" if cost.unpriced else ""
    lines.append(
        f"  cost          {'≥ ' if cost.lower_bound else ''}${cost.usd:,.2f} estimated from usage{unpriced}"
    )
    lines.extend(delegation_lines(report.delegation))
    lines.append(f"  api errors    {report.api_errors}")
    lines.extend(f"  note          {note}" for note in report.notes)
    return "\n".join(lines)
