"""One ping: a forked resume of the coordinator's session, in a private copy, for one output token.

Measured with CLI 2.1.332 against flower's scripted model:

- `resume=<session>, fork_session=True, resume_session_at=<the entry before the last reply>` with
  `CLAUDE_CODE_MAX_OUTPUT_TOKENS=1` sends the coordinator's last request again, every cache block up to
  its last mark equal, then the ping's user message (`KeepWarmPolicy.prompt`); same model, tools, system
  prompt and thinking settings.
- A main-thread reply that stops at `max_tokens` makes the CLI send up to three more requests ("Output
  token limit hit. Resume directly…"), `max_turns=1` notwithstanding: a one-token cap alone costs four
  reads of the prefix. A budget below any request's price (`max_budget_usd`) ends the fork right after
  the first reply (`error_max_budget_usd`): one request. It adds one line ("USD budget: …") after the
  prefix, about 15 tokens written to the cache.

No trace in the user's session: the fork runs in a private `CLAUDE_CONFIG_DIR` holding a copy of the
live transcript (and, as the SDK does for its own resumes, of the login files), without a session store
(nothing is mirrored) and without the run's hooks; the directory goes when the ping ends, cancelled or
not. A directory a killed process left behind is swept at the next ping (it holds a copy of the login).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ClaudeSDKError, ResultMessage, query

from .._run.tether import tether
from .._usage import TokenUsage
from ..stores._local import CONFIG_ENV, config_dir
from .schedule import ForkPoint

__all__ = ["PING_BUDGET_USD", "PingProgress", "PingReply", "send_ping", "sweep"]

logger = logging.getLogger("flower.warm")

PING_BUDGET_USD = 1e-6
"""The fork's `max_budget_usd`: below the price of any request (a thousand tokens read cost $0.00005 at
the cheapest row of `flower._cost.PRICES`), so the CLI stops after the first reply instead of retrying it."""
_PREFIX = "flower-warm-"
_OWN_ENV = ("CLAUDE_CODE_TMPDIR", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "CLAUDE_CODE_ENABLE_TELEMETRY")


@dataclass(frozen=True, kw_only=True)
class PingReply:
    """What one ping's CLI reported."""

    ok: bool
    """The API answered the request (its prefix was read, and so kept alive)."""
    error: str | None
    """Why not, for a person."""
    usage: TokenUsage
    """Every request the fork made, as the CLI counted them (`model_usage`)."""
    model: str
    """The model that answered."""
    cli_cost_usd: float
    """The CLI's own price of it (`total_cost_usd`)."""
    requests: int
    """Replies the fork received (1 unless the CLI retried the cut one)."""


@dataclass
class PingProgress:
    """How far a ping got, readable after it was stopped in flight (when `send_ping` returns nothing)."""

    submitted: bool = False
    """The fork's CLI had recorded the ping's prompt (its transcript held the new session's entries when
    the ping ended): it sends the request right after, so the API may have billed it."""


def _submitted(private: Path, live_session: str) -> bool:
    """Whether the fork wrote a transcript of its own (the new session) in `private`: the CLI records the
    prompt before it sends the request."""
    try:
        return any(p.name != f"{live_session}.jsonl" for p in private.glob("projects/*/*.jsonl"))
    except OSError:
        return False


def sweep() -> list[str]:
    """Remove the private directories of pings whose process is gone (a `kill -9` mid-ping)."""
    removed = []
    root = Path(tempfile.gettempdir())
    try:
        names = [n for n in os.listdir(root) if n.startswith(_PREFIX)]
    except OSError:
        return []
    for name in names:
        pid = name[len(_PREFIX) :].split("-", 1)[0]
        path = root / name
        try:
            owned = os.lstat(path).st_uid == os.getuid()
        except OSError:
            continue
        if not owned or not pid.isdigit() or _alive(int(pid)):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(str(path))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _copy_login(private: Path, env: Mapping[str, str], live: Path) -> None:
    """Give the private directory the login files the live CLI reads, as the SDK does for a resume.

    The SDK's own helper covers every case (`.credentials.json` without its single-use refresh token,
    the macOS keychain, `.claude.json`, user settings with their plugins left out). It is private to the
    SDK: when it moved, a key in the environment still works, and a login by file fails the ping, which
    says so.
    """
    try:
        from claude_agent_sdk._internal.session_resume import _copy_auth_files
    except ImportError:
        logger.warning("flower.warm: the SDK's login copy moved; a ping can only use a key from the env")
        return
    source = dict(env)
    if live != config_dir(env):  # the live CLI runs in a directory of its own (the SDK's resume copy)
        source[CONFIG_ENV] = str(live)
    _copy_auth_files(private, source)


def _prepare(private: Path, transcript: Path, session_id: str, env: Mapping[str, str]) -> None:
    """The private config directory: the live transcript (whole lines only), the login files."""
    data = transcript.read_bytes()
    data = data[: data.rfind(b"\n") + 1]
    project = private / "projects" / transcript.parent.name
    project.mkdir(parents=True, mode=0o700)
    (project / f"{session_id}.jsonl").write_bytes(data)
    (private / "tmp").mkdir(mode=0o700)
    _copy_login(private, env, transcript.parent.parent.parent)


def ping_options(
    live: ClaudeAgentOptions, *, session_id: str, point: ForkPoint, private: Path
) -> ClaudeAgentOptions:
    """The live session's options, turned into a one-token fork of it that writes only in `private`."""
    env = {k: v for k, v in live.env.items() if k not in _OWN_ENV}
    env.update(
        {
            CONFIG_ENV: str(private),
            "CLAUDE_CODE_TMPDIR": str(private / "tmp"),
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "1",
            # the ping is flower's: the user's telemetry backend does not get it as a session of its own
            "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
        }
    )
    return dataclasses.replace(
        live,
        env=env,
        resume=session_id,
        fork_session=True,
        resume_session_at=point.resume_at,
        resume_drops_turn=None,
        continue_conversation=False,
        session_id=str(uuid.uuid4()),
        session_store=None,
        hooks=None,
        can_use_tool=None,
        stderr=None,
        max_turns=1,
        max_budget_usd=PING_BUDGET_USD,
        enable_file_checkpointing=False,
        include_partial_messages=False,
    )


def _usage(result: ResultMessage | None) -> TokenUsage:
    """The fork's tokens: its `model_usage` (the CLI process's whole count), with the 1-hour writes apart."""
    total = TokenUsage()
    models: Any = result.model_usage if result is not None else None
    for entry in (models or {}).values():
        if not isinstance(entry, Mapping):
            continue
        used = TokenUsage.from_model_usage(entry)
        hour = entry.get("cacheCreationEphemeral1hInputTokens")
        hour = min(hour, used.cache_creation) if isinstance(hour, int) and hour > 0 else 0
        total += dataclasses.replace(
            used, cache_creation=used.cache_creation - hour, cache_creation_1h=used.cache_creation_1h + hour
        )
    return total


async def send_ping(
    live: ClaudeAgentOptions,
    *,
    session_id: str,
    transcript: Path,
    point: ForkPoint,
    prompt: str,
    progress: PingProgress | None = None,
) -> PingReply:
    """Send one ping for `session_id`, whose live transcript is `transcript`; never raises but for a
    cancellation (the fork's CLI is then stopped and its directory removed all the same, and `progress`
    says whether its request had gone out)."""
    await anyio.to_thread.run_sync(sweep)
    private: Path | None = None
    replies: dict[str, AssistantMessage] = {}
    result: ResultMessage | None = None
    failure: str | None = None
    try:
        private = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        await anyio.to_thread.run_sync(_prepare, private, transcript, session_id, live.env)
        # the fork's CLI ends with this process, as the live one does (`flower._run.supervise`)
        options = tether(ping_options(live, session_id=session_id, point=point, private=private))
        messages = query(prompt=prompt, options=options)
        try:
            async for message in messages:
                if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                    replies.setdefault(message.message_id or str(len(replies)), message)
                elif isinstance(message, ResultMessage):
                    result = message
        except ClaudeSDKError as exc:  # the budget's stop is an error result, raised after it
            if result is None or result.subtype != "error_max_budget_usd":
                failure = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # whatever else the SDK raises: this ping failed, the run goes on
            failure = f"{type(exc).__name__}: {exc}"
        finally:  # shut the fork's CLI down even when cancelled (the SDK's close is bounded)
            with anyio.CancelScope(shield=True):
                await messages.aclose()  # type: ignore[attr-defined]
    except Exception as exc:  # a full disk, a login file that cannot be copied
        failure = f"the ping could not be started: {type(exc).__name__}: {exc}"
    finally:
        if private is not None:
            if progress is not None:
                progress.submitted = _submitted(private, session_id)
            gone = private
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(lambda: shutil.rmtree(gone, ignore_errors=True))
    answered = [m for m in replies.values() if m.error is None]
    error = failure
    if not answered:
        bad = next((m for m in replies.values() if m.error is not None), None)
        error = error or (f"the API refused the ping ({bad.error})" if bad else "the fork sent no request")
    model = next((m.model for m in answered), point.model)
    return PingReply(
        ok=bool(answered),
        error=None if answered else error,
        usage=_usage(result),
        model=model,
        cli_cost_usd=(result.total_cost_usd or 0.0) if result is not None else 0.0,
        requests=len(replies),
    )
