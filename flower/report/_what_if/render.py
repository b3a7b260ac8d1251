"""A what-if as text: a first screen of plain words, the table, the sessions, the assumptions, what next.

The first screen (`first_screen`, the report's `summary`) says in at most `FIRST_SCREEN_WORDS` plain
words what the history cost, what flower would have saved, what the user's pauses cost and what was
skipped. The tables keep one meaning per column: a cost column holds costs, a saved column savings
(a negative saving is printed as a loss). The delegation estimate is told as one range where its two
scenarios lie within ±30 % of their midpoint, else as the two scenarios, each with its sign
(`estimate.DelegationLine.narrow`). Then the assumptions that change a number (a model without a price,
a session whose tokens per character could not be measured), and how to run the next session with flower.
"""

from __future__ import annotations

import shlex
import statistics
import textwrap
from collections.abc import Sequence
from typing import Protocol

from ..._cost import DEFAULT_MODEL
from .._text import human, percent
from .estimate import DelegationLine
from .lines import ReplayLine, SessionWhatIf, WhatIfTotal


class WhatIfReport(Protocol):
    """What the text is made of: `report.WhatIfReport`, which renders itself with this module."""

    @property
    def source(self) -> str: ...
    @property
    def sessions(self) -> Sequence[SessionWhatIf]: ...
    @property
    def total(self) -> WhatIfTotal: ...
    @property
    def notes(self) -> Sequence[str]: ...
    @property
    def skipped(self) -> Sequence[str]: ...
    @property
    def not_transcripts(self) -> Sequence[str]: ...
    @property
    def summary(self) -> str: ...


__all__ = ["FIRST_SCREEN_WORDS", "NEXT_STEPS", "delegation_words", "first_screen", "render"]

FIRST_SCREEN_WORDS = 80
"""The most words the first screen holds."""
NEXT_STEPS = (
    "flower runs agents through the Claude Agent SDK; an interactive `claude` session does not get it. "
    "Run your next long task with it from your project:",
    '    flower run "GOAL"                             # a coordinator, its workers and every layer',
    '    flower run --resume ID "next instruction"     # go on with that run later',
    "or from Python: docs/getting-started.md (install, then a coordinator and its workers in a few lines).",
)
"""How to get the savings: the lines printed under "what to do next"."""
_RULE = "-" * 100
_WIDTH = 100


def usd(value: float) -> str:
    """`$1.23`, `-$1.23`."""
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def _saved(value: float) -> str:
    """A saving as a table cell: `$1.23`, or `loss $1.23` when it is one."""
    return f"loss {usd(-value)}" if value < 0 else usd(value)


def _verb(value: float) -> str:
    return f"saves {usd(value)}" if value >= 0 else f"loses {usd(-value)}"


def delegation_words(d: DelegationLine) -> str:
    """The estimate in words: one range when narrow (`saves $a to $b`, `loses $a to $b`), else its two
    named scenarios, each with its sign (`saves $a in the lean case, loses $b in the heavy case`)."""
    lean, heavy = d.saved_usd_lean, d.saved_usd_heavy
    if d.narrow:
        low, high = sorted((abs(lean), abs(heavy)))
        return f"{'saves' if lean + heavy > 0 else 'loses'} {usd(low)} to {usd(high)}"
    return f"{_verb(lean)} in the lean case, {_verb(heavy)} in the heavy case"


def _share(part: float, whole: float) -> str:
    return percent(abs(part) / whole) if whole else "-"


def _span(sessions: Sequence[SessionWhatIf]) -> str:
    days = sorted(s.started[:10] for s in sessions if s.started)
    return f" ({days[0]} to {max(s.ended[:10] for s in sessions)})" if days else ""


