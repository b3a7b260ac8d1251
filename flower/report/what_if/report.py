"""`WhatIfReport`: every session's what-if, their total, a paragraph to paste, JSON and a text table.

The total adds every count, token and dollar over the sessions, and takes the largest of each peak. The
JSON (`to_dict`) is documented in docs/what-if.md: `{"source", "filters", "summary", "sessions": [{
"session_id", "project_key", "cwd", "path", "started", "ended", "tokens_per_char", "as_recorded",
"layers"}],
"total": {"sessions", "as_recorded", "layers"}, "assumptions", "notes", "skipped"}`; dollars are floats,
tokens ints, derived values (`saved_usd`, `share`, `estimate`) included. No conversation content is in it
unless `show_prompts` gave each session a `title`. The text ends with the `flower run` command for the
directory the costliest session ran in.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._text import human, percent
from .delegation import DelegationLine
from .lines import AsRecorded, Layers, ReplayLine, SessionWhatIf

__all__ = ["WhatIfReport", "WhatIfTotal", "total_of"]

_SERIES = ("main_context", "main_context_after")


@dataclass(frozen=True, kw_only=True)
class WhatIfTotal:
    """Every session added up (peaks: the largest)."""

    sessions: int = 0
    as_recorded: AsRecorded = field(default_factory=AsRecorded)
    layers: Layers = field(default_factory=Layers)


def _whose(worker: bool) -> str:
    return "the worker's" if worker else "the coordinator's"


def _added(items: Sequence[Any]) -> Any:
    """Dataclasses of one type added field by field: numbers summed (peaks: max), flags or-ed, nested
    dataclasses added, anything else taken from the first."""
    first = items[0]
    values: dict[str, Any] = {}
    for f in dataclasses.fields(first):
        found = [getattr(item, f.name) for item in items]
        sample = found[0]
        if isinstance(sample, bool):
            values[f.name] = any(found)
        elif isinstance(sample, str) and f.name == "stopped":
            values[f.name] = ""  # per session; a total counts `unfinished`
        elif isinstance(sample, int | float) and "peak" in f.name:
            values[f.name] = max(found)
        elif isinstance(sample, int | float):
            values[f.name] = sum(found)
        elif dataclasses.is_dataclass(sample) and f.name != "assumptions":
            values[f.name] = _added(found)
        else:
            values[f.name] = sample
    return type(first)(**values)


def _coordinator_prefix(d: DelegationLine, sessions: int) -> str:
    """What the estimate says about the coordinator's own fixed prefix."""
    if not d.prefix_sessions:
        return "the recorded system prompt and tools kept (no request shape recorded)"
    mean = d.prefix_delta / d.prefix_sessions
    return (
        f"flower's coordinator system prompt and tools instead of the recorded ones ({mean:+,.0f} tokens a "
        f"request, from the request shape {d.prefix_sessions} of {sessions} session(s) record; the "
        "workbench block not counted)"
    )


def total_of(sessions: Sequence[SessionWhatIf]) -> WhatIfTotal:
    """The total over `sessions`."""
    if not sessions:
        return WhatIfTotal()
    return WhatIfTotal(
        sessions=len(sessions),
        as_recorded=_added([s.as_recorded for s in sessions]),
        layers=_added([s.layers for s in sessions]),
    )


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {
            f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name not in _SERIES
        }
        for name in getattr(type(value), "_derived", ()):
            data[name] = _plain(getattr(value, name))
        return data
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


def _usd(value: float) -> str:
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def _share(part: float, whole: float) -> str:
    return percent(part / whole) if whole else "-"


