"""Built-in tool names of the bundled Claude Code CLI, for validating specs.

The CLI silently ignores a tool name it does not know (`tools=["LS"]` offers nothing), so a typo would
leave a worker without the tool it needs and nobody told. Measured on CLI 2.1.327 (`tools=[...]` with
every candidate name, then reading the tools and deferred-tool list of the request): `TodoWrite`, `LS`,
`MultiEdit`, `NotebookRead`, `KillShell` and `BashOutput` are gone; planning is `TaskCreate`/`TaskUpdate`/
`TaskList`/`TaskGet`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._errors import SpecError

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
        if name not in KNOWN_TOOLS and not is_mcp_tool(name):
            hint = _REPLACED.get(name, "known tools: " + ", ".join(sorted(KNOWN_TOOLS)))
            raise SpecError(f"{owner}: unknown tool {name!r} ({hint})")
        if name not in checked:
            checked.append(name)
    return tuple(checked)
