"""Assertions on the measured SDK/CLI facts (../shared/reference/claude-sdk-facts.md) that flower relies on.

When an SDK upgrade moves one, the failing test names the fact, so the upgrade is a reading job, not a hunt.
"""

from __future__ import annotations

from claude_agent_sdk import __version__ as sdk_version
from claude_agent_sdk._cli_version import __cli_version__ as cli_version


def fact(condition: object, section: str, statement: str) -> None:
    """Assert one measured fact; the message names it and the versions in use."""
    if not condition:
        raise AssertionError(
            f"FACT MOVED (claude-sdk-facts.md {section}): {statement} "
            f"-- no longer true with claude-agent-sdk {sdk_version}, CLI {cli_version}"
        )
