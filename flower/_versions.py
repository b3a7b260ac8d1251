"""The SDK, CLI and shell-parser versions flower was tested with, and the once-per-process check against them.

flower does not cap `claude-agent-sdk` in its dependencies, so a new SDK release installs beside it.
Instead, the first run of a process compares the installed SDK and the CLI that actually runs (its
`init` message names its version), and the bash grammar glance parses with, with the tested ranges below,
and when one is outside them, warns once:
a `flower.versions` log record and a `VersionWarning` event. `flower doctor` checks the facts flower
relies on against whatever is installed.

Example::

    >>> from flower._versions import TESTED_SDK
    >>> TESTED_SDK.contains("0.2.189")
    True
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from claude_agent_sdk import __version__ as _sdk_version

from .events import VersionWarning

__all__ = [
    "TESTED_CLI",
    "TESTED_PARSER",
    "TESTED_SDK",
    "VersionRange",
    "installed_version",
    "version_warnings",
]

logger = logging.getLogger("flower.versions")


def _parse(version: str) -> tuple[int, ...] | None:
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


@dataclass(frozen=True, kw_only=True)
class VersionRange:
    """The versions of one component the whole suite passed with, oldest and newest (both included)."""

    component: str
    """What it is the range of (`claude-agent-sdk`, `Claude Code CLI`)."""
    oldest: str
    """The oldest version tested."""
    newest: str
    """The newest version tested."""

    def contains(self, version: str) -> bool:
        """`version` lies in the range (compared by its leading numbers; a version that is not a
        version number counts as outside)."""
        parsed, low, high = _parse(version), _parse(self.oldest), _parse(self.newest)
        return parsed is not None and low is not None and high is not None and low <= parsed <= high

    def __str__(self) -> str:
        return f"{self.oldest} to {self.newest}"


TESTED_SDK = VersionRange(component="claude-agent-sdk", oldest="0.2.184", newest="0.2.190")
"""Every `claude-agent-sdk` release in this range passed flower's full suite."""
TESTED_CLI = VersionRange(component="Claude Code CLI", oldest="2.1.327", newest="2.1.337")
"""The Claude Code CLI versions those SDK releases bundle."""
TESTED_PARSER = VersionRange(component="tree-sitter-bash", oldest="0.25.1", newest="0.25.1")
"""The bash grammar glance reads commands with: its rule table and its differential fuzzer (bash and zsh)
passed with these releases. A grammar that reads a command differently could change what glance lets
through, so a release outside the range is warned about rather than trusted silently."""


@functools.cache
def installed_version(package: str) -> str:
    """The installed version of the distribution `package`, or `not installed` (read once a process:
    every run's first message asks again)."""
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


_warned: set[str] = set()
_lock = threading.Lock()


def _outside(tested: VersionRange, version: str) -> VersionWarning | None:
    if tested.contains(version):
        return None
    return VersionWarning(
        component=tested.component,
        version=version,
        tested=str(tested),
        message=(
            f"{tested.component} {version} is outside the range flower was tested with ({tested}): "
            "flower relies on measured behaviour of the SDK and the CLI; run `flower doctor` to check it"
        ),
    )


def version_warnings(cli_version: object) -> list[VersionWarning]:
    """The warnings not given yet in this process: the installed SDK and bash grammar, and the CLI of an
    `init` message.

    Each is logged (`flower.versions`, WARNING) when returned; a version in the tested range gives none.
    """
    found = [
        _outside(TESTED_SDK, _sdk_version),
        _outside(TESTED_PARSER, installed_version("tree-sitter-bash")),
    ]
    if isinstance(cli_version, str) and cli_version:
        found.append(_outside(TESTED_CLI, cli_version))
    fresh = []
    with _lock:
        for warning in found:
            if warning is not None and warning.component not in _warned:
                _warned.add(warning.component)
                fresh.append(warning)
    for warning in fresh:
        logger.warning("%s", warning.message)
    return fresh