@dataclass(frozen=True, kw_only=True)
class WhatIfReport:
    """What flower's layers would have changed in a history, session by session and in total.

    Example::

        report = await build_what_if()           # the CLI's own projects directory
        print(report.summary)                    # one paragraph to paste
        report.total.layers.spill.saved_usd
    """

    source: str
    """What was read."""
    filters: dict[str, Any]
    """The filters applied (project, sessions, since, until)."""
    sessions: tuple[SessionWhatIf, ...]
    """Every session read, oldest first."""
    total: WhatIfTotal
    notes: tuple[str, ...] = ()
    """What was assumed or could not be measured."""
    skipped: tuple[str, ...] = ()
    """Files or sessions that could not be read at all, with why."""

    @property
    def summary(self) -> str:
        """One paragraph a user can paste: the history, each layer's saving, the estimate's range."""
        t, rec, layers = self.total, self.total.as_recorded, self.total.layers
        if not t.sessions:
            return f"No session was found in {self.source}."
        days = sorted(s.started[:10] for s in self.sessions if s.started)
        span = f" ({days[0]} to {max(s.ended[:10] for s in self.sessions)})" if days else ""
        bound = "at least " if rec.cost_lower_bound else ""
        spill, l4, both, d = layers.spill, layers.layer4, layers.spill_and_layer4, layers.delegation
        glance = layers.glance
        stopped = (
            f" {rec.unfinished} session(s) stopped before finishing ("
            + ", ".join(
                f"{s.session_id[:8]}: {s.as_recorded.stopped}" for s in self.sessions if s.as_recorded.stopped
            )
            + "): what they ran is replayed, so their lines are lower bounds on what the finished runs would "
            "have cost."
            if rec.unfinished
            else ""
        )
        text = (
            f"Across {t.sessions} Claude Code session(s){span}, the transcripts record {rec.requests:,} "
            f"requests costing {bound}{_usd(rec.cost_usd)} (flower.cost, each request at its own model), "
            f"a main-thread peak of {human(rec.main_peak)} tokens, {rec.compactions} compaction(s) and "
            f"{rec.resumes} resume(s).{stopped} Replayed on those requests: spilling large tool outputs "
            f"would have kept {spill.outputs:,} output(s) ({human(spill.chars_kept_out)} chars) out of the "
            f"context, saving {_usd(spill.saved_usd)} ({_share(spill.saved_usd, rec.cost_usd)}) with the "
            f"{spill.read_backs:,.1f} read-back(s) a model shown only the previews is expected to make "
            f"({_usd(rec.cost_usd - spill.replay_usd)} with none, {_usd(rec.cost_usd - spill.read_back_usd)} "
            f"at worst); layer 4 at "
            f"{l4.cold_resumes} cold resume(s) {_usd(l4.saved_usd)}; both together {_usd(both.saved_usd)} "
            f"({_share(both.saved_usd, rec.cost_usd)}), with a main-thread peak of {human(both.main_peak)} "
            f"tokens. A handoff instead of each compaction would have cost "
            f"{_usd(layers.handoff.handoff_usd)} against {_usd(layers.handoff.compaction_usd)}; "
            f"glance accepts {percent(glance.share)} of the "
            f"main thread's {glance.bash_calls:,} Bash calls."
        )
        if d.loops:
            text += (
                f" Delegating the main thread's {d.loops:,} tool loop(s) to workers is an estimate, not a "
                f"replay: {_usd(d.cost_usd_low)} to {_usd(d.cost_usd_high)} in all "
                f"({_share(rec.cost_usd - d.cost_usd_high, rec.cost_usd)} to "
                f"{_share(rec.cost_usd - d.cost_usd_low, rec.cost_usd)} saved), main-thread peak "
                f"{human(d.main_peak_low)} to {human(d.main_peak_high)}, under the assumptions listed."
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the schema in the module's docstring)."""
        assumptions = self.total.layers.delegation.assumptions
        return {
            "source": self.source,
            "filters": self.filters,
            "summary": self.summary,
            "sessions": [_plain(s) for s in self.sessions],
            "total": _plain(self.total),
            "assumptions": _plain(assumptions),
            "notes": list(self.notes),
            "skipped": list(self.skipped),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def render_text(self, *, rows: int = 20) -> str:
        """The summary, the layers' totals, then the `rows` costliest sessions."""
        return _render(self, rows)


_RULE = "-" * 100


def _row(label: str, line: ReplayLine, recorded: float, detail: str) -> str:
    share = percent(line.saved_usd / recorded) if recorded else "-"
    return (
        f"  {label:<18}{_usd(line.cost_usd):>12}{_usd(line.saved_usd):>12}{share:>9}"
        f"{human(line.main_peak):>11}   {detail}"
    )


def _render(report: WhatIfReport, rows: int) -> str:
    """The report as text."""
    t = report.total
    rec, layers = t.as_recorded, t.layers
    tokens = rec.tokens
    bound = "≥" if rec.cost_lower_bound else ""
    lines = [
        f"flower what-if: {report.source}",
        *textwrap.wrap(report.summary, 100),
        _RULE,
        f"  as recorded       {t.sessions:,} session(s), {rec.requests:,} requests, "
        f"cost {bound}{_usd(rec.cost_usd)}, main-thread peak {human(rec.main_peak)}",
        f"                    tokens: input {human(tokens.input)}, cache read {human(tokens.cache_read)}, "
        f"write 5 min {human(tokens.cache_write_5m)}, write 1 h {human(tokens.cache_write_1h)}, "
        f"output {human(tokens.output)}",
        f"                    {rec.compactions} compaction(s), {rec.resumes} resume(s), "
        f"{rec.subagents} subagent run(s), {rec.unfinished} stopped before finishing",
        _RULE,
        f"  {'replayed':<18}{'cost':>12}{'saved':>12}{'share':>9}{'main peak':>11}",
    ]
    spill, l4 = layers.spill, layers.layer4
    lines.append(
        _row(
            "spill",
            spill,
            rec.cost_usd,
            f"{spill.outputs:,} outputs ({spill.main_outputs:,} main), "
            f"{human(spill.chars_kept_out)} chars kept out; {spill.copied_later:,} copied later, "
            f"{spill.read_backs:,.1f} read-backs expected; range {_usd(spill.replay_usd)} (none read back) "
            f"to {_usd(spill.read_back_usd)} (peak {human(spill.read_back_peak)})",
        )
    )
    lines.append(
        _row(
            "layer 4",
            l4,
            rec.cost_usd,
            f"{l4.resumes} resumes ({l4.cold_resumes} cold): {l4.expired} expired, "
            f"{l4.denials_pruned} denials, {l4.residue} residue; {human(l4.chars_saved)} chars",
        )
    )
    both = layers.spill_and_layer4
    lines.append(
        _row(
            "spill + layer 4",
            both,
            rec.cost_usd,
            f"flower without delegation; range {_usd(both.replay_usd)} to {_usd(both.read_back_usd)} "
            f"(peak {human(both.replay_peak)} to {human(both.read_back_peak)})",
        )
    )
    h, g, d = layers.handoff, layers.glance, layers.delegation
    estimated = f" ({h.estimated} estimated)" if h.estimated else ""
    lines += [
        f"  {'handoff':<18}{h.compactions} compaction(s){estimated}: {_usd(h.compaction_usd)} as recorded, "
        f"{_usd(h.handoff_usd)} as handoffs",
        f"  {'glance':<18}{g.accepted:,} of {g.bash_calls:,} main-thread Bash calls accepted "
        f"({percent(g.share)})",
        f"  {'delegation':<18}ESTIMATE: {d.loops:,} tool loops ({d.calls:,} calls, {d.requests:,} requests) "
        f"to workers: cost {_usd(d.cost_usd_low)} to {_usd(d.cost_usd_high)}, main peak "
        f"{human(d.main_peak_low)} to {human(d.main_peak_high)}",
    ]
    a = d.assumptions
    lines += [
        "                    assumes: reports of "
        f"{a.report_chars[0]:,}-{a.report_chars[1]:,} chars, a document read back after "
        f"{percent(a.read_back[0])}-{percent(a.read_back[1])} of them, mandates of "
        f"{a.mandate_chars[0]:,}-{a.mandate_chars[1]:,} chars, a {a.frame_tokens}-token frame, "
        f"a worker prefix of {a.worker_prefix_tokens:,} tokens (read when another worker ran within 5 "
        f"minutes), the coordinator {'kept warm by pings' if a.keep_warm else 'not kept warm'} while it "
        f"waits and taking up to {a.own_steps} hands-on step(s) in a row itself, the glances right after a "
        f"stretch {_whose(a.worker_glances[0])} at the low end and {_whose(a.worker_glances[1])} at the high "
        "end; the worker makes the "
        f"loop's calls, writing {a.worker_prose_chars:,.0f} chars of prose a reply as real subagents do; "
        + _coordinator_prefix(d, report.total.sessions),
        _RULE,
    ]
    shown = sorted(report.sessions, key=lambda s: -s.as_recorded.cost_usd)[:rows]
    if shown:
        lines.append(
            f"  {'session':<10}{'started':<18}{'requests':>9}{'cost':>11}{'spill':>10}{'layer 4':>10}"
            f"{'both':>10}{'peak':>9}{'after':>9}  {'delegation (estimate)':<22}"
        )
    for s in shown:
        r, ls = s.as_recorded, s.layers
        lines.append(
            f"  {s.session_id[:8]:<10}{s.started[:16].replace('T', ' '):<18}{r.requests:>9,}"
            f"{_usd(r.cost_usd):>11}{_usd(ls.spill.saved_usd):>10}{_usd(ls.layer4.saved_usd):>10}"
            f"{_usd(ls.spill_and_layer4.saved_usd):>10}{human(r.main_peak):>9}{human(ls.spill_and_layer4.main_peak):>9}"
            f"  {_usd(ls.delegation.cost_usd_low)}-{_usd(ls.delegation.cost_usd_high)}"
            + (f"  stopped ({r.stopped}): lower bounds" if r.stopped else "")
            + (f"  {s.title}" if s.title else "")
        )
    if len(report.sessions) > rows:
        lines.append(f"  ... {len(report.sessions) - rows:,} more session(s) (every one in --json)")
    for note in (*report.notes, *(f"skipped: {s}" for s in report.skipped)):
        lines += textwrap.wrap(note, 100, initial_indent="  note: ", subsequent_indent="        ")
    return "\n".join([*lines, *_next_step(shown)])


def _next_step(shown: list[SessionWhatIf]) -> list[str]:
    """The last lines: the command that runs flower where the costliest session ran (docs/run.md)."""
    where = next((s.cwd for s in shown if s.cwd), "")
    if not where:
        return []
    return [
        _RULE,
        "  To run flower on this work, in a terminal (a strict coordinator, two workers, every layer on):",
        f'    cd {shlex.quote(where)} && flower run "GOAL"',
    ]
