"""`flower doctor`: what is installed, and whether the CLI still behaves the way flower relies on.

`diagnose()` gathers the versions (flower, Python, the SDK, the CLI) against the tested ranges, the path
of the CLI the SDK will start, where credentials would come from (names only, never values), whether
this machine gives glances a jail (a trial command run through the launcher) and which environment a
glance gets, what the workspace's outbox still holds, by store (`OutboxState`: entries waiting for a store
no run here uses any more are listed there), and runs
the offline self-check: four short scripted runs through the real CLI, one pass or fail per fact. It needs
no network and no API key, and takes a few seconds on an idle machine (up to a minute on a busy one).

Example::

    diagnosis = await diagnose()
    print(diagnosis.render_text())
    if not diagnosis.ok:
        ...
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import claude_agent_sdk

from .._glance import ENVIRONMENT, jail_support
from .._run.credentials import credential_sources
from .._run.outbox_delivery import OutboxDelivery, OutboxState, deliver_outbox, outbox_state
from .._version import __version__
from .._versions import TESTED_CLI, TESTED_PARSER, TESTED_SDK, VersionRange, installed_version
from ._selfcheck import Check, Progress, self_check

__all__ = ["Check", "Diagnosis", "OutboxDelivery", "OutboxState", "deliver_outbox", "diagnose"]


@dataclass(frozen=True, kw_only=True)
class Diagnosis:
    """What `flower doctor` found. `ok` is False when the CLI is missing or a fact does not hold."""

    flower: str
    """flower's version."""
    python: str
    """The Python version."""
    sdk: str
    """The installed `claude-agent-sdk` version."""
    parser: str
    """The installed `tree-sitter-bash` version (the grammar glance reads commands with)."""
    cli: str | None
    """The CLI's version (`claude --version`), or None when it cannot be run."""
    cli_path: str | None
    """The CLI the SDK starts by default: the one bundled with it, else `claude` on the PATH."""
    credentials: tuple[str, ...]
    """Where credentials were found: variable names or the login file, never the values."""
    jail: str = ""
    """The glance jail this machine gives (`JailSupport.describe()`): its mechanism, how the command is
    isolated and bounded here, or why there is none (then the coordinator runs only glance's core
    commands itself)."""
    glance_environment: tuple[str, ...] = ()
    """The only environment variables a jailed glance gets (`flower._glance.jail.ENVIRONMENT`), besides
    git's read-only settings: no credential of the CLI or the app reaches the command."""
    checks: tuple[Check, ...]
    """The self-check, one `Check` per fact (empty when it was skipped)."""
    outbox: OutboxState | None = None
    """What the workspace's outbox holds (None: the workspace has none)."""
    duration_s: float
    """How long the diagnosis took, in seconds."""

    @property
    def ok(self) -> bool:
        """The CLI was found and every fact checked holds."""
        return self.cli is not None and all(check.ok for check in self.checks)

    def render_text(self) -> str:
        """The report as the `flower doctor` command prints it."""
        lines = [
            "flower doctor",
            f"  flower            {self.flower} (Python {self.python})",
            f"  claude-agent-sdk  {self.sdk}  {_verdict(TESTED_SDK, self.sdk)}",
            f"  Claude Code CLI   {self.cli or 'not found'}  {_verdict(TESTED_CLI, self.cli)}",
            f"  tree-sitter-bash  {self.parser}  {_verdict(TESTED_PARSER, self.parser)}",
            f"  CLI path          {self.cli_path or 'none: install the SDK with its bundled CLI'}",
            f"  glance jail       {self.jail or 'not probed'}",
            "  glance env        "
            + (
                " ".join(self.glance_environment) + " (and git's read-only settings; nothing else)"
                if self.glance_environment
                else "not probed"
            ),
            "  credentials       "
            + (
                "; ".join(self.credentials)
                if self.credentials
                else "none found (offline runs work; a live run needs ANTHROPIC_API_KEY or a CLI login)"
            ),
        ]
        if self.outbox is not None:
            lines.extend(self.outbox.render())
        if self.checks:
            lines.append("self-check (offline, through flower's scripted model and the real CLI):")
            for check in self.checks:
                lines.append(f"  {'PASS' if check.ok else 'FAIL'}  {check.name}")
                if check.detail:
                    lines.append(f"        {check.detail}")
            held = sum(check.ok for check in self.checks)
            lines.append(f"{held} of {len(self.checks)} facts hold ({self.duration_s:.1f} s)")
        return "\n".join(lines)


def _verdict(tested: VersionRange, version: str | None) -> str:
    if version is None:
        return ""
    if tested.contains(version):
        return f"(tested: {tested})"
    return f"(OUTSIDE the tested {tested}: the self-check below says whether flower's facts hold)"


def cli_path() -> str | None:
    """The CLI the SDK starts when `ClaudeAgentOptions.cli_path` is not set: its bundled one, else PATH's."""
    name = "claude.exe" if platform.system() == "Windows" else "claude"
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / name
    return str(bundled) if bundled.is_file() else shutil.which("claude")


def _cli_version(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else None


async def diagnose(
    *,
    self_check_run: bool = True,
    progress: Progress | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> Diagnosis:
    """Gather versions, the CLI path and credentials, what the outbox of `workspace` (default: the
    current directory) holds, then (unless `self_check_run=False`) run the offline self-check. Never
    raises for what it finds: failures are in the `Diagnosis`.

    `progress` (a `flower._progress.Heartbeat`, say) is told each step and given each event of the runs."""
    started = time.monotonic()
    path = cli_path()
    version = await anyio.to_thread.run_sync(_cli_version, path)
    jail = await anyio.to_thread.run_sync(jail_support)
    outbox = await anyio.to_thread.run_sync(outbox_state, workspace if workspace is not None else os.getcwd())
    checks = await self_check(progress) if self_check_run and version is not None else []
    return Diagnosis(
        flower=__version__,
        python=platform.python_version(),
        sdk=claude_agent_sdk.__version__,
        parser=installed_version("tree-sitter-bash"),
        cli=version,
        cli_path=path,
        credentials=tuple(credential_sources(dict(os.environ))),
        jail=jail.describe(),
        glance_environment=ENVIRONMENT,
        checks=tuple(checks),
        outbox=outbox,
        duration_s=time.monotonic() - started,
    )
