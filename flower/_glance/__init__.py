"""Glance: may the coordinator run this shell command itself, and does its result go stale?

Starting a subagent costs about 4.3k tokens of context that never pays back; paying that for an `ls` is
a loss. So the coordinator may run a Bash command itself when it is *ephemeral*: read-only, quick,
terminating, and with a result that can go stale. The same predicate decides which command results
expire from the history on resume: one table, one answer.

Two lines of defence:

1. **The parser.** A command passes only if it is read-only under bash and under zsh (the Bash tool
   runs the user's shell, zsh on macOS). Models write compounds (`git status -s && git log -3`), so the
   command is parsed with tree-sitter-bash, a real shell grammar, and every simple command in it must
   pass the verb table; anything not understood is refused, with a reason the model can act on. The
   verdict never raises: whatever the input, it is an answer, reached in bounded time.
2. **The jail** (`flower._glance.jail`). What the parser accepts runs, through the wall's PreToolUse hook,
   inside a confinement the kernel enforces: no write, no network, no signal outside, no identity
   change, no credential (the environment is `ENVIRONMENT`, the reads an allow-list without home
   directories or credential stores), and bounded time, memory, processes and output. Where there is
   none, only the core commands pass (`glance_run`), and a `GlanceWarning` says so once per process.

Example::

    >>> is_ephemeral('git status -s && echo "--- LOG ---" && git log --oneline -3')
    True
    >>> glance_verdict("git status && rm -rf x").reason
    '`rm` is not a read-only command'
    >>> glance_run("git status", cwd=".").jailed
    True
"""

from __future__ import annotations

from ._deny import BashRules
from ._verdict import GlanceVerdict, glance_verdict, is_ephemeral
from ._wall import GlanceRun, glance_run, take_warnings
from .jail import ENVIRONMENT, JailLimits, JailSupport, jail_command, jail_support

__all__ = [
    "ENVIRONMENT",
    "BashRules",
    "GlanceRun",
    "GlanceVerdict",
    "JailLimits",
    "JailSupport",
    "glance_run",
    "glance_verdict",
    "is_ephemeral",
    "jail_command",
    "jail_support",
    "take_warnings",
]
