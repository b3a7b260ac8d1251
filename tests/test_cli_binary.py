"""Facts read in the bundled CLI itself: its tool names and its refusal of subagents' report files.

The CLI ships as one binary with its JavaScript inside. When an upgrade adds, renames or drops a tool,
or moves the report-file rule, these fail and say what to place where (`flower/_wall/_tools.py`).
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterator
from pathlib import Path

import claude_agent_sdk
import pytest

from flower._wall._tools import CLI_TOOLS, KNOWN_TOOLS, SUBAGENT_REFUSED_WRITE, UNOFFERED
from tests.facts import fact

CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
NAME_LIST = re.compile(rb'\[(?:"[A-Za-z_]+",){29,}"[A-Za-z_]+"\]')
ANCHOR = b'"ToolSearch",'
REPORT_RULE = rb"/^(REPORT|SUMMARY|FINDINGS|ANALYSIS).*\.md$/i"
REPORT_REFUSAL = b"Subagents should return findings as text, not write report files."


@pytest.fixture(scope="module")
def cli() -> Iterator[mmap.mmap]:
    if not CLI.is_file():
        pytest.skip(f"no bundled CLI in this claude-agent-sdk install ({CLI} is missing)")
    with CLI.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        yield data


def catalogue(data: mmap.mmap) -> set[str]:
    """The CLI's sorted list of every built-in tool name (the one permission rules are checked against)."""
    found = set()
    at = data.find(ANCHOR)
    while at >= 0:
        start, end = data.rfind(b"[", max(0, at - 4000), at), data.find(b"]", at, at + 4000)
        if start >= 0 and end >= 0 and NAME_LIST.fullmatch(data[start : end + 1]):
            names = [n.decode() for n in re.findall(rb'"([A-Za-z_]+)"', data[start : end + 1])]
            if {"Agent", "Bash", "Write"} <= set(names) and names == sorted(names, key=str.lower):
                found.add(tuple(names))
        at = data.find(ANCHOR, at + 1)
    assert len(found) == 1, f"expected one list of the CLI's tool names, found {len(found)}"
    return set(found.pop())


def test_every_tool_name_the_cli_knows_is_placed(cli: mmap.mmap) -> None:
    names = catalogue(cli)
    unplaced = names - KNOWN_TOOLS - CLI_TOOLS - UNOFFERED
    fact(
        not unplaced,
        "Later findings (tools)",
        f"the CLI knows tools flower has not placed: {sorted(unplaced)}. Put each in flower/_wall/_tools.py: "
        "KNOWN_TOOLS (an agent can be given it), CLI_TOOLS (the CLI adds it for its own protocol) or "
        "UNOFFERED (not offered to SDK sessions, even when listed)",
    )
    gone = (KNOWN_TOOLS | UNOFFERED | CLI_TOOLS) - names - {"StructuredOutput", "DeferredToolPlaceholder"}
    fact(not gone, "Later findings (tools)", f"tools flower knows are no longer in the CLI: {sorted(gone)}")


def test_the_cli_defines_its_protocol_tools_outside_that_list(cli: mmap.mmap) -> None:
    for name in ("StructuredOutput", "DeferredToolPlaceholder"):
        fact(
            cli.find(b'="' + name.encode() + b'"') >= 0,
            "Later findings (outside checks)",
            f"the CLI defines a tool named {name}",
        )


def test_the_cli_refuses_a_subagents_report_file(cli: mmap.mmap) -> None:
    at = cli.find(REPORT_RULE)
    fact(
        at >= 0 and cli.find(REPORT_REFUSAL, at, at + 600) >= 0,
        "Later findings (outside checks)",
        "the CLI's Write refuses a subagent's file named ^(REPORT|SUMMARY|FINDINGS|ANALYSIS).*\\.md$ (any "
        "case): 'Subagents should return findings as text, not write report files.'",
    )
    assert SUBAGENT_REFUSED_WRITE.pattern.encode() == REPORT_RULE[1:-2]  # flower's copy of the rule
    assert SUBAGENT_REFUSED_WRITE.flags & re.IGNORECASE
