"""Layer 4 on 18 real Claude Code sessions: growth, prompt-cache breaks between resumes, savings.

Run from the repository root: `python benchmarks/bench_corpus.py` (`--cli` first resumes each main
session ten minutes after its end through the real CLI on the scripted model, bare and through layer 4,
trim off and on, and prints the requests' sizes: a few minutes). The transcripts are read from
`FLOWER_CORPUS` (any directory of them), else `../shared/real-transcripts` beside the repository (or
beside the directory holding it); they are not part of it.

Every prompt of a session is taken as a resume: a new process loads the history before it, at the
prompt's time, through the rewrites; the history is marked as the CLI marks a resumed process (so that
a history whose CLI marks resumes does not say otherwise). What a request holds is the replayed
branch's message contents (compact JSON), as the CLI sends them (checked against the CLI in
tests/stores/test_corpus_cli.py). For two consecutive resumes, the prompt cache holds the last request
of the first process: what the first load sent, then the entries that process added, as sent (up to
its last user entry). The second resume re-sends everything after the first unit that differs from
it. Without flower only the last reply is re-sent; "beyond" is what flower re-sends more, as a share
of the replayed history. A pair is warm when the second resume comes within 5 minutes of the history's
last message.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from flower.stores import CachePolicy, EphemeralPolicy, PrunePolicy, TrimPolicy
from flower.stores._rewrite import LoadPoint, Rewritten, replayed, rewrite_history
from flower.stores._rewrite.expire import entry_time

TARGET = 10.0
"""The most a warm resume may re-send beyond a resume without flower, in % of the replayed history."""
SPILL = "/nonexistent/flower-bench/spill"  # trim is computed, never written


def _corpus() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tests" / "stores" / "corpus.py"
    spec = importlib.util.spec_from_file_location("_store_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CORPUS = _corpus()

Load = Callable[[list[dict[str, Any]], LoadPoint], Rewritten]


def _policies(trim: bool, batch: int = 1, supersede: bool = True) -> dict[str, Any]:
    return {
        "prune": PrunePolicy(supersede_reads=supersede),
        "ephemeral": EphemeralPolicy(batch=batch),
        "trim": TrimPolicy() if trim else None,
        "spill_dir": SPILL if trim else None,
    }


def _every_load(trim: bool, batch: int = 1) -> Load:
    return lambda history, point: rewrite_history(
        history, now=point.time, cache=None, **_policies(trim, batch)
    )


def _warm_skip(trim: bool) -> Load:
    def load(history: list[dict[str, Any]], point: LoadPoint) -> Rewritten:
        if not point.cold:
            return Rewritten(history)
        return rewrite_history(history, now=point.time, cache=None, **_policies(trim))

    return load


def _frozen(trim: bool) -> Load:
    return lambda history, point: rewrite_history(
        history, now=point.time, cache=CachePolicy(), **_policies(trim)
    )


DEFAULT = "cold decides, warm repeats (default)"
EVERY = "every load decides"
CANDIDATES: dict[str, Callable[[bool], Load]] = {
    EVERY: lambda trim: _every_load(trim),
    "every load decides, batch 4": lambda trim: _every_load(trim, batch=4),
    "warm: rewrite nothing": _warm_skip,
    DEFAULT: _frozen,
}


def _size(unit: tuple[str, str]) -> int:
    return len(unit[1])


def units(entries: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(uuid, content JSON) of every replayed message, in order (the CLI drops synthetic API errors)."""
    out = []
    for index in sorted(replayed(entries)):
        entry = entries[index]
        if entry.get("type") not in ("user", "assistant") or entry.get("isApiErrorMessage") is True:
            continue
        content = entry.get("message", {}).get("content")
        out.append((str(entry.get("uuid")), json.dumps(content, ensure_ascii=False, separators=(",", ":"))))
    return out


def _until_last_user(sequence: list[tuple[str, str]], kinds: dict[str, str]) -> list[tuple[str, str]]:
    """The last request's prefix: up to the last user entry (the reply after it was not cached)."""
    end = len(sequence)
    while end and kinds.get(sequence[end - 1][0]) != "user":
        end -= 1
    return sequence[:end]


