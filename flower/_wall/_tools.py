"""Built-in tool names of the bundled Claude Code CLI, for validating specs and for the wall.

The CLI silently ignores a tool name it does not know (`tools=["LS"]` offers nothing), so a typo would
leave a worker without the tool it needs and nobody told. Measured on CLI 2.1.327 (`tools=[...]` with
every candidate name, then reading the tools and deferred-tool list of the request): `TodoWrite`, `LS`,
`MultiEdit`, `NotebookRead`, `KillShell` and `BashOutput` are gone; planning is `TaskCreate`/`TaskUpdate`/
`TaskList`/`TaskGet`.

Every name the CLI knows falls in one of three sets, and a test reads the bundled CLI's own list of
tool names to check that none is left out: `KNOWN_TOOLS` (an agent can be given them), `CLI_TOOLS` (the
CLI adds them itself for its protocol: the wall never refuses them) and `UNOFFERED` (not offered to an
SDK session, even when listed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .._errors import SpecError

KNOWN_TOOLS = frozenset(
    {
        "Agent",
        "Bash",
        "CronCreate",
        "CronDelete",
        "CronList",
        "Edit",
        "EnterWorktree",
        "ExitWorktree",
        "Glob",
        "Grep",
        "ListAgents",
        "Monitor",
        "NotebookEdit",
        "Read",
        "ReportFindings",
        "ScheduleWakeup",
        "SendMessage",
        "Skill",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskStop",
        "TaskUpdate",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "Workflow",
        "Write",
    }
)
CLI_TOOLS = frozenset(
    {
        "AskUserQuestion",
        "DeferredToolPlaceholder",
        "EnterPlanMode",
        "ExitPlanMode",
        "ListMcpResourcesTool",
        "ReadMcpResourceDirTool",
        "ReadMcpResourceTool",
        "StructuredOutput",
        "ToolSearch",
        "WaitForMcpServers",
    }
)
"""Tools the CLI adds to a main thread for its own protocol; they never do hands-on work, so a main
thread is always allowed them (the wall lets them through) and `tools=` accepts them. Measured with CLI
2.1.332: `StructuredOutput` with `output_format` (the structured result exists only if that call goes
through); `ToolSearch` when tools are deferred (the default tool set, or a `tools` list naming it, with
MCP servers), to load their schemas; `DeferredToolPlaceholder` beside deferred tools ("never call this
tool"); `ListMcpResourcesTool`, `ReadMcpResourceTool` and `ReadMcpResourceDirTool` with an MCP server
that has resources; `AskUserQuestion`, `EnterPlanMode` and `ExitPlanMode` when the app answers permission
requests (`can_use_tool`). Read in the CLI: `WaitForMcpServers` while MCP servers are still connecting."""

UNOFFERED = frozenset(
    {
        "Artifact",
        "ClaudeDesign",
        "EndConversation",
        "LSP",
        "OfferChromeSetup",
        "PowerShell",
        "Projects",
        "PushNotification",
        "ReadNotifications",
        "RemoteTrigger",
        "SendFeedback",
        "SendUserFile",
        "SendUserMessage",
        "SetGoal",
        "ShareOnboardingGuide",
        "ShowOnboardingRolePicker",
        "SubagentHandback",
        "TodoWrite",
        "propose_skills",
    }
)
"""Names the CLI knows but does not offer to an SDK session even when listed (measured, CLI 2.1.332):
interactive, cloud or platform features, and the subagents' own hand-back."""

SUBAGENT_REFUSED_WRITE = re.compile(r"^(REPORT|SUMMARY|FINDINGS|ANALYSIS).*\.md$", re.IGNORECASE)
"""File names (the last part of the path) the CLI refuses a subagent's Write of: "Subagents should return
findings as text, not write report files." (CLI 2.1.332, read in its Write tool and measured). A worker
must never be asked for such a file: notes go to `.txt` or another name (`notes/summary.txt`)."""

ALIASES = {"Task": "Agent"}
"""Older names the CLI still accepts (the SDK's init message lists `Task` for `Agent`)."""
_REPLACED = {
    "TodoWrite": "planning tools are TaskCreate, TaskUpdate, TaskList and TaskGet in this CLI",
    "MultiEdit": "use Edit",
    "LS": "use Bash (`ls`) or Glob",
    "NotebookRead": "use Read",
    "BashOutput": "background shells are read with Read on their output file",
    "KillShell": "use TaskStop",
}

HANDS_ON = frozenset({"Bash", "Write", "Edit", "NotebookEdit"})
"""Tools that change the world: the main thread of a delegate-only spec may not use them (Bash: glance)."""

PLANNING = ("TaskCreate", "TaskUpdate", "TaskList", "TaskGet")

WORKER_TOOLS = ("Bash", "Read", "Write", "Edit", "Glob", "Grep")
"""A worker's default tools."""

COORDINATOR_TOOLS = ("Agent", "Read")
"""A coordinator's own tools (plus a read-only Bash when `glance=True`). The planning tools (`PLANNING`,
about 2.2k tokens of schemas in every request) are opt-in: `coordinator(tools=["Agent", "Read",
"TaskCreate", "TaskUpdate", "TaskList", "TaskGet"])`."""


def is_mcp_tool(name: str) -> bool:
    return name.startswith("mcp__")


def check_tools(tools: Iterable[str], *, owner: str) -> tuple[str, ...]:
    """Validate tool names (built-in or `mcp__server__tool`), resolve aliases, keep order, drop repeats."""
    if isinstance(tools, str):
        raise SpecError(f"{owner}: tools must be a list of names, not the string {tools!r}")
    checked: list[str] = []
    for name in tools:
        if not isinstance(name, str) or not name:
            raise SpecError(f"{owner}: tool names must be non-empty strings, got {name!r}")
        name = ALIASES.get(name, name)
        if name not in KNOWN_TOOLS and name not in CLI_TOOLS and not is_mcp_tool(name):
            hint = _REPLACED.get(name, "known tools: " + ", ".join(sorted(KNOWN_TOOLS | CLI_TOOLS)))
            if name in UNOFFERED and name not in _REPLACED:
                hint = "the CLI does not offer it to SDK sessions"
            raise SpecError(f"{owner}: unknown tool {name!r} ({hint})")
        if name not in checked:
            checked.append(name)
    return tuple(checked)
