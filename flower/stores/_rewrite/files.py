"""Writing trimmed bodies to the spill directory: the only I/O of the rewrites, kept apart from them.

Every file lands directly in the spill directory, checked by resolved-path containment (never by
comparing strings), under a content-addressed name that `trim_results` produced. Directories are created
0700 and files 0600; a file is written to a temporary name and renamed, so a reader never sees half of
one and a crash never leaves a truncated body under a final name. An existing regular file with the same
name already holds the same body and is left alone; a symlink or anything else under that name is
refused.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterable
from pathlib import Path

from ..._errors import SpecError, StoreError
from ..._util.private_dirs import make_private_dirs
from ._transcript import Spill

__all__ = ["write_spills"]

_NAME = re.compile(r"[0-9a-f]{16,64}\.txt")


def write_spills(spill_dir: str | os.PathLike[str], spills: Iterable[Spill]) -> list[Path]:
    """Write each spill's text to `spill_dir/<name>` and return the paths (in the order given).

    Raises `SpecError` for a relative directory or a name that is not content-addressed, and `StoreError`
    when the directory or a file cannot be written safely (not a directory, a symlink in the way, an
    OS error).
    """
    base = Path(spill_dir)
    if not base.is_absolute():
        raise SpecError(f"the spill directory must be an absolute path, got {str(spill_dir)!r}")
    spills = list(spills)
    for spill in spills:
        if not isinstance(spill, Spill) or not _NAME.fullmatch(spill.name):
            raise SpecError(f"not a content-addressed spill: {spill!r:.80}")
    try:
        make_private_dirs(base)  # 0700, the topmost created one git-ignored
        root = base.resolve(strict=True)
    except OSError as exc:
        raise StoreError(f"cannot create the spill directory {base}: {exc}", path=str(base)) from exc
    if not root.is_dir():
        raise StoreError(f"the spill directory {base} is not a directory", path=str(base))
    written: list[Path] = []
    for spill in spills:
        target = root / spill.name
        if target.parent != root:  # cannot happen with a checked name; kept as the containment rule
            raise StoreError(f"refusing to write outside the spill directory: {target}", path=str(target))
        try:
            _write_one(root, target, spill.text)
        except OSError as exc:
            raise StoreError(f"cannot write the spill file {target}: {exc}", path=str(target)) from exc
        written.append(base / spill.name)
    return written


def _write_one(root: Path, target: Path, text: str) -> None:
    if os.path.lexists(target):
        if target.is_symlink() or not target.is_file():
            raise StoreError(f"refusing to replace {target}: not a regular file", path=str(target))
        return  # same name, same content
    temporary = root / f".{target.name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as handle:
            fd = -1
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if temporary.resolve().parent != root:
            raise StoreError(
                f"refusing to write outside the spill directory: {temporary}", path=str(temporary)
            )
        os.replace(temporary, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        temporary.unlink(missing_ok=True)
        raise
