"""Layer 4 over 18 real Claude Code transcripts (CLI 2.0.74 to 2.1.42): the red lines on real histories.

Every file goes through the whole pipeline (pruning, expiry, trim with a spill directory): calls and
results go together on the branch a resume replays; the parent chain is not broken anywhere; only that
branch changes; nothing grows; every change is named, and the characters saved are those the replayed
content lost; a second pass changes nothing. Then the old-format refusals, and the rule a warm resume
follows, on the sessions that hold them.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from flower.stores import CachePolicy, EphemeralPolicy, PrunePolicy, TrimPolicy
from flower.stores.rewrite import OLD_REJECTION, Rewritten, denial_kind, replayed, rewrite_history, tool_calls

from . import corpus
from .transcripts import dumps

pytestmark = pytest.mark.skipif(corpus.missing_reason() is not None, reason=str(corpus.missing_reason()))

NAMES = [path.stem for path in sorted(corpus.corpus_dir().glob("*.jsonl"))]
SPILL = "/nonexistent/flower-corpus/spill"
POLICIES: dict[str, Any] = {
    "prune": PrunePolicy(),
    "ephemeral": EphemeralPolicy(),
    "trim": TrimPolicy(keep_recent=3, min_chars=1000),
    "spill_dir": SPILL,
}


def rewrite(entries: list[dict[str, Any]], **extra: Any) -> Rewritten:
    return rewrite_history(entries, **{**POLICIES, **extra})


def blocks(entry: dict[str, Any]) -> list[dict[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def on_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entries[i] for i in sorted(replayed(entries))]


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
def rewritten(request: pytest.FixtureRequest) -> tuple[corpus.Session, Rewritten]:
    session = corpus.load(request.param)
    return session, rewrite(session.entries)


def test_calls_and_results_go_together_on_the_replayed_branch(
    rewritten: tuple[corpus.Session, Rewritten],
) -> None:
    session, out = rewritten
    before, after = on_branch(session.entries), on_branch(out.entries)
    dropped = {c.tool_use_id for c in out.changes if c.kind == "denial"}
    assert set(ids(after, "tool_use")) == set(ids(before, "tool_use")) - dropped
    assert set(ids(after, "tool_use")) <= set(ids(after, "tool_result")), "every replayed call answered"
    assert not dropped & set(ids(out.entries, "tool_use") + ids(out.entries, "tool_result"))


def test_the_parent_chain_is_never_broken(rewritten: tuple[corpus.Session, Rewritten]) -> None:
    session, out = rewritten

    def dangling(entries: list[dict[str, Any]]) -> set[str]:
        present = {e.get("uuid") for e in entries}
        return {str(e["uuid"]) for e in entries if e.get("parentUuid") and e["parentUuid"] not in present}

    assert dangling(out.entries) <= dangling(session.entries), "a dropped entry's children are relinked"
    kept = {e.get("uuid") for e in out.entries}
    branch_before = [e.get("uuid") for e in on_branch(session.entries) if e.get("uuid") in kept]
    branch_after = [e.get("uuid") for e in on_branch(out.entries)]
    assert [u for u in branch_after if u in set(branch_before)] == branch_before, "the same branch replays"


def test_only_the_replayed_branch_changes(rewritten: tuple[corpus.Session, Rewritten]) -> None:
    session, out = rewritten
    branch = {session.entries[i].get("uuid") for i in replayed(session.entries)}
    by_uuid = {e.get("uuid"): e for e in out.entries if e.get("uuid")}
    for entry in session.entries:
        if entry.get("uuid") and entry["uuid"] not in branch:
            assert by_uuid.get(entry["uuid"]) == entry, "an entry the CLI never replays is left alone"
    assert {s.name for s in out.spills} <= {c.detail.rsplit("/", 1)[-1] for c in out.changes}


def test_nothing_grows_and_every_change_is_named_and_counted(
    rewritten: tuple[corpus.Session, Rewritten],
) -> None:
    session, out = rewritten
    results = {
        b["tool_use_id"]: b for e in session.entries for b in blocks(e) if b.get("type") == "tool_result"
    }
    named = {c.tool_use_id for c in out.changes} | {c.uuid for c in out.changes}
    noted = {c.tool_use_id for c in out.changes if c.kind in ("denial_note", "interrupt")}
    for entry in out.entries:
        for block in blocks(entry):
            if block.get("type") != "tool_result" or block["tool_use_id"] not in results:
                continue
            old = results[block["tool_use_id"]]
            if block != old:
                assert block["tool_use_id"] in named or entry.get("uuid") in named
                grown = len(json.dumps(block)) > len(json.dumps(old))
                assert not grown or block["tool_use_id"] in noted, "an expiry or a trim is never longer"
    for change in out.changes:
        if change.kind in ("expired", "trimmed"):
            assert change.chars_saved > 0
    before, after = content_chars(on_branch(session.entries)), content_chars(on_branch(out.entries))
    assert before - after == sum(c.chars_saved for c in out.changes), "chars_saved is what the branch lost"


def test_a_second_pass_changes_nothing(rewritten: tuple[corpus.Session, Rewritten]) -> None:
    _, out = rewritten
    again = rewrite(out.entries)
    assert again.changes == () and dumps(again.entries) == dumps(out.entries)


def test_the_corpus_has_what_the_rewrites_act_on() -> None:
    """Across the corpus: denials, interrupts, API errors, expiries and superseded reads all happen."""
    kinds: dict[str, int] = {}
    for name in NAMES:
        for change in rewrite(corpus.load(name).entries).changes:
            kinds[change.kind] = kinds.get(change.kind, 0) + 1
    assert kinds.get("denial") == 1 and kinds.get("denial_note") == 1
    assert kinds.get("interrupt") == 3 and kinds.get("api_error", 0) >= 1  # en-37's is before its /clear
    assert kinds.get("expired", 0) >= 10 and kinds.get("trimmed", 0) >= 10
    assert kinds.get("superseded", 0) >= 5, "files read again, then read whole or written"


# -- old-format refusals ------------------------------------------------------------------------------


def test_old_format_rule_denials_are_recognised_by_the_cli_sentence_and_the_call() -> None:
    """en-d8 (CLI 2.1.4): two "Permission to use Bash with command ... has been denied." results and no
    `toolDenialKind`. The older one goes, call and result; the newer one names it."""
    session = corpus.load("en-d8-denials")
    calls = tool_calls(session.entries)
    denied = [e for e in session.entries if denial_kind(e, calls) == "permission-rule"]
    assert len(denied) == 2 and not any("toolDenialKind" in e for e in session.entries)
    out = rewrite(session.entries)
    (dropped,) = [c.tool_use_id for c in out.changes if c.kind == "denial"]
    (kept,) = [c for c in out.changes if c.kind == "denial_note"]
    assert dropped == blocks(denied[0])[0]["tool_use_id"] and dropped not in ids(out.entries, "tool_use")
    assert "`cd /tmp/test-opencode-hooks && ls -la .entire/metadata/test-session-123/tasks/t…`" in kept.detail


def test_a_tool_output_quoting_the_sentence_is_not_a_denial() -> None:
    session = corpus.load("en-d8-denials")
    calls = tool_calls(session.entries)
    entry = next(e for e in session.entries if denial_kind(e, calls) == "permission-rule")
    block = blocks(entry)[0]
    other = {**calls, block["tool_use_id"]: {"name": "Bash", "input": {"command": "cat notes.txt"}}}
    assert denial_kind(entry, other) is None, "the sentence must name the call's own command"
    assert denial_kind({**entry, "message": {"content": [{**block, "is_error": False}]}}, calls) is None
    assert denial_kind(entry, None) is None


def test_old_format_interrupts_lose_the_stop_and_wait_sentence_only() -> None:
    """The exact "... STOP what you are doing and wait for the user ..." result is stale on resume; the
    variant carrying the user's own words ("To tell you how to proceed, the user said: ...") stays."""
    neutralised = 0
    for name in NAMES:
        session = corpus.load(name)
        out = rewrite(session.entries)
        branch = json.dumps(on_branch(out.entries))
        assert "STOP what you are doing and wait for the user" not in branch, name
        neutralised += sum(1 for c in out.changes if c.kind == "interrupt")
        said = [
            b
            for e in on_branch(session.entries)
            for b in blocks(e)
            if b.get("type") == "tool_result" and "To tell you how to proceed, the user said" in str(b)
        ]
        assert all(json.dumps(b) in json.dumps(out.entries) for b in said), "the user's words stay"
    assert neutralised == 3 and OLD_REJECTION.endswith("wait for the user to tell you how to proceed.")


