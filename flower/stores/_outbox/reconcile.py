"""Reconciliation: what the CLI wrote to its local transcript and the store does not hold (same machine).

The CLI writes every transcript line to a local file before the SDK mirrors it, so after a runner died
(or a store lost a commit), the file can hold lines the store never got. For a run that did not end
cleanly, the next start in the workspace compares them, file by file (the main transcript, then each
subagent's), and sends what is missing through the outbox:

- only the lines the mirror sends (never `api-request*`), after the ones a resume copied from the store
  (its `prefix`: rewritten copies, not this machine's writes), up to a torn last line;
- missing = the lines with a uuid the store lacks, and the tail after the last line the store has,
  minus the uuid-less lines the store already holds after that one (compared in order);
- a subagent's `.meta.json` sidecar becomes an `agent_metadata` entry when the store's last differs.

Pure over the files and what `store.load()` returned; the caller holds the session's lease on the epoch
the run wrote under, so nobody wrote the session since.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, cast

from claude_agent_sdk import SessionKey, SessionStoreEntry

__all__ = [
    "NOT_MIRRORED",
    "find_transcript",
    "local_entries",
    "metadata",
    "mirrored",
    "missing",
    "remove_resume_dirs",
    "transcript_files",
]

NOT_MIRRORED: Final = frozenset({"api-request", "api-request-blob", "api-request-shape"})
"""Line types the CLI writes locally and never mirrors to a store."""
_RESUME_PREFIX: Final = "claude-resume-"  # the SDK's temporary config directory for a resume

Entry = dict[str, Any]


def mirrored(path: Path, prefix: int = 0) -> list[Entry]:
    """The lines of `path` a mirror sends, after the first `prefix` lines, up to a torn or bad line."""
    found: list[Entry] = []
    try:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines):
                if number < prefix or not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    break  # a line cut by a kill: nothing after it is trusted
                if not isinstance(entry, dict):
                    break
                if entry.get("type") not in NOT_MIRRORED:
                    found.append(entry)
    except (OSError, UnicodeDecodeError):
        return found
    return found


def _uuid(entry: Entry) -> str | None:
    uuid = entry.get("uuid")
    return uuid if isinstance(uuid, str) else None


def missing(local: list[Entry], stored: list[Entry]) -> list[Entry]:
    """The entries of `local` (a file's mirrored lines) that `stored` (the store's copy) lacks."""
    have = {uuid: index for index, entry in enumerate(stored) if (uuid := _uuid(entry)) is not None}
    last = max((i for i, entry in enumerate(local) if _uuid(entry) in have), default=-1)
    holes = [entry for entry in local[: last + 1] if (uuid := _uuid(entry)) is not None and uuid not in have]
    tail = local[last + 1 :]
    start = have[cast(str, _uuid(local[last]))] + 1 if last >= 0 else 0
    after = [entry for entry in stored[start:] if _uuid(entry) is None]
    same = 0
    for entry in tail:
        if _uuid(entry) is not None or same >= len(after) or after[same] != entry:
            break
        same += 1
    return holes + tail[same:]


def transcript_files(main: Path, key: SessionKey) -> Iterator[tuple[Path, SessionKey]]:
    """The session's files with their store keys: the main transcript, then each subagent's."""
    yield main, key
    subagents = main.with_suffix("") / "subagents"
    if not subagents.is_dir():
        return
    for path in sorted(subagents.rglob("*.jsonl")):
        relative = path.relative_to(main.with_suffix("")).as_posix().removesuffix(".jsonl")
        yield path, cast(SessionKey, {**key, "subpath": relative})


def metadata(path: Path, stored: list[Entry]) -> Entry | None:
    """A subagent's sidecar as the `agent_metadata` entry to add, when the store's last one differs."""
    sidecar = path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")
    try:
        value: Any = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    wanted = {**value, "type": "agent_metadata"}
    last = next((e for e in reversed(stored) if e.get("type") == "agent_metadata"), None)
    return None if last == wanted else wanted


def _resume_dirs(session_id: str) -> list[Path]:
    """The SDK's temporary config directories that hold a resumed copy of `session_id`, newest first."""
    found = []
    try:
        candidates = [Path(tempfile.gettempdir()) / name for name in os.listdir(tempfile.gettempdir())]
    except OSError:
        return []
    for root in candidates:
        if not root.name.startswith(_RESUME_PREFIX):
            continue
        try:
            info = os.lstat(root)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        if any((root / "projects").glob(f"*/{session_id}.jsonl")):
            found.append((info.st_mtime, root))
    return [root for _, root in sorted(found, reverse=True)]


def find_transcript(session_id: str, config_dir: str, resumed: bool) -> Path | None:
    """The local main transcript a run of `session_id` wrote: in the CLI's config directory, or for a
    resume in the newest of the SDK's temporary copies."""
    roots = _resume_dirs(session_id) if resumed else [Path(config_dir)]
    for root in roots:
        for path in sorted((root / "projects").glob(f"*/{session_id}.jsonl")):
            if path.is_file():
                return path
    return None


def remove_resume_dirs(session_id: str) -> list[str]:
    """Delete the SDK's temporary copies of `session_id` that killed runs left (they hold a copy of the
    CLI's credentials); the directories removed."""
    removed = []
    for root in _resume_dirs(session_id):
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists():
            removed.append(str(root))
    return removed


def local_entries(
    main: Path, key: SessionKey, prefixes: dict[str, int]
) -> list[tuple[SessionKey, Path, list[Entry]]]:
    """Each file of the session with its key and its mirrored lines after its prefix."""
    return [
        (file_key, path, mirrored(path, prefixes.get(file_key.get("subpath") or "", 0)))
        for path, file_key in transcript_files(main, key)
    ]


def as_entries(entries: list[Entry]) -> list[SessionStoreEntry]:
    return cast(list[SessionStoreEntry], entries)
