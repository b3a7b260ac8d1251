"""Files that follow the session: what travels, how it is written back, and how a history is moved."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest
from claude_agent_sdk import project_key_for_directory

from flower import PostgresSessionStore
from flower.stores._relocate import relocate
from flower.stores._workbench_files import restore_file, scan

SESSION = "0d3c9a10-0000-4000-8000-000000000f11"


def test_relocate_moves_roots_only_at_path_boundaries() -> None:
    moves = [("/jobs/41/repo/.flower", "/w/b/.flower"), ("/jobs/41/repo", "/w/b")]
    entries = [
        {
            "type": "user",
            "cwd": "/jobs/41/repo",
            "message": {"content": [{"text": "see /jobs/41/repo/x.txt"}]},
        },
        {
            "type": "user",
            "message": {"content": "/jobs/41/repository and /jobs/4 stay; `/jobs/41/repo` moves"},
        },
        {"/jobs/41/repo": "keys stay", "n": [1, None, 2.5]},
    ]
    moved = relocate(entries, moves)
    assert moved[0] == {"type": "user", "cwd": "/w/b", "message": {"content": [{"text": "see /w/b/x.txt"}]}}
    assert moved[1]["message"]["content"] == "/jobs/41/repository and /jobs/4 stay; `/w/b` moves"
    assert moved[2] is entries[2], "an entry with nothing to move is shared, not copied"
    assert entries[0]["cwd"] == "/jobs/41/repo", "the input is not modified"
    assert relocate(entries, [("/a", "/a")]) == entries


def test_the_synced_files_are_the_four_directories_regular_files(tmp_path: Path) -> None:
    root = tmp_path / ".flower"
    for name in ("scripts/a.sh", "notes/archive/h.md", "spill/x-bash.txt", "spill/INDEX.jsonl", "INDEX.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    (root / "artifacts").mkdir()
    (root / "artifacts" / ".tmp-partial").write_text("half")
    (root / "artifacts" / "link").symlink_to(root / "scripts" / "a.sh")
    assert [f.path for f in scan(root)] == ["notes/archive/h.md", "scripts/a.sh", "spill/x-bash.txt"]


@pytest.mark.parametrize(
    "relative", ["../x.txt", "/etc/passwd", "spill/../../x", "notes/.hidden", "elsewhere/x", "notes", "a\\b"]
)
def test_a_stored_path_never_leaves_the_workbench(tmp_path: Path, relative: str) -> None:
    assert restore_file(tmp_path, relative, b"x", 0o600) == "refused"
    assert [p.name for p in tmp_path.iterdir()] in ([], ["notes"])


def test_restoring_never_replaces_a_local_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "wb"
    root.mkdir()
    (root / "notes").symlink_to(outside)
    assert restore_file(root, "notes/n.md", b"x", 0o600) == "refused", "no write through a symlink"
    assert restore_file(root, "scripts/run.sh", b"#!/bin/sh\n", 0o755) == "restored"
    assert (
        os.stat(root / "scripts" / "run.sh").st_mode & 0o777 == 0o700
        and (root / "scripts").stat().st_mode & 0o777 == 0o700
    )
    assert restore_file(root, "scripts/run.sh", b"#!/bin/sh\n", 0o755) == "same"
    assert restore_file(root, "scripts/run.sh", b"other", 0o600) == "kept"
    assert (root / "scripts" / "run.sh").read_bytes() == b"#!/bin/sh\n"
    assert not list(outside.iterdir()) and not [
        p for p in (root / "scripts").iterdir() if p.name.startswith(".")
    ]


async def count(dsn: str, sql: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval(sql))
    finally:
        await conn.close()


async def test_files_are_sent_before_the_entries_that_point_to_them_and_only_once(
    tmp_path: Path, postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema = pg_schema()
    workspace, root = tmp_path / "ws", tmp_path / "ws" / ".flower"
    (root / "spill").mkdir(parents=True)
    (root / "spill" / "ab-bash.txt").write_text("BODY " * 100)
    (root / "artifacts").mkdir()
    (root / "artifacts" / "huge.bin").write_bytes(b"x" * 2048)
    store = PostgresSessionStore(postgres_dsn, schema=schema, max_file_bytes=1024)
    store.attach_workbench(workspace, root)
    key = {"project_key": project_key_for_directory(workspace), "session_id": SESSION}
    await store.append(key, [{"type": "user", "uuid": "1", "pointer": str(root / "spill" / "ab-bash.txt")}])
    assert await count(postgres_dsn, f"SELECT count(*) FROM {schema}.files") == 1, (
        "the spill, not the 2 KB file"
    )
    await store.append(key, [{"type": "user", "uuid": "2"}])
    (root / "spill" / "cd-bash.txt").write_text("BODY " * 100)  # the same content under another name
    await store.append(key, [{"type": "user", "uuid": "3"}])
    assert await count(postgres_dsn, f"SELECT count(*) FROM {schema}.blobs") == 1, "one blob per content"
    assert await count(postgres_dsn, f"SELECT count(*) FROM {schema}.files") == 2
    await store.aclose()


async def test_restore_checks_each_path_first_and_goes_on_past_a_file_it_cannot_write(
    tmp_path: Path, postgres_dsn: str, pg_schema: Callable[[], str], caplog: pytest.LogCaptureFixture
) -> None:
    schema = pg_schema()
    a_root, b_root = tmp_path / "a" / ".flower", tmp_path / "b" / ".flower"
    (a_root / "scripts").mkdir(parents=True)
    (a_root / "scripts" / "z.sh").write_text("echo last\n")
    b_root.mkdir(parents=True)
    (tmp_path / "b" / "secret.txt").write_text("never read by a restore")
    store = PostgresSessionStore(postgres_dsn, schema=schema)
    store.attach_workbench(a_root.parent, a_root)
    key = {"project_key": project_key_for_directory(a_root.parent), "session_id": SESSION}
    await store.append(key, [{"type": "user", "uuid": "1"}])  # publishes scripts/z.sh
    conn = await asyncpg.connect(postgres_dsn)
    try:  # forged rows: the manifest, a path out of the workbench, a name too long for the file system
        blob = await conn.fetchval(f"SELECT sha256 FROM {schema}.files WHERE path = 'scripts/z.sh'")
        for path in ("spill/INDEX.jsonl", "notes/../../secret.txt", "notes/" + "n" * 300 + ".md"):
            await conn.execute(f"INSERT INTO {schema}.files VALUES ($1, $2, $3, 384, 0)", SESSION, path, blob)
    finally:
        await conn.close()
    store.attach_workbench(b_root.parent, b_root)
    async with store.follow(SESSION, cwd=b_root.parent) as lease:
        assert lease.restored == ("scripts/z.sh",), "the restore went on past the name too long"
        assert lease.kept == (), "a forged path was never opened, so never compared"
    assert not (b_root / "spill" / "INDEX.jsonl").exists()
    assert (tmp_path / "b" / "secret.txt").read_text() == "never read by a restore"
    warned = caplog.text
    assert "spill/INDEX.jsonl" in warned and "secret.txt" in warned and "n" * 300 in warned
    await store.aclose()