def test_abandoned_branches_and_compacted_history_are_not_counted() -> None:
    """en-37 has a /clear (a new root) and en-b0 two compactions: what came before is never replayed,
    so it is neither rewritten nor counted."""
    for name in ("en-37-rejections", "en-b0-apierr-compact", "nm-9e-compact"):
        session = corpus.load(name)
        branch = {session.entries[i].get("uuid") for i in replayed(session.entries)}
        out = rewrite(session.entries)
        assert len(branch) < 0.6 * len([e for e in session.entries if e.get("uuid")]), name
        for change in out.changes:
            if change.kind in ("expired", "trimmed", "interrupt"):
                assert change.uuid in branch, name


# -- the prompt cache ---------------------------------------------------------------------------------


def test_a_warm_resume_sends_the_cached_prefix_unchanged() -> None:
    """Every pair of consecutive resumes (each prompt taken as one): when the second comes within the
    cache's lifetime, it hands out exactly what the first did, then what the first process added, as
    that process sent it. So the prompt-cache prefix holds, whatever the window of expiry did."""
    warm = 0
    for name in NAMES:
        session = corpus.load(name)
        points = session.resume_points()
        for first, second in itertools.pairwise(points):
            if second.cold:
                continue
            warm += 1
            sent = rewrite(session.entries[: first.index], now=first.time, cache=CachePolicy())
            now = rewrite(session.entries[: second.index], now=second.time, cache=CachePolicy())
            where = f"{name}: prompts {first.index} -> {second.index}"
            assert dumps(now.entries)[: len(sent.entries)] == dumps(sent.entries), where
            added = [e.get("message") for e in session.entries[first.index : second.index]]
            assert [e.get("message") for e in now.entries[len(sent.entries) :]] == added, where
    assert warm >= 30


def test_every_load_saves_what_it_reports() -> None:
    """Every prompt of every session taken as a load, cold or warm (a warm one repeats the last cold
    load, over the branch that load saw): `chars_saved` is what the branch replayed now lost."""
    loads = warm = 0
    for name in NAMES:
        session = corpus.load(name)
        for point in session.resume_points():
            history = session.entries[: point.index]
            out = rewrite(history, now=point.time, cache=CachePolicy())
            before, after = content_chars(on_branch(history)), content_chars(on_branch(out.entries))
            assert before - after == sum(c.chars_saved for c in out.changes), f"{name} at {point.index}"
            loads += 1
            warm += not point.cold
    assert loads >= 50 and warm >= 30
