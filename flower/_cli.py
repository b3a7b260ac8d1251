"""The `flower` command: `flower report` explains a run from its store (`--what-if`: replays flower on a
Claude Code history); `flower demo` runs the main job; `flower doctor` checks the installation; `flower
run` and `flower sessions` run a goal in a repository and list its sessions (`flower._terminal`).

A thin front: it parses arguments, calls one library function (`flower.report.build_report`,
`flower.report._what_if.build_what_if`, `flower._demo.run_demo`, `flower._demo.live.run_live`,
`flower._doctor.diagnose`) and prints the result. `main(argv)` returns the exit status: 0 when done, 1 when
the run, the report or a check failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

import anyio

from ._errors import FlowerError, SpecError
from ._progress import Heartbeat
from ._terminal.command import COMMANDS as _TERMINAL_COMMANDS
from ._terminal.command import add_commands as _add_terminal_commands
from ._util.cause import cause_text
from ._util.secrets import redact
from ._version import __version__

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flower", description="Context economy for long-horizon Claude Agent SDK runs."
    )
    parser.add_argument("--version", action="version", version=f"flower {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    report = commands.add_parser(
        "report",
        help="explain a run from its store, or replay flower on a Claude Code history (--what-if)",
        description="The economy report of a run: a workspace, its .flower/ directory, a .db file, or the "
        "CLI's own transcripts (its projects directory, a project directory, one .jsonl); of a whole fleet: "
        "a postgresql:// store, per session and in total. --what-if replays flower's layers on a history "
        "(read-only, local) and says what each would have saved.",
    )
    report.add_argument(
        "source",
        nargs="?",
        help="a workspace, its .flower/ directory, a sessions .db file, the CLI's projects directory, a "
        "project directory, a .jsonl transcript, or a postgresql:// DSN (default: the CLI's projects "
        "directory, $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)",
    )
    report.add_argument(
        "--what-if",
        action="store_true",
        help="replay flower's layers (spill, layer 4, handoff, glance) on the recorded requests and estimate "
        "delegation: what each would have changed, per session and in total",
    )
    report.add_argument("--json", action="store_true", help="print JSON instead of the text table")
    report.add_argument("--plots", metavar="DIR", type=Path, help="also write PNG plots into DIR")
    report.add_argument("--window", type=int, help="the context window in tokens (default: the model's)")
    report.add_argument(
        "--session",
        action="append",
        metavar="ID",
        help="only this session: its id or its first characters, as the report prints them (repeatable)",
    )
    report.add_argument(
        "--project",
        "--project-key",
        dest="project_key",
        metavar="NAME",
        help="only this project: its directory name or store key, a shell pattern (*app*), or its path",
    )
    report.add_argument(
        "--workbench", type=Path, help="where spill/ and scripts/ are, if not beside the store"
    )
    report.add_argument("--since", metavar="TIME", help="sessions active from this ISO date/time (UTC)")
    report.add_argument("--until", metavar="TIME", help="sessions active until this ISO date/time")
    report.add_argument(
        "--show-prompts",
        action="store_true",
        help="--what-if: title each session with its first prompt's first line (no content otherwise)",
    )
    report.add_argument(
        "--inline-until",
        metavar="TOKENS",
        type=int,
        help="--what-if: estimate delegation for a coordinator that works hands-on itself while its context "
        "is under TOKENS (coordinator(inline_until=TOKENS)) instead of the strict default",
    )
    report.add_argument("--schema", default="flower", help="a fleet: the store's PostgreSQL schema (flower)")
    report.add_argument(
        "--otlp",
        metavar="ENDPOINT",
        help="also send the sessions as OpenTelemetry spans, OTLP/HTTP: a base URL (http://host:4318, "
        "/v1/traces appended) or a traces URL ending in /v1/traces, used as given; one trace per run with "
        "its real times, every span with its session's id; a re-export sends the same ids",
    )
    report.add_argument(
        "--agent-name",
        metavar="NAME",
        help="--otlp: the main thread's agent name, as in 'invoke_agent NAME' (default main; a store does "
        "not keep a coordinator's name)",
    )

    demo = commands.add_parser(
        "demo",
        help="run the main job offline, with flower and without, then report",
        description="A scripted long-horizon run through the real CLI and flower's scripted model, "
        "then the same scenario as a plain SDK session, side by side. --live runs a small real task.",
    )
    demo.add_argument("--keep", metavar="DIR", type=Path, help="leave both workspaces in DIR (new or empty)")
    demo.add_argument("--plots", metavar="DIR", type=Path, help="write PNG plots into DIR")
    demo.add_argument(
        "--json", action="store_true", help="print the reports and the verdict as JSON (progress on stderr)"
    )
    demo.add_argument("--live", action="store_true", help="a real task against the API (needs a key)")
    demo.add_argument("--budget", type=float, default=0.5, help="--live: spend at most this many dollars")
    demo.add_argument("--model", help="--live: the model (default: the CLI's)")

    doctor = commands.add_parser(
        "doctor",
        help="check the installed SDK and CLI (versions, CLI path, credentials, an offline self-check)",
        description="Print the versions, the CLI path and where credentials would come from (never their "
        "values), then check offline, through the real CLI and flower's scripted model, the facts flower "
        "relies on: one PASS or FAIL per fact, exit status 1 if one fails.",
    )
    doctor.add_argument("--no-self-check", action="store_true", help="only print versions, path, credentials")
    doctor.add_argument(
        "--workspace",
        type=Path,
        help="list what this workspace's outbox still holds, by store (default: the current directory)",
    )
    doctor.add_argument(
        "--deliver-outbox",
        metavar="STORE",
        help="deliver to STORE (a postgresql:// DSN or a SQLite path) what the workspace's outbox holds "
        "for it, and the entries of runs that never reached their store (only this, no other check)",
    )
    doctor.add_argument(
        "--schema", default="flower", help="--deliver-outbox: the store's PostgreSQL schema (flower)"
    )
    _add_terminal_commands(commands)  # run, sessions (flower._terminal)
    return parser


def _report(args: argparse.Namespace) -> int:
    from .report import EconomyReport, ReportOptions, build_report
    from .stores._postgres._connection import is_dsn

    _plots_possible(args.plots)
    if args.what_if:
        return _what_if(args)
    if args.show_prompts:
        raise SpecError("--show-prompts titles the sessions of --what-if")
    if args.inline_until is not None:
        raise SpecError("--inline-until shapes the delegation estimate of --what-if: give --what-if too")
    if args.source is not None and is_dsn(args.source):
        if args.otlp is not None:
            raise SpecError(
                "--otlp exports a workspace, a .flower directory or a .db file, not a fleet's store"
            )
        return _fleet(args)
    if args.agent_name is not None and args.otlp is None:
        raise SpecError("--agent-name names the main thread in the spans of --otlp: give --otlp ENDPOINT too")

    from .report._plots import write_plots

    options = ReportOptions(window=args.window)
    what = "flower report: sessions read"
    report: EconomyReport = _built(args, build_report, options, what, workbench=args.workbench)
    _show(args, report, lambda directory: write_plots(report, directory))
    if args.otlp is not None:
        _export(args)
    return 0


def _built(
    args: argparse.Namespace, build: Callable[..., Any], options: object, what: str, **more: Any
) -> Any:
    """What `build` (`build_report`, `build_what_if`) makes of the command's source and filters, with a
    tally of the sessions read (`what`)."""
    from ._progress import Tally

    async def run() -> Any:
        return await build(
            args.source,
            options=options,
            project_key=args.project_key,
            sessions=args.session,
            since=args.since,
            until=args.until,
            progress=Tally(what),
            **more,
        )

    return anyio.run(run)


def _what_if(args: argparse.Namespace) -> int:
    from .report._what_if import DelegationAssumptions, WhatIfOptions, WhatIfReport, build_what_if

    for flag, given in (("--otlp", args.otlp), ("--window", args.window), ("--workbench", args.workbench)):
        if given is not None:
            raise SpecError(f"{flag} is not an option of --what-if")

    from .report._what_if.plots import write_plots

    if args.inline_until is not None and args.inline_until < 1:
        raise SpecError(f"--inline-until must be a positive number of tokens, got {args.inline_until}")
    delegation = DelegationAssumptions(inline_until=args.inline_until)
    options = WhatIfOptions(show_prompts=args.show_prompts, delegation=delegation)
    what = "flower report --what-if: sessions replayed"
    report: WhatIfReport = _built(args, build_what_if, options, what)
    status = _show(args, report, lambda directory: write_plots(report, directory))
    return 1 if not report.sessions and report.not_transcripts else status


def _export(args: argparse.Namespace) -> None:
    from .report._load import Loaded
    from .report._sources import load_source
    from .tracing import TracingPolicy, export_sessions
    from .tracing._tracing_policy import resolve_tracing

    resolve_tracing(True, "--otlp")  # the otel extra is installed, or a SpecError says how to get it

    async def load() -> Loaded:
        return await load_source(
            args.source, project_key=args.project_key, sessions=args.session, workbench=args.workbench
        )

    loaded = anyio.run(load)
    policy = TracingPolicy(agent_name=args.agent_name)
    done = export_sessions(loaded.sessions, endpoint=args.otlp, spills=loaded.spills, policy=policy)
    if not done.ok:
        raise SpecError(f"--otlp: {done.spans} spans for {done.endpoint}, not all sent: {done.failed}")
    print(
        f"otlp: {done.spans} spans of {done.sessions} sessions ({done.runs} runs, a trace each) sent to "
        f"{done.endpoint}",
        file=sys.stderr,
    )


def _plots_possible(directory: Path | None) -> None:
    """Plots asked for and matplotlib missing: the `ImportError` naming the extra, before any work."""
    if directory is not None:
        from .report._plots import require_matplotlib

        require_matplotlib()


def _fleet(args: argparse.Namespace) -> int:
    from .report import ReportOptions
    from .report._fleet_report import FleetReport, build_fleet_report

    async def build() -> FleetReport:
        return await build_fleet_report(
            args.source,
            schema=args.schema,
            options=ReportOptions(window=args.window),
            project_key=args.project_key,
            sessions=args.session,
            since=args.since,
            until=args.until,
        )

    fleet = anyio.run(build)
    return _show(args, fleet, fleet.write_plots)


class _Shown(Protocol):
    def to_json(self) -> str: ...

    def render_text(self) -> str: ...


def _show(args: argparse.Namespace, report: _Shown, plots: Callable[[Path], list[Path]]) -> int:
    """Print the report (JSON with `--json`), then write its plots with `--plots` and say where."""
    print(report.to_json() if args.json else report.render_text())
    if args.plots is not None:
        for path in plots(args.plots):
            print(f"plot: {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _demo(args: argparse.Namespace) -> int:
    _plots_possible(args.plots)
    what = (
        "a small real task against the API" if args.live else "the main job, offline, with flower and without"
    )
    with Heartbeat(f"flower demo: starting {what} (the real Claude Code CLI; 1-3 minutes)") as beat:
        # the progress goes to stderr with --json (the result alone to stdout), else to stdout, line by line
        out = _printer(beat, sys.stderr if args.json else sys.stdout)
        if args.live:
            from ._demo.live import run_live

            result, _ = anyio.run(
                lambda: run_live(out=out, budget=args.budget, model=args.model, keep=args.keep)
            )
            return 0 if result.ok else 1
        from ._demo import run_demo

        outcome = anyio.run(lambda: run_demo(out=out, keep=args.keep, plots=args.plots))
    if args.json:
        print(outcome.to_json())
    return 0 if outcome.ok else 1


def _printer(beat: Heartbeat, stream: TextIO) -> Callable[[str], None]:
    """Print a line now (even through a pipe); a heading names the step the heartbeat reports."""

    def out(line: str) -> None:
        print(line, file=stream, flush=True)
        if line[:1].isalpha():
            beat.step(line.split(":")[0])
        else:
            beat()

    return out


def _doctor(args: argparse.Namespace) -> int:
    from ._doctor import diagnose

    if args.deliver_outbox is not None:
        return _deliver_outbox(args)
    check = "" if args.no_self_check else ", then an offline self-check through the real CLI (10-60 s)"
    with Heartbeat(f"flower doctor: checking the installation{check}") as beat:
        diagnosis = anyio.run(
            lambda: diagnose(self_check_run=not args.no_self_check, progress=beat, workspace=args.workspace)
        )
    print(diagnosis.render_text())
    return 0 if diagnosis.ok else 1


def _deliver_outbox(args: argparse.Namespace) -> int:
    from ._doctor import deliver_outbox
    from .stores import PostgresSessionStore, SqliteSessionStore
    from .stores._postgres._connection import is_dsn

    location: str = args.deliver_outbox
    store = PostgresSessionStore(location, schema=args.schema) if is_dsn(location) else None
    workspace = args.workspace if args.workspace is not None else Path.cwd()

    async def deliver() -> list[str]:
        target = store if store is not None else SqliteSessionStore(location)
        try:
            done = await deliver_outbox(workspace, target)
        finally:
            await target.aclose()
        return [*done.render(), "" if done.ok else "exit status 1: entries for this store are left"]

    lines = anyio.run(deliver)
    print("\n".join(line for line in lines if line))
    return 0 if not lines[-1] else 1


_COMMANDS = {"report": _report, "demo": _demo, "doctor": _doctor, **_TERMINAL_COMMANDS}


_ATTACHED = ("--project", "--project-key")
"""Options whose value may start with `-`: the CLI names a project directory after its path (`-home-me-x`)."""


def _attached(argv: Sequence[str]) -> list[str]:
    """`--project -home-me-app` as `--project=-home-me-app` (argparse would take the value for an option)."""
    out: list[str] = []
    items = list(argv)
    index = 0
    while index < len(items):
        item = items[index]
        if item in _ATTACHED and index + 1 < len(items) and items[index + 1].startswith("-"):
            out.append(f"{item}={items[index + 1]}")
            index += 2
            continue
        out.append(item)
        index += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `flower` command with `argv` (default: the process's arguments); return the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(_attached(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse exits on --help, --version and usage errors
        return int(exc.code or 0)
    try:
        return _COMMANDS[args.command](args)
    except (FlowerError, ImportError, OSError) as exc:  # a DSN in the message never shows its password
        print(f"flower {args.command}: error: {redact(cause_text(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"flower {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
