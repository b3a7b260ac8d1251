"""What `INDEX.md` lists: the files of a workbench directory, their descriptions and sizes, shown safely.

The index goes into the coordinator's system prompt, and any agent can name a file. So whatever comes
from the disk is shown through `escaped()`: a name that is not valid UTF-8 (`\\xff.sh`) or holds a control
character (a newline could forge a line of the index) appears escaped, never raw, and the entry says so.
Descriptions are read from regular files only (`_util.safe_open`): a FIFO or a device is listed, never opened.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from .._util.safe_open import read_regular

__all__ = ["Entry", "escaped", "human_size", "read_description", "scan"]

_DESC_RE: Final = re.compile(
    r"^\s*(?:#|//|--|;|%|<!--)\s*desc\s*[:\uff1a]\s*(.*?)\s*(?:-->)?\s*$",  # \uff1a: a full-width colon
    re.IGNORECASE,
)
_DESC_MAX: Final = 100
_HEAD_BYTES: Final = 2048
_NAMED: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HIDDEN: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})  # controls, format (bidi), surrogates, separators


@dataclass(frozen=True)
class Entry:
    """A file found under a workbench directory."""

    relative: str
    """Its path from the directory, as the file system gave it (it may hold escaped bytes)."""
    path: str
    """Its full path."""


def escaped(text: str) -> str:
    """`text` with nothing that could forge or hide a line: bytes that are not UTF-8 as `\\xNN`, control,
    format and separator characters as `\\n`, `\\x1b`, `\\u202e`..., and a backslash as `\\\\`."""
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for char in text:
        code = ord(char)
        if char in _NAMED:
            out.append(_NAMED[char])
        elif 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's surrogateescape: one byte that is not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(char) in _HIDDEN:
            out.append(
                f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
            )
        else:
            out.append(char)
    return "".join(out)


def scan(directory: str | os.PathLike[str]) -> list[Entry]:
    """Every non-hidden file under `directory`, sorted by relative path; symlinked dirs are not followed."""
    found: list[Entry] = []
    pending = [(os.fspath(directory), "")]
    while pending:
        path, prefix = pending.pop()
        try:
            with os.scandir(path) as listing:
                for item in listing:
                    if item.name.startswith("."):
                        continue
                    relative = f"{prefix}{item.name}"
                    if item.is_dir(follow_symlinks=False):
                        pending.append((item.path, relative + "/"))
                    else:
                        found.append(Entry(relative, item.path))
        except OSError:
            continue
    found.sort(key=lambda entry: entry.relative)
    return found


def read_description(path: str) -> str:
    """The `# desc:` text of the first line (after a shebang), or a Markdown file's first heading.

    Empty for a file that is not regular, not readable or binary. The text is clipped and escaped.
    """
    try:
        head = read_regular(path, _HEAD_BYTES)
    except OSError:
        return ""
    if b"\x00" in head:
        return ""
    lines = head.decode("utf-8", errors="replace").splitlines()
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    if not lines:
        return ""
    first = lines[0]
    found = _DESC_RE.match(first)
    if found:
        return _clip(found.group(1))
    if path.endswith(".md") and first.startswith("# "):
        return _clip(first[2:])
    return ""


def _clip(text: str) -> str:
    text = escaped(" ".join(text.split()))
    return text if len(text) <= _DESC_MAX else text[: _DESC_MAX - 1] + "…"


def human_size(size: int) -> str:
    """`512 B`, `2.9K`, `1.2M`."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}K"
    return f"{size / (1024 * 1024):.1f}M"
