"""Layer 4 over a corpus of Claude Code transcripts (`corpus`: any directory, `pytest --corpus DIR`).

Every file goes through the whole pipeline (pruning, expiry, trim with a spill directory): calls and
results go together on the branch a resume replays; the parent chain is not broken anywhere; only that
branch changes; nothing grows; every entry returned changed is named, and the characters saved are
those the replayed content lost; a second pass changes nothing. What is pruned is checked against an
oracle written here from the CLI's formats (the refusals and interrupts a transcript holds). Then every
prompt taken as a load, cold or warm, and the resumes the CLI itself marked.

Nothing here knows the corpus's file names or counts: a test that needs a structure (an old-format
refusal, a resume the CLI marked) looks for it, and says so when the corpus holds none.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from flower.stores import CachePolicy, EphemeralPolicy, PrunePolicy, TrimPolicy
from flower.stores._rewrite import (
    Rewritten,
    denial_kind,
    load_points,
    replayed,
    rewrite_history,
    rewrite_point,
    tool_calls,
)

from . import corpus
from .oracle import INTERRUPTED, blocks, calls, on_branch, refusals, text
from .transcripts import cli_would_add, dumps, unnamed

NAMES = corpus.names()
SPILL = "/nonexistent/flower-corpus/spill"
POLICIES: dict[str, Any] = {
    "prune": PrunePolicy(),
    "ephemeral": EphemeralPolicy(),
    "trim": TrimPolicy(keep_recent=3, min_chars=1000),
    "spill_dir": SPILL,
}


def rewrite(entries: list[dict[str, Any]], **extra: Any) -> Rewritten:
    return rewrite_history(entries, **{**POLICIES, **extra})


def ids(entries: list[dict[str, Any]], kind: str) -> list[str]:
    key = "id" if kind == "tool_use" else "tool_use_id"
    return [str(b[key]) for e in entries for b in blocks(e) if b.get("type") == kind]


def content_chars(entries: list[dict[str, Any]]) -> int:
    """What a resume sends of these entries: their contents (the CLI leaves out synthetic API errors)."""
    return sum(
        len(json.dumps(e["message"].get("content"), ensure_ascii=False, separators=(",", ":")))
        for e in entries
        if e.get("type") in ("user", "assistant")
        and isinstance(e.get("message"), dict)
        and e.get("isApiErrorMessage") is not True
    )


@pytest.fixture(scope="module", params=NAMES)
def rewritten(request: pytest.FixtureRequest) -> tuple[corpus.Transcript, Rewritten]:
    session = corpus.load(request.param)
    return session, rewrite(session.entries)


def test_calls_and_results_go_together_on_the_replayed_branch(
    rewritten: tuple[corpus.Transcript, Rewritten],
) -> None:
    session, out = rewritten
    before, after = on_branch(session.entries), on_branch(out.entries)
    dropped = {c.tool_use_id for c in out.changes if c.kind == "denial"}
    assert set(ids(after, "tool_use")) == set(ids(before, "tool_use")) - dropped
    assert set(ids(after, "tool_use")) <= set(ids(after, "tool_result")), "every replayed call answered"
    assert not dropped & set(ids(out.entries, "tool_use") + ids(out.entries, "tool_result"))


def test_the_parent_chain_is_never_broken(rewritten: tuple[corpus.Transcript, Rewritten]) -> None:
    session, out = rewritten

    def dangling(entries: list[dict[str, Any]]) -> set[str]:
        present = {e.get("uuid") for e in entries}
        return {str(e["uuid"]) for e in entries if e.get("parentUuid") and e["parentUuid"] not in present}

    assert dangling(out.entries) <= dangling(session.entries), "a dropped entry's children are relinked"
    kept = {e.get("uuid") for e in out.entries}
    branch_before = [e.get("uuid") for e in on_branch(session.entries) if e.get("uuid") in kept]
    branch_after = [e.get("uuid") for e in on_branch(out.entries)]
    assert [u for u in branch_after if u in set(branch_before)] == branch_before, "the same branch replays"


def test_only_the_replayed_branch_changes(rewritten: tuple[corpus.Transcript, Rewritten]) -> None:
    """What a compaction, a `/clear` or a rewind took off the branch is neither rewritten nor counted."""
    session, out = rewritten
    branch = {session.entries[i].get("uuid") for i in replayed(session.entries)}
    by_uuid = {e.get("uuid"): e for e in out.entries if e.get("uuid")}
    for entry in session.entries:
        if entry.get("uuid") and entry["uuid"] not in branch:
            assert by_uuid.get(entry["uuid"]) == entry, "an entry the CLI never replays is left alone"
    for change in out.changes:
        if change.kind in ("expired", "trimmed", "superseded", "interrupt", "denial_note"):
            assert change.uuid in branch
    assert {s.name for s in out.spills} <= {c.detail.rsplit("/", 1)[-1] for c in out.changes}


def test_nothing_grows_and_every_change_is_named_and_counted(
    rewritten: tuple[corpus.Transcript, Rewritten],
) -> None:
    session, out = rewritten
    results = {
        b["tool_use_id"]: b for e in session.entries for b in blocks(e) if b.get("type") == "tool_result"
    }
    noted = {c.tool_use_id for c in out.changes if c.kind in ("denial_note", "interrupt")}
    for entry in out.entries:
        for block in blocks(entry):
            if block.get("type") != "tool_result" or block["tool_use_id"] not in results:
                continue
            old = results[block["tool_use_id"]]
            grown = len(json.dumps(block)) > len(json.dumps(old))
            assert not grown or block["tool_use_id"] in noted, "an expiry or a trim is never longer"
    assert unnamed(session.entries, out.entries, out.changes) == []
    for change in out.changes:
        if change.kind in ("expired", "trimmed", "superseded"):
            assert change.chars_saved > 0
    before, after = content_chars(on_branch(session.entries)), content_chars(on_branch(out.entries))
    lost = sum(c.chars_saved for c in out.changes) - cli_would_add(out.changes)
    assert before - after == lost, "chars_saved is what the branch lost (and what the CLI would add)"


def test_a_second_pass_changes_nothing(rewritten: tuple[corpus.Transcript, Rewritten]) -> None:
    _, out = rewritten
    again = rewrite(out.entries)
    assert again.changes == () and dumps(again.entries) == dumps(out.entries)


def test_refusals_and_interrupts_are_the_ones_the_cli_wrote(
    rewritten: tuple[corpus.Transcript, Rewritten],
) -> None:
    """All but the newest rule refusal go, call and result, and the kept one names them; every interrupt
    loses its stale "STOP what you are doing …" order, and only those; API errors on the branch go."""
    session, out = rewritten
    found = refusals(on_branch(session.entries), calls(session.entries))
    dropped = [c.tool_use_id for c in out.changes if c.kind == "denial"]
    keep = PrunePolicy().keep_denials
    assert dropped == found["refused"][: max(0, len(found["refused"]) - keep)]
    assert len([c for c in out.changes if c.kind == "denial_note"]) == (1 if dropped else 0)
    neutralised = [c.tool_use_id for c in out.changes if c.kind == "interrupt"]
    assert neutralised == [i for i in found["interrupted"] if text(_result(session.entries, i)) is not None]
    replayed_errors = [
        e["uuid"]
        for e in on_branch(session.entries)
        if e.get("isApiErrorMessage") is True and e.get("type") == "assistant" and not ids([e], "tool_use")
    ]
    assert [c.uuid for c in out.changes if c.kind == "api_error"] == replayed_errors
    stale = [b for e in on_branch(out.entries) for b in blocks(e) if text(b) in INTERRUPTED]
    assert stale == [], "no interrupt's order to stop is replayed"


def _result(entries: list[dict[str, Any]], ident: str) -> dict[str, Any]:
    return next(b for e in entries for b in blocks(e) if b.get("tool_use_id") == ident)


def test_a_tool_output_quoting_a_refusal_is_no_refusal() -> None:
    """Every old-format refusal of the corpus (no `toolDenialKind`): the same sentence naming another
    command, or not an error, is a tool's output."""
    checked = 0
    for session in corpus.sessions():
        calls = tool_calls(session.entries)
        for entry in session.entries:
            if "toolDenialKind" in entry or denial_kind(entry, calls) != "permission-rule":
                continue
            block = blocks(entry)[0]
            other = {**calls, block["tool_use_id"]: {"name": "Bash", "input": {"command": "cat notes.txt"}}}
            if "with command" in str(block.get("content")):
                assert denial_kind(entry, other) is None, "the sentence must name the call's own command"
            error_free = {**entry, "message": {"content": [{**block, "is_error": False}]}}
            assert denial_kind(error_free, calls) is None and denial_kind(entry, None) is None
            checked += 1
    if not checked:
        pytest.skip(f"the corpus at {corpus.corpus_dir()} holds no old-format rule refusal")


# -- the prompt cache ---------------------------------------------------------------------------------


def test_a_warm_resume_sends_the_cached_prefix_unchanged() -> None:
    """Every prompt taken as a resume, marked as the CLI marks one: for two consecutive ones, when the
    second comes within the cache's lifetime, it hands out exactly what the first did, then what the
    first process added, as that process sent it. So the prompt-cache prefix holds, whatever the window
    of expiry did."""
    warm = 0
    for session in corpus.sessions():
        points = session.resume_points()
        history, moved = corpus.marked_as_resumes(session.entries, [p.index for p in points])
        for first, second in itertools.pairwise(points):
            if second.cold:
                continue
            warm += 1
            start, end = moved[first.index], moved[second.index]
            sent = rewrite(history[:start], now=first.time, cache=CachePolicy())
            now = rewrite(history[:end], now=second.time, cache=CachePolicy())
            where = f"{session.name}: prompts {first.index} -> {second.index}"
            assert dumps(now.entries)[: len(sent.entries)] == dumps(sent.entries), where
            added = [e.get("message") for e in history[start:end]]
            assert [e.get("message") for e in now.entries[len(sent.entries) :]] == added, where
    if not warm:
        pytest.skip(f"no prompt of the corpus at {corpus.corpus_dir()} comes within the cache's lifetime")


