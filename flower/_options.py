"""`build_options()`: compile an `AgentSpec` into `ClaudeAgentOptions`.

What it settles, each for a reason measured with CLI 2.1.327 to 2.1.332:
- a hands-on agent's instructions go through the `claude_code` preset's `append`: additive, never a
  replacement; a coordinator's system prompt is flower's own (`COORDINATOR_PROMPT`, then its rules and
  instructions) unless its spec keeps the preset (`claude_code_preset=True`);
- workers become `AgentDefinition`s; the session's tool list and auto-approve list cover every worker's
  tools, because the CLI's permissions are session-wide (a tool missing there stalls or denies headless
  workers); the coordinator's own limits are enforced by `delegate_guard`, never by removing tools;
- the `Agent` tool is offered only where something can be delegated to (workers, or the CLI's built-in
  agents): its schema is about 7.5k characters in every request (CLI 2.1.337, Sonnet 4.6, no fork);
- a coordinator starts every mandate with the same line (`mandate_guard`) and holds a worker's start
  while another worker of its prefix group writes their shared prefix (`start_guard`), so workers read
  the prefix the first one cached instead of each writing it; a worker's tools go out sorted by name
  (`worker_tools`), so worker types offered the same tools share that prefix too; a worker the
  coordinator did not send to the background runs in the foreground (`AgentSpec.foreground`);
- a session that delegates sets its main thread's prompt-cache lifetime (`CLAUDE_CODE_PROMPT_CACHE_TTL`;
  workers stay at 5 minutes): 1 hour by default here, since a coordinator waits while its workers run and
  nothing else keeps a 5-minute cache alive under a long worker; 5 minutes where a `Runtime` keeps it warm
  (`cache_ttl="5m"`, `flower._warm`). Unless the user set any prompt-cache variable
  (`PROMPT_CACHE_VARIABLES`) in the spec's env, the process env or a `settings` string: that choice wins;
- a session that delegates sets `CLAUDE_CODE_FORK_SUBAGENT=0` (`FORK_VARIABLE`) unless the user set it:
  the coordinator hands work to the workers it declares, with a mandate; the CLI's `fork` type (a copy
  of the coordinator with its whole context and the session's tools) is not one of them, and its text
  makes the Agent tool's description 3k characters longer in every coordinator request (CLI 2.1.337);
- `setting_sources=[]` unless the spec says otherwise: no settings file or CLAUDE.md leaks in;
- the user's own hooks and option fields are merged, never dropped.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, HookMatcher
from claude_agent_sdk.types import HookEvent, SessionStore, SystemPromptPreset

from ._agents import AgentSpec
from ._errors import SpecError
from ._glance import BashRules
from ._handoff.compact import CompactPolicy
from ._util.check import checked
from ._wall._deny_chain import chain_denials
from ._wall.delegate import DELEGATE_REASON, INLINE_SESSION_REASON, delegate_guard
from ._wall.mandate import shared_prefix_hooks
from ._wall.rules import COORDINATOR_PROMPT, inline_prompt
from ._wall.starts import prefix_groups

__all__ = [
    "FORK_VARIABLE",
    "PROMPT_CACHE_VARIABLES",
    "CacheTtl",
    "build_options",
    "cache_chosen",
    "cache_env",
    "fork_env",
    "merge_hooks",
    "session_tools",
    "worker_tools",
]

DEFAULT_PERMISSION_MODE = "dontAsk"
"""Headless and predictable: tools on the auto-approve list run, anything else is refused at once
(never a permission prompt nobody answers). Works as root, unlike `bypassPermissions`."""

_NO_BUILTIN_AGENTS = "CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS"
FORK_VARIABLE = "CLAUDE_CODE_FORK_SUBAGENT"
"""What a delegating session sets to "0" in the CLI's env unless the user set it (`fork_env`): no `fork`
agent type (a copy of the coordinator with its whole context), only the declared workers."""
CACHE_TTL_VARIABLE = "CLAUDE_CODE_PROMPT_CACHE_TTL"
"""What a delegating session sets in the CLI's env: the main thread's cache marks' lifetime (`"1h"`: the
CLI sends `"ttl": "1h"` on its three marks and the `extended-cache-ttl` beta; subagents keep 5 minutes)."""
CacheTtl = Literal["5m", "1h"]
"""The main thread's cache lifetime flower asks for when the user chose none."""
PROMPT_CACHE_VARIABLES = (
    "CLAUDE_CODE_PROMPT_CACHE_TTL",
    "CLAUDE_CODE_SUBAGENT_PROMPT_CACHE_TTL",
    "CLAUDE_CODE_MESSAGES_PROMPT_CACHE_TTL",
    "ENABLE_PROMPT_CACHING_1H",
    "FORCE_PROMPT_CACHING_5M",
    "DISABLE_PROMPT_CACHING",
)
"""The CLI's prompt-cache variables (CLI 2.1.332; a name here also covers its suffixed forms, such as
`DISABLE_PROMPT_CACHING_SONNET` or `ENABLE_PROMPT_CACHING_1H_BEDROCK`). Any of them set, to a non-empty
value, means the user chose the cache: flower then adds nothing."""