def first_screen(report: WhatIfReport) -> str:
    """At most `FIRST_SCREEN_WORDS` plain words: the cost, flower's saving and its range, the helper
    agents' estimate, the pauses, the models priced by assumption, the files skipped (the later ones left
    out when the words run out: the tables say them all)."""
    t, rec, layers = report.total, report.total.as_recorded, report.total.layers
    apart = len(report.not_transcripts)
    if not t.sessions:
        found = f"No Claude Code session was found in {report.source}."
        return found + (f" {apart} other file(s) skipped: not Claude Code transcripts." if apart else "")
    both, d = layers.spill_and_layer4, layers.delegation
    bound = "at least " if rec.cost_lower_bound else ""
    more = "less" if both.saved_usd >= 0 else "more"
    sentences = [
        f"{t.sessions} Claude Code session(s){_span(report.sessions)} cost {bound}{usd(rec.cost_usd)}.",
        f"With flower: about {usd(both.cost_usd)} ({_share(both.saved_usd, rec.cost_usd)} {more}; "
        f"{usd(both.replay_usd)} to {usd(both.read_back_usd)} by how often the model reads set-aside "
        "outputs back).",
    ]
    if d.loops:
        sentences.append(f"With helper agents doing the tool work too, flower {delegation_words(d)}.")
    if rec.idle_usd > 0:
        sentences.append(
            f"Pauses that let the prompt cache expire cost {usd(rec.idle_usd)} "
            f"({_share(rec.idle_usd, rec.cost_usd)}); flower does not prevent that."
        )
    if rec.unpriced:
        sentences.append(f"Unknown price for {', '.join(rec.unpriced)}: priced as {DEFAULT_MODEL}.")
    if apart:
        sentences.append(f"{apart} other file(s) skipped: not Claude Code transcripts.")
    if rec.unfinished:
        sentences.append(f"{rec.unfinished} session(s) stopped early: lower bounds.")
    kept: list[str] = []
    for sentence in sentences:
        if len(" ".join([*kept, sentence]).split()) <= FIRST_SCREEN_WORDS:
            kept.append(sentence)
    return " ".join(kept)


def _row(label: str, cost: float, saved: float, recorded: float, peak: int, detail: str) -> str:
    return (
        f"  {label:<20}{usd(cost):>12}{_saved(saved):>14}{_share(saved, recorded):>8}{human(peak):>11}"
        f"   {detail}"
    )


def _line_row(label: str, line: ReplayLine, recorded: float, detail: str) -> str:
    return _row(label, line.cost_usd, line.saved_usd, recorded, line.main_peak, detail)


def _layers(report: WhatIfReport) -> list[str]:
    rec, layers = report.total.as_recorded, report.total.layers
    spill, l4, both, d = layers.spill, layers.layer4, layers.spill_and_layer4, layers.delegation
    h, g = layers.handoff, layers.glance
    recorded = rec.cost_usd
    estimated = f" ({h.estimated} estimated)" if h.estimated else ""
    lines = [
        f"  {'with flower':<20}{'cost':>12}{'saved':>14}{'share':>8}{'main peak':>11}",
        _line_row(
            "spill",
            spill,
            recorded,
            f"{spill.outputs:,} outputs set aside ({human(spill.chars_kept_out)} chars), "
            f"{spill.read_backs:,.1f} read back; cost {usd(spill.replay_usd)} (none read back) to "
            f"{usd(spill.read_back_usd)} (all)",
        ),
        _line_row(
            "layer 4",
            l4,
            recorded,
            f"{l4.resumes} resumes ({l4.cold_resumes} cold): {l4.expired} expired, {l4.denials_pruned} "
            f"denials, {l4.residue} residue; {human(l4.chars_saved)} chars",
        ),
        _line_row(
            "spill + layer 4",
            both,
            recorded,
            f"flower without helper agents; cost {usd(both.replay_usd)} to {usd(both.read_back_usd)}",
        ),
    ]
    if d.loops:
        lines += [
            _row(
                "+ helpers, lean",
                d.cost_usd_low,
                d.saved_usd_lean,
                recorded,
                d.main_peak_low,
                "ESTIMATE: short reports and mandates, documents rarely read back",
            ),
            _row(
                "+ helpers, heavy",
                d.cost_usd_high,
                d.saved_usd_heavy,
                recorded,
                d.main_peak_high,
                "ESTIMATE: long reports and mandates, documents read back often",
            ),
            f"  {'':<20}{d.loops:,} tool loops ({d.calls:,} calls) to workers: all of flower "
            f"{delegation_words(d)}",
        ]
    lines += [
        f"  {'handoff':<20}{h.compactions} compaction(s){estimated}: {usd(h.compaction_usd)} as recorded, "
        f"{usd(h.handoff_usd)} as handoffs",
        f"  {'glance':<20}{g.accepted:,} of {g.bash_calls:,} main-thread Bash calls run by the coordinator "
        f"itself ({percent(g.share)})",
    ]
    return lines


