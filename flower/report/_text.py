"""The text table of an `EconomyReport`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .economy import EconomyReport, ResumeSummary, SessionSummary, Split

__all__ = ["human", "percent", "render"]


def human(value: float) -> str:
    """`1234` -> `1,234`; `791400` -> `791.4K`; `2_500_000` -> `2.5M`."""
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if abs(value) >= 100_000:
        return f"{value / 1_000:.1f}K"
    return f"{value:,.0f}"


def percent(value: float | None) -> str:
    """`0.977` -> `97.7%`; None -> `-`."""
    return "-" if value is None else f"{100 * value:.1f}%"


def _split_row(label: str, split: Split) -> str:
    return (
        f"  {label:<18}{human(split.main):>12}{human(split.subagents):>12}{percent(split.subagent_share):>14}"
    )


def _session_row(session: SessionSummary) -> str:
    role = "start" if session.role == "start" else f"successor (gen {session.generation})"
    if session.handed_off:
        role += ", handed off"
    peak = human(max(session.context)) if session.context else "-"
    return (
        f"  {session.session_id[:8]:<10}{role:<30}{session.prompts:>8}{session.resumes:>8}"
        f"{session.turns:>7}{session.subagent_runs:>11}{peak:>10}"
    )


def _resume_line(resume: ResumeSummary) -> str:
    parts = [f"{resume.expired} expired"]
    if resume.trimmed:
        parts.append(f"{resume.trimmed} trimmed")
    pruned = [
        (resume.denials, "denial"),
        (resume.api_errors, "API error"),
        (resume.interrupts, "interrupt"),
        (resume.orphans, "orphan"),
    ]
    detail = ", ".join(f"{n} {word}{'s' if n > 1 else ''}" for n, word in pruned if n)
    parts.append(f"{resume.pruned} pruned" + (f" ({detail})" if detail else ""))
    warm = ", cache warm: repeated the last cold resume's rewrites" if resume.warm else ""
    return (
        f"    {resume.session_id[:8]} prompt {resume.prompt} (after {resume.after_turns} turns{warm}): "
        f"{', '.join(parts)}; {human(resume.chars_saved)} chars saved"
    )


def _delegation_lines(report: EconomyReport) -> list[str]:
    spent = report.delegation
    if not spent.workers:
        return ["  delegation    none"]
    return [
        f"  delegation    ${spent.usd:,.2f} ({percent(spent.share)} of the cost) in {spent.workers} workers; "
        f"starts ${spent.start_usd:,.2f} ({human(spent.start_tokens)} tokens, "
        f"{human(spent.start_cache_read)} cached)",
        f"                mandates {human(spent.mandate_chars)} chars, hand-back frames "
        f"{human(spent.frame_chars)} chars (in the main thread)",
    ]


def render(report: EconomyReport, *, width: int = 100) -> str:
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
        *(_session_row(s) for s in sessions),
        rule,
        f"  {'division of labour':<18}{'main':>12}{'subagents':>12}{'in subagents':>14}",
        _split_row("turns", report.turns),
        _split_row("body chars", report.body_chars),
        _split_row("tool calls", report.tool_calls),
        _split_row("denials", report.denials),
        *([_split_row("refused by CLI", report.refusals)] if report.refusals.total else []),
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
    if reports.sent_back:
        lines.append(
            f"  reports       {reports.sent_back} sent back for a short one: "
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
    lines.extend(_resume_line(r) for r in resumes)
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
    lines.append(
        f"  tokens        input {human(total.input)}, cache read {human(total.cache_read)}, "
        f"cache write {human(total.cache_creation)}, output {human(total.output)}"
    )
    cost = report.cost
    unpriced = f"; unknown price for {', '.join(cost.unpriced)}" if cost.unpriced else ""
    lines.append(f"  cost          ${cost.usd:,.2f} estimated from usage{unpriced}")
    lines.extend(_delegation_lines(report))
    lines.append(f"  api errors    {report.api_errors}")
    lines.extend(f"  note          {note}" for note in report.notes)
    return "\n".join(lines)
