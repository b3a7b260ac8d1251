"""Tokens per character, measured per model on real Claude Code transcripts, by the what-if's own measure.

    python benchmarks/tokens_per_char.py [DIR]

One measure serves the product and the benchmarks: `flower.report._what_if.replay.family_rates` (through
`suite.pricing.measure`): over the requests that added at least 2,000 characters of tool output after a
reply that was at most 5 % thinking, the context tokens their `usage` grew by over the characters added.
The transcripts are read from `FLOWER_CORPUS` (or `FLOWER_REAL_TRANSCRIPTS`), else
`shared/real-transcripts` beside the repository; they are not part of it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite.pricing import measure  # noqa: E402


def corpus_dir() -> Path:
    """Where the real transcripts are (see the module's docstring)."""
    named = os.environ.get("FLOWER_CORPUS") or os.environ.get("FLOWER_REAL_TRANSCRIPTS")
    if named:
        return Path(named).expanduser()
    root = HERE.parent
    found = [b / "shared" / "real-transcripts" for b in (root.parent, root.parent.parent)]
    return next((p for p in found if p.is_dir()), found[0])


def tokens_per_char(directory: Path) -> dict[str, tuple[float, int, int]]:
    """Per model family: (median tokens per character, requests measured, sessions)."""
    return measure(directory)


if __name__ == "__main__":
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else corpus_dir()
    for model, (ratio, steps, sessions) in sorted(tokens_per_char(where).items()):
        print(f"{model}: {ratio:.3f} tokens/char ({steps} requests, {sessions} sessions)")