DELEGATING = frozenset({"Agent", "SendMessage"})
"""The tools that start or steer a worker: a coordinator's inline session (`inline_session=True`) is
sent without them (their schemas ride on every request; it does the work itself)."""


@checked
def merge_hooks(
    *groups: Mapping[HookEvent, Sequence[HookMatcher]] | None,
) -> dict[HookEvent, list[HookMatcher]]:
    """Concatenate hook matchers event by event, keeping every group's matchers in order."""
    merged: dict[HookEvent, list[HookMatcher]] = {}
    for group in groups:
        for event, matchers in (group or {}).items():
            merged.setdefault(event, []).extend(matchers)
    return merged


def worker_tools(spec: AgentSpec) -> list[str]:
    """A worker's tools in the order they are sent: sorted by name. The CLI sends a worker's tools in
    the order its `AgentDefinition` lists them, first in every request, and caches them with its billing
    block and the SDK's identity line under one mark: workers offered the same tools in one order share
    that cached prefix, whatever their type and however their specs list them."""
    return sorted(spec.tools)


def _definition(spec: AgentSpec) -> AgentDefinition:
    return AgentDefinition(
        description=spec.description,
        prompt=spec.prompt,
        tools=worker_tools(spec),
        model=spec.model,
        effort=spec.effort,
        maxTurns=spec.max_turns,
    )


def session_tools(spec: AgentSpec) -> list[str]:
    """The spec's own tools, then every worker's (in order, once each); `Agent` only when the session
    has something to delegate to (workers, or the CLI's built-in agents)."""
    tools = [t for t in spec.tools if t != "Agent" or spec.workers or spec.builtin_agents]
    for worker in spec.workers.values():
        tools += [t for t in worker.tools if t not in tools]
    return tools


def cache_chosen(env: Mapping[str, str], settings: object = None) -> str | None:
    """The prompt-cache variable (or `promptCacheTtl` setting) the user set, if any: in `env` (the
    CLI's env from the options), the process env, or a JSON `settings` string."""
    for source in (env, os.environ):
        for name, value in source.items():
            if value and any(name.startswith(known) for known in PROMPT_CACHE_VARIABLES):
                return name
    if isinstance(settings, str) and "promptCacheTtl" in settings:
        return "promptCacheTtl"
    return None


def cache_env(
    env: Mapping[str, str], *, delegates: bool, settings: object = None, ttl: CacheTtl = "1h"
) -> dict[str, str]:
    """What to add to a session's env for its prompt cache: the main thread's lifetime `ttl` when it
    delegates and the user chose nothing (`cache_chosen`), else nothing."""
    if not delegates or cache_chosen(env, settings) is not None:
        return {}
    return {CACHE_TTL_VARIABLE: ttl}


def fork_env(env: Mapping[str, str], *, delegates: bool) -> dict[str, str]:
    """What to add to a session's env so its Agent tool offers no `fork` of the main thread:
    `CLAUDE_CODE_FORK_SUBAGENT=0` when it delegates and neither `env` nor the process env names the
    variable, else nothing."""
    if not delegates or FORK_VARIABLE in env or FORK_VARIABLE in os.environ:
        return {}
    return {FORK_VARIABLE: "0"}


def _env(
    spec: AgentSpec,
    compact: CompactPolicy | None,
    extra: Mapping[str, str] | None,
    ttl: CacheTtl,
    tools: Sequence[str],
) -> dict[str, str]:
    env: dict[str, str] = dict(spec.options.get("env") or {})
    if not spec.builtin_agents:
        env.setdefault(_NO_BUILTIN_AGENTS, "1")
    if compact is not None:
        for key, value in compact.env().items():
            if key in env and env[key] != value:
                raise SpecError(
                    f"agent {spec.name!r}: its env sets {key}={env[key]!r} but "
                    f"CompactPolicy(mode={compact.mode!r}) needs {key}={value!r}; drop one of them"
                )
            env[key] = value
    env.update(extra or {})
    delegates = "Agent" in tools
    env.update(cache_env(env, delegates=delegates, settings=spec.options.get("settings"), ttl=ttl))
    env.update(fork_env(env, delegates=delegates))
    return env


