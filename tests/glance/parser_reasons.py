"""The reasons the glance parser gives, as the parser tables expect them."""

from __future__ import annotations

COMMAND = "`command` runs another command; only `command -v NAME` looks it up"
HOSTNAME = "`hostname` with an operand sets the name; -f, -d, -i, -a, -A look it up on the network"
ULIMIT = "`ulimit` with a value sets a limit; only its flags (`ulimit -a`) show them"
STARS = "zsh's `***` glob follows symbolic links through the whole tree"
OUTSIDE = "a recursive glob (`**`) that may start outside the working directory walks a whole tree"
GLANCE = "every part is a read-only command"
ENVIRON = "a process's environment (`/proc/…/environ`), which may hold credentials (API keys, tokens)"
OTHER = (
    "another process's /proc directory: its command line and environment may hold credentials (API keys, "
    "tokens)"
)
OPAQUE = "`git` has an argument known only at run time ($VAR, glob or brace expansion)"
CONFIG = "`git config` writes, but with one key alone, `--get`, `--get-regexp` or `--list`"
REMOTE = "`git remote` is read-only only as `-v`, `get-url NAME` or `show -n NAME`"
WHOLE_TREE = "would walk the whole tree from `/` (through /proc and /dev, for minutes)"
ENDLESS = "a /proc file that never ends, blocks or leads to another file (`/proc/kmsg`, `/proc/*/fd/…`)"
