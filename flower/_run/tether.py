"""The CLI's life tied to its runner's: `tether(options)` starts the CLI through flower's supervisor.

A runner killed with `kill -9` (or its whole process group) used to leave its CLI calling the model, with
no lease and nothing stored, and the running Bash call's command (the CLI starts each in a session of its
own) alive to its end. `tether` points `ClaudeAgentOptions.cli_path` at a launcher: a four-line Python
script (`#!<this interpreter> -IS`) that runs `supervise.py` with the CLI the SDK would have started (the
app's `cli_path`, else the bundled CLI, else `claude` on PATH). The supervisor starts the CLI with the
same arguments, environment and standard streams, and ends it with every process it started when the
runner dies (`flower._run.supervise`).

The launcher is written once per interpreter and CLI, by content, into a private directory
(`$XDG_CACHE_HOME/flower/_cli`, `~/.cache/flower/_cli`, macOS `~/Library/Caches/flower/_cli`; a temporary
one when that cannot be written). Fails open: where no launcher can be used (Windows, a frozen app, a
CLI run as another user (`options.user`), an interpreter path a `#!` line cannot hold, a directory that
cannot be written), the CLI starts as it did before and a warning says why, once per process and cause.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import platform
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import claude_agent_sdk
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

__all__ = ["connected", "is_tethered", "launcher", "tether"]

logger = logging.getLogger("flower.runtime")

SUPERVISOR: Final = Path(__file__).with_name("supervise.py")
_MARK: Final = "# flower: the Claude Code CLI under flower's supervisor"
_SHEBANG_MAX: Final = 127  # the shortest `#!` line a kernel still reads whole (Linux before 5.1)
_CACHE: Final = {"Darwin": "Library/Caches"}
_warned: set[str] = set()
_fallback: list[Path] = []


def tether(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
    """`options` whose CLI dies with this process, with everything it started; `options` itself when
    that cannot be arranged (a warning says why) or when they are tethered already."""
    if is_tethered(options.cli_path):
        return options
    cli = str(options.cli_path) if options.cli_path is not None else _find_cli()
    if cli is None:
        return options  # the SDK says it cannot find the CLI, as it always did
    if options.user is not None:
        return _untethered(options, "the CLI runs as another user (options.user)")
    path = launcher(cli)
    if isinstance(path, str):
        return _untethered(options, path)
    return dataclasses.replace(options, cli_path=path)


@asynccontextmanager
async def connected(options: ClaudeAgentOptions) -> AsyncIterator[ClaudeSDKClient]:
    """A client of the CLI `options` start (tethered by the caller, `tether`). Left by an exception (the run
    abandoned: a consumer that broke out of the stream, a cancellation), the CLI is asked to stop (SIGTERM,
    which the supervisor passes on) before the SDK closes it: the SDK's close waits 5 s for a CLI in the
    middle of a request to end by itself before it sends that signal. Left normally, the SDK closes it as
    it always does."""
    async with ClaudeSDKClient(options=options) as client:
        try:
            yield client
        except BaseException:
            _stop_now(client)
            raise


def _stop_now(client: ClaudeSDKClient) -> None:
    """SIGTERM to the client's CLI if it still runs; nothing (the SDK's own close follows) when the SDK
    keeps its process elsewhere than it did."""
    process = getattr(getattr(client, "_transport", None), "_process", None)
    pid = getattr(process, "pid", None)
    if not isinstance(pid, int) or getattr(process, "returncode", 0) is not None:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError as error:  # ended already
        logger.debug("the abandoned CLI (pid %d) could not be signalled: %s", pid, error)


def is_tethered(cli_path: str | os.PathLike[str] | None) -> bool:
    """Whether `cli_path` is a launcher `tether` wrote."""
    if cli_path is None:
        return False
    try:
        with open(cli_path, "rb") as head:
            return _MARK.encode() in head.read(512)
    except OSError:
        return False


def launcher(cli: str) -> Path | str:
    """The launcher of `cli` (written when missing), or why there can be none."""
    if platform.system() == "Windows":
        return "Windows has no supervisor"
    if getattr(sys, "frozen", False) or not sys.executable:
        return "this interpreter cannot run the supervisor (a frozen app)"
    if not SUPERVISOR.is_file():
        return f"the supervisor's file is missing ({SUPERVISOR})"
    shebang = f"#!{sys.executable} -IS"
    if len(shebang) > _SHEBANG_MAX or any(c.isspace() for c in sys.executable):
        return f"the interpreter's path cannot be a #! line ({sys.executable!r})"
    text = (  # the supervisor's directory goes last on the path: it never hides a standard module
        f"{shebang}\n{_MARK} (generated; safe to delete)\n"
        f"import sys; sys.path.append({str(SUPERVISOR.parent)!r})\n"
        f"import supervise; supervise.main({cli!r}, sys.argv[1:])\n"
    )
    name = f"claude-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    errors = []
    for directory in _directories():
        try:
            return _write(directory, name, text)
        except OSError as exc:
            errors.append(f"{directory}: {exc.strerror or type(exc).__name__}")
    return "no private directory for the launcher (" + "; ".join(errors) + ")"


def _untethered(options: ClaudeAgentOptions, why: str) -> ClaudeAgentOptions:
    if why not in _warned:
        _warned.add(why)
        logger.warning(
            "flower: the CLI starts without its supervisor (%s): if this process is killed, the CLI and "
            "the command it runs outlive it",
            why,
        )
    return options


def _find_cli() -> str | None:
    """The CLI the SDK starts when `cli_path` is not set: its bundled one, else `claude` on PATH or in
    the places the SDK looks."""
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if bundled.is_file():
        return str(bundled)
    found = shutil.which("claude")
    if found:
        return found
    home = Path.home()
    for place in (
        home / ".npm-global/bin/claude",
        Path("/usr/local/bin/claude"),
        home / ".local/bin/claude",
        home / "node_modules/.bin/claude",
        home / ".yarn/bin/claude",
        home / ".claude/local/claude",
    ):
        if place.is_file():
            return str(place)
    return None


def _directories() -> list[Path]:
    if not _fallback:
        _fallback.append(Path(tempfile.gettempdir()) / f"flower-cli-{os.getuid()}")
    cache = os.environ.get("XDG_CACHE_HOME") or ""
    try:
        base = Path(cache) if os.path.isabs(cache) else Path.home() / _CACHE.get(platform.system(), ".cache")
    except (RuntimeError, KeyError):  # no home directory
        return [_fallback[0]]
    return [base / "flower" / "cli", _fallback[0]]


def _private(directory: Path) -> None:
    """Create `directory` (0700) or check that it is this user's alone."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    status = directory.lstat()
    if status.st_uid != os.getuid() or status.st_mode & 0o022 or not directory.is_dir():
        raise PermissionError(1, "not a directory of this user's alone")


def _write(directory: Path, name: str, text: str) -> Path:
    """`directory/name` holding `text`, executable; written (atomically) unless it holds it already."""
    _private(directory)
    path = directory / name
    try:
        if path.read_text() == text and os.access(path, os.X_OK):
            return path
    except (OSError, ValueError):
        pass
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".claude-")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.chmod(temporary, 0o700)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
