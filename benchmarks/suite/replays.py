"""The rows one recording prices to: the run as recorded, and, for a plain strategy, the same run with a
1-hour cache on its main thread.

A plain strategy's requests do not depend on the cache's lifetime: the scripted agents decide from what
they read, the CLI compacts by size. Set `CLAUDE_CODE_PROMPT_CACHE_TTL=1h` and the CLI (2.1.332) sends
the same requests with `"ttl": "1h"` on every mark of the main thread, its compaction requests and its
subagents (the CLI's default in W3) keeping 5 minutes; nothing else that prices changes (measured on
W2, W3 and W4: the requests of the two runs equal once the marks, the run's own ids and paths and the
"tokens left" counter are set aside; the CLI's default also words one sentence of a tool's description
for the lifetime). So every plain recording is priced twice, as run and with its main-thread marks at
one hour (`<strategy> (1h cache)`), instead of being recorded twice: a peer at its best is chosen among
its settings, its prompts and both lifetimes. `runs.one_hour` records the variant for real, to check
the replay against.
"""

from __future__ import annotations

from typing import Any

from .metrics import Metrics, compute
from .trace import from_recording


def priced(rec: Any, size: int = 0, clock: str = "calibrated") -> list[Metrics]:
    """`rec`'s row under `clock`, then (a plain strategy run with the CLI's own cache lifetime) its
    1-hour replay's."""
    rows = [compute(from_recording(rec, size=size, run_clock=clock))]
    if rec.strategy.engine == "plain" and getattr(rec.strategy, "cache", "auto") == "auto":
        rows.append(compute(from_recording(rec, size=size, run_clock=clock, one_hour=True)))
    return rows


__all__ = ["priced"]