def _resent(new: list[tuple[str, str]], cached: list[tuple[str, str]]) -> int:
    same = 0
    for a, b in zip(new, cached, strict=False):
        if a != b:
            break
        same += _size(a)
    return sum(map(_size, new)) - same


@dataclass
class Pair:
    session: str
    first: int
    second: int
    warm: bool
    idle: float
    history: int
    resent_bare: int
    resent_flower: int
    saved: int
    grown: int

    @property
    def beyond(self) -> float:
        return 100 * (self.resent_flower - self.resent_bare) / self.history if self.history else 0.0


@dataclass
class Outcome:
    pairs: list[Pair]
    loads: int = 0
    cold_loads: int = 0
    grown_results: int = 0
    grown_requests: int = 0
    saved_cold: int = 0
    bare_cold: int = 0
    saved_all: int = 0
    bare_all: int = 0
    reported_minus_measured: int = 0


def _grown(before: Rewritten | list[dict[str, Any]], after: Rewritten, noted: set[str]) -> int:
    def texts(entries: Sequence[dict[str, Any]]) -> dict[str, int]:
        found = {}
        for entry in entries:
            content = entry.get("message", {}).get("content") if entry.get("type") == "user" else None
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[str(block.get("tool_use_id"))] = len(json.dumps(block.get("content")))
        return found

    old = texts(before if isinstance(before, list) else before.entries)
    new = texts(after.entries)
    return sum(1 for ident, size in new.items() if ident in old and size > old[ident] and ident not in noted)


def run(load: Load) -> Outcome:
    outcome = Outcome([])
    for session in CORPUS.sessions(subagents=False, directory=CORPUS.real_dir()):
        points = session.resume_points()
        entries, moved = CORPUS.marked_as_resumes(session.entries, [p.index for p in points])
        kinds = {str(e.get("uuid")): str(e.get("type")) for e in entries}
        positions = {str(e.get("uuid")): i for i, e in enumerate(entries)}
        previous: tuple[LoadPoint, Rewritten] | None = None
        for point in points:
            history = entries[: moved[point.index]]
            out = load(history, point)
            bare, flower = units(history), units(out.entries)
            saved = sum(map(_size, bare)) - sum(map(_size, flower))
            noted = {c.tool_use_id for c in out.changes if c.kind in ("denial_note", "interrupt", "orphan")}
            outcome.loads += 1
            grown = _grown(history, out, {n for n in noted if n})
            outcome.grown_results += grown
            outcome.grown_requests += saved < 0
            outcome.saved_all += saved
            outcome.bare_all += sum(map(_size, bare))
            outcome.reported_minus_measured += sum(c.chars_saved for c in out.changes) - saved
            if point.cold:
                outcome.cold_loads += 1
                outcome.saved_cold += saved
                outcome.bare_cold += sum(map(_size, bare))
            if previous is not None:
                first, sent = previous
                sent_units = dict(units(sent.entries))
                cached = []
                for uuid, content in bare:
                    if kinds.get(uuid) is None:
                        continue
                    position = positions[uuid]
                    if position < moved[first.index]:
                        if uuid in sent_units:
                            cached.append((uuid, sent_units[uuid]))
                    else:
                        cached.append((uuid, content))
                cached = _until_last_user(cached, kinds)
                resent_flower = _resent(flower, cached)
                resent_bare = _resent(bare, _until_last_user(bare, kinds))
                outcome.pairs.append(
                    Pair(
                        session.name,
                        first.index,
                        point.index,
                        not point.cold,
                        point.idle or 0.0,
                        sum(map(_size, bare)),
                        resent_bare,
                        resent_flower,
                        saved,
                        grown + (saved < 0),
                    )
                )
            previous = (point, out)
    return outcome


LATER = 600.0
"""A cold resume at the end of a session: ten minutes after its last entry."""


