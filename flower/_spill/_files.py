"""Content-addressed spill files and their manifest, written so that nothing lands outside the directory.

A spilled text is streamed to a temp file in chunks while it is hashed (a 50 MB output is never copied
whole: one chunk of at most `CHUNK_CHARS` characters is encoded at a time), then renamed to
`<sha256[:16]>-<label>.txt`. The label is the tool name reduced to `[a-z0-9-]`, so no name from a tool
output reaches the file system. Files are created 0600 with `O_EXCL | O_NOFOLLOW`; the rename replaces a
directory entry and never follows a symlink planted at the final name.

Every spill appends one JSON line to `INDEX.jsonl` beside the files: what produced it (tool, field,
tool_use_id, session and agent ids), its size and when. A file that already exists (the same content from
the same tool) is not written again, but the event is still recorded. The manifest and the CLI's saved
outputs are opened as regular files only (`_util.safe_open`): a FIFO planted there cannot stall the hook.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._util.safe_open import append_regular, open_regular

__all__ = [
    "CHUNK_CHARS",
    "MANIFEST",
    "Spilled",
    "append_manifest",
    "copy_file",
    "file_name",
    "label_of",
    "manifest_row",
    "quoted",
    "spilled_as",
    "write_text",
]

CHUNK_CHARS: Final = 1 << 20
"""Characters encoded and written per step (about 1 MB for ASCII)."""
MANIFEST: Final = "INDEX.jsonl"
logger = logging.getLogger("flower.spill")
_SAFE: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _SAFE
_LABEL_RE: Final = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Spilled:
    """One spilled text: where it is and what it holds."""

    path: Path
    sha256: str
    chars: int
    size: int
    """Bytes on disk (UTF-8)."""
    tail: str
    """The last characters asked for (empty when none were asked)."""
    created: bool
    """False when a file with the same content was already there."""


def quoted(path: str | os.PathLike[str]) -> str:
    """A path as a model-facing text shows it: in backticks, so spaces and punctuation stay part of it
    (in double quotes, JSON-escaped, should it hold a backtick)."""
    text = os.fspath(path)
    return json.dumps(text, ensure_ascii=False) if "`" in text else f"`{text}`"


def label_of(tool_name: str) -> str:
    """A short file-name-safe label for a tool name: `Bash` -> `bash`, `mcp__srv__x` -> `mcp-srv-x`."""
    label = _LABEL_RE.sub("-", tool_name.lower()).strip("-")[:24].strip("-")
    return label or "tool"


def file_name(digest: str, label: str) -> str:
    """The content-addressed name of a spilled text: `<sha256[:16]>-<label>.txt`."""
    return f"{digest[:16]}-{label}.txt"


def spilled_as(directory: Path, text: str, label: str, *, tail: int = 0) -> Spilled:
    """What `write_text` would return for `text`, computed without writing anything (`created` False):
    the file's path, its hash and sizes, the tail. A replay that sizes the pointer flower would have
    written uses it (`flower report --what-if`)."""
    data = text.encode("utf-8", errors="surrogatepass")
    digest = hashlib.sha256(data).hexdigest()
    path = directory / file_name(digest, label)
    return Spilled(path, digest, len(text), len(data), text[-tail:] if tail > 0 else "", False)


def write_text(directory: Path, text: str, label: str, *, tail: int = 0) -> Spilled:
    """Write `text` (UTF-8) to a content-addressed file in `directory` and return what was written."""
    digest = hashlib.sha256()
    temp, fd = _open_temp(directory)
    size = 0
    try:
        for start in range(0, len(text), CHUNK_CHARS):
            chunk = text[start : start + CHUNK_CHARS].encode("utf-8", errors="surrogatepass")
            digest.update(chunk)
            _write_all(fd, chunk)
            size += len(chunk)
    except BaseException:
        os.close(fd)
        _discard(temp)
        raise
    os.close(fd)
    path, created = _settle(directory, temp, digest.hexdigest(), label, size)
    return Spilled(path, digest.hexdigest(), len(text), size, text[-tail:] if tail > 0 else "", created)


def copy_file(
    directory: Path, source: str, label: str, *, expected_size: int | None, starts_with: str, tail: int = 0
) -> Spilled:
    """Copy a file the CLI already wrote (Bash's `persistedOutputPath`) into `directory`, by content.

    The source is used only if it is a regular file of `expected_size` bytes whose text starts with
    `starts_with` (the part of the output the hook input holds): proof that it is this output. Otherwise
    `ValueError`, and the caller spills what it holds instead.
    """
    fd_in = open_regular(source)
    try:
        info = os.fstat(fd_in)
        if expected_size is not None and info.st_size != expected_size:
            raise ValueError(f"{source!r} holds {info.st_size} bytes, the output said {expected_size}")
        probe = starts_with.encode("utf-8", errors="surrogatepass")
        if os.pread(fd_in, len(probe), 0) != probe:
            raise ValueError(f"{source!r} does not hold this output")
        digest = hashlib.sha256()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        chars = size = 0
        temp, fd_out = _open_temp(directory)
        try:
            while chunk := os.read(fd_in, CHUNK_CHARS):
                digest.update(chunk)
                chars += len(decoder.decode(chunk))
                _write_all(fd_out, chunk)
                size += len(chunk)
            chars += len(decoder.decode(b"", final=True))
        except BaseException:
            os.close(fd_out)
            _discard(temp)
            raise
        os.close(fd_out)
        end = ""
        if tail > 0:
            raw = os.pread(fd_in, 4 * tail + 4, max(0, size - 4 * tail - 4))
            end = raw.decode("utf-8", errors="ignore")[-tail:]
    finally:
        os.close(fd_in)
    path, created = _settle(directory, temp, digest.hexdigest(), label, size)
    return Spilled(path, digest.hexdigest(), chars, size, end, created)


def append_manifest(directory: Path, entry: Mapping[str, Any]) -> bool:
    """Append one JSON line to `directory/INDEX.jsonl` (0600, a regular file only); False if it failed.

    A manifest that cannot be written (a FIFO or a symlink in its place, a full disk) does not undo the
    spill: the file is written and the pointer to it is valid. The failure is logged on `flower.spill`.
    """
    line = json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **entry}, ensure_ascii=False) + "\n"
    try:
        append_regular(directory / MANIFEST, line.encode("utf-8", errors="backslashreplace"))
    except OSError as exc:
        logger.warning("spill: %s not recorded in %s: %s", entry.get("file"), directory / MANIFEST, exc)
        return False
    return True


def manifest_row(line: str) -> dict[str, Any] | None:
    """One line of `INDEX.jsonl` as a dict; None for a line that is not a JSON object."""
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


def _open_temp(directory: Path) -> tuple[Path, int]:
    temp = directory / f".spill-{secrets.token_hex(8)}.tmp"
    return temp, os.open(temp, _FLAGS, 0o600)


def _settle(directory: Path, temp: Path, digest: str, label: str, size: int) -> tuple[Path, bool]:
    """Give the temp file its content-addressed name; keep an identical file that is already there."""
    final = directory / file_name(digest, label)
    try:
        existing = os.lstat(final)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISREG(existing.st_mode) and existing.st_size == size:
        _discard(temp)
        return final, False
    try:
        os.replace(temp, final)
    except BaseException:
        _discard(temp)
        raise
    return final, True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _discard(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
