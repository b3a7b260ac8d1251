"""flower in a terminal: `flower run "GOAL"` runs a goal in the current repository, `flower sessions`
lists what ran there.

- `team`: the default workers (`BUILDER`, `ANALYST`, `DEFAULT_WORKERS`), the strict coordinator `lead()`,
  and `load_workers()` for a project's own (`--workers FILE`, TOML or Python).
- `run`: `run_goal()`, the run itself with its progress, economy line and clean stop on Ctrl-C.
- `lines`: `RunLines`, one line per event a person cares about; `event_json()` for `--json`.
- `sessions`: `list_sessions()`, `render_sessions()`, `resolve_session()` (an id prefix).
- `command`: the two subcommands' arguments, registered by `flower._cli`.

See docs/run.md.
"""

from .lines import Counts, RunLines, event_json, first_words
from .run import SCRIPTED_MODEL_ENV, RunRequest, resume_command, run_goal
from .sessions import SessionRow, list_sessions, render_sessions, resolve_session, store_path
from .team import ANALYST, BUILDER, DEFAULT_WORKERS, RUN_INSTRUCTIONS, lead, load_workers

__all__ = [
    "ANALYST",
    "BUILDER",
    "DEFAULT_WORKERS",
    "RUN_INSTRUCTIONS",
    "SCRIPTED_MODEL_ENV",
    "Counts",
    "RunLines",
    "RunRequest",
    "SessionRow",
    "event_json",
    "first_words",
    "lead",
    "list_sessions",
    "load_workers",
    "render_sessions",
    "resolve_session",
    "resume_command",
    "run_goal",
    "store_path",
]
