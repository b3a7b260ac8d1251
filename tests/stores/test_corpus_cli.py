"""The largest real sessions of the corpus, resumed through layer 4 and the real CLI on the scripted model.

Each session is put in a store as the SDK mirrors it (the main transcript, its subagents under
`subagents/agent-<id>`) and resumed ten minutes after its last entry, as its user could have. The request
log says what the model saw: the CLI accepted the rewritten history, replayed exactly its current branch
with the rewritten results, and none of the residue the rewrites remove. One session is also resumed
without flower: the request is smaller by what `LoadReport.chars_saved` says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore, SessionKey
from claude_agent_sdk._internal.sessions import project_key_for_directory

from flower.stores import EphemeralPolicy, PrunePolicy, PruningSessionStore, TrimPolicy
from flower.stores.rewrite import replayed, rewrite_history
from flower.testing import RecordedRequest, ScriptedModel

from . import corpus
from .transcripts import text

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(corpus.missing_reason() is not None, reason=str(corpus.missing_reason())),
]

LARGEST = ["sp-fa812bfe", "en-b0-apierr-compact", "en-e9-interrupts", "en-37-rejections"]
LATER = 600.0  # resumed ten minutes after the last entry: the prompt cache has expired
HOUR_LATER = 4200.0  # the same for a session on the 1-hour cache (en-e9): 70 minutes
RESIDUE = ("STOP what you are doing and wait for the user", "API Error: 500")


async def stored(session: corpus.Session, workspace: Path) -> tuple[InMemorySessionStore, SessionKey]:
    """The session in a store, keyed as the SDK keys it for `workspace`."""
    store = InMemorySessionStore()
    key: SessionKey = {"project_key": project_key_for_directory(workspace), "session_id": session.session_id}
    await store.append(key, session.entries)  # type: ignore[arg-type]
    for path in sorted(corpus.corpus_dir().glob(f"{session.name}--agent-*.jsonl")):
        subpath = "subagents/" + path.stem.split("--", 1)[1]
        await store.append({**key, "subpath": subpath}, corpus.load(path.stem).entries)  # type: ignore[arg-type]
    return store, key


def last_time(session: corpus.Session) -> float:
    return max(point for point in (_time(e) for e in session.entries) if point is not None)


def cold_after(session: corpus.Session) -> float:
    """When a resume finds the cache expired: ten minutes after the end, seventy on the 1-hour cache
    (the CLI's usage shows 1-hour writes; it recorded no `promptCacheRequested` then)."""

    def one_hour(entry: dict[str, Any]) -> bool:
        usage = (entry.get("message") or {}).get("usage") or {}
        return bool((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"))

    hour = any(one_hour(e) for e in session.entries if e.get("type") == "assistant")
    return last_time(session) + (HOUR_LATER if hour else LATER)


def _time(entry: dict[str, Any]) -> float | None:
    from flower.stores.rewrite.expire import entry_time

    return entry_time(entry)


def branch_results(entries: list[dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
    """The calls (in order) and the result texts of the branch a resume replays."""
    uses: list[str] = []
    found: dict[str, str] = {}
    for index in sorted(replayed(entries)):
        entry = entries[index]
        if entry.get("isApiErrorMessage"):
            continue
        content = (entry.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use":
                uses.append(block["id"])
            elif block.get("type") == "tool_result":
                found[block["tool_use_id"]] = text(block)
    return uses, found


def compact(request: RecordedRequest) -> int:
    return len(json.dumps(request.messages, ensure_ascii=False, separators=(",", ":")))


@pytest.mark.parametrize("name", LARGEST)
async def test_a_large_real_session_resumes_through_layer_4(
    name: str, scripted_model: ScriptedModel, workspace: Path
) -> None:
    session = corpus.load(name)
    raw, _ = await stored(session, workspace)
    spill = workspace / ".flower" / "spill"
    trim = TrimPolicy(keep_recent=10, min_chars=4000)
    store = PruningSessionStore(raw, trim=trim, spill_dir=spill)
    now = cold_after(session)
    store.clock = lambda: now
    expected = rewrite_history(
        session.entries,
        prune=PrunePolicy(),
        ephemeral=EphemeralPolicy(),
        trim=trim,
        spill_dir=str(spill.resolve()),
        now=now,
    )

    scripted_model.script("main", ["RESUMED-OK"])
    run = await scripted_model.run(
        "Where were we?", cwd=workspace, session_store=store, resume=session.session_id
    )

    assert run.error is None and run.text == "RESUMED-OK", "the CLI accepts the rewritten history"
    request = scripted_model.request("main", -1)
    calls, results = branch_results(expected.entries)
    assert [use["id"] for use in request.tool_uses] == calls, "exactly the current branch's calls"
    assert {r.tool_use_id: r.text for r in request.tool_results} == results, "and its rewritten results"
    assert not [r for r in RESIDUE if r in request]
    report = store.last_report
    assert report is not None and report.errors == () and not report.warm
    assert [(c.kind, c.tool_use_id) for c in report.changes] == [
        (c.kind, c.tool_use_id) for c in expected.changes
    ]
    assert report.chars_saved == sum(c.chars_saved for c in expected.changes)
    if name == "en-e9-interrupts":  # an old-format interrupt, and after an idle hour every stale result
        assert len(report.of_kind("interrupt")) == 1 and len(report.expired) == 8
        assert request.count(PrunePolicy().interrupt_note) == 1
    if name == "en-37-rejections":  # files read again: the older copies go
        assert len(report.of_kind("superseded")) == 2
        assert request.count("dropped on resume: a later") == len(report.of_kind("superseded"))
    for change in report.trimmed:
        assert Path(change.detail).read_text(encoding="utf-8"), "a pointer names a file the agent can Read"


async def test_the_request_is_smaller_by_what_the_report_says(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """en-d8 (CLI 2.1.4): two old-format rule denials, resumed without flower and with it."""
    session = corpus.load("en-d8-denials")
    scripted_model.script("main", ["BARE"])
    bare_store, _ = await stored(session, workspace)
    await scripted_model.run("Go on.", cwd=workspace, session_store=bare_store, resume=session.session_id)
    bare = scripted_model.request("main", -1)

    raw, _ = await stored(session, workspace)
    store = PruningSessionStore(raw)
    store.clock = lambda: last_time(session) + LATER
    scripted_model.script("main", ["FLOWER"])
    run = await scripted_model.run("Go on.", cwd=workspace, session_store=store, resume=session.session_id)

    assert run.text == "FLOWER"
    flower = scripted_model.request("main", -1)
    report = store.last_report
    assert report is not None and len(report.of_kind("denial")) == 1 and report.of_kind("denial_note")
    assert bare.count("has been denied.") == 2 and flower.count("has been denied.") == 1
    # never overstated: a dropped call may also take its API message's envelope (`{"role":...}`), which a
    # count of message contents leaves out
    assert 0 <= (compact(bare) - compact(flower)) - report.chars_saved <= 40 * len(report.of_kind("denial"))