def end_resumes(trim: bool, supersede: bool) -> list[tuple[str, int, int, Counter[str]]]:
    """Each main session resumed ten minutes after its end, every rewrite decided as at a cold resume:
    `(session, replayed chars, chars the request lost, chars_saved by kind)`."""
    found = []
    for session in CORPUS.sessions(subagents=False, directory=CORPUS.real_dir()):
        later = max(t for t in map(entry_time, session.entries) if t is not None) + LATER
        out = rewrite_history(session.entries, now=later, cache=None, **_policies(trim, supersede=supersede))
        kinds: Counter[str] = Counter()
        for change in out.changes:
            kinds[change.kind] += change.chars_saved
        bare = sum(map(_size, units(session.entries)))
        found.append((session.name, bare, bare - sum(map(_size, units(out.entries))), kinds))
    return found


def _print_end_resumes() -> None:
    print(
        "## What a cold resume saves\n\nEach main session resumed ten minutes after its last entry, every "
        "rewrite decided as at a cold resume (for the three sessions on the 1-hour cache: what a resume an "
        "hour later decides, before the idle hour's expiry); what each rule takes off the request.\n"
    )
    rules = {"without superseded reads": False, "default": True}
    table = {(rule, trim): end_resumes(trim, on) for rule, on in rules.items() for trim in (False, True)}
    heads = " | ".join(f"{rule}, trim {'on' if trim else 'off'}" for rule, trim in table)
    print(f"| session | replayed chars | {heads} |\n|---|---:|" + "---:|" * len(table))
    for row in zip(*table.values(), strict=True):
        cells = " | ".join(_pct(saved, bare) for _, bare, saved, _ in row)
        print(f"| {row[0][0]} | {row[0][1]:,} | {cells} |")
    whole = sum(bare for _, bare, _, _ in table[("default", False)])
    cells = " | ".join(
        f"**{_pct(sum(e[2] for e in ends), whole)}** ({sum(e[2] for e in ends):,})" for ends in table.values()
    )
    print(f"| all | {whole:,} | {cells} |\n")
    off = sum(abs(sum(e[3].values()) - e[2]) for ends in table.values() for e in ends)
    kinds: Counter[str] = Counter()
    for end in table[("default", True)]:
        kinds.update(end[3])  # update, not +: it keeps a note's negative count
    parts = ", ".join(f"{kind} {chars:,}" for kind, chars in kinds.most_common())
    print(
        f"`LoadReport.chars_saved` minus the measured difference: {off} chars. By kind (trim on): {parts}.\n"
    )


async def _resumed(session: Any, trim: bool | None, later: float, workspace: str) -> tuple[int, int, bool]:
    """One end resume through the real CLI: its request's message chars, the report's chars_saved (0
    bare: `trim` None), and whether the CLI accepted the history."""
    from claude_agent_sdk import InMemorySessionStore
    from claude_agent_sdk._internal.sessions import project_key_for_directory

    from flower.stores import PruningSessionStore
    from flower.testing import ScriptedModel

    store: Any = InMemorySessionStore()
    await CORPUS.into_store(session, store, project_key_for_directory(workspace))
    if trim is not None:
        store = PruningSessionStore(store, trim=trim, spill_dir=f"{workspace}/.flower/spill", cache=None)
        store.clock = lambda: later
    async with ScriptedModel(main=["RESUMED"]) as model:
        run = await model.run("Go on.", cwd=workspace, session_store=store, resume=session.session_id)
        sent = model.request("main", -1).messages
    saved = store.last_report.chars_saved if trim is not None else 0
    return len(json.dumps(sent, ensure_ascii=False, separators=(",", ":"))), saved, run.text == "RESUMED"


