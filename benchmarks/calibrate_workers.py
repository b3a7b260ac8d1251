"""Measure how real Claude Code subagents report and write: the realistic player's worker calibration.

    python benchmarks/calibrate_workers.py DIR [DIR ...]          # directories of real CLI transcripts
    python benchmarks/calibrate_workers.py DIR [DIR ...] --json   # the same figures as JSON

It reads the transcripts where they are (nothing is copied) and asks two questions of them:

**Does a subagent's report length depend on how much it did?** Every *completed* subagent call (a `Task`
or `Agent` tool_use whose report reached the thread: as its tool_result, or for a background launch as
the later `<task-notification>` with its `<result>` and `<usage>`; team spawns, errors and interruptions
are left out), counted once where several files hold one session (checkpoint copies), gives: its agent
type; whether that type is *project-defined* (not a CLI built-in, `BUILT_IN`; plugin agents count);
whether its definition (`.claude/agents/<type>.md` in a folder above the transcript) or its mandate asks
for a report format (`FORMAT`, a heuristic on the words: an output/report format or template, a heading
named Output or Report, "report back in the following format"); its tool calls (`totalToolUseCount`,
else the `tool_uses` of the `<usage>` footer newer CLIs append, else the calls the CLI inlined in
`agent_progress` entries); its report's characters, less the CLI's frame (`agentId: ... (for resuming
...)` and `<usage>`). Tables: report chars by tool-call bucket (n, p10, median, p90; the deciles in
`--json`) for all calls, project agents, project agents asked for a format, built-ins; Spearman's rank
correlation of calls and chars.

**How much prose does a subagent write per reply?** Each model reply (one API message, by its id,
counted once across files) of a subagent transcript (a `--agent-` / `agent-*.jsonl` file or entries
marked `isSidechain`; `acompact` and `Warmup` agents are not subagents at work) but its last is set
against every reply but the last of the main threads: the share with a thinking block (of a non-zero
length: newer models often record one empty), median and p90 of its chars, the same for text. Output
tokens per request come only from messages the CLI recorded with a `stop_reason`: the CLI writes a
message block by block, and the usage of the others is a streaming snapshot (often 1 to 9 tokens).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from flower.stores._local import read_jsonl

BUILT_IN = frozenset(
    {"general-purpose", "Explore", "Plan", "statusline-setup", "output-style-setup", "claude-code-guide"}
)
FORMAT = re.compile(
    r"\b(output|report|response|return|reply|answer)\s+(format|structure|template|schema)\b"
    r"|^#+\s*(output|report|response|return|deliverables?|final report|what to return)\b"
    r"|\b(report|return|respond|reply)\b[^.\n]{0,60}\b(following|this)\s+(format|structure|sections?|template)\b"
    r"|\bformat (your|the) (final )?(report|output|response|answer|findings)\b",
    re.IGNORECASE | re.MULTILINE,
)
FRAME = re.compile(r"\s*agentId: \w+[^\n]*\(for resuming[^\n]*\)\s*(<usage>.*?</usage>)?\s*$", re.DOTALL)
NOTICE = re.compile(
    r"<task-notification>\s*<task-id>(\w+)</task-id>(?:(?!</task-notification>).)*?<result>(.*?)</result>"
    r"\s*(?:<usage>(?:(?!</usage>).)*?<tool_uses>(\d+)</tool_uses>)?",
    re.DOTALL,
)
FOOTER_CALLS = re.compile(r"<usage>.*?tool_uses:\s*(\d+).*?</usage>", re.DOTALL)
BUCKETS = ((1, 1, "1"), (2, 3, "2-3"), (4, 9, "4-9"), (10, 10**9, "10+"))


@dataclass(frozen=True)
class Call:
    """One completed subagent call."""

    agent: str
    project: bool
    format_asked: bool
    calls: int
    report_chars: int


@dataclass
class Prose:
    """Per-reply prose of one kind of thread (replies but the last of each file)."""

    thinking: list[int] = field(default_factory=list)
    text: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)


@dataclass
class Corpus:
    """What was read: the files, the calls and the prose of subagent and main threads."""

    files: int = 0
    calls: dict[str, Call] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)
    """Subagent calls seen but not counted (background, team, error, interrupted, calls unknown)."""
    sub: Prose = field(default_factory=Prose)
    main: Prose = field(default_factory=Prose)
    seen_replies: set[str] = field(default_factory=set)


def _blocks(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def report_text(content: Any) -> str:
    """A subagent's report: the result's text blocks less the CLI's frame and `<usage>` footer."""
    parts = [content] if isinstance(content, str) else [str(b.get("text", "")) for b in content or ()]
    return FRAME.sub("", "\n".join(p for p in parts if not p.startswith("agentId: "))).strip()


def _definition(path: Path, agent: str) -> str:
    """The text of `.claude/agents/<agent>.md` in the nearest folder above `path` that has one."""
    name = agent.split(":")[-1]
    for folder in path.parents:
        found = folder / ".claude" / "agents" / f"{name}.md"
        if found.is_file():
            return found.read_text(encoding="utf-8", errors="replace")
    return ""


