"""The CLI's local transcripts: where a session's files are, and their import into a store.

A session that ran before a store was added lives only in the CLI's own files
(`<config>/projects/<project_key>/<session_id>.jsonl`, its subagents under `<session_id>/subagents/`).
Resumed with a store that has none of it, the CLI reads those files, and the store's mirror receives only
the new turns; the next resume loads the store and the early turns are gone (measured, CLI 2.1.332). The
layers import the files first, so the store holds the whole session before the CLI replays it.

What is imported matches the SDK's `import_session_to_store()` entry for entry (a test compares them):
every line of the main transcript, every subagent transcript, and each subagent's `.meta.json` as an
`agent_metadata` entry. That function is not called itself because it finds files only under the
process's `CLAUDE_CONFIG_DIR` (or `~/.claude`), while the CLI resumes from the one in `options.env` when
the app sets it, and it keys the store by the directory name on disk, which differs from the key a resume
loads for a working directory longer than 200 characters.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final, cast

from claude_agent_sdk import SessionKey, SessionStore, SessionStoreEntry

from .._errors import StoreError

__all__ = [
    "Transcripts",
    "append_all",
    "config_dir",
    "find_transcript",
    "implements",
    "import_whole",
    "read_jsonl",
    "read_transcripts",
]

logger = logging.getLogger("flower.stores")

CONFIG_ENV: Final = "CLAUDE_CONFIG_DIR"
_BATCH_ENTRIES: Final = 500  # the SDK's import batches: 500 entries or 1 MiB of lines
_BATCH_BYTES: Final = 1 << 20
_LONG_KEY: Final = 200  # project keys longer than this end with a hash the CLI and the SDK compute apart
_BOM: Final = b"\xef\xbb\xbf"
_BLANK: Final = " \t\r"
_DECODER: Final = json.JSONDecoder()

Transcripts = list[tuple[SessionKey, list[SessionStoreEntry]]]
"""Store keys and their entries: the main transcript first, then each subagent's."""


def config_dir(env: Mapping[str, str] | str | os.PathLike[str] | None = None) -> Path:
    """The CLI's config directory: `env`'s `CLAUDE_CONFIG_DIR` (or `env` itself when it is a path), else
    the process environment's, else `~/.claude`, as the CLI resolves it."""
    if isinstance(env, str | os.PathLike):
        return Path(env).expanduser()
    chosen = (env or {}).get(CONFIG_ENV) or os.environ.get(CONFIG_ENV)
    return Path(chosen).expanduser() if chosen else Path.home() / ".claude"


def find_transcript(config: Path, project_key: str, session_id: str) -> Path | None:
    """The session's main transcript under `config/projects/`, if there is a non-empty one."""
    if not session_id or os.sep in session_id or "/" in session_id or session_id.startswith("."):
        return None
    projects = config / "projects"
    name = f"{session_id}.jsonl"
    candidates = [projects / project_key / name]
    if len(project_key) > _LONG_KEY:
        try:
            prefix = project_key[:_LONG_KEY] + "-"
            candidates += [d / name for d in sorted(projects.iterdir()) if d.name.startswith(prefix)]
        except OSError:
            pass
    for path in candidates:
        try:
            if path.is_file() and path.stat().st_size > 0:
                return path
        except OSError:
            continue
    return None


def read_transcripts(main: Path, key: SessionKey) -> Transcripts:
    """Every entry of the session at `main` (main transcript, then subagents), keyed as the store keys them.

    Reads everything before anything is stored, so a file that cannot be read stores nothing; raises
    `StoreError` naming the file.
    """
    found: Transcripts = [(key, _entries(main))]
    session_dir = main.with_suffix("")
    for path in _jsonl_files(session_dir / "subagents"):
        parts = list(path.relative_to(session_dir).parts)
        parts[-1] = parts[-1].removesuffix(".jsonl")
        sub_key = cast(SessionKey, {**key, "subpath": "/".join(parts)})
        entries = _entries(path)
        meta = _meta(path)
        if meta is not None:
            entries.append(cast(SessionStoreEntry, {**meta, "type": "agent_metadata"}))
        found.append((sub_key, entries))
    return found


async def append_all(store: SessionStore, transcripts: Transcripts) -> int:
    """Append every transcript to `store` in the SDK's batch sizes; the number of entries appended."""
    total = 0
    for key, entries in transcripts:
        batch: list[SessionStoreEntry] = []
        size = 0
        for entry in entries:
            batch.append(entry)
            size += len(json.dumps(entry, ensure_ascii=False))
            if len(batch) >= _BATCH_ENTRIES or size >= _BATCH_BYTES:
                await store.append(key, batch)
                total += len(batch)
                batch, size = [], 0
        if batch:
            await store.append(key, batch)
            total += len(batch)
    return total


