"""What the CLI is given to talk to a `ScriptedModel`: its environment, and a marker on each agent's prompt.

Every run gets its own config and scratch directories, a fake key and no telemetry, so a test never reads
or writes the machine's own CLI state; the marker lets the server tell which subagent sent a request
(`callers`), since the agent's name never reaches the wire. The SDK's own 60 s bound on a session store's
load during a resume becomes the harness's hang guard, as every wait of a test does.
"""

from __future__ import annotations

import dataclasses
import os

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions

from ._callers import agent_marker
from ._guard import hang_guard

__all__ = ["FAKE_API_KEY", "cli_env", "pointed"]

FAKE_API_KEY = "sk-ant-scripted-model-not-a-real-key"

# ClaudeAgentOptions.load_timeout_ms's default (claude-agent-sdk 0.2.18x): a store load during a resume
_SDK_LOAD_TIMEOUT_MS = 60_000


def cli_env(base_url: str, root: str) -> dict[str, str]:
    """The CLI's environment: `base_url`, the fake key, `root`'s `config/` and `tmp/`, no telemetry.

    `IS_SANDBOX=1` is added when running as root, where the CLI refuses `bypassPermissions` without it.
    """
    env = {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": FAKE_API_KEY,
        "ANTHROPIC_AUTH_TOKEN": "",
        "CLAUDE_CONFIG_DIR": os.path.join(root, "config"),
        "CLAUDE_CODE_TMPDIR": os.path.join(root, "tmp"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_USE_BEDROCK": "",
        "CLAUDE_CODE_USE_VERTEX": "",
        "CLAUDE_CODE_USE_FOUNDRY": "",
    }
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    return env


def pointed(options: ClaudeAgentOptions, env: dict[str, str], *, mark_agents: bool) -> ClaudeAgentOptions:
    """A copy of `options` with `env` under its own entries (which win), each agent's prompt marked, and the
    SDK's default store-load timeout (when the options keep it) raised to the hang guard."""
    agents = options.agents
    if options.agents is not None and mark_agents:
        agents = {name: _marked(name, definition) for name, definition in options.agents.items()}
    changes: dict[str, object] = {"env": {**env, **options.env}, "agents": agents}
    if getattr(options, "load_timeout_ms", None) == _SDK_LOAD_TIMEOUT_MS:
        changes["load_timeout_ms"] = int(hang_guard() * 1000)
    return dataclasses.replace(options, **changes)  # type: ignore[arg-type]


def _marked(name: str, definition: AgentDefinition) -> AgentDefinition:
    marker = agent_marker(name)
    if marker in definition.prompt:
        return definition
    return dataclasses.replace(definition, prompt=f"{definition.prompt}\n\n{marker}")
