"""A session that predates the store is imported from the CLI's local files at its first load, once."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import AgentDefinition, InMemorySessionStore, SessionKey, import_session_to_store
from claude_agent_sdk._internal.sessions import project_key_for_directory

from flower._errors import StoreError
from flower.stores import PruningSessionStore, SqliteSessionStore, TrimmingSessionStore
from flower.stores._local import config_dir, find_transcript
from flower.testing import ScriptedModel, agent, bash

SESSION = "5e55a0d1-0000-4000-8000-000000000001"
KEY: SessionKey = {"project_key": "-ws-app", "session_id": SESSION}


def user(uuid: str, text: str, parent: str | None = None) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "message": {"role": "user", "content": text}}


def local_session(config: Path, project_key: str = "-ws-app", *, lines: int = 3) -> Path:
    """A CLI-shaped session on disk: a main transcript, one subagent with its sidecar."""
    folder = config / "projects" / project_key
    folder.mkdir(parents=True)
    entries = [user(f"u{i}", f"turn {i}", f"u{i - 1}" if i else None) for i in range(lines)]
    main = folder / f"{SESSION}.jsonl"
    main.write_text("".join(json.dumps(e) + "\n" for e in entries) + "\n")
    subagents = folder / SESSION / "subagents"
    subagents.mkdir(parents=True)
    (subagents / "agent-a1.jsonl").write_text(json.dumps(user("s0", "sub work")) + "\n")
    (subagents / "agent-a1.meta.json").write_text(json.dumps({"agentType": "helper", "type": "ignored"}))
    return main


class Counting(InMemorySessionStore):
    """An in-memory store that counts appends and can fail the n-th one."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__()
        self.appends = 0
        self.fail_at = fail_at

    async def append(self, key: SessionKey, entries: list[Any]) -> None:
        self.appends += 1
        if self.appends == self.fail_at:
            raise OSError("the store went away")
        await anyio.sleep(0.01)  # let a concurrent load run meanwhile
        await super().append(key, entries)


async def test_the_first_load_imports_main_and_subagents_then_loads_as_usual(tmp_path: Path) -> None:
    local_session(tmp_path / "cfg")
    inner = Counting()
    store = PruningSessionStore(inner, config_dir=tmp_path / "cfg")

    loaded = await store.load(KEY)
    assert [e["uuid"] for e in loaded or []] == ["u0", "u1", "u2"]
    assert store.last_report is not None and store.last_report.imported == 5  # 3 + 1 + the metadata
    sub = await inner.load({**KEY, "subpath": "subagents/agent-a1"})
    assert sub == [user("s0", "sub work"), {"agentType": "helper", "type": "agent_metadata"}]

    again = await store.load(KEY)
    assert again == loaded and store.last_report.imported == 0 and inner.appends == 2


async def test_concurrent_loads_import_once(tmp_path: Path) -> None:
    local_session(tmp_path / "cfg")
    inner = Counting()
    store = TrimmingSessionStore(inner, trim=False, config_dir=tmp_path / "cfg")
    results: list[Any] = []

    async def load() -> None:
        results.append(await store.load(KEY))

    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(load)
    assert all(len(r) == 3 for r in results)
    assert len(await inner.load(KEY) or []) == 3  # not 9


async def test_nothing_to_import_leaves_the_store_alone(tmp_path: Path) -> None:
    inner = Counting()
    store = PruningSessionStore(inner, config_dir=tmp_path / "nowhere")
    assert await store.load(KEY) is None and inner.appends == 0
    assert await store.load({**KEY, "subpath": "subagents/agent-a1"}) is None


async def test_a_store_with_entries_is_never_topped_up(tmp_path: Path) -> None:
    local_session(tmp_path / "cfg")
    inner = InMemorySessionStore()
    await inner.append(KEY, [user("mine", "already here")])  # type: ignore[list-item]
    store = PruningSessionStore(inner, config_dir=tmp_path / "cfg")
    assert [e["uuid"] for e in await store.load(KEY) or []] == ["mine"]


async def test_a_failed_import_is_undone_and_raised(tmp_path: Path) -> None:
    local_session(tmp_path / "cfg")
    inner = Counting(fail_at=2)  # the main transcript lands, the subagent's does not
    store = PruningSessionStore(inner, config_dir=tmp_path / "cfg")
    with pytest.raises(StoreError, match=r"partial copy.*the store went away"):
        await store.load(KEY)
    assert await inner.load(KEY) is None  # deleted again: the next resume is not half a session


