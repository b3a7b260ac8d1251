"""The rows of an `EconomyReport`'s text table, and the numbers as people read them (`1.2K`, `97.7%`)."""

from __future__ import annotations

from ._delegation import Delegation
from ._parts import ResumeSummary, SessionSummary, Split

__all__ = ["delegation_lines", "human", "percent", "resume_line", "session_row", "split_row"]


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


def split_row(label: str, split: Split) -> str:
    return (
        f"  {label:<18}{human(split.main):>12}{human(split.subagents):>12}{percent(split.subagent_share):>14}"
    )


def session_row(session: SessionSummary) -> str:
    role = "start" if session.role == "start" else f"successor (gen {session.generation})"
    if session.handed_off:
        role += ", handed off"
    peak = human(max(session.context)) if session.context else "-"
    return (
        f"  {session.session_id[:8]:<10}{role:<30}{session.prompts:>8}{session.resumes:>8}"
        f"{session.turns:>7}{session.subagent_runs:>11}{peak:>10}"
    )


def resume_line(resume: ResumeSummary) -> str:
    parts = [f"{resume.expired} expired"]
    if resume.trimmed:
        parts.append(f"{resume.trimmed} trimmed")
    if resume.superseded:
        parts.append(f"{resume.superseded} superseded reads")
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


def delegation_lines(spent: Delegation) -> list[str]:
    if not spent.workers:
        return ["  delegation    none"]
    return [
        f"  delegation    ${spent.usd:,.2f} ({percent(spent.share)} of the cost) in {spent.workers} workers; "
        f"starts ${spent.start_usd:,.2f} ({human(spent.start_tokens)} tokens, "
        f"{human(spent.start_cache_read)} cached)",
        f"                mandates {human(spent.mandate_chars)} chars, hand-back frames "
        f"{human(spent.frame_chars)} chars (in the main thread)",
    ]
