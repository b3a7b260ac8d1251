"""The path a spill pointer names, read back from the text the model saw."""

from __future__ import annotations

import re
from pathlib import Path

POINTER = re.compile(r"\[spilled\] (\S+) (\S+): ([\d,]+) chars moved out of the conversation to `([^`]+)` \(")


def pointer_path(text: str) -> Path:
    found = POINTER.search(text)
    assert found, f"no spill pointer in {text[:300]!r}"
    return Path(found.group(4))