async def test_damaged_lines_are_read_as_the_cli_reads_them_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The CLI resumes a file with a damaged line, so the import never refuses one: text that is not
    JSON is skipped, two entries joined on one line are both kept, and each line is named."""
    main = local_session(tmp_path / "cfg", lines=4)
    lines = main.read_text().splitlines()
    main.write_text("\n".join([lines[0], lines[1] + lines[2], "{not json", lines[3], "[1, 2]", ""]))
    inner = Counting()
    store = PruningSessionStore(inner, config_dir=tmp_path / "cfg")
    caplog.set_level(logging.WARNING, logger="flower.stores")

    loaded = await store.load(KEY)

    assert [e["uuid"] for e in loaded or []] == ["u0", "u1", "u2", "u3"]
    assert f"{main} line 2 holds 2 entries" in caplog.text and "the CLI reads only the first" in caplog.text
    assert f"{main} line 3: 9 characters from column 1 are not JSON" in caplog.text
    assert f"{main} line 5 holds a JSON list, not an entry" in caplog.text


async def test_the_config_dir_defaults_to_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    local_session(tmp_path / "env-cfg")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "env-cfg"))
    caplog.set_level(logging.INFO, logger="flower.stores")
    async with PruningSessionStore(tmp_path / "s.db") as store:
        assert len(await store.load(KEY) or []) == 3
    assert f"imported session {SESSION} (5 entries)" in caplog.text
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_dir() == tmp_path / "home" / ".claude"
    assert config_dir({"CLAUDE_CONFIG_DIR": "/x"}) == Path("/x")


def test_find_transcript(tmp_path: Path) -> None:
    long_key = "-" + "a" * 210
    local_session(tmp_path, project_key=long_key[:200] + "-bunhash")  # the CLI hashes long paths its own way
    assert find_transcript(tmp_path, long_key + "-sdkhash", SESSION) is not None
    assert find_transcript(tmp_path, "-other", SESSION) is None
    assert find_transcript(tmp_path, long_key, "../" + SESSION) is None


@pytest.mark.cli
async def test_the_import_matches_the_sdks_own(
    scripted_model: ScriptedModel, workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Entry for entry what `import_session_to_store()` stores, on a session the CLI wrote itself."""
    scripted_model.script("main", [agent("helper", "Count.", background=False), "done"])
    scripted_model.script("helper", [bash("ls | wc -l"), "counted"])
    helper = AgentDefinition(description="Counts.", prompt="You count.", tools=["Bash"], model="inherit")
    run = await scripted_model.run("go", cwd=workspace, tools=["Agent", "Bash"], agents={"helper": helper})
    assert run.session_id
    key: SessionKey = {"project_key": project_key_for_directory(workspace), "session_id": run.session_id}

    ours = InMemorySessionStore()
    async with PruningSessionStore(ours, config_dir=scripted_model.config_dir) as store:
        await store.load(key)
    theirs = InMemorySessionStore()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", scripted_model.config_dir)  # the only place it looks
    await import_session_to_store(run.session_id, theirs, directory=str(workspace))

    subkeys = await theirs.list_subkeys(key)
    assert subkeys and await ours.list_subkeys(key) == subkeys
    for sub in [None, *subkeys]:
        at: SessionKey = {**key, "subpath": sub} if sub else key
        assert await ours.load(at) == await theirs.load(at), sub


async def test_sqlite_underneath(tmp_path: Path) -> None:
    local_session(tmp_path / "cfg")
    async with PruningSessionStore(SqliteSessionStore(tmp_path / "s.db"), config_dir=tmp_path / "cfg") as s:
        assert len(await s.load(KEY) or []) == 3


@pytest.mark.cli
async def test_a_session_the_cli_resumes_with_two_entries_on_a_line_is_resumed_whole(
    scripted_model: ScriptedModel, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A lost newline joins a result entry to the line before it. The CLI resumes the file but reads
    only the first entry of that line: the chain breaks there and the request loses what came before.
    flower imports the file without refusing it, keeps both entries and names the line."""
    scripted_model.script("main", [bash("echo FIRST-OUT"), bash("echo SECOND-OUT"), "done"])
    run = await scripted_model.run("go", cwd=workspace, tools=["Bash"])
    assert run.session_id
    key: SessionKey = {"project_key": project_key_for_directory(workspace), "session_id": run.session_id}
    path = find_transcript(Path(scripted_model.config_dir), key["project_key"], run.session_id)
    assert path is not None
    lines = path.read_text(encoding="utf-8").splitlines()
    result = next(i for i, line in enumerate(lines) if '"tool_result"' in line and "SECOND-OUT" in line)
    lines[result - 1 : result + 1] = [lines[result - 1] + lines[result]]
    damaged = "\n".join(lines) + "\n"
    path.write_text(damaged, encoding="utf-8")

    scripted_model.script("main", ["BARE"])
    bare_run = await scripted_model.run("Where were we?", cwd=workspace, resume=run.session_id)
    bare = scripted_model.request("main", -1)
    path.write_text(damaged, encoding="utf-8")  # as it was before that resume appended to it
    caplog.set_level(logging.WARNING, logger="flower.stores")
    store = PruningSessionStore(InMemorySessionStore(), config_dir=scripted_model.config_dir)
    scripted_model.script("main", ["FLOWER"])
    flower_run = await scripted_model.run(
        "Where were we?", cwd=workspace, session_store=store, resume=run.session_id
    )

    assert bare_run.text == "BARE" and "SECOND-OUT" not in bare, "the CLI resumes it, without that entry"
    assert flower_run.text == "FLOWER", "never refused"
    flower = scripted_model.request("main", -1)
    assert [r.text.strip() for r in flower.tool_results] == ["FIRST-OUT", "SECOND-OUT"], "the whole chain"
    assert f"{path} line {result} holds 2 entries" in caplog.text