def _sessions(report: WhatIfReport, rows: int) -> list[str]:
    shown = sorted(report.sessions, key=lambda s: -s.as_recorded.cost_usd)[:rows]
    if not shown:
        return []
    lines = [
        f"  {'session':<10}{'started':<18}{'requests':>9}{'cost':>11}{'pauses':>10}"
        f"{'saved':>14}{'+helpers lean':>15}{'heavy':>14}",
    ]
    for s in shown:
        r, ls = s.as_recorded, s.layers
        d = ls.delegation
        lean, heavy = (_saved(d.saved_usd_lean), _saved(d.saved_usd_heavy)) if d.loops else ("-", "-")
        lines.append(
            f"  {s.session_id[:8]:<10}{s.started[:16].replace('T', ' '):<18}{r.requests:>9,}"
            f"{usd(r.cost_usd):>11}{usd(r.idle_usd):>10}{_saved(ls.spill_and_layer4.saved_usd):>14}"
            f"{lean:>15}{heavy:>14}"
            + (f"  stopped ({r.stopped}): lower bounds" if r.stopped else "")
            + (f"  {s.title}" if s.title else "")
        )
    if len(report.sessions) > rows:
        lines.append(f"  ... {len(report.sessions) - rows:,} more session(s) (every one in --json)")
    lines += textwrap.wrap(
        "cost and pauses are costs (pauses: the cache written again after your pauses, part of the cost); "
        "saved: flower without helper agents; +helpers: all of flower, in the lean and the heavy scenario "
        "(a loss: it would have cost more). Give a session's first characters to --session to see it alone.",
        _WIDTH,
        initial_indent="  ",
        subsequent_indent="  ",
    )
    return lines


def _rates(report: WhatIfReport) -> list[str]:
    """Tokens per character by model, and the sessions that could not measure their own."""
    measured: dict[str, list[float]] = {}
    for s in report.sessions:
        if not s.rate_fallback:
            measured.setdefault(s.model or "?", []).append(s.tokens_per_char)
    by_model = ", ".join(
        f"{model} {statistics.median(rates):.2f} ({len(rates)} session(s))"
        for model, rates in measured.items()
    )
    lines = [f"tokens per character of tool output, measured per session: {by_model or 'none measured'}"]
    fell = [s for s in report.sessions if s.rate_fallback]
    if fell:
        shown = "; ".join(f"{s.session_id[:8]}: {s.rate_fallback}" for s in fell[:5])
        more = f"; {len(fell) - 5} more (in --json)" if len(fell) > 5 else ""
        lines.append(f"{len(fell)} session(s) took their model's typical rate instead: {shown}{more}")
    return lines


def _assumptions(report: WhatIfReport) -> list[str]:
    rec, d = report.total.as_recorded, report.total.layers.delegation
    a = d.assumptions
    steps = (
        "strict, as flower's coordinator() is by default (own_steps=0: every hands-on call goes to a worker)"
        if a.own_steps == 0
        else f"taking up to {a.own_steps} hands-on step(s) in a row itself (own_steps={a.own_steps})"
    )
    if a.inline_until is not None:
        steps = (
            f"started as an inline session that works hands-on itself while its context is under "
            f"{a.inline_until:,} tokens, then handed off to the coordinator, which delegates from then on "
            f"(inline_until={a.inline_until:,})"
        )
    found = [
        "the spill range ends at the recorded cost: a model that read every set-aside output back would "
        "hold the context the session held",
        f"helper agents (an estimate): the coordinator {steps}; reports of {a.report_chars[0]:,} (lean) to "
        f"{a.report_chars[1]:,} (heavy) chars, a document read back after {percent(a.read_back[0])} to "
        f"{percent(a.read_back[1])} of them, mandates of {a.mandate_chars[0]:,} to {a.mandate_chars[1]:,} "
        f"chars, a worker prefix of {a.worker_prefix_tokens:,} tokens, the coordinator "
        f"{'kept warm by pings while it waits' if a.keep_warm else 'not kept warm'}; workers make the "
        "same tool calls the session made",
        *_rates(report),
    ]
    if rec.unpriced:
        cost = sum(s.as_recorded.cost_usd for s in report.sessions if s.as_recorded.unpriced)
        found.append(
            f"no price is known for {', '.join(rec.unpriced)}: priced as {DEFAULT_MODEL} "
            f"({usd(cost)} of the cost is in sessions that use it)"
        )
    lines = ["  assumptions"]
    for text in found:
        lines += textwrap.wrap(text, _WIDTH, initial_indent="  - ", subsequent_indent="    ")
    return lines