def test_every_load_saves_what_it_reports_and_names_what_it_returns() -> None:
    """Every prompt of every session taken as a load, cold or warm (a warm one repeats the last cold
    load, over the branch that load saw): `chars_saved` is what the branch replayed now lost, and each
    entry returned changed is named (in `changes`, or in `unreplayed` when the CLI no longer replays it)."""
    for session in corpus.sessions():
        for point in session.resume_points():
            history = session.entries[: point.index]
            out = rewrite(history, now=point.time, cache=CachePolicy())
            before, after = content_chars(on_branch(history)), content_chars(on_branch(out.entries))
            where = f"{session.name} at {point.index}"
            lost = sum(c.chars_saved for c in out.changes) - cli_would_add(out.changes)
            assert before - after == lost, where
            assert unnamed(history, out.entries, out.changes + out.unreplayed) == [], where


def test_a_resume_the_cli_marked_repeats_only_what_a_marked_cold_one_decided() -> None:
    """The resumes the CLI itself marked (a `SessionStart:resume` hook entry): one within
    the cache's lifetime goes back to the last marked resume that came after it had expired, never to a
    prompt the CLI did not mark, and re-sends nothing that resume's process did not send itself. With no
    such resume before it, it hands out the history as stored, but for orphans answered."""
    marked = 0
    for session in corpus.sessions(subagents=False):
        points = load_points(session.entries)
        for point in points:
            if not point.marked or point.cold:
                continue
            marked += 1
            history = session.entries[: point.index]
            where = f"{session.name} at {point.index}"
            at, _, warm = rewrite_point(history, point.time, CachePolicy())
            cold = [p.index for p in points if p.marked and p.cold and p.index < point.index]
            assert warm and at == (cold[-1] if cold else 0), where
            out = rewrite(history, now=point.time, cache=CachePolicy())
            if not cold:
                assert {c.kind for c in out.changes + out.unreplayed} <= {"orphan"}, where
                continue
            then = next(p for p in points if p.index == cold[-1])
            sent = rewrite(session.entries[: then.index], now=then.time, cache=CachePolicy())
            assert dumps(out.entries)[: len(sent.entries)] == dumps(sent.entries), where
    if not marked:
        pytest.skip(f"the CLI marked no warm resume in the corpus at {corpus.corpus_dir()}")
