"""Assertions on the measured SDK/CLI facts that flower relies on.

When an SDK upgrade moves one, the failing test names the fact, so the upgrade is a reading job, not a hunt.
"""

from __future__ import annotations

from claude_agent_sdk import __version__ as sdk_version
from claude_agent_sdk._cli_version import __cli_version__ as cli_version

TOPICS = {
    "§0": "the API wire format",
    "§1": "subagents",
    "§2": "hooks",
    "§3": "transcripts",
    "§3.1": "API errors",
    "§3.2": "interrupts",
    "§4": "session stores",
    "§5": "compaction and usage",
    "§6": "CLI behaviour",
}
"""The topic a fact's section is about, named in the failure message (users run these tests too)."""


def topic(section: str) -> str:
    """`§5` -> `compaction and usage`; `Later findings (tools)` -> `tools`."""
    if section in TOPICS:
        return TOPICS[section]
    return section.removeprefix("Later findings (").removesuffix(")")


def fact(condition: object, section: str, statement: str) -> None:
    """Assert one measured fact; the message names its topic and the versions in use."""
    if not condition:
        raise AssertionError(
            f"FACT MOVED ({topic(section)}): {statement} "
            f"-- no longer true with claude-agent-sdk {sdk_version}, CLI {cli_version}"
        )
