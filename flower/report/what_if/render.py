"""The text of a `WhatIfReport`: the paragraph, a line per layer, the costliest sessions, the assumptions."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from .._text import human, percent
from .lines import ReplayLine

if TYPE_CHECKING:
    from .report import WhatIfReport

__all__ = ["render"]

_RULE = "-" * 100


def _usd(value: float) -> str:
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def _row(label: str, line: ReplayLine, recorded: float, detail: str) -> str:
    share = percent(line.saved_usd / recorded) if recorded else "-"
    return (
        f"  {label:<18}{_usd(line.cost_usd):>12}{_usd(line.saved_usd):>12}{share:>9}"
        f"{human(line.main_peak):>11}   {detail}"
    )


def render(report: WhatIfReport, rows: int) -> str:
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
        f"{rec.subagents} subagent run(s)",
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
            f"{human(spill.chars_kept_out)} chars kept out; {spill.quoted_later:,} quoted later, "
            f"if read back: {_usd(spill.read_back_usd)}, peak {human(spill.read_back_peak)}",
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
            f"flower without delegation; if read back: {_usd(both.read_back_usd)}, "
            f"peak {human(both.read_back_peak)}",
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
        f"a worker start of {a.worker_start_tokens[0]:,} tokens read from the cache to "
        f"{a.worker_start_tokens[1]:,} written; the worker makes the loop's requests",
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
            + (f"  {s.title}" if s.title else "")
        )
    if len(report.sessions) > rows:
        lines.append(f"  ... {len(report.sessions) - rows:,} more session(s) (every one in --json)")
    for note in (*report.notes, *(f"skipped: {s}" for s in report.skipped)):
        lines += textwrap.wrap(note, 100, initial_indent="  note: ", subsequent_indent="        ")
    return "\n".join(lines)
