"""`flower demo --live`: a small real task against the API, capped by a budget, then its report.

The same team as the offline demo (a coordinator, an analyst, a writer) on four of its service logs. The
CLI stops the run once `max_budget_usd` is spent (the run then ends with an error result, and the report
still explains what was done). It needs credentials; without them it fails at once, before any work.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import anyio

from .._errors import CredentialsError, SpecError
from .._result import StepResult
from .._run.credentials import has_credentials
from .._runtime import Runtime
from ..report import EconomyReport, build_report
from .runner import Progress, team
from .scenario import SERVICES, write_logs

__all__ = ["LIVE_PROMPT", "run_live"]

LIVE_PROMPT = (
    "Find the service in logs/ with the most ERROR lines and its most frequent cause (the `cause=` field). "
    "Record the answer and how you found it in the workbench's notes/. Reply with the answer in two lines."
)

Out = Callable[[str], None]


def _prepare(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    write_logs(root, lines=60)
    for extra in SERVICES[4:]:
        (root / "logs" / f"{extra}.log").unlink()


async def run_live(
    *, out: Out = print, budget: float = 0.5, model: str | None = None, keep: Path | None = None
) -> tuple[StepResult, EconomyReport]:
    """Run the live task (at most `budget` dollars) and print its progress and report."""
    if not has_credentials({}):
        raise CredentialsError(
            "flower demo --live runs a real task and needs credentials: set ANTHROPIC_API_KEY (or log in "
            "with the `claude` CLI). Without --live the demo runs offline, for free."
        )
    if not isinstance(budget, int | float) or budget <= 0 or budget > 5:
        raise SpecError(f"--budget must be a number of dollars in (0, 5], got {budget!r}")
    root = Path(tempfile.mkdtemp(prefix="flower-live-")) if keep is None else keep
    try:
        await anyio.to_thread.run_sync(_prepare, root)
        spec = team(model=model, options={"max_budget_usd": float(budget)})
        out(f"flower demo --live: a real task, at most ${budget:.2f} (workspace {root})")
        result = await Runtime(root).run(spec, LIVE_PROMPT, on_event=Progress(out))
        out(f"  result   {'ok' if result.ok else 'stopped'}: {result.text or result.error}")
        cli = result.cli_cost_usd
        out(f"  cost     ${result.cost_usd:.4f} estimated by flower's cost model (the CLI says ${cli:.4f})")
        report = await build_report(root)
        out("")
        out(report.render_text())
        return result, report
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