async def import_whole(store: SessionStore, transcripts: Transcripts, source: Path, undone: str) -> int:
    """`append_all`, all or nothing: a failed import is undone (when `store` can `delete`) and raises
    `StoreError` naming `source` and what the undo means (`undone`); the number of entries imported."""
    key = transcripts[0][0]
    try:
        return await append_all(store, transcripts)
    except Exception as exc:
        if implements(store, "delete"):
            await store.delete(key)
        raise StoreError(
            f"importing session {key['session_id']} from the CLI's transcript {source} into {store!r} "
            f"failed, so {undone}: {exc}"
        ) from exc


def implements(store: object, method: str) -> bool:
    """The SDK's own test of an optional store method: overridden on the class, not the Protocol's
    default (which raises `NotImplementedError`)."""
    if getattr(store, method, None) is None:
        return False
    return getattr(type(store), method, None) is not getattr(SessionStore, method, None)


def _entries(path: Path) -> list[SessionStoreEntry]:
    try:
        return cast(list[SessionStoreEntry], read_jsonl(path))
    except OSError as exc:
        raise StoreError(f"cannot import the CLI's transcript {path}: {exc}") from exc


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every entry of a CLI transcript file, read as leniently as the CLI reads it, and a little more.

    The CLI resumes a file with damaged lines: it skips what it cannot parse and goes on at the next
    line, and of a line holding two entries (a lost newline) it keeps the first. This reader never
    refuses what the CLI resumes, and it keeps *every* complete entry of a line, the second included:
    both are entries the CLI wrote, and the chain of parents runs through them (dropping one cuts the
    conversation there, and the CLI then replays only what follows). Each departure from one clean
    entry per line is logged as a warning naming the file and the line: entries joined on a line, text
    that is not JSON, a value that is not an object, bytes that are not UTF-8 (read as U+FFFD, as the
    CLI does). An empty line is skipped silently. Only a file that cannot be opened or read raises
    (`OSError`).
    """
    entries: list[dict[str, Any]] = []
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = raw.decode("utf-8", "replace")
            logger.warning("%s line %d is not valid UTF-8; read with replacement characters", path, number)
        entries.extend(_line_entries(line, f"{path} line {number}"))
    return entries


def _line_entries(line: str, where: str) -> list[dict[str, Any]]:
    """The JSON objects of one line, in order; what cannot be read is logged and skipped."""
    found: list[dict[str, Any]] = []
    values = 0
    position, end = 0, len(line)
    while True:
        while position < end and line[position] in _BLANK:
            position += 1
        if position >= end:
            break
        try:
            value, position = _DECODER.raw_decode(line, position)
        except json.JSONDecodeError as exc:
            logger.warning(
                "%s: %d characters from column %d are not JSON (%s); skipped, as the CLI skips them",
                where,
                end - position,
                position + 1,
                exc.msg,
            )
            break
        values += 1
        if isinstance(value, dict):
            found.append(value)
        else:
            logger.warning("%s holds a JSON %s, not an entry; skipped", where, type(value).__name__)
    if values > 1:
        logger.warning(
            "%s holds %d entries (a newline is missing); each is kept, where the CLI reads only the first",
            where,
            values,
        )
    return found


def _jsonl_files(directory: Path) -> Iterator[Path]:
    """Every `*.jsonl` below `directory`, sorted per directory (the SDK's order); nothing if it is absent."""
    try:
        children = sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError:
        return
    for child in children:
        if child.is_dir() and not child.is_symlink():
            yield from _jsonl_files(child)
        elif child.is_file() and child.name.endswith(".jsonl"):
            yield child


def _meta(transcript: Path) -> dict[str, Any] | None:
    """A subagent's `.meta.json` sidecar as a dict; missing, not JSON or not an object counts as absent (as
    in the SDK), any other read error raises `StoreError`."""
    sidecar = transcript.with_name(transcript.name.removesuffix(".jsonl") + ".meta.json")
    try:
        value: Any = json.loads(sidecar.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:  # UnicodeDecodeError included
        return None
    except OSError as exc:
        raise StoreError(f"cannot import the CLI's transcript sidecar {sidecar}: {exc}") from exc
    return value if isinstance(value, dict) else None