def _next(report: WhatIfReport) -> list[str]:
    helped = sorted(
        (s for s in report.sessions if s.layers.spill_and_layer4.saved_usd > 0),
        key=lambda s: -s.layers.spill_and_layer4.saved_usd,
    )
    if helped:
        named = ", ".join(
            f"{s.session_id[:8]} ({_saved(s.layers.spill_and_layer4.saved_usd)})" for s in helped[:3]
        )
        first = (
            f"flower would have helped {len(helped)} of {len(report.sessions)} session(s) most in: {named}."
        )
    else:
        first = "flower would not have saved on these sessions."
    lines = ["  what to do next"]
    lines += textwrap.wrap(first, _WIDTH, initial_indent="  ", subsequent_indent="  ")
    lines += textwrap.wrap(NEXT_STEPS[0], _WIDTH, initial_indent="  ", subsequent_indent="  ")
    lines += [f"  {line}" for line in NEXT_STEPS[1:3]]
    lines += textwrap.wrap(NEXT_STEPS[3], _WIDTH, initial_indent="  ", subsequent_indent="  ")
    costliest = sorted(report.sessions, key=lambda s: -s.as_recorded.cost_usd)
    where = next((s.cwd for s in costliest if s.cwd), "")
    if where:  # the project the costliest session ran in, as its transcript recorded it
        lines += [
            "  For the project of your costliest session:",
            f'    cd {shlex.quote(where)} && flower run "GOAL"',
        ]
    return lines


def _recorded(report: WhatIfReport) -> list[str]:
    t = report.total
    rec = t.as_recorded
    tokens = rec.tokens
    bound = "≥" if rec.cost_lower_bound else ""
    return [
        f"  as recorded       {t.sessions:,} session(s), {rec.requests:,} requests, "
        f"cost {bound}{usd(rec.cost_usd)}, main-thread peak {human(rec.main_peak)}",
        f"                    tokens: input {human(tokens.input)}, cache read {human(tokens.cache_read)}, "
        f"write 5 min {human(tokens.cache_write_5m)}, write 1 h {human(tokens.cache_write_1h)}, "
        f"output {human(tokens.output)}",
        f"                    {rec.compactions} compaction(s), {rec.resumes} resume(s), "
        f"{rec.subagents} subagent run(s), {rec.unfinished} stopped before finishing",
        f"  pauses            {rec.idle_pauses:,} prompt(s) after the prompt cache expired: "
        f"{human(rec.idle_tokens)} tokens written again, {usd(rec.idle_usd)} "
        f"({_share(rec.idle_usd, rec.cost_usd)} of the cost)",
        "                    (flower keeps the cache warm only while a coordinator waits on a worker, never",
        "                    across your pauses: coming back within the cache's lifetime avoids this cost)",
    ]


def render(report: WhatIfReport, rows: int) -> str:
    """The report as text (see the module's docstring)."""
    lines = [f"flower what-if: {report.source}", *textwrap.wrap(report.summary, _WIDTH), _RULE]
    if report.sessions:
        lines += [
            *_recorded(report),
            _RULE,
            *_layers(report),
            _RULE,
            *_sessions(report, rows),
            _RULE,
            *_assumptions(report),
            _RULE,
        ]
    if report.not_transcripts:
        lines.append(f"  {len(report.not_transcripts)} file(s) skipped, not Claude Code transcripts:")
        lines += [f"    {why}" for why in report.not_transcripts]
    for note in (*report.notes, *(f"skipped: {s}" for s in report.skipped)):
        lines += textwrap.wrap(note, _WIDTH, initial_indent="  note: ", subsequent_indent="        ")
    if report.sessions:  # last, where the eye lands: how to get the savings
        lines += [_RULE, *_next(report)]
    return "\n".join(lines)
