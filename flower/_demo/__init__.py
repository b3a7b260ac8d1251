"""`flower demo`: the main job, offline, with flower and without, then the report and a side-by-side table.

A coordinator and two workers audit twelve service logs in two steps, through the real Claude Code CLI
driven by flower's scripted model (no API key, no network): 22 delegations, large outputs, two denials, an
HTTP 500, a resume through layer 4 (expiry) and one handoff. The same scenario then runs as a plain SDK
session. See docs/demo.md.

Example::

    from flower._demo import run_demo_sync

    result = run_demo_sync()          # prints its progress, the report and the table
    result.flower.spills.count        # the flower run's EconomyReport
    result.verdict.lines              # what flower bought, what it cost, where the crossover lies
"""

from __future__ import annotations

import json
import shutil
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
from claude_agent_sdk._cli_version import __cli_version__

from .._errors import FlowerError, SpecError
from ..report import EconomyReport, ReportOptions, build_report
from .baseline import run_plain
from .compare import Side, compare
from .runner import run_flower
from .verdict import Verdict, verdict

__all__ = ["DemoError", "DemoResult", "Verdict", "run_demo", "run_demo_sync"]

Out = Callable[[str], None]


@dataclass(frozen=True)
class DemoResult:
    """What the demo measured: both runs' reports and the side-by-side table."""

    flower: EconomyReport
    plain: EconomyReport
    table: str
    """The side-by-side table, as printed."""
    ok: bool
    """Both runs finished their two steps without an error."""
    seconds: float
    workspace: Path | None
    """The kept directory (`flower/` and `plain/` workspaces), or None when it was removed."""
    plots: tuple[Path, ...] = ()
    verdict: Verdict | None = None
    """What flower bought, what it cost, where the crossover lies (printed last)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data, as `flower demo --json` prints it: both reports, the verdict, the wall time."""
        return {
            "ok": self.ok,
            "seconds": round(self.seconds, 1),
            "verdict": asdict(self.verdict) if self.verdict is not None else None,
            "flower": self.flower.to_dict(),
            "plain": self.plain.to_dict(),
            "workspace": str(self.workspace) if self.workspace is not None else None,
            "plots": [str(path) for path in self.plots],
        }

    def to_json(self) -> str:
        """`to_dict()` as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


class DemoError(FlowerError):
    """A run of the demo did not finish (its CLI stopped, interrupted or failing): no report, table or
    verdict is printed for it, since its figures would compare part of a run with the whole of another."""


def _finished(side: str, steps: list[tuple[bool, str | None]]) -> None:
    """Raise `DemoError` naming the first of `side`'s two steps that did not finish."""
    for number, (ok, error) in enumerate([*steps, (False, "it did not run")][:2], 1):
        if not ok:
            raise DemoError(
                f"the {side} run's step {number} did not finish ({error or 'no cause was given'}), so there "
                "is no report, table or verdict: the figures of a run cut short would compare part of it "
                "with a whole run. A CLI "
                "that gets SIGINT (Ctrl-C, or a signal sent to its process group) ends its run this way"
            )


def _root(keep: Path | None) -> Path:
    if keep is None:
        return Path(tempfile.mkdtemp(prefix="flower-demo-"))
    if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
        raise SpecError(f"--keep {keep}: give a new or empty directory")
    keep.mkdir(parents=True, exist_ok=True)
    return keep


async def run_demo(*, out: Out = print, keep: Path | None = None, plots: Path | None = None) -> DemoResult:
    """Run the scenario with flower, then without, and print the report and the comparison.

    `keep`: a new or empty directory to leave both workspaces in (default: a temp directory, removed).
    `plots`: a directory for the PNGs of both runs (needs the `plots` extra). Raises `DemoError` when a
    step of either run did not finish.
    """
    started = time.monotonic()
    root = _root(keep)
    try:
        out("flower demo: a coordinator and two workers audit 12 service logs, offline")
        out(f"(the real Claude Code CLI {__cli_version__} and flower's scripted model: no key, no network)")
        out("")
        flower_run = await run_flower(root, out)
        _finished("flower", [(s.ok, s.error) for s in flower_run.steps])
        out("")
        plain_run = await run_plain(root, out, threshold=flower_run.threshold, prefix=flower_run.prefix)
        # a plain step that ends without a result (its CLI stopped) has no text
        _finished(
            "plain SDK", [(bool(t) and not t.startswith("error:"), t or "no result") for t in plain_run.texts]
        )
        options = ReportOptions(window=flower_run.window)
        flower_report = await build_report(flower_run.workspace, options=options)
        plain_report = await build_report(plain_run.workspace, options=options)
        drawn: tuple[Path, ...] = ()
        if plots is not None:
            from ..report._plots import write_plots

            runs = {"flower": flower_report, "plain SDK": plain_report}
            drawn = tuple(await anyio.to_thread.run_sync(write_plots, runs, plots))
        flower_side = Side(flower_report, flower_run.resident, flower_run.seconds)
        compactions = plain_run.compactions
        plain_side = Side(
            plain_report, plain_run.resident, plain_run.seconds, layer4=False, compactions=compactions
        )
        table = compare(flower_side, plain_side, wall=flower_run.threshold)
        out("")
        out("== the flower run, as `flower report` explains it " + "=" * 36)
        out(flower_report.render_text())
        out("")
        out("== side by side: the same scenario with flower and as a plain SDK session " + "=" * 12)
        out(table)
        for path in drawn:
            out(f"plot: {path}")
        said = verdict(flower_side, plain_side)
        out("")
        out("== verdict " + "=" * 76)
        for line in said.lines:
            out(textwrap.fill(line, width=100))
        seconds = time.monotonic() - started
        again = f"flower report {root / 'flower'} --window {flower_run.window}"
        kept = f"; workspaces kept in {root} (try: {again})" if keep else ""
        out(f"\ndemo finished in {seconds:.1f} s{kept}")
        return DemoResult(
            flower=flower_report,
            plain=plain_report,
            table=table,
            ok=True,  # both runs finished both steps (else DemoError above)
            seconds=seconds,
            workspace=root if keep else None,
            plots=drawn,
            verdict=said,
        )
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


def run_demo_sync(*, out: Out = print, keep: Path | None = None, plots: Path | None = None) -> DemoResult:
    """Blocking form of `run_demo()`."""
    return anyio.run(lambda: run_demo(out=out, keep=keep, plots=plots))
