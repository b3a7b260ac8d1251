"""Through the real CLI: a resume replays exactly the rewritten history, and the store keeps the original."""

from __future__ import annotations

import copy
import re
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import ClaudeSDKClient, HookMatcher, InMemorySessionStore, ResultMessage, SessionKey

from flower.stores import PrunePolicy, PruningSessionStore, SqliteSessionStore, TrimPolicy
from flower.testing import ScriptedModel, bash, hang_guard, http_error, read, reply
from tests.facts import fact

from .transcripts import calls, results, text

pytestmark = pytest.mark.cli

FAST_GIVE_UP = {"CLAUDE_CODE_MAX_RETRIES": "1"}


class Aged:
    """A store where time can pass: `age()` makes everything stored so far older, as a real pause
    would have (the store's clock alone cannot: the history's own timestamps tell a pause)."""

    aged: dict[str, tuple[int, float]]  # session id -> (entries aged, by seconds)

    def age(self, session_id: str, seconds: float, count: int) -> None:
        self.aged[session_id] = (count, seconds)

    async def load(self, key: SessionKey) -> list[Any] | None:
        entries = await super().load(key)  # type: ignore[misc]
        count, seconds = self.aged.get(key["session_id"], (0, 0.0)) if not key.get("subpath") else (0, 0.0)
        if entries is None or not count:
            return entries  # type: ignore[no-any-return]
        aged = copy.deepcopy(entries)
        for entry in aged[:count]:
            stamp = entry.get("timestamp")
            if isinstance(stamp, str):
                moment = datetime.fromisoformat(stamp) - timedelta(seconds=seconds)
                entry["timestamp"] = moment.isoformat().replace("+00:00", "Z")
        return aged


class AgedStore(Aged, InMemorySessionStore):
    def __init__(self) -> None:
        super().__init__()
        self.aged = {}


class RecordingSqlite(Aged, SqliteSessionStore):
    """A SQLite store that also keeps a copy of every batch the SDK appended."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.appended: dict[tuple[str, str, str], list[Any]] = {}
        self.aged = {}

    async def append(self, key: SessionKey, entries: list[Any]) -> None:
        slot = (key["project_key"], key["session_id"], key.get("subpath") or "")
        self.appended.setdefault(slot, []).extend(copy.deepcopy(entries))
        await super().append(key, entries)

    def just_after_the_last_entry(self) -> float:
        """A store clock that reads one second after the newest entry appended so far: every load is "at
        once" after the last message, however long this machine took to get there (a pause is `age()`)."""
        stamps = [
            datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp()
            for batch in self.appended.values()
            for entry in batch
            if isinstance(entry.get("timestamp"), str)
        ]
        return max(stamps) + 1


async def deny_rm(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
    if str(hook_input.get("tool_input", {}).get("command", "")).startswith("rm "):
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "DENIED: no deletions in this workspace",
            }
        }
    return {}


