"""Keep the coordinator's prompt cache warm while it waits on its workers.

A `Runtime` gives its coordinator 5-minute cache marks and, while the coordinator waits on a worker, a
keep-warm request (a ping) about every 270 s that reads the coordinator's exact prefix for one output
token: a forked resume of its session from flower's own process, which leaves no entry in the session.
`Runtime(keep_warm=False)` gives 1-hour marks and no pings instead. See docs/cost.md.

- `KeepWarmPolicy`: the interval, the limit per wait, the ping's message.
- `KeepWarm`: the runner, fed the session's messages; `Runtime` runs one per session, an app on the
  plain SDK can run its own.
- `schedule`: the pure functions (when, how many, where to fork); `fork`: one ping; `records`: the pings
  on disk for `flower report`.
"""

from .keep_warm_policy import KeepWarmPolicy
from .runner import KeepWarm

__all__ = ["KeepWarm", "KeepWarmPolicy"]
