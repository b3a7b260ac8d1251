"""The delegation wall (layer 1): the coordinator decomposes, delegates and decides; workers do the work.

- `delegate_guard`: a PreToolUse hook that refuses the main thread's hands-on calls at once with a reason
  that shows the way (delegate it), and lets a glance (`is_ephemeral`) through, approved for the model's
  command (the app's rules and `can_use_tool` asked about it); subagent calls always pass. Opt-in:
  `own_steps` per user turn with small inputs (`OWN_STEP_MAX_INPUT`), a Bash one scrubbed and cut
  (`OWN_STEP_MAX_OUTPUT`), never one that reads credentials.
- `mandate_guard`: every mandate starts with the same fixed line (`MANDATE_LINE`), so workers share the
  prompt cache's prefix.
- `start_guard`: a worker started while another of its type is writing their shared prefix waits for it
  (at most `START_HOLD` seconds), so it reads that prefix instead of writing it again.
- `report_cut` / `report_guard` / `report_hooks`: a worker's long report is kept on disk; the coordinator
  gets its head and the path (a background worker is asked for a short one), not the whole report.
- `COORDINATOR_RULES` / `WORKER_RULES`: the rules appended to each side's instructions
  (`coordinator_rules(own_steps)`: the coordinator's, for a wall with that many own steps);
  `COORDINATOR_PROMPT`: a coordinator's own system prompt, in place of the CLI's `claude_code` preset.
- `CLI_TOOLS`: the tools the CLI adds for its own protocol, which the wall never refuses.

When the wall and an app's own PreToolUse hook both refuse a call, the model reads both reasons.
"""

from ._tools import CLI_TOOLS
from .delegate import DELEGATE_REASON, OWN_STEP_MAX_INPUT, OWN_STEP_MAX_OUTPUT, delegate_guard
from .mandate import MANDATE_LINE, mandate_guard
from .report_cut import REPORT_LIMIT, REPORT_PREVIEW, REPORT_REASON, report_cut, report_guard, report_hooks
from .rules import COORDINATOR_PROMPT, COORDINATOR_RULES, WORKER_RULES, coordinator_rules
from .starts import START_HOLD, start_guard

__all__ = [
    "CLI_TOOLS",
    "COORDINATOR_PROMPT",
    "COORDINATOR_RULES",
    "DELEGATE_REASON",
    "MANDATE_LINE",
    "OWN_STEP_MAX_INPUT",
    "OWN_STEP_MAX_OUTPUT",
    "REPORT_LIMIT",
    "REPORT_PREVIEW",
    "REPORT_REASON",
    "START_HOLD",
    "WORKER_RULES",
    "coordinator_rules",
    "delegate_guard",
    "mandate_guard",
    "report_cut",
    "report_guard",
    "report_hooks",
    "start_guard",
]
