"""Property-based tests of the red lines, over generated CLI-shaped transcripts.

Whatever the history and the policies: a `tool_use` and its `tool_result` go together, and every call a
resume replays has its result; other calls in the same message are untouched; the parent chain stays
connected; compaction summaries and meta entries keep their content; only the replayed branch changes;
no result grows (but the kept denial's note); the input is never mutated; the same input gives the same
bytes; a second rewrite changes nothing.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from flower.stores import CachePolicy, EphemeralPolicy, PrunePolicy, TrimPolicy
from flower.stores._rewrite import replayed, rewrite_history

from .transcripts import Transcript, ancestors, calls, cli_would_add, dumps, results, unnamed

COMMANDS = ["git status", "ls -la", "cat notes.txt", "rm -rf build", "make test", "python3 run.py"]
FATES = ["ok", "ok", "ok", "big", "list", "denied", "interrupted", "orphan", "prompted"]


def ephemeral(command: str) -> bool:
    return command.split()[0] in {"git", "ls", "cat"}


STEPS = ["calls", "calls", "calls", "prompt", "api_error", "meta", "compact", "attachment", "marker"]


def _steps(draw: st.DrawFn, t: Transcript, serial: int, count: int, kinds: list[str]) -> int:
    """`count` steps drawn from `kinds`, appended to `t`; returns the next free call number."""
    for _ in range(count):
        step = draw(st.sampled_from(kinds))
        if step == "calls":
            count = draw(st.integers(1, 4))
            ids = [f"toolu_{serial + i}" for i in range(count)]
            serial += count
            blocks = [t.bash(draw(st.sampled_from(COMMANDS)), ident) for ident in ids]
            if draw(st.booleans()):
                blocks.insert(0, {"type": "text", "text": "doing it"})
            t.assistant(*blocks, merged=draw(st.booleans()))
            for ident in draw(st.permutations(ids)):
                fate = draw(st.sampled_from(FATES))
                if fate == "ok":
                    t.result(ident, f"output of {ident}\n" + "y" * draw(st.sampled_from([0, 300])))
                elif fate == "big":
                    t.result(ident, f"{ident} " + "x" * 600)
                elif fate == "list":
                    t.result(
                        ident,
                        [{"type": "text", "text": f"part of {ident}"}, {"type": "text", "text": "more"}],
                    )
                elif fate == "denied":
                    t.result(ident, "PreToolUse:Bash hook error: no", denial="permission-rule")
                elif fate == "interrupted":
                    t.result(ident, "", interrupted=True)
                elif fate == "prompted":
                    t.result(ident, "This command requires approval", denial="user-rejected")
        elif step == "prompt":
            t.prompt("next")
        elif step == "api_error":
            t.api_error()
        elif step == "meta":
            t.meta("<system-reminder>meta</system-reminder>")
        elif step == "compact":
            t.compact_summary("Summary: so far so good")
        elif step == "attachment":
            t.attachment()
        elif step == "pause":
            t.pause(draw(st.sampled_from([60.0, 400.0, 4000.0])))
        elif step == "resume":
            t.resume("go on")
        else:
            t.marker(draw(st.sampled_from(["last-prompt", "cost-state"])))
    return serial


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    t = Transcript()
    t.prompt("start")
    _steps(draw, t, 0, draw(st.integers(1, 14)), STEPS)
    return t.entries


@st.composite
def resumed(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A session resumed by a new process after a pause (cold on the 5-minute cache), then more work, a
    compaction or not, and more; pauses and more resumes anywhere."""
    t = Transcript()
    t.prompt("start")
    kinds = [*STEPS, "pause", "resume"]
    serial = _steps(draw, t, 0, draw(st.integers(2, 10)), ["calls", "calls", *kinds])
    t.pause(draw(st.sampled_from([400.0, 4000.0])))
    t.resume("go on")
    serial = _steps(draw, t, serial, draw(st.integers(0, 5)), kinds)
    if draw(st.integers(0, 3)):
        t.compact_summary("Summary: resumed, then compacted")
    _steps(draw, t, serial, draw(st.integers(0, 5)), kinds)
    return t.entries


