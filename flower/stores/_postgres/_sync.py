"""Files that follow the session: a workbench's files published to the store, restored on another machine.

A workbench is attached to the store for the project key of the CLI's working directory (the Runtime
and `instrument()` attach theirs). Every append of a session under that key first publishes what is
new in the workbench, so no pointer reaches the store before the file it points to; a lease's end
publishes once more. Publishing is incremental: a file whose size and mtime did not change is not
read again, a blob the store has is not sent again, and a session's record is written only where it
changed.

Restoring writes the files recorded for a session into the local workbench, only where they are
missing (a local file is never replaced), before the CLI starts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import anyio

from .._lease import runner_name
from .._relocate import Moves
from .._workbench_files import LocalFile, check_relative, read_file, read_manifest, restore_file, scan
from . import _files as files
from ._connection import Connections

__all__ = ["Attachment", "publish", "restore"]

logger = logging.getLogger("flower.stores")

_BATCH_BYTES: Final = 32 << 20


@dataclass
class Attachment:
    """A local workbench attached for one project key, and what this process already sent of it."""

    project_key: str
    workspace: str
    workbench: Path
    stored: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    """path -> (size, mtime_ns, sha256) of files whose content the store is known to hold."""
    recorded: dict[str, dict[str, str]] = field(default_factory=dict)
    """session -> {path: sha256} recorded for it."""
    placed: set[str] = field(default_factory=set)
    skipped: dict[str, tuple[int, int]] = field(default_factory=dict)
    """path -> (size, mtime_ns) of files left local (over the size limit), not read again until changed."""
    manifest_offset: int = 0
    _locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary
    )

    @property
    def lock(self) -> asyncio.Lock:
        """One publish or restore at a time (an asyncio lock belongs to one event loop: one per loop)."""
        return self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())

    def place(self, runner: str | None) -> files.Place:
        return files.Place(self.project_key, self.workspace, str(self.workbench), runner_name(runner))

    def moves(self, elsewhere: list[files.Place]) -> Moves:
        """(old root, new root) for each other place the session ran in."""
        found: list[tuple[str, str]] = []
        here = (str(self.workbench), self.workspace)
        for place in elsewhere:
            for old, new in ((place.workbench, here[0]), (place.workspace, here[1])):
                if old != new and (old, new) not in found:
                    found.append((old, new))
        return found


async def publish(conns: Connections, att: Attachment, session_id: str, limit: int) -> None:
    """Send what is new in the workbench and record the session's files, place and spill rows."""
    async with att.lock:
        listed, (lines, offset) = await anyio.to_thread.run_sync(_look, att.workbench, att.manifest_offset)
        known = att.recorded.setdefault(session_id, {})
        pending: list[tuple[LocalFile, str, bytes | None]] = []
        for item in listed:
            cached = att.stored.get(item.path)
            if cached is not None and cached[:2] == (item.size, item.mtime_ns):
                if known.get(item.path) != cached[2]:
                    pending.append((item, cached[2], None))
                continue
            if att.skipped.get(item.path) == (item.size, item.mtime_ns):
                continue
            read = await anyio.to_thread.run_sync(read_file, att.workbench, item.path, limit)
            if read is None:
                if item.size > limit:
                    att.skipped[item.path] = (item.size, item.mtime_ns)
                    logger.warning(
                        "flower.stores: %s is over %d bytes: not sent to the store", item.path, limit
                    )
                continue
            data, digest = read
            pending.append((item, digest, data))
        if not pending and not lines and session_id in att.placed:
            return  # nothing new: no round trip (every append of a run comes here first)
        async with conns.connection("publishing workbench files") as conn:
            for batch in _batches(pending):
                sent = {digest: data for _, digest, data in batch if data is not None}
                missing = await files.missing_blobs(conn, conns.schema, list(sent))
                await files.put_files(
                    conn,
                    conns.schema,
                    session_id,
                    [(digest, sent[digest]) for digest in sorted(missing)],
                    [(item.path, digest, item.mode) for item, digest, _ in batch],
                )
                for item, digest, _ in batch:
                    att.stored[item.path] = (item.size, item.mtime_ns, digest)
                    known[item.path] = digest
            if session_id not in att.placed:
                await files.record_place(conn, conns.schema, session_id, att.place(conns.runner))
                att.placed.add(session_id)
            if lines:
                await files.add_spill_rows(conn, conns.schema, lines)
        att.manifest_offset = offset


def _look(root: Path, offset: int) -> tuple[list[LocalFile], tuple[list[str], int]]:
    """The workbench's files and the manifest's new lines, in one trip to a worker thread."""
    return scan(root), read_manifest(root, offset)


def _batches(
    pending: list[tuple[LocalFile, str, bytes | None]],
) -> list[list[tuple[LocalFile, str, bytes | None]]]:
    batches: list[list[tuple[LocalFile, str, bytes | None]]] = []
    size = _BATCH_BYTES
    for entry in pending:
        weight = len(entry[2]) if entry[2] is not None else 0
        if not batches or size + weight > _BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(entry)
        size += weight
    return batches


async def restore(
    conns: Connections, att: Attachment, session_id: str, limit: int
) -> tuple[list[str], list[str], list[files.Place]]:
    """Write the session's missing files into the workbench; (restored, kept local, places elsewhere).

    A stored path is checked before anything is opened (one that could leave the workbench, or the spill
    manifest, is refused); a file that cannot be written is skipped with a warning naming it, and the
    restore goes on with the next one.
    """
    restored: list[str] = []
    kept: list[str] = []
    async with att.lock, conns.connection("restoring workbench files") as conn:
        stored = await files.session_files(conn, conns.schema, session_id)
        where = (await files.places(conn, conns.schema, [session_id])).get(session_id, [])
        for item in stored:
            if check_relative(item.path) is None:
                logger.warning(
                    "flower.stores: refused to restore %r: not a workbench file that travels", item.path
                )
                continue
            local = await anyio.to_thread.run_sync(read_file, att.workbench, item.path, max(limit, item.size))
            if local is not None:
                if local[1] != item.sha256:
                    kept.append(item.path)
                continue
            data = await files.blob(conn, conns.schema, item.sha256)
            if data is None:
                continue
            try:
                outcome = await anyio.to_thread.run_sync(_write, att.workbench, item, data)
            except OSError as exc:
                logger.warning(
                    "flower.stores: could not restore %s of session %s: %s", item.path, session_id, exc
                )
                continue
            if outcome == "restored":
                restored.append(item.path)
                att.stored[item.path] = (*_stat(att.workbench / item.path), item.sha256)
            elif outcome == "kept":
                kept.append(item.path)
            elif outcome == "refused":
                logger.warning("flower.stores: refused to restore %r outside the workbench", item.path)
    if kept:
        logger.warning(
            "flower.stores: session %s: %d workbench file(s) differ from the store's copy; the local ones "
            "were kept: %s",
            session_id,
            len(kept),
            ", ".join(kept[:5]),
        )
    elsewhere = [p for p in where if (p.workspace, p.workbench) != (att.workspace, str(att.workbench))]
    return restored, kept, elsewhere


def _write(root: Path, item: files.StoredFile, data: bytes) -> str:
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return restore_file(root, item.path, data, item.mode)


def _stat(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns
