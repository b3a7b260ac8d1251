"""`instrument()`: add flower's layers to the `ClaudeAgentOptions` an app already has.

For an app built on the plain SDK (`query()` or `ClaudeSDKClient`, its own options, hooks, MCP servers and
agents) that keeps its code and does not adopt `Runtime`. One call returns a copy of its options with:

- layer 1, only for a main thread the app marks as a coordinator (`coordinator=True`): the delegation wall,
  and a 1-hour prompt cache for that main thread unless the app chose its cache;
- layer 2: the workbench, its block in the system prompt, the index refreshed after writes into it and
  given again before a prompt when it changed (a long-lived client cannot change its system prompt);
- layer 3: spill, on the main thread and in subagents, and the cap on subagents' reports;
- layer 4: a `PruningSessionStore` over the app's own `session_store`, or over SQLite at
  `<workspace>/.flower/sessions.db`, mirrored line by line as the CLI writes (`session_store_flush=
  "eager"`: a killed app loses at most the tool call in flight);
- the compaction policy, when one is given;
- the CLI's life tied to the app's: `cli_path` becomes a launcher that starts the app's CLI (or the SDK's
  own) under flower's supervisor, which ends it and every process it started if the app's process dies
  (`flower._run.tether`).

Nothing of the app's options is dropped: its hooks run beside flower's, and every other field is kept as
it is. Two exceptions to "beside": the CLI does not chain PostToolUse output rewrites (the last to end
wins), so an app callback that rewrites a tool output the spill acts on runs first and its version is
spilled (`spill._chain`); and of several PreToolUse denials the model reads only the last to end, so when
the wall and an app hook both deny a call, each gives both reasons (`wall._deny_chain`). Where flower's needs
and the app's choices cannot both hold, `SpecError` names both sides.

Example::

    options = ClaudeAgentOptions(cwd="repo", hooks={...}, mcp_servers={...}, agents={...})
    options = instrument(options, workspace="repo", coordinator=True)
    async for message in query(prompt="Go.", options=options):
        ...
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Literal

from claude_agent_sdk import ClaudeAgentOptions, HookMatcher
from claude_agent_sdk.types import HookEvent, SessionStore

from ._errors import SpecError
from ._glance import BashRules
from ._handoff.compact import CompactPolicy
from ._options import cache_env, fork_env, merge_hooks
from ._run.layer_setup import (
    FLOWER_DIR,
    check_inner_store,
    check_keep_denials,
    check_report_limit,
    check_spill,
    check_store,
    check_workbench,
    layer_hooks,
    layer_store,
)
from ._run.session_holds import attach_workbench
from ._run.tether import tether
from ._spill._chain import chain_spill
from ._spill.spill_policy import SpillPolicy
from ._util.check import checked
from ._wall._deny_chain import chain_denials
from ._wall._inline import check_inline_until
from ._wall._tools import ALIASES, COORDINATOR_TOOLS, check_tools
from ._wall.delegate import delegate_guard
from ._wall.mandate import MANDATE_LINE, check_mandate_line, shared_prefix_hooks
from ._workbench._index_context import index_context_hooks
from ._workbench.bench import Workbench
from .stores import EphemeralPolicy, PruningSessionStore, TrimPolicy
from .stores._adopt import adopt_hooks
from .stores._local import CONFIG_ENV
from .tracing._hook import tap_store
from .tracing._tracing_policy import TracingPolicy, cli_env, resolve_tracing

__all__ = ["instrument"]

BlockPlacement = Literal["system", "prompt"]

_OWNER: Final = "instrument"
_COMPACT_KEYS: Final = ("DISABLE_COMPACT", "DISABLE_AUTO_COMPACT")
_OFF_VALUES: Final = frozenset({"", "0", "false", "no", "off"})


@checked
def instrument(
    options: ClaudeAgentOptions,
    *,
    workspace: str | os.PathLike[str],
    coordinator: bool = False,
    glance: bool | None = None,
    own_steps: int | None = None,
    inline_until: int | None = None,
    own_tools: Iterable[str] | None = None,
    mandate_line: str | None = MANDATE_LINE,
    workbench: bool | Workbench = True,
    workbench_block: BlockPlacement = "system",
    spill_threshold: int | SpillPolicy | None = 4000,
    report_limit: int | None = 4000,
    trim: bool | TrimPolicy = False,
    ephemeral: bool | EphemeralPolicy = True,
    keep_denials: int = 1,
    compact: CompactPolicy | None = None,
    store: SessionStore | str | os.PathLike[str] | None = None,
    tracing: bool | TracingPolicy | None = None,
) -> ClaudeAgentOptions:
    """A copy of `options` with flower's layers added; `options` itself is not changed.

    - `workspace`: where flower keeps its files (`<workspace>/.flower`); it must exist. It is also the
      CLI's `cwd` when `options.cwd` is None; an app `cwd` is kept, and a workbench outside it is added
      to `add_dirs` so the agent can read its spills.
    - `coordinator`: the main thread delegates; the wall refuses its hands-on calls (Bash, Write, Edit,
      NotebookEdit) and any tool not its own. Its own tools are `own_tools`, by default the app's `tools`
      list, or flower's coordinator tools when the app gave none. `glance` (default True with a
      coordinator) lets a read-only Bash command through, approved by the wall for the command the
      model wrote: the app's `Bash(...)` deny and ask rules are matched against it and the app's
      `can_use_tool` is asked about it (never about the jail's launcher), so a glance runs under every
      permission mode and the app's refusals hold. `own_steps` (default 0, the strict wall: every
      hands-on call refused at once) opts in to that many hands-on calls per user turn it may make
      itself (`delegate_guard`; the app's prompt should say so: `coordinator_rules(own_steps)`);
      `inline_until` (tokens) lets it work hands-on itself while its context is under that size
      (`coordinator_rules(inline_until=...)` says so).
      Subagents are never limited. With a
      coordinator, `mandate_line` is put in front of every mandate (`mandate_guard`: the workers then
      share their cached prefix) and a worker's start waits, at most 5 seconds, while another worker of
      its type writes that prefix (`start_guard`); None sends mandates as the model wrote them and
      holds no start. A coordinator's main
      thread also asks the CLI for a 1-hour prompt cache (`CLAUDE_CODE_PROMPT_CACHE_TTL=1h`; subagents
      stay at 5 minutes), unless the app's env, the process env or its `settings` already choose the
      cache (a prompt-cache variable, `promptCacheTtl`): there is no run loop here to
      keep a 5-minute cache warm while it waits on a worker, as a `Runtime` does; an app that sets 5
      minutes runs `flower.KeepWarm` around its own message loop for that. It also gets
      `CLAUDE_CODE_FORK_SUBAGENT=0` unless the app's env or the process env names it: the Agent tool
      then offers the app's agents only, no `fork` of the main thread.
    - `workbench`, `spill_threshold`, `report_limit`, `trim`, `ephemeral`, `keep_denials`: as in
      `Runtime` (`report_limit` applies to the app's own subagents too).
    - `workbench_block`: `"system"` appends the workbench block to the system prompt (after the app's
      prompt, a blank line between); `"prompt"` gives it with the first prompt of each session instead
      (for a system prompt the CLI reads from a file). Either way a changed index is given again before a
      prompt.
    - `store`: the store layer 4 wraps, when the options have none: a `SessionStore`, a SQLite path or
      a `postgresql://` DSN (a fleet's shared store: wrap each run in `lease_session(options)`).
    - `compact`: None keeps the app's compaction as it is (there is no handoff here: `Runtime` has the
      loop that hands off); a `CompactPolicy` sets the CLI's switch, and an app env that says otherwise
      raises.
    - `tracing`: OpenTelemetry spans and metrics (`flower.tracing`): `True`, a `TracingPolicy`, `False`,
      or None to follow the standard `OTEL_*` variables. Each run of a session (a prompt to its final
      reply, background workers included) becomes one span tree once the SDK has stored it, under the
      span current around the app's query.

    Raises `SpecError` for invalid arguments and for conflicts with the app's options: a
    `session_store` with `enable_file_checkpointing` (the SDK refuses the pair), a store that already is
    a flower layer-4 store, compaction env that contradicts `compact`, a coordinator without the Agent
    tool, a system prompt file with `workbench_block="system"`. Does a little I/O: creates the
    workbench and writes its index (`WorkbenchError` when it cannot; the hooks never raise later).
    """
    root = _workspace(workspace)
    wb = check_workbench(workbench, root)
    spill = check_spill(spill_threshold, _OWNER)
    limit = check_report_limit(report_limit, _OWNER)
    check_keep_denials(keep_denials, _OWNER)
    shaping = (glance, own_tools, own_steps, inline_until)
    if not coordinator and any(knob is not None for knob in shaping):
        raise SpecError(
            f"{_OWNER}: glance, own_steps, inline_until and own_tools shape the delegation wall; they need "
            "coordinator=True"
        )
    if own_steps is not None and own_steps < 0:
        raise SpecError(f"{_OWNER}: own_steps must be 0 or more, got {own_steps}")
    check_inline_until(inline_until, own_steps or 0, _OWNER)
    line = check_mandate_line(mandate_line, _OWNER)

    policy = resolve_tracing(tracing, _OWNER)
    env = {**cli_env(policy), **_compact_env(options, compact)}
    env.update(cache_env(env, delegates=coordinator, settings=options.settings))
    env.update(fork_env(env, delegates=coordinator))
    if store is not None and options.session_store is not None:
        raise SpecError(f"{_OWNER}: give the store once: options.session_store or store=, not both")
    if store is not None:
        check_store(store, _OWNER)
        options = dataclasses.replace(options, session_store=store)  # type: ignore[arg-type]  # a DSN too
    layer = _store(options, root, wb, keep_denials=keep_denials, ephemeral=ephemeral, trim=trim)
    steps = 0 if own_steps is None else own_steps
    wall = (
        _wall(options, wb, glance=glance is not False, steps=steps, own_tools=own_tools, inline=inline_until)
        if coordinator
        else {}
    )
    mandate = shared_prefix_hooks(line) if coordinator else {}
    block: str | None = None
    if wb is not None:
        _check_prompt(options.system_prompt, workbench_block)
        if workbench_block == "system":
            block = wb.prompt_block()  # refreshes the index too
        else:
            wb.refresh()
    index = index_context_hooks(wb, initial=block) if wb is not None else {}
    index = merge_hooks(index, adopt_hooks(layer))
    layers, app_hooks = chain_spill(layer_hooks(wb, root, spill, limit), options.hooks, spill)
    wall, app_hooks = chain_denials(wall, app_hooks)  # both reasons reach the model when both deny
    hooks = merge_hooks(wall, mandate, layers, index, app_hooks) or None
    cwd = options.cwd if options.cwd is not None else root
    _check_cwd(cwd)
    attach_workbench(layer, cwd, wb.root if wb is not None else root / FLOWER_DIR)
    tap_store(policy, layer, env)
    options = dataclasses.replace(
        options,
        cwd=cwd,
        system_prompt=_with_block(options.system_prompt, block),
        hooks=hooks,
        session_store=layer,
        session_store_flush="eager",
        env=env,
        add_dirs=_add_dirs(options.add_dirs, cwd, wb.root if wb is not None else root / FLOWER_DIR),
    )
    return tether(options)  # the CLI and what it starts end with the app's process (`_run.supervise`)


def _workspace(workspace: str | os.PathLike[str]) -> Path:
    if not os.fspath(workspace):
        raise SpecError(f"{_OWNER}: workspace must be a path, got ''")
    path = Path(workspace).expanduser().absolute()
    if not path.exists():
        raise SpecError(f"{_OWNER}: workspace {path} does not exist")
    if not path.is_dir():
        raise SpecError(f"{_OWNER}: workspace {path} is not a directory")
    return path.resolve()


def _check_cwd(cwd: str | os.PathLike[str]) -> None:
    """The CLI starts in `cwd`: one that is not a directory would fail only when the app runs a query."""
    path = Path(cwd).expanduser()
    if not path.is_dir():
        what = "is not a directory" if path.exists() else "does not exist"
        raise SpecError(f"{_OWNER}: options.cwd {path} {what}; the CLI starts there (create it first)")


def _store(
    options: ClaudeAgentOptions,
    workspace: Path,
    wb: Workbench | None,
    *,
    keep_denials: int,
    ephemeral: bool | EphemeralPolicy,
    trim: bool | TrimPolicy,
) -> PruningSessionStore:
    inner = options.session_store
    check_inner_store(inner, _OWNER, "options.session_store", " (or instrument the original options once)")
    if options.enable_file_checkpointing:
        yours = "your session_store" if inner is not None else "the session store flower adds (layer 4)"
        raise SpecError(
            f"{_OWNER}: options.enable_file_checkpointing=True cannot go with {yours}: the SDK refuses "
            "file checkpointing with any session_store. Turn checkpointing off to use flower."
        )
    return layer_store(
        inner,
        workspace,
        wb,
        keep_denials=keep_denials,
        ephemeral=ephemeral,
        trim=trim,
        config_dir=options.env.get(CONFIG_ENV) or None,
    )


def _is_set(value: str) -> bool:
    return value.strip().lower() not in _OFF_VALUES


def _compact_env(options: ClaudeAgentOptions, compact: CompactPolicy | None) -> dict[str, str]:
    """The app's env plus the policy's entries; an app entry that says otherwise raises.

    An app value that already agrees (`"true"` where the policy would write `"1"`) is kept as written.
    """
    env = dict(options.env)
    if compact is None:
        return env
    wanted = compact.env()
    for key in _COMPACT_KEYS:
        if key not in env:
            continue
        have = env[key]
        if key in wanted:
            agrees = _is_set(have)
        else:  # the policy leaves this switch off; "off" also turns auto-compaction off, so that one agrees
            agrees = not _is_set(have) or (compact.mode == "off" and key == "DISABLE_AUTO_COMPACT")
        if not agrees:
            raise SpecError(
                f"{_OWNER}: the app's env sets {key}={have!r}, but compact=CompactPolicy(mode="
                f"{compact.mode!r}) needs {_describe(wanted)}; drop the env entry or change the policy"
            )
    if compact.mode == "auto" and _settings_disable_compact(options.settings):
        raise SpecError(
            f"{_OWNER}: the app's settings turn autoCompactEnabled off, but "
            "compact=CompactPolicy(mode='auto') needs the CLI's auto-compaction; drop one of them"
        )
    for key, value in wanted.items():
        env.setdefault(key, value)
    return env


def _describe(env: Mapping[str, str]) -> str:
    if not env:
        return "compaction left on (no DISABLE_COMPACT or DISABLE_AUTO_COMPACT)"
    return ", ".join(f"{key}={value!r}" for key, value in env.items())


def _settings_disable_compact(settings: str | None) -> bool:
    """Whether inline JSON settings turn auto-compaction off (a settings file path is not read)."""
    if not isinstance(settings, str) or not settings.lstrip().startswith("{"):
        return False
    try:
        parsed: Any = json.loads(settings)
    except ValueError:
        return False
    return isinstance(parsed, dict) and parsed.get("autoCompactEnabled") is False


def _wall(
    options: ClaudeAgentOptions,
    wb: Workbench | None,
    *,
    glance: bool,
    steps: int,
    own_tools: Iterable[str] | None,
    inline: int | None = None,
) -> dict[HookEvent, list[HookMatcher]]:
    """The delegation wall for the main thread, allowing it its own tools."""
    offered = options.tools if isinstance(options.tools, list) else None
    disallowed = {ALIASES.get(name, name) for name in options.disallowed_tools}
    if "Agent" in disallowed:
        raise SpecError(
            f"{_OWNER}: coordinator=True delegates with the Agent tool, but options.disallowed_tools "
            "removes it"
        )
    if offered is not None and "Agent" not in {ALIASES.get(name, name) for name in offered}:
        raise SpecError(
            f"{_OWNER}: coordinator=True delegates with the Agent tool, but options.tools does not offer "
            f"it ({offered}); add 'Agent' there"
        )
    if own_tools is not None:
        own = check_tools(own_tools, owner=f"{_OWNER} own_tools")
    elif offered is not None:
        own = check_tools(offered, owner=f"{_OWNER} (the main thread's tools, from options.tools)")
    else:
        own = COORDINATOR_TOOLS
    if "Agent" not in own:
        raise SpecError(f"{_OWNER}: own_tools must include 'Agent' for a coordinator, got {list(own)}")
    guard = delegate_guard(
        artifacts=wb.artifacts if wb is not None else None,
        glance=glance,
        allowed=own,
        rules=BashRules.from_options(options),
        own_steps=steps,
        can_use_tool=options.can_use_tool,
        inline_until=inline,
    )
    return {"PreToolUse": [HookMatcher(matcher=None, hooks=[guard])]}


def _check_prompt(prompt: object, placement: BlockPlacement) -> None:
    known = prompt is None or isinstance(prompt, str)
    known = known or (isinstance(prompt, dict) and prompt.get("type") in ("preset", "custom", "file"))
    if not known:
        raise SpecError(f"{_OWNER}: options.system_prompt has a form flower does not know: {prompt!r:.120}")
    if placement == "system" and isinstance(prompt, dict) and prompt.get("type") == "file":
        raise SpecError(
            f"{_OWNER}: options.system_prompt is a file ({prompt.get('path')!r}) the CLI reads itself, so "
            "the workbench block cannot be appended to it (workbench_block='system'); pass "
            "workbench_block='prompt' to give the block with each session's first prompt instead"
        )


def _with_block(prompt: Any, block: str | None) -> Any:
    """The app's system prompt with the workbench block after it; the app's text is kept verbatim."""
    if block is None:
        return prompt
    if prompt is None:
        return block  # the SDK's None is an empty system prompt: the block is all there is to add
    if isinstance(prompt, str):
        return f"{prompt}\n\n{block}" if prompt.strip() else block
    if isinstance(prompt, dict) and prompt.get("type") == "preset":
        append = prompt.get("append")
        return {**prompt, "append": f"{append}\n\n{block}" if append else block}
    if isinstance(prompt, dict) and prompt.get("type") == "custom":
        text = str(prompt.get("prompt") or "")
        return {**prompt, "prompt": f"{text}\n\n{block}" if text.strip() else block}
    return prompt  # a file: checked before (the block then goes with the prompt)


def _add_dirs(current: list[str | Path], cwd: str | Path, flower_root: Path) -> list[str | Path]:
    """The app's add_dirs, plus flower's directory when it is not inside the CLI's cwd."""
    base = os.path.realpath(cwd)
    target = os.path.realpath(flower_root)
    try:
        inside = os.path.commonpath([base, target]) == base
    except ValueError:
        inside = False
    present = {os.path.realpath(d) for d in current}
    if inside or target in present:
        return list(current)
    return [*current, flower_root]