async def _through_cli() -> None:
    """The end resumes through the real CLI on the scripted model: bare, then through layer 4."""
    import tempfile

    print("## Through the CLI\n\n| session | bare request chars | trim off | trim on | accepted |")
    print("|---|---:|---:|---:|---|")
    bare_sum, saved_sums, reported_sums = 0, [0, 0], [0, 0]
    for session in CORPUS.sessions(subagents=False, directory=CORPUS.real_dir()):
        later = max(t for t in map(entry_time, session.entries) if t is not None) + LATER
        with tempfile.TemporaryDirectory() as workspace:
            runs = [await _resumed(session, trim, later, workspace) for trim in (None, False, True)]
        bare = runs[0][0]
        bare_sum += bare
        for index, (size, reported, _) in enumerate(runs[1:]):
            saved_sums[index] += bare - size
            reported_sums[index] += reported
        cells = " | ".join(_pct(bare - size, bare) for size, _, _ in runs[1:])
        print(f"| {session.name} | {bare:,} | {cells} | {all(ok for _, _, ok in runs)} |")
    cells = " | ".join(f"**{_pct(saved, bare_sum)}** ({saved:,})" for saved in saved_sums)
    print(f"| all | {bare_sum:,} | {cells} | |")
    off = [reported - saved for reported, saved in zip(reported_sums, saved_sums, strict=True)]
    print(f"\n`LoadReport.chars_saved` minus the measured difference: {off[0]} chars (trim on: {off[1]}).\n")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def _beyond(pair: Pair) -> str:
    return f"{pair.beyond:.1f} %" if pair.warm else "(cold)"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--cli", action="store_true", help="also resume each session through the real CLI")
    args = parser.parse_args()
    reason = CORPUS.missing_reason(CORPUS.real_dir())
    if reason:
        raise SystemExit(reason)
    if args.cli:
        import anyio

        anyio.run(_through_cli)
    files = CORPUS.transcripts(CORPUS.real_dir())
    print(f"# bench_corpus: {len(files)} transcripts, every prompt of the main ones taken as a resume\n")
    _print_end_resumes()
    results: dict[tuple[str, bool], Outcome] = {}
    for name, make in CANDIDATES.items():
        for trim in (False, True):
            results[(name, trim)] = run(make(trim))
    print("## The rules compared\n")
    print(
        "| rule | trim | resume pairs | warm | warm over 10 % | worst warm beyond | grown results "
        "| grown requests | saved, cold resumes | saved, all resumes |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (name, trim), outcome in results.items():
        warm = [p for p in outcome.pairs if p.warm]
        worst = max((p.beyond for p in warm), default=0.0)
        over = sum(1 for p in warm if p.beyond > TARGET)
        print(
            f"| {name} | {'on' if trim else 'off'} | {len(outcome.pairs)} | {len(warm)} | {over} "
            f"| {worst:.1f} % | {outcome.grown_results} | {outcome.grown_requests} "
            f"| {_pct(outcome.saved_cold, outcome.bare_cold)} ({outcome.cold_loads} resumes) "
            f"| {_pct(outcome.saved_all, outcome.bare_all)} ({outcome.loads} resumes) |"
        )
    default = [results[(DEFAULT, trim)] for trim in (False, True)]
    every = [results[(EVERY, trim)] for trim in (False, True)]
    print(
        f"\n`LoadReport.chars_saved` minus the measured difference of the requests, over the "
        f"{default[0].loads} resumes of the default rule: {default[0].reported_minus_measured} chars "
        f"(trim on: {default[1].reported_minus_measured}).\n"
    )
    print("## Every resume pair\n")
    print(
        "Beyond: what the second resume re-sends more than without flower, in % of the replayed history "
        "(warm pairs only: after a cold pause everything is re-sent anyway). Grown: results made longer "
        "at the second resume, and a request longer than without flower (default rule, trim off and on). "
        "Saved: the second resume's request, smaller by.\n"
    )
    print(
        "| session | prompts (entry) | idle s | history chars | re-sent, no flower "
        "| beyond, default | beyond, default + trim | beyond, every load | beyond, every load + trim "
        "| grown | saved, default | saved, default + trim |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = zip(default[0].pairs, default[1].pairs, every[0].pairs, every[1].pairs, strict=True)
    for plain, trimmed, window, window_trimmed in rows:
        print(
            f"| {plain.session} | {plain.first} -> {plain.second} | {plain.idle:,.0f} | {plain.history:,} "
            f"| {_pct(plain.resent_bare, plain.history)} | {_beyond(plain)} | {_beyond(trimmed)} "
            f"| {_beyond(window)} | {_beyond(window_trimmed)} | {plain.grown + trimmed.grown} "
            f"| {_pct(plain.saved, plain.history)} | {_pct(trimmed.saved, trimmed.history)} |"
        )


if __name__ == "__main__":
    main()
