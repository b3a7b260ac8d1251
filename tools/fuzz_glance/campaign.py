"""A fuzz campaign: generate, keep what glance accepts, run it in every shell, judge what ran, report."""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from flower._glance import JailLimits, glance_run, glance_verdict, is_ephemeral, jail_command
from flower._glance._rules import RULES

from .generate import Generator
from .sandbox import SHELLS, ZSH_OPTIONS, Run, Sandbox

__all__ = ["Case", "Summary", "fuzz", "judge", "main", "report"]


@dataclass
class Case:
    """One generated command and, when glance accepted it, what running it showed in each shell."""

    command: str
    runs: dict[str, Run] = field(default_factory=dict)
    """By shell (`sandbox.SHELLS`): what ran, and the problems found."""

    @property
    def problems(self) -> list[str]:
        return [f"[{shell}] {problem}" for shell, run in self.runs.items() for problem in run.problems]


@dataclass
class Summary:
    """What one run of the fuzzer found; `accepted` holds the cases glance accepted, all run."""

    cases: int
    seed: int
    shells: tuple[str, ...]
    accepted: list[Case]
    seconds: float

    @property
    def violations(self) -> list[Case]:
        return [case for case in self.accepted if case.problems]


def _quote(arg: str) -> str:
    """`arg` as shell text that glance can read.

    Glance refuses control characters and non-UTF-8 text in a command, so such a value came from a
    run-time expansion (`$'\\r'`) and is written as one. A byte that is not UTF-8 (zsh's BRACE_CCL
    splits `{é}` into bytes) is written as U+FFFD: glance cannot read it in any form, and no option,
    device or program name is made of one. A backslash and a newline are quoted apart: glance refuses
    `x\\<newline>y` even inside quotes, but not `'x\\''<newline>y'`.
    """
    arg = re.sub(r"[\udc80-\udcff]", "\ufffd", arg)
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", arg):
        return "$'" + "".join(_ansi_c_char(char) for char in arg) + "'"
    return "".join(shlex.quote(piece) for piece in re.split(r"(?<=\\)(?=\n)", arg))


def _ansi_c_char(char: str) -> str:
    """`char` inside `$'…'`: control characters as `\\xHH`, the rest as it is."""
    if char in "\\'":
        return "\\" + char
    if char < " " or char == "\x7f":
        return f"\\x{ord(char):02x}"
    return char


_PIPE_PATH = re.compile(r"/dev/fd/[0-9]+|/proc/self/fd/[0-9]+")
"""What a process substitution `<(…)` becomes: bash passes `/dev/fd/63`, zsh `/proc/self/fd/11`."""


def judge(run: Run, command: str = "") -> None:
    """Add a problem for each program run that is off the whitelist or that glance refuses on its own.

    Standard input is about terminating, which the real pass observes, so the re-check feeds /dev/null.
    `[ … ]` is re-checked as `test …`: the shell's `[` may get no `]` (`[ x\\ ]`), and then it fails.
    When `command` holds a process substitution, the pipe it became is re-checked as a plain file name
    (glance refuses `/dev/fd/63` written out, and accepts `<(…)`, whose value can only be read).
    """
    substituted = "<(" in command
    for verb, given in run.records:
        args = [
            f"pipe{index}" if substituted and _PIPE_PATH.fullmatch(arg) else arg
            for index, arg in enumerate(given)
        ]
        shown = shlex.join([verb.removeprefix("?"), *given]).encode("utf-8", "backslashreplace").decode()
        words = args[: -1 if args[-1:] == ["]"] else None] if verb == "[" else args
        alone = " ".join(["test" if verb == "[" else verb, *map(_quote, words), "</dev/null"])
        if verb == "cd" and len(args) == 1:  # a builtin, a stub here: `cd DIR && …` is a glance
            alone = f"cd {_quote(args[0])} && true"
        if verb.startswith("?"):
            run.problems.append(f"tried to run `{shown}`: the shell found no such program")
        elif verb not in RULES and verb != "cd":
            run.problems.append(f"ran `{shown}`: not a whitelisted verb")
        elif not is_ephemeral(alone):
            run.problems.append(f"ran `{shown}`, refused alone: {glance_verdict(alone).reason}")


REAL_TIMEOUT = JailLimits().wall_seconds + 10
"""A real run still going this long after it started was not ended by the jail's own time limit."""


