"""Where a run and `instrument()` switch tracing on: OpenTelemetry is imported only when it is on."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from ._tracing_policy import TracingPolicy, cli_env, cli_traces

if TYPE_CHECKING:
    from ._live import LiveRun

logger = logging.getLogger("flower.tracing")


def _requests(policy: TracingPolicy, env: Mapping[str, str]) -> bool:
    """flower writes the request and tool spans unless the CLI traces them itself (no double count)."""
    return not cli_traces({**os.environ, **cli_env(policy), **env})


async def start_run(
    policy: TracingPolicy | None, agent: str, store: Any, env: Mapping[str, str]
) -> LiveRun | None:
    """The live trace of a run starting now, or None (tracing off, or it could not start: logged).

    The first one of a process imports OpenTelemetry's SDK and builds the exporters: in a worker thread.
    """
    if policy is None:
        return None
    try:
        return await anyio.to_thread.run_sync(_live_run, policy, agent, store, _requests(policy, env))
    except Exception:
        logger.exception("flower.tracing: the run's trace could not start; the run goes on without it")
        return None


def _live_run(policy: TracingPolicy, agent: str, store: Any, requests: bool) -> LiveRun:
    from ._live import LiveRun

    return LiveRun(policy, agent, store, requests)


def tap_store(policy: TracingPolicy | None, store: Any, env: Mapping[str, str]) -> None:
    """For `instrument()`: the store's appends become spans, one tree per completed run of a session."""
    if policy is None:
        return
    from ._windows import WindowTap

    store.taps.append(WindowTap(policy, getattr(store, "spill_dir", None), _requests(policy, env)))
