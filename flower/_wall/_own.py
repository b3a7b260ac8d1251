"""An own step's Bash command as the wall runs it: secrets looked for first, then the scrubbing launcher.

An own step is a command the glance parser did not accept, so it runs outside the jail (it may write).
What it must still never do is hand the model a credential:

- the parser's verdict says when a command is refused for what it would read (`GlanceVerdict.secret`);
  but it stops at the first part it refuses (`touch x && cat ~/.netrc` is refused for `touch`), so every
  word of the command is also checked on its own here (`secret_word`): a word that names a credential
  store, and a command word that prints the environment, refuse the step (erring toward refusing:
  `echo ~/.netrc` is refused too);
- it runs through `own_run.py`, which gives it only the glance jail's allowed environment
  (`ENVIRONMENT`) and cuts its output at `OWN_STEP_MAX_OUTPUT` characters, the rest in a file.

What is left: a command the parser does not understand can still read a file the user may read, named
in a way no word shows (`python3 -c "open(chr(126)…)"`); a glance's jail would stop that, an own step
does not. That is the price of `own_steps > 0`.
"""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path

from .._glance import ENVIRONMENT
from .._glance._secrets import DUMPS, secret_refusal

__all__ = [
    "OWN_LAUNCHER",
    "OWN_STEP_MAX_INPUT",
    "OWN_STEP_MAX_OUTPUT",
    "own_command",
    "secret_word",
]

OWN_STEP_MAX_INPUT = 2_000
"""At most this many chars of input (the Bash command, the Write content, the Edit new_string, the
NotebookEdit new_source) in a step the coordinator takes itself: an input stays in its context for good,
so a larger one is written by a worker."""

OWN_STEP_MAX_OUTPUT = 2_000
"""At most this many characters of an own Bash step's output (standard output and error together) reach
the coordinator; the whole output goes to a file in the workbench's `artifacts/`, named in the note."""

OWN_LAUNCHER = Path(__file__).resolve().with_name("own_run.py")
"""The own-step launcher, run by path with `python -I -S` (standard library only)."""

_SPLIT = re.compile(r"[\s;|&()<>`]+|\$\(")
_SEGMENT = re.compile(r"[;|&\n(`]+|\$\(")
_HOME = re.compile(r"\$\{?HOME\}?(?=/|$)")
_PRINTS_ENV = frozenset({*DUMPS, "export", "declare", "typeset", "readonly"})


def secret_word(command: str, cwd: str | None) -> str:
    """Why a word of `command` reads credentials or prints the environment, or ''."""
    for segment in _SEGMENT.split(command):
        words = [w for w in _SPLIT.split(segment) if w and "=" not in w.split("/")[0]]
        if words and _unquoted(words[0]) in _PRINTS_ENV:
            return f"`{_unquoted(words[0])}` prints the environment, which may hold credentials"
    for word in _SPLIT.split(command):
        text = _HOME.sub("~", _unquoted(word))
        if text and (reason := secret_refusal(text, cwd)):
            return f"`{text}` names {reason}"
    return ""


def _unquoted(word: str) -> str:
    return word.replace('"', "").replace("'", "").replace("\\", "")


def own_command(
    command: str,
    *,
    spill: str | Path | None,
    python: str | None = None,
    cap: int | None = OWN_STEP_MAX_OUTPUT,
) -> str:
    """The command line the CLI's shell runs for an own Bash step: the launcher with `command` inside
    (base64, single-quoted: the CLI's shell never parses it), the environment allow-list and the output's
    cap (`cap` characters; None, an inline coordinator's step: the output passes whole, bounded by the
    CLI's own cap and flower's spill as any agent's)."""
    interpreter = python or sys.executable
    encoded = base64.urlsafe_b64encode(command.encode("utf-8")).decode("ascii")
    words = [interpreter, "-I", "-S", str(OWN_LAUNCHER), "--keep", ",".join(ENVIRONMENT),
             "--max", str(cap or 0)]  # fmt: skip
    if spill is not None:
        words += ["--spill", str(spill)]
    words += ["--b64", encoded]
    return " ".join(word if word.startswith("--") else _quote(word) for word in words)


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"