@checked
def build_options(
    spec: AgentSpec,
    *,
    cwd: str | Path | None = None,
    artifacts: str | Path | None = None,
    session_store: SessionStore | None = None,
    resume: str | None = None,
    fork: bool = False,
    compact: CompactPolicy | None = None,
    hooks: Mapping[HookEvent, Sequence[HookMatcher]] | None = None,
    env: Mapping[str, str] | None = None,
    append: str = "",
    cache_ttl: CacheTtl = "1h",
    inline_session: bool = False,
) -> ClaudeAgentOptions:
    """Compile `spec` into SDK options.

    - `artifacts`: the workbench's `artifacts/` path, named in the delegation wall's refusal.
    - `compact`: the compaction policy when the spec has none (the Runtime passes `no_summary` while a
      handoff is active); the spec's own `compact` always wins.
    - `hooks`: flower's layers (spill, index) to install beside the wall and the spec's own hooks.
    - `env`: extra environment for the CLI; `append`: extra system-prompt text after the instructions.
    - `cache_ttl`: the main thread's cache lifetime when the session delegates and the user chose none:
      `"1h"`, or `"5m"` when something keeps it warm while the coordinator waits (`Runtime`'s pings).
    - `inline_session`: for a coordinator with `inline_until`, the options of its inline session (what a
      `Runtime` starts a new run with): the session's hands-on tools without `Agent` and `SendMessage`, no
      workers, flower's short inline prompt in place of the coordinator's prompt and
      rules, and the wall of `inline_until` (hands-on calls run while the context is under it, a command
      that reads credentials never). The Runtime hands the session off to the coordinator at that size.
    """
    if fork and not resume:
        raise SpecError("fork=True needs resume=<session id> (a fork starts from an existing session)")
    inline = spec.inline_until if inline_session else None
    if inline_session and inline is None:
        raise SpecError(f"build_options: inline_session=True needs a spec with inline_until ({spec.name!r})")
    tools = [t for t in session_tools(spec) if t not in DELEGATING] if inline else session_tools(spec)
    wall: dict[HookEvent, list[HookMatcher]] = {}
    cli_env = _env(spec, spec.compact or compact, env, cache_ttl, tools)
    if spec.delegate_only:
        rules = BashRules(
            disallowed=tuple(spec.options.get("disallowed_tools") or ()),
            settings=spec.options.get("settings"),
            setting_sources=spec.setting_sources,
            cwd=None if cwd is None else str(cwd),
            config_dir={**os.environ, **cli_env}.get("CLAUDE_CONFIG_DIR"),
        )
        guard = delegate_guard(
            artifacts=artifacts,
            glance=spec.glance,
            allowed=tools if inline else spec.tools,
            reason=INLINE_SESSION_REASON if inline else DELEGATE_REASON,
            rules=rules,
            own_steps=spec.own_steps,
            can_use_tool=spec.options.get("can_use_tool"),
            inline_until=spec.inline_until,
        )
        wall["PreToolUse"] = [HookMatcher(matcher=None, hooks=[guard])]
    # of several denials the model reads only the last to end: when the wall and one of the spec's own
    # hooks both deny a call, each gives both reasons
    wall, own = chain_denials(wall, spec.hooks)
    mandate: dict[HookEvent, list[HookMatcher]] = {}
    if spec.delegate_only and not inline:
        groups = prefix_groups({n: (worker_tools(w), w.model) for n, w in spec.workers.items()})
        mandate = shared_prefix_hooks(spec.mandate_line, foreground=spec.foreground, groups=groups)
    extra: dict[str, Any] = {k: v for k, v in spec.options.items() if k != "env"}
    extra.setdefault("permission_mode", DEFAULT_PERMISSION_MODE)
    # an inline session is told its own short prompt, not the coordinator's rules
    prompt = (spec.instructions if inline else spec.prompt) + (f"\n\n{append}" if append else "")
    head = inline_prompt(inline) if inline else COORDINATOR_PROMPT
    system: str | SystemPromptPreset = f"{head}\n\n{prompt}"
    if spec.claude_code_preset:
        system = {
            "type": "preset",
            "preset": "claude_code",
            "append": f"{head}\n\n{prompt}" if inline else prompt,
        }
    return ClaudeAgentOptions(
        system_prompt=system,
        tools=tools,
        allowed_tools=list(tools),
        agents=None if inline else {name: _definition(w) for name, w in spec.workers.items()} or None,
        hooks=merge_hooks(wall, mandate, hooks, own) or None,
        env=cli_env,
        setting_sources=None if spec.setting_sources is None else list(spec.setting_sources),
        model=None if spec.model == "inherit" else spec.model,
        effort=spec.effort,
        max_turns=spec.max_turns,
        cwd=cwd,
        session_store=session_store,
        resume=resume,
        fork_session=fork,
        **extra,
    )