def fuzz(
    cases: int, seed: int, jobs: int = 2, shells: Sequence[str] = SHELLS, real_timeout: float = REAL_TIMEOUT
) -> Summary:
    """Generate `cases` commands from `seed`, run what glance accepts (as the wall runs it), judge it.

    A command is accepted when the wall accepts it in the working copy (`glance_run`, with the file
    system looked at). The stub pass runs what the parser accepted, `glance_verdict(command).command`
    (git hardened), to see which programs the shells start; the real pass runs exactly what the wall
    hands the CLI, `glance_run(command, cwd=...).command`: that command inside the jail.
    """
    start, generator = time.perf_counter(), Generator(random.Random(seed))
    batch = [Case(generator.command()) for _ in range(cases)]
    with tempfile.TemporaryDirectory(prefix="fuzz-glance-") as root, ThreadPoolExecutor(jobs) as pool:
        sandbox = Sandbox(Path(root), real_timeout=real_timeout)
        where = str(sandbox.template)
        accepted = [
            case
            for case in batch
            if is_ephemeral(case.command) and glance_run(case.command, cwd=where).allowed
        ]
        usable = tuple(shell for shell in shells if sandbox.available(shell))
        jobs_list = [(i, case, shell) for i, case in enumerate(accepted) for shell in usable]

        def one(job: tuple[int, Case, str]) -> None:
            index, case, shell = job
            if shell == "zsh+opts/real":  # the jailed zsh reads no startup file: the options go first
                verdict = glance_run(case.command, cwd=where).verdict.command
                command = jail_command(f"setopt {ZSH_OPTIONS}\n{verdict}", limits=JailLimits())
            elif shell.endswith("/real"):
                command = glance_run(case.command, cwd=where).command
            else:
                command = glance_verdict(case.command).command
            case.runs[shell] = sandbox.run(index, command, shell)

        list(pool.map(one, jobs_list))
    for case in accepted:
        for run in case.runs.values():
            judge(run, case.command)
    return Summary(cases, seed, usable, accepted, time.perf_counter() - start)


def report(summary: Summary) -> Iterator[str]:
    """A markdown table of the numbers per shell, then each violation with what ran, then syntax errors."""
    yield "| seed | shell | cases | accepted (run) | programs re-checked | hung | syntax error | violations |"
    yield "|---:|---|---:|---:|---:|---:|---:|---:|"
    for shell in summary.shells:
        runs = [case.runs[shell] for case in summary.accepted if shell in case.runs]
        hung = sum(any(p.startswith("still running") for p in run.problems) for run in runs)
        rechecked, syntax = sum(len(r.records) for r in runs), sum(r.syntax_error for r in runs)
        yield (
            f"| {summary.seed} | {shell} | {summary.cases} | {len(runs)} | {rechecked} | {hung} | {syntax}"
            f" | {sum(bool(r.problems) for r in runs)} |"
        )
    yield (
        f"\n{summary.cases:,} cases, {len(summary.accepted):,} accepted, {len(summary.violations)}"
        f" violations, {summary.seconds:,.0f} s ({summary.cases / summary.seconds:,.0f} cases/s)"
    )
    for case in summary.violations:
        yield f"\nVIOLATION {case.command!r}"
        for shell, run in case.runs.items():
            yield from (f"  [{shell}] ran: {shlex.join([verb, *args])!r}" for verb, args in run.records)
        yield from (f"  {problem}" for problem in case.problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.fuzz_glance", description="Differential fuzzer for glance."
    )
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="shells run in parallel")
    parser.add_argument("--shells", default=",".join(SHELLS), help=f"comma-separated, of {', '.join(SHELLS)}")
    parser.add_argument(
        "--timeout", type=float, default=REAL_TIMEOUT, help="seconds before a real run counts as hung"
    )
    options = parser.parse_args(argv)
    shells = [shell for shell in options.shells.split(",") if shell]
    unknown = sorted(set(shells) - set(SHELLS))
    if unknown:
        parser.error(f"unknown shell(s) {', '.join(unknown)}; choose among {', '.join(SHELLS)}")
    summary = fuzz(options.cases, options.seed, options.jobs, shells, options.timeout)
    print("\n".join(report(summary)))
    return 1 if summary.violations else 0


if __name__ == "__main__":
    sys.exit(main())
