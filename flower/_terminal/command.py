"""The `flower run` and `flower sessions` subcommands: their arguments, and the call each makes.

`add_commands(commands)` registers both on the `flower` command's subparsers; `COMMANDS` maps each name
to its handler (`argparse.Namespace` in, exit status out), which `flower._cli.main` calls. Heavy imports
wait for the handler, so `flower --help` stays quick.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import anyio

__all__ = ["COMMANDS", "add_commands"]

_RUN_DESCRIPTION = """\
Run GOAL in the current directory's repository: a strict coordinator delegates it to its workers, with
flower's layers on (workbench, spill, layer 4, handoff). It prints one line per event that matters (a
worker started, a glance, a spill, a report back, a handoff, the cost so far), then the coordinator's
answer, an economy line and the session id."""

_RUN_EPILOG = """\
The coordinator only delegates: every hands-on call of its own (a command that changes something, a
Write, an Edit) is refused and goes to a worker; it may glance (git status, ls, cat...) itself. The
workers by default: builder (changes code, runs commands) and analyst (reads, analyses). The store, the
workbench and the spilled outputs live in .flower/ of the current directory.

Credentials are the Claude Code CLI's: ANTHROPIC_API_KEY, or a `claude` login.
Ctrl-C stops the run cleanly and prints the command that resumes it.

examples:
  flower run "Find why test_parser.py fails and fix it"
  flower run --resume 3f2a "Now add a test for the empty input"
  flower run --workers .flower/workers.toml "Update the changelog for the release"
  flower run --inline-until 60000 "Rename the helper and update its two callers"
  flower sessions
"""


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `run` and `sessions` on the `flower` command's subparsers."""
    run = commands.add_parser(
        "run",
        help="run a goal with a coordinator and its workers in this repository (Ctrl-C stops, "
        "--resume goes on)",
        description=_RUN_DESCRIPTION,
        epilog=_RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("goal", metavar="GOAL", help="what to do (with --resume: the next instruction)")
    run.add_argument(
        "--resume",
        metavar="ID",
        help="continue this session (an id, or an unambiguous prefix of one; flower sessions lists them)",
    )
    run.add_argument(
        "--workers",
        metavar="FILE",
        type=Path,
        help="the project's own workers, instead of builder and analyst: a .toml file of [workers.NAME] "
        "tables (description, instructions, tools...) or a .py file defining WORKERS (see docs/run.md)",
    )
    run.add_argument(
        "--model", help="the model of the coordinator, which its workers inherit (default: the CLI's)"
    )
    run.add_argument(
        "--inline-until",
        metavar="TOKENS",
        type=_tokens,
        help="start as one agent that does the hands-on work itself, and hand off to the coordinator once "
        "its context reaches TOKENS (for goals that may be small; default: delegate from the start)",
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print every event as one JSON object per line, then a Done object",
    )
    commands.add_parser(
        "sessions",
        help="list this repository's flower sessions, with their cost and last activity",
        description="The sessions of the current directory's store (.flower/sessions.db), oldest activity "
        "first, each with its estimated cost, its last activity, its turns and its first prompt.",
    )


def _run(args: argparse.Namespace) -> int:
    from claude_agent_sdk import ClaudeSDKError

    from .run import RunRequest, run_goal

    request = RunRequest(
        goal=args.goal,
        workspace=Path.cwd(),
        resume=args.resume,
        workers=args.workers,
        model=args.model,
        json=args.json,
        inline_until=args.inline_until,
    )
    try:
        return anyio.run(lambda: run_goal(request))
    except ClaudeSDKError as exc:  # the CLI not found or not starting: said as flower's own errors are
        print(f"flower run: error: {exc}", file=sys.stderr)
        return 1


def _tokens(text: str) -> int:
    """`--inline-until`'s value: a positive whole number of tokens (`60000`, `60_000`)."""
    try:
        tokens = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of tokens, like 60000, not {text!r}") from None
    if tokens < 1:
        raise argparse.ArgumentTypeError(f"a positive number of tokens, not {tokens}")
    return tokens


def _sessions(args: argparse.Namespace) -> int:
    from .sessions import list_sessions, render_sessions

    workspace = Path.cwd()
    rows = anyio.run(lambda: list_sessions(workspace))
    print(render_sessions(rows, workspace))
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"run": _run, "sessions": _sessions}
"""Each subcommand's handler: the parsed arguments in, the exit status out."""