def git_workspace(workspace: Path) -> None:
    """A repository with untracked files: even `git status -s` is longer than an expiry note."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "notes.txt").write_text("draft\n")
    for i in range(12):
        (workspace / f"draft_chapter_{i:02d}.md").write_text("draft\n")


async def interrupt_a_sleep(model: ScriptedModel, workspace: Path, store: Any, session_id: str) -> None:
    """Resume the session with a client, start a long Bash, interrupt it once it runs."""
    running = workspace.parent / "slow-job-running"
    model.script("main", [bash(f"touch {running} && python3 -c 'import time; time.sleep(600)'")])
    options = model.options(cwd=workspace, session_store=store, resume=session_id)
    with anyio.fail_after(hang_guard()):
        async with ClaudeSDKClient(options) as client:
            await client.query("Continue: wait for the slow job.")
            while not running.exists():  # the command runs: interrupt it now, however slow the start was
                await anyio.sleep(0.05)
            await client.interrupt()
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    assert message.terminal_reason == "aborted_tools"


async def test_a_resume_sees_exactly_the_rewritten_history(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    git_workspace(workspace)
    sqlite = RecordingSqlite(workspace.parent / "sessions.db")
    store = PruningSessionStore(sqlite)
    store.clock = sqlite.just_after_the_last_entry  # resumes come "at once" unless a test ages the history
    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny_rm])]}  # type: ignore[list-item]
    scripted_model.script(
        "main",
        [
            reply("Cleaning first.", bash("rm -rf build-1"), bash("git status")),
            reply(bash("git status"), bash("rm -rf build-2"), bash("git status")),
            reply(*[bash("git status") for _ in range(4)]),
            reply(bash("rm -rf build-3"), *[bash("git status") for _ in range(3)]),
            http_error(500),
            http_error(500),  # CLAUDE_CODE_MAX_RETRIES=1: the CLI gives up here
        ],
    )
    first = await scripted_model.run(
        "Tidy the repo.", cwd=workspace, session_store=store, hooks=hooks, env=FAST_GIVE_UP
    )
    assert first.error is not None and "API Error: 500" in first.text
    session_id = first.session_id
    assert session_id is not None

    await interrupt_a_sleep(scripted_model, workspace, store, session_id)
    assert store.last_report is not None and store.last_report.warm, "a second later: the cache is warm"
    assert store.last_report.changes == (), "and nothing was ever decided at a cold load"

    (main_key,) = [k for k in sqlite.appended if k[1] == session_id and not k[2]]
    sqlite.age(session_id, 600, len(sqlite.appended[main_key]))  # ten minutes pass: the cache expires
    scripted_model.script("main", ["Resumed and ready."])
    last = await scripted_model.run("Where were we?", cwd=workspace, session_store=store, resume=session_id)
    assert last.error is None and last.text == "Resumed and ready.", "the CLI accepts the rewritten history"
    report = store.last_report

    request = scripted_model.request("main", -1)
    denials = [r for r in request.tool_results if "DENIED: no deletions" in r.text]
    assert len(denials) == 1 and "rm -rf build-3" in str(request.tool_uses)
    assert "build-1" not in str(request.tool_uses) and "build-2" not in str(request.tool_uses)
    (kept,) = denials
    assert kept.text.endswith("\n[also refused earlier (not shown): `rm -rf build-1`, `rm -rf build-2`]")
    assert request.count("build-1") == request.count("build-2") == 1, "named once, in the kept denial"
    assert "API Error" not in request
    assert PrunePolicy().interrupt_note in request and "doesn't want to proceed" not in request
    statuses = [
        r
        for r in request.tool_results
        if r.tool_name == "Bash" and r.tool_use_id not in {d.tool_use_id for d in denials}
    ]
    bodies = [r.text for r in statuses if "notes.txt" in r.text]
    notes = [r.text for r in statuses if r.text.startswith("[result of `git status` expired")]
    assert (len(bodies), len(notes)) == (6, 4)
    assert [r.text in notes for r in statuses if r.text in notes or r.text in bodies] == [True] * 4 + [
        False
    ] * 6

    key: SessionKey = {"project_key": next(iter(sqlite.appended))[0], "session_id": session_id}
    rewritten = await store.load(key)
    assert rewritten is not None
    replayed = {r.tool_use_id: r.text for r in request.tool_results}
    expected = {ident: text(block) for ident, block in results(rewritten).items()}
    assert replayed == expected, "the model saw exactly the rewritten results (a later load repeats them)"
    assert {u["id"] for u in request.tool_uses} == set(calls(rewritten)), "and exactly the rewritten calls"
    assert report is not None and report.errors == () and not report.warm
    assert (len(report.expired), len(report.of_kind("denial")), len(report.of_kind("interrupt"))) == (4, 2, 1)
    assert len(report.of_kind("api_error")) >= 1 and report.chars_saved > 0

    scripted_model.script("main", [bash("git status"), "Still here."])  # at once: the cache is warm
    await scripted_model.run("And now?", cwd=workspace, session_store=store, resume=session_id)
    warm = scripted_model.request("main", -2)
    assert warm.messages[: len(request.messages) - 1] == request.messages[:-1], "the cached prefix holds"
    assert store.last_report is not None and store.last_report.warm
    assert store.last_report.changes[: len(report.changes)] == report.changes

    sqlite.aged.clear()
    for (project_key, sid, subpath), appended in sqlite.appended.items():
        stored = await sqlite.load(
            {"project_key": project_key, "session_id": sid, **({"subpath": subpath} if subpath else {})}
        )
        unique = list({e.get("uuid", id(e)): e for e in appended}.values())
        assert stored == unique, "SQLite holds every original entry, unmodified"
    await store.aclose()


async def test_trimmed_bodies_can_be_read_back(scripted_model: ScriptedModel, workspace: Path) -> None:
    spill = workspace / ".flower" / "spill"
    aged = AgedStore()
    store = PruningSessionStore(aged, trim=TrimPolicy(keep_recent=0), spill_dir=spill)
    long_output = "import sys; [print(f'line {i:03d} ' + 'y' * 50) for i in range(100)]"
    scripted_model.script("main", [bash(f'python3 -c "{long_output}"'), "printed"])
    first = await scripted_model.run("Print the report.", cwd=workspace, session_store=store)
    assert first.session_id is not None
    (main,) = [entries for k, entries in aged._store.items() if k.endswith("/" + first.session_id)]
    aged.age(first.session_id, 600, len(main))  # resumed ten minutes later: the prompt cache has expired

    def follow_pointer(request: Any) -> Any:
        pointer = request.tool_results[0].text
        found = re.search(r"moved to (\S+\.txt);", pointer)
        assert found, pointer
        return read(found.group(1))

    scripted_model.script("main", [follow_pointer, "read it"])
    await scripted_model.run("Check line 99.", cwd=workspace, session_store=store, resume=first.session_id)

    resumed, after_read = scripted_model.requests("main")[-2:]
    assert "line 042 " not in resumed and "tool result trimmed: 5999 chars" in resumed
    assert "line 099 " + "y" * 50 in after_read.tool_results[-1].text, "the agent reads the body back"
    assert [p.parent for p in spill.iterdir()] == [spill]
    await store.aclose()


async def test_an_orphan_call_is_answered_and_api_errors_are_not_replayed(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    raw = InMemorySessionStore()
    scripted_model.script(
        "main", [bash("echo ORPHAN-OUT", id="toolu_orphan"), http_error(500), http_error(500)]
    )
    first = await scripted_model.run("Echo.", cwd=workspace, session_store=raw, env=FAST_GIVE_UP)
    assert first.error is not None and first.session_id is not None
    (project_key,) = {k.split("/")[0] for k in raw._store}
    key: SessionKey = {"project_key": project_key, "session_id": first.session_id}

    scripted_model.script("main", ["unchanged"])
    await scripted_model.run("Again.", cwd=workspace, session_store=raw, resume=first.session_id)
    fact(
        "API Error" not in scripted_model.request("main", -1),
        "§3.1",
        "on resume the CLI leaves the synthetic isApiErrorMessage entry out of the request by itself",
    )

    entries = await raw.load(key) or []
    holder = next(
        i for i, e in enumerate(entries) if "toolu_orphan" in str((e.get("message") or {}).get("content"))
    )
    broken = InMemorySessionStore()
    await broken.append(key, entries[: holder + 1])  # the process died while the call ran
    scripted_model.script("main", ["as the CLI repairs it"])
    await scripted_model.run("Unhealed.", cwd=workspace, session_store=broken, resume=first.session_id)
    unhealed = scripted_model.request("main", -1)
    fact(
        unhealed.tool_result("toolu_orphan").text.startswith("[Tool call interrupted: the session ended"),
        "§3",
        "on resume the CLI answers a call left without a result (the process died) with its own result",
    )

    died = InMemorySessionStore()  # the same death, not yet repaired by the CLI's resume above
    await died.append(key, entries[: holder + 1])
    scripted_model.script("main", ["healed"])
    healed = await scripted_model.run(
        "Once more.", cwd=workspace, session_store=PruningSessionStore(died), resume=first.session_id
    )
    assert healed.error is None and healed.text == "healed"
    result = scripted_model.request("main", -1).tool_result("toolu_orphan")
    assert result.text == PrunePolicy().orphan_note and result.tool_name == "Bash"


async def test_after_an_idle_hour_a_resume_expires_every_snapshot(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Two hours pass between the sessions: all three `git status` bodies are stale, the newest
    included, though fewer than six were taken. A later resume, with the pause now inside the history,
    replays the same notes, byte for byte."""
    git_workspace(workspace)
    aged = AgedStore()
    store = PruningSessionStore(aged)
    scripted_model.script(
        "main", [bash("git status --short"), bash("git status"), bash("git status -s"), "seen"]
    )
    first = await scripted_model.run("Look at the repository.", cwd=workspace, session_store=store)
    session = first.session_id
    assert session is not None
    (main,) = [entries for k, entries in aged._store.items() if k.endswith("/" + session)]
    aged.age(session, 2 * 3600, len(main))  # everything so far was written two hours ago

    scripted_model.script("main", ["resumed late"])
    await scripted_model.run("Continue.", cwd=workspace, session_store=store, resume=session)
    late = scripted_model.request("main", -1)
    assert late.count("the session was idle for 1 h or more after it") == 3
    assert "notes.txt" not in late, "no stale body of git status is replayed"
    assert store.last_report is not None and len(store.last_report.of_kind("expired")) == 3

    scripted_model.script("main", ["resumed again"])
    await scripted_model.run("And now?", cwd=workspace, session_store=store, resume=session)
    again = scripted_model.request("main", -1)
    assert again.messages[: len(late.messages) - 1] == late.messages[:-1], "the same prefix as before"