policies = st.fixed_dictionaries(
    {
        "prune": st.builds(PrunePolicy, keep_denials=st.integers(0, 2)),
        "ephemeral": st.builds(
            EphemeralPolicy,
            keep_recent=st.integers(0, 4),
            batch=st.integers(1, 3),
            predicate=st.just(ephemeral),
        ),
        "trim": st.one_of(
            st.none(), st.builds(TrimPolicy, keep_recent=st.integers(0, 3), min_chars=st.just(400))
        ),
    }
)

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rewrite(entries: list[dict[str, Any]], chosen: dict[str, Any]) -> Any:
    return rewrite_history(entries, spill_dir="/abs/spill", **chosen)


@SETTINGS
@given(transcripts(), policies)
def test_calls_and_results_go_together(entries: list[dict[str, Any]], chosen: dict[str, Any]) -> None:
    out = rewrite(entries, chosen)
    before_calls, after_calls = calls(entries), calls(out.entries)
    before_results, after_results = results(entries), results(out.entries)
    dropped = {c.tool_use_id for c in out.changes if c.kind == "denial"}
    assert set(after_calls) == set(before_calls) - dropped
    assert set(after_results) == (set(before_results) - dropped) | {
        c.tool_use_id for c in out.changes if c.kind == "orphan"
    }
    assert not dropped & (set(after_calls) | set(after_results))
    branch = [out.entries[i] for i in sorted(replayed(out.entries))]
    assert set(calls(branch)) <= set(results(branch)), "every call a resume replays is answered"


@SETTINGS
@given(transcripts(), policies)
def test_untargeted_blocks_are_untouched(entries: list[dict[str, Any]], chosen: dict[str, Any]) -> None:
    out = rewrite(entries, chosen)
    targeted = {c.tool_use_id for c in out.changes}
    before_calls, before_results = calls(entries), results(entries)
    for ident, block in calls(out.entries).items():
        assert block == before_calls[ident], "a call is never edited"
    for ident, block in results(out.entries).items():
        if ident in before_results and ident not in targeted:
            assert block == before_results[ident]
        if ident in before_results:
            assert block["tool_use_id"] == ident and block.get("is_error") == before_results[ident].get(
                "is_error"
            )
    after_blocks = [b for e in out.entries for b in _blocks(e)]
    for before in entries:
        if before.get("isApiErrorMessage"):
            continue  # dropped on purpose
        for block in _blocks(before):
            if block.get("type") == "text":
                assert block in after_blocks, "text blocks of a message stay"


def _blocks(entry: dict[str, Any]) -> list[dict[str, Any]]:
    content = (entry.get("message") or {}).get("content")
    return content if isinstance(content, list) else []


@SETTINGS
@given(transcripts(), policies)
def test_the_parent_chain_stays_connected(entries: list[dict[str, Any]], chosen: dict[str, Any]) -> None:
    out = rewrite(entries, chosen)
    before_uuids = {e["uuid"] for e in entries if "uuid" in e}
    after_uuids = {e["uuid"] for e in out.entries if "uuid" in e}
    dropped = before_uuids - after_uuids
    for entry in out.entries:
        parent = entry.get("parentUuid")
        assert parent is None or parent in after_uuids
        if entry.get("uuid") in before_uuids:
            assert ancestors(out.entries, entry["uuid"]) == [
                a for a in ancestors(entries, entry["uuid"]) if a not in dropped
            ]
        leaf = entry.get("leafUuid")
        assert leaf is None or leaf in after_uuids


@SETTINGS
@given(transcripts(), policies)
def test_summaries_and_meta_entries_keep_their_content(
    entries: list[dict[str, Any]], chosen: dict[str, Any]
) -> None:
    out = rewrite(entries, chosen)
    by_uuid = {e["uuid"]: e for e in out.entries if "uuid" in e}
    for entry in entries:
        if entry.get("isMeta") or entry.get("isCompactSummary"):
            kept = by_uuid[entry["uuid"]]
            assert {k: v for k, v in kept.items() if k != "parentUuid"} == {
                k: v for k, v in entry.items() if k != "parentUuid"
            }