def _is_subagent_file(path: Path, entries: Sequence[Mapping[str, Any]]) -> bool:
    named = "--agent-" in path.name or path.name.startswith("agent-")
    return named or (bool(entries) and all(e.get("isSidechain") for e in entries if e.get("type")))


def _warmup(entries: Sequence[Mapping[str, Any]]) -> bool:
    return _user_text(next((e for e in entries if e.get("type") == "user"), {})).strip() == "Warmup"


def _prose(entries: Sequence[Mapping[str, Any]], into: Prose, seen: set[str]) -> None:
    """Add the replies but the last of one thread (entries of one kind) to `into`."""
    replies: dict[str, list[int]] = {}
    for entry in entries:
        message = entry.get("message") or {}
        ident = message.get("id") if entry.get("type") == "assistant" else None
        if not isinstance(ident, str) or message.get("model") == "<synthetic>":
            continue
        sizes = replies.setdefault(ident, [0, 0, -1])
        for block in _blocks(entry):
            sizes[0] += len(str(block.get("thinking", ""))) if block.get("type") == "thinking" else 0
            sizes[1] += len(str(block.get("text", ""))) if block.get("type") == "text" else 0
        used = message.get("usage") or {}
        if message.get("stop_reason") and isinstance(used.get("output_tokens"), int):
            sizes[2] = used["output_tokens"]
    for ident, (thinking, text, tokens) in list(replies.items())[:-1]:
        if ident in seen:
            continue
        seen.add(ident)
        into.thinking.append(thinking)
        into.text.append(text)
        if tokens >= 0:
            into.output_tokens.append(tokens)


def measure_file(path: Path, into: Corpus) -> None:
    """Add one transcript's subagent calls and prose to `into`."""
    entries = read_jsonl(path)
    into.files += 1
    if "acompact" in path.name:  # the CLI's compaction agent, not a subagent at work
        return
    if _is_subagent_file(path, entries):
        if not _warmup(entries):
            _prose(entries, into.sub, into.seen_replies)
        return
    _prose([e for e in entries if not e.get("isSidechain")], into.main, into.seen_replies)
    _prose([e for e in entries if e.get("isSidechain")], into.sub, into.seen_replies)
    launched: dict[str, Mapping[str, Any]] = {}
    background: dict[str, str] = {}  # agentId -> the launch's tool_use id
    progress: dict[str, set[str]] = {}
    for entry in entries:
        data = entry.get("data")
        if isinstance(data, Mapping) and data.get("type") == "agent_progress":
            for block in _blocks(data.get("message") or {}):
                if block.get("type") == "tool_use":
                    progress.setdefault(str(entry.get("parentToolUseID")), set()).add(str(block.get("id")))
        for note in NOTICE.finditer(_user_text(entry)):
            ident = background.get(note.group(1), "")
            if ident and note.group(3):
                _count(into, ident, _call(path, launched[ident], note.group(2).strip(), int(note.group(3))))
        for block in _blocks(entry):
            if block.get("type") == "tool_use" and block.get("name") in ("Task", "Agent"):
                launched[str(block.get("id"))] = block
            if block.get("type") != "tool_result" or str(block.get("tool_use_id")) not in launched:
                continue
            ident = str(block.get("tool_use_id"))
            meta = entry.get("toolUseResult")
            meta = meta if isinstance(meta, Mapping) else {}
            if meta.get("isAsync") or meta.get("status") == "async_launched":
                background[str(meta.get("agentId"))] = ident
                into.skipped.add(ident)
                continue
            text, calls = _completed(block, meta, progress.get(ident))
            _count(
                into, ident, _call(path, launched[ident], text, calls) if text and calls is not None else None
            )


def _count(into: Corpus, ident: str, call: Call | None) -> None:
    if call is not None:
        into.calls.setdefault(ident, call)
    into.skipped.add(ident)


def _user_text(entry: Mapping[str, Any]) -> str:
    content = (entry.get("message") or {}).get("content") if entry.get("type") == "user" else None
    return content if isinstance(content, str) else "\n".join(str(b.get("text", "")) for b in _blocks(entry))


def _completed(
    result: Mapping[str, Any], meta: Mapping[str, Any], progress: set[str] | None
) -> tuple[str, int | None]:
    """(the report, its tool calls) of a call that completed in the thread; ("", None) for another."""
    content = result.get("content")
    text = report_text(content)
    if result.get("is_error") or meta.get("teammate_id") or text.startswith(("Async", "[Request interr")):
        return "", None
    raw = content if isinstance(content, str) else "\n".join(str(b.get("text", "")) for b in content or ())
    footer = FOOTER_CALLS.search(raw)
    calls = meta.get("totalToolUseCount")
    if not isinstance(calls, int):
        calls = int(footer.group(1)) if footer else len(progress) if progress else None
    return text, calls


