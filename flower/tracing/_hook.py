"""Where a run and `instrument()` switch tracing on: OpenTelemetry is imported only when it is on."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .policy import TracingPolicy, cli_env, cli_traces

if TYPE_CHECKING:
    from ._live import LiveRun

logger = logging.getLogger("flower.tracing")


def _requests(policy: TracingPolicy, env: Mapping[str, str]) -> bool:
    """flower writes the request and tool spans unless the CLI traces them itself (no double count)."""
    return not cli_traces({**os.environ, **cli_env(policy), **env})


def start_run(policy: TracingPolicy | None, agent: str, store: Any, env: Mapping[str, str]) -> LiveRun | None:
    """The live trace of a run starting now, or None (tracing off, or it could not start: logged)."""
    if policy is None:
        return None
    try:
        from ._live import LiveRun

        return LiveRun(policy, agent, store, _requests(policy, env))
    except Exception:
        logger.exception("flower.tracing: the run's trace could not start; the run goes on without it")
        return None


def tap_store(policy: TracingPolicy | None, store: Any, env: Mapping[str, str]) -> None:
    """For `instrument()`: the store's appends become spans, one tree per completed run of a session."""
    if policy is None:
        return
    from ._windows import WindowTap

    store.taps.append(WindowTap(policy, getattr(store, "spill_dir", None), _requests(policy, env)))
