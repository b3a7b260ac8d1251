"""`flower report --what-if`: what flower's layers would have changed in a Claude Code history.

Every Claude Code user has the answer on disk: the CLI keeps each session's transcript, with every
request's usage (`$CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl`, subagents beside it). This
package reads that history (or a flower store), one session at a time, and replays flower's layers on
the recorded requests, each priced by the same model (`flower._cost`) with the recorded cache marks:

- **spill** (`spill`): the outputs `spill_guard` would have spilled, replaced from the request after them
  by the pointer and preview the hook writes;
- **layer 4** (`layer4`): at each resume, what `PruningSessionStore.load` itself returns (it is called);
- **spill + layer 4**: both, with flower's handoffs where its own policy fires on the replayed context
  (`threshold`), the CLI's own compactions taken out;
- **handoff** and **glance** (`handoff`): each compaction against a handoff, and the main thread's Bash
  calls glance accepts;
- **delegation** (`delegation`, `estimate`): an *estimate* of the main thread's tool loops moved into
  workers, in two named scenarios (lean, heavy), each saving with its sign, with its assumptions.

The text (`render`) opens with at most 80 plain words, then the table, the sessions, the assumptions that
change a number (unknown prices, tokens per character by model), and how to run the next session with
flower; files that are not Claude Code transcripts are skipped and listed apart.

Example::

    from flower.report import build_what_if

    report = await build_what_if()          # the CLI's projects directory; or a path, or a store
    print(report.summary)                   # one paragraph to paste
    print(report.render_text())
    report.to_json()

Nothing is written and no content is printed unless asked (`WhatIfOptions(show_prompts=True)`). See
docs/what-if.md.
"""

from __future__ import annotations

from .build import build_what_if, build_what_if_sync
from .delegation import DelegationAssumptions, DelegationLine
from .handoff import GlanceLine, HandoffLine
from .lines import AsRecorded, Layer4Line, Layers, ReplayLine, SessionWhatIf, SpillLine, TokensByKind
from .session import WhatIfOptions, what_if_session
from .what_if_report import WhatIfReport, WhatIfTotal

__all__ = [
    "AsRecorded",
    "DelegationAssumptions",
    "DelegationLine",
    "GlanceLine",
    "HandoffLine",
    "Layer4Line",
    "Layers",
    "ReplayLine",
    "SessionWhatIf",
    "SpillLine",
    "TokensByKind",
    "WhatIfOptions",
    "WhatIfReport",
    "WhatIfTotal",
    "build_what_if",
    "build_what_if_sync",
    "what_if_session",
]