def _call(path: Path, use: Mapping[str, Any], text: str, calls: int) -> Call:
    data = use.get("input") or {}
    agent = str(data.get("subagent_type") or "general-purpose")
    asked = FORMAT.search(f"{_definition(path, agent)}\n{data.get('prompt', '')}") is not None
    return Call(agent, agent not in BUILT_IN, asked, calls, len(text))


def measure(paths: Iterable[Path]) -> Corpus:
    """The figures over these transcripts."""
    found = Corpus()
    for path in sorted(paths):
        measure_file(path, found)
    return found


def deciles(values: Sequence[int]) -> list[int]:
    """Min, the nine deciles (inclusive method), max; [] for no values."""
    if not values:
        return []
    if len(values) == 1:
        return [values[0]] * 11
    cuts = statistics.quantiles(values, n=10, method="inclusive")
    return [min(values), *(round(c) for c in cuts), max(values)]


def spearman(pairs: Sequence[tuple[int, int]]) -> float:
    """Spearman's rank correlation (average ranks for ties); 0 where it is undefined."""
    x, y = _ranks([a for a, _ in pairs]), _ranks([b for _, b in pairs])
    return round(statistics.correlation(x, y), 3) if len(set(x)) > 1 and len(set(y)) > 1 else 0.0


def _ranks(values: Sequence[int]) -> list[float]:
    places: dict[int, list[int]] = {}
    for place, value in enumerate(sorted(values), 1):
        places.setdefault(value, []).append(place)
    return [statistics.fmean(places[v]) for v in values]


def table(calls: Sequence[Call]) -> dict[str, Any]:
    """Report chars by tool-call bucket, and the rank correlation of calls and chars."""
    rows: dict[str, Any] = {}
    for low, high, name in BUCKETS:
        chars = sorted(c.report_chars for c in calls if low <= c.calls <= high)
        cut = deciles(chars)
        rows[name] = {"n": len(chars), "p10": cut[1] if cut else 0, "median": cut[5] if cut else 0}
        rows[name] |= {"p90": cut[9] if cut else 0, "deciles": cut}
    rows["0 calls"] = {"n": sum(c.calls == 0 for c in calls)}
    return {
        "n": len(calls),
        "buckets": rows,
        "spearman": spearman([(c.calls, c.report_chars) for c in calls]),
    }


def prose(found: Prose) -> dict[str, float]:
    """Share of replies with thinking / text, median and p90 of their chars; output tokens."""
    out: dict[str, float] = {"replies": len(found.thinking)}
    for kind, sizes in (("thinking", found.thinking), ("text", found.text)):
        present = sorted(n for n in sizes if n > 0) or [0]
        out[f"{kind}_share"] = round(len([n for n in sizes if n > 0]) / max(1, len(sizes)), 3)
        out[f"{kind}_median"] = statistics.median(present)
        out[f"{kind}_p90"] = present[int(0.9 * (len(present) - 1))]
    tokens = sorted(found.output_tokens) or [0]
    out |= {"output_tokens_n": len(found.output_tokens), "output_tokens_median": statistics.median(tokens)}
    return out | {"output_tokens_p90": tokens[int(0.9 * (len(tokens) - 1))]}


def figures(found: Corpus) -> dict[str, Any]:
    """Everything the tool prints, as one JSON-able mapping."""
    calls = list(found.calls.values())
    project = [c for c in calls if c.project]
    return {
        "files": found.files,
        "calls": len(calls),
        "calls_left_out": len(found.skipped - found.calls.keys()),
        "agents": dict(sorted({c.agent: sum(d.agent == c.agent for d in calls) for c in calls}.items())),
        "all": table(calls),
        "project": table(project),
        "project_format": table([c for c in project if c.format_asked]),
        "builtin": table([c for c in calls if not c.project]),
        "prose_subagent": prose(found.sub),
        "prose_main": prose(found.main),
    }


def render(result: Mapping[str, Any]) -> str:
    """The figures as Markdown tables."""
    lines = [
        f"{result['files']} files, {result['calls']} completed calls ({result['calls_left_out']} left out)"
    ]
    lines += ["", "| who | calls | n | p10 | median | p90 |", "|---|---|---:|---:|---:|---:|"]
    for who in ("all", "project", "project_format", "builtin"):
        for name, row in result[who]["buckets"].items():
            cells = [row["n"], *(f"{row[k]:,}" for k in ("p10", "median", "p90") if k in row)]
            lines.append(f"| {who} | {name} | " + " | ".join(map(str, cells)) + " |")
        lines.append(f"| {who} | rank correlation (n {result[who]['n']}) | | | {result[who]['spearman']} | |")
    keys = ("replies", "thinking_share", "thinking_median", "thinking_p90", "text_share", "text_median")
    keys += ("text_p90", "output_tokens_n", "output_tokens_median", "output_tokens_p90")
    lines += ["", "| thread | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for who in ("prose_subagent", "prose_main"):
        lines.append(f"| {who[6:]} | " + " | ".join(f"{result[who][k]:,}" for k in keys) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="directories of real CLI transcripts (*.jsonl)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    result = figures(measure(p for d in args.dirs for p in d.rglob("*.jsonl")))
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