@SETTINGS
@given(transcripts(), policies)
def test_pure_and_deterministic(entries: list[dict[str, Any]], chosen: dict[str, Any]) -> None:
    snapshot = copy.deepcopy(entries)
    first = rewrite(entries, chosen)
    assert entries == snapshot, "the input is never mutated"
    second = rewrite(snapshot, chosen)
    assert dumps(first.entries) == dumps(second.entries)
    assert first.changes == second.changes and first.spills == second.spills
    again = rewrite(first.entries, chosen)
    assert not [c for c in again.changes if c.kind in ("denial", "api_error", "orphan")], (
        "pruning is idempotent"
    )


@SETTINGS
@given(transcripts(), policies)
def test_only_the_replayed_branch_changes_and_nothing_grows(
    entries: list[dict[str, Any]], chosen: dict[str, Any]
) -> None:
    out = rewrite(entries, chosen)
    branch = {entries[i]["uuid"] for i in replayed(entries) if "uuid" in entries[i]}
    before, after = results(entries), results(out.entries)
    for change in out.changes:
        if change.kind in ("expired", "trimmed", "interrupt", "denial_note"):
            assert change.uuid in branch, "an entry the CLI never replays is left alone"
        if change.kind in ("expired", "trimmed"):
            ident = change.tool_use_id
            assert ident is not None and change.chars_saved > 0
            assert len(_text(after[ident])) < len(_text(before[ident])), "never longer"
    noted = {c.tool_use_id for c in out.changes if c.kind in ("denial_note", "interrupt")}
    for ident, block in after.items():
        if ident in before and ident not in noted:
            assert len(_text(block)) <= len(_text(before[ident]))
    saved = sum(c.chars_saved for c in out.changes) - cli_would_add(out.changes)
    assert _content_chars(entries) - _content_chars(out.entries) == saved, "chars_saved is exact"
    healed = sum(-c.chars_saved for c in out.changes if c.kind == "orphan") + cli_would_add(out.changes)
    assert _content_chars(out.entries) <= _content_chars(entries) + healed


@SETTINGS
@given(transcripts(), policies)
def test_a_second_rewrite_changes_nothing(entries: list[dict[str, Any]], chosen: dict[str, Any]) -> None:
    first = rewrite(entries, chosen)
    again = rewrite(first.entries, chosen)
    assert again.changes == () and dumps(again.entries) == dumps(first.entries)


def _text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [])


def _content_chars(entries: list[dict[str, Any]]) -> int:
    return sum(
        len(json.dumps(e["message"].get("content"), ensure_ascii=False, separators=(",", ":")))
        for e in entries
        if isinstance(e.get("message"), dict) and e.get("isApiErrorMessage") is not True
    )


LOADS = st.sampled_from([None, 30.0, 30.0, 250.0, 400.0, 5000.0])
"""When the load comes after the history's last entry (None: no time, a cold load)."""


@SETTINGS
@given(st.one_of(transcripts(), resumed(), resumed()), policies, LOADS)
def test_every_entry_returned_changed_is_named(
    entries: list[dict[str, Any]], chosen: dict[str, Any], after: float | None
) -> None:
    """Cold or warm, whatever the compactions: each entry returned changed, dropped or added is named by
    a change (`changes`, or `unreplayed` for a warm load's repeats the CLI no longer replays), through
    its uuid or a call it holds; one whose only difference is a reference re-pointed over a dropped
    entry is named by that drop."""
    now = None if after is None else Transcript(entries=entries).last_time + after
    out = rewrite_history(entries, spill_dir="/abs/spill", now=now, cache=CachePolicy(), **chosen)
    every = out.changes + out.unreplayed
    assert unnamed(entries, out.entries, every) == []
    kept = [e for e in entries if "uuid" not in e and e.get("type") != "last-prompt"]
    assert [e for e in out.entries if "uuid" not in e and e.get("type") != "last-prompt"] == kept, (
        "entries without a uuid are left as they are (a last-prompt's leaf may be re-pointed)"
    )
    saved = sum(c.chars_saved for c in every) - cli_would_add(every)
    assert _content_chars(entries) - _content_chars(out.entries) == saved, "what each saved, together"
    event("a warm repeat off the replayed branch" if out.unreplayed else "every change replayed")
