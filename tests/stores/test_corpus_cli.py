"""Sessions of the corpus resumed through layer 4 and the real CLI on the scripted model.

Each session is put in a store as the SDK mirrors it (the main transcript, its subagents under
`subagents/agent-<id>`) and resumed after the prompt cache has expired, as its user could have. The
request log says what the model saw: the CLI accepted the rewritten history, replayed exactly its
current branch with the rewritten results, and none of the residue the rewrites remove. One session is
also resumed without flower: the request is smaller by what `LoadReport.chars_saved` says.

Which sessions: the largest of the corpus, and the smallest with subagents, with an interrupt, with a
superseded read (whichever the corpus holds), so that the run stays minutes long on any corpus.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore, SessionKey
from claude_agent_sdk._internal.sessions import project_key_for_directory

from flower.stores import EphemeralPolicy, PrunePolicy, PruningSessionStore, TrimPolicy
from flower.stores._rewrite import replayed, rewrite_history
from flower.stores._rewrite.expire import entry_time
from flower.testing import RecordedRequest, ScriptedModel

from . import corpus
from .transcripts import text

pytestmark = pytest.mark.cli

LATER = 600.0  # resumed ten minutes after the last entry: the 5-minute cache has expired
HOUR_LATER = 4200.0  # the same for a session on the 1-hour cache: 70 minutes
RESIDUE = ("STOP what you are doing and wait for the user", "API Error: 500")


async def stored(session: corpus.Transcript, workspace: Path) -> tuple[InMemorySessionStore, SessionKey]:
    """The session in a store, keyed as the SDK keys it for `workspace`."""
    store = InMemorySessionStore()
    key = await corpus.into_store(session, store, project_key_for_directory(workspace))
    return store, key


def last_time(session: corpus.Transcript) -> float:
    return max(point for point in (entry_time(e) for e in session.entries) if point is not None)


def cold_after(session: corpus.Transcript) -> float:
    """When a resume finds the cache expired: ten minutes after the end, seventy on the 1-hour cache
    (the CLI's usage shows 1-hour writes, or its replies asked for it)."""

    def one_hour(entry: dict[str, Any]) -> bool:
        usage = (entry.get("message") or {}).get("usage") or {}
        written = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens")
        return bool(written) or entry.get("promptCacheRequested") == "1h"

    hour = any(one_hour(e) for e in session.entries if e.get("type") == "assistant")
    return last_time(session) + (HOUR_LATER if hour else LATER)


def policies(spill: Path, trim: TrimPolicy | None) -> dict[str, Any]:
    return {
        "prune": PrunePolicy(),
        "ephemeral": EphemeralPolicy(),
        "trim": trim,
        "spill_dir": str(spill.resolve()) if trim else None,
    }


@functools.cache
def kinds() -> dict[str, frozenset[str]]:
    """Main transcript name -> the kinds of change a cold resume of it makes (computed once)."""
    found = {}
    for session in corpus.sessions(subagents=False):
        out = rewrite_history(session.entries, **policies(Path("/nonexistent/spill"), None))
        found[session.name] = frozenset(c.kind for c in out.changes)
    return found


@functools.cache
def chosen() -> list[corpus.Transcript]:
    """The sessions to resume: the largest, then the smallest with subagents, with an interrupt, with a
    superseded read, each unless one already chosen has it."""
    mains = sorted((t for t in corpus.transcripts() if not t.subagent), key=lambda t: t.size)
    picked = mains[-1:]
    wanted = [
        lambda t: bool(t.agents),
        lambda t: "interrupt" in kinds()[t.name],
        lambda t: "superseded" in kinds()[t.name],
    ]
    for fits in wanted:
        if not any(fits(t) for t in picked):
            picked += [t for t in mains if fits(t)][:1]
    return picked


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


async def test_sessions_resume_through_layer_4(scripted_model: ScriptedModel, workspace: Path) -> None:
    for number, session in enumerate(chosen()):
        await resume_one(session, scripted_model, workspace / str(number))


async def resume_one(session: corpus.Transcript, scripted_model: ScriptedModel, workspace: Path) -> None:
    workspace.mkdir()
    raw, _ = await stored(session, workspace)
    spill = workspace / ".flower" / "spill"
    trim = TrimPolicy(keep_recent=10, min_chars=4000)
    store = PruningSessionStore(raw, trim=trim, spill_dir=spill)
    now = cold_after(session)
    store.clock = lambda: now
    expected = rewrite_history(session.entries, now=now, **policies(spill, trim))

    scripted_model.script("main", ["RESUMED-OK"])
    run = await scripted_model.run(
        "Where were we?", cwd=workspace, session_store=store, resume=session.session_id
    )

    assert run.error is None and run.text == "RESUMED-OK", f"the CLI accepts the rewritten {session.name}"
    request = scripted_model.request("main", -1)
    calls, results = branch_results(expected.entries)
    assert [use["id"] for use in request.tool_uses] == calls, (
        f"exactly {session.name}'s current branch's calls"
    )
    assert {r.tool_use_id: r.text for r in request.tool_results} == results, "and its rewritten results"
    assert not [r for r in RESIDUE if r in request], session.name
    report = store.last_report
    assert report is not None and report.errors == () and not report.warm
    assert [(c.kind, c.tool_use_id) for c in report.changes] == [
        (c.kind, c.tool_use_id) for c in expected.changes
    ]
    assert report.chars_saved == sum(c.chars_saved for c in expected.changes)
    assert request.count(PrunePolicy().interrupt_note) == len(report.of_kind("interrupt"))
    assert request.count("dropped on resume: a later") == len(report.of_kind("superseded"))
    assert request.count("[result of `") == len(report.expired)
    for change in report.trimmed:
        assert Path(change.detail).read_text(encoding="utf-8"), "a pointer names a file the agent can Read"


def measured() -> corpus.Transcript | None:
    """The smallest session whose cold resume drops a refusal; else the smallest that changes a result
    (an expiry, an interrupt, a superseded read) and drops no API error the CLI would answer for."""
    mains = sorted((t for t in corpus.transcripts() if not t.subagent), key=lambda t: t.size)
    results = {"expired", "interrupt", "superseded"}
    return next((t for t in mains if "denial" in kinds()[t.name]), None) or next(
        (t for t in mains if kinds()[t.name] & results and "api_error" not in kinds()[t.name]), None
    )


async def test_the_request_is_smaller_by_what_the_report_says(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """One session resumed without flower and with it."""
    session = measured()
    if session is None:
        pytest.skip(f"no session of the corpus at {corpus.corpus_dir()} has a result to rewrite")
    scripted_model.script("main", ["BARE"])
    bare_store, _ = await stored(session, workspace)
    await scripted_model.run("Go on.", cwd=workspace, session_store=bare_store, resume=session.session_id)
    bare = scripted_model.request("main", -1)

    raw, _ = await stored(session, workspace)
    store = PruningSessionStore(raw)
    store.clock = lambda: cold_after(session)
    scripted_model.script("main", ["FLOWER"])
    run = await scripted_model.run("Go on.", cwd=workspace, session_store=store, resume=session.session_id)

    assert run.text == "FLOWER"
    flower = scripted_model.request("main", -1)
    report = store.last_report
    assert report is not None and report.changes, session.name
    denials = len(report.of_kind("denial"))
    # never overstated: a dropped call may also take the envelopes of its API message and of its result's
    # (`{"role":"assistant","content":…}`, `{"role":"user",…}` and their commas: 59 characters), which a
    # count of message contents leaves out
    assert 0 <= (compact(bare) - compact(flower)) - report.chars_saved <= 59 * denials, session.name
