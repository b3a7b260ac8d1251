"""Differential fuzzer for glance: do bash and zsh run only what glance said they would?

Run from the repository root: `python -m tools.fuzz_glance --cases 5000 --seed 1` (`--help` for the
rest). Run it with a large budget and several seeds after any change to glance, and before widening the
tree-sitter-bash pin in pyproject.toml.

It generates random commands that mix whitelisted verbs with mutating and shell-state verbs, in tricky
shell syntax (`generate`). Each command that glance accepts runs, as the delegation wall would run it
(git hardened), in bash and zsh, with stub programs and with real ones (`sandbox`). A case is a
violation when a shell ran a verb that is not whitelisted, ran a whitelisted verb with arguments that
glance refuses on their own (`sort -o f`, `find -delete`: a stub cannot see those write), changed any
file (the git index included), reached the network (a socket call seen by strace, with real programs),
or did not end: 5 s with stubs, 2 s with real programs.
"""

from .campaign import Case, Summary, fuzz, judge, main, report
from .generate import Generator
from .sandbox import SHELLS, Run, Sandbox

__all__ = ["SHELLS", "Case", "Generator", "Run", "Sandbox", "Summary", "fuzz", "judge", "main", "report"]
