"""`TracingPolicy`: whether a run becomes OpenTelemetry spans and metrics, and what they may hold.

Tracing is on when the app says so (`Runtime(tracing=True)` or a `TracingPolicy`) or, with
`tracing=None` (the default), when the standard variables say so: `OTEL_TRACES_EXPORTER` names `otlp`,
or `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (and
`OTEL_TRACES_EXPORTER` is not `none`); `OTEL_SDK_DISABLED=true` keeps it off. `tracing=False` is off
whatever the environment says.

Endpoints follow the OpenTelemetry specification: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as given,
`OTEL_EXPORTER_OTLP_ENDPOINT` gets `/v1/traces` (and `/v1/metrics`) appended. flower's own `endpoint`
takes either form: a base URL (`http://collector:4318`), to which it appends the signal's path, or the
traces URL itself, ending in `/v1/traces` (`http://localhost:6006/v1/traces`, as Arize Phoenix prints it),
used as given. Metrics go out only when a metrics exporter or endpoint is configured (`metrics=True`,
`OTEL_METRICS_EXPORTER=otlp`, `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, or an app's own meter provider):
a traces-only receiver never sees a metrics request.

This module reads the environment and checks arguments only: it imports nothing of OpenTelemetry, so an
app that leaves tracing off never loads it.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .._errors import SpecError
from .._util.check import checked

__all__ = ["TracingPolicy"]

logger = logging.getLogger("flower.tracing")

_ON: Final = frozenset({"1", "true", "yes", "on"})
_NEEDED: Final = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")
_EXTRA: Final = "pip install 'flower-context[otel]'"
_TRACES_PATH: Final = "/v1/traces"


@dataclass(frozen=True, kw_only=True)
class TracingPolicy:
    """What flower sends to an OpenTelemetry backend, and where.

    Example::

        rt = Runtime("repo", tracing=TracingPolicy(endpoint="http://127.0.0.1:4318"))
    """

    endpoint: str | None = None
    """Where spans go, OTLP over HTTP: a base URL (`http://collector:4318`: flower appends `/v1/traces`,
    and `/v1/metrics` for metrics), or a traces URL ending in `/v1/traces`, used as given (what Phoenix
    prints: `http://localhost:6006/v1/traces`). None: the tracer and meter providers the app set
    globally when it set them, else where the standard `OTEL_EXPORTER_OTLP_*` variables say
    (`..._TRACES_ENDPOINT` as given, `..._ENDPOINT` plus `/v1/traces`; by default `http://localhost:4318`)."""
    content: bool = False
    """Put prompts, replies and tool arguments and results into the spans (`gen_ai.input.messages`,
    `gen_ai.output.messages`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, each cut at
    16,000 characters). Off by default: transcripts may hold secrets, and a trace backend is rarely
    guarded like the store."""
    metrics: bool | None = None
    """Also record the run's figures as metrics (tokens by kind, cost, delegations, spills, denials,
    handoffs, durations). None: only when a metrics exporter is configured (`OTEL_METRICS_EXPORTER=otlp`,
    `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, or the app's own meter provider), so a traces-only backend
    never gets a metrics request it refuses. True: to `endpoint` (its base, plus `/v1/metrics`) or where
    the variables say. `OTEL_METRICS_EXPORTER=none` turns them off whatever this says."""
    cli: bool = False
    """Turn the CLI's own telemetry on (its traces, metrics and log events, sent to the same endpoint):
    its `claude_code.interaction` spans land under the run's span, in the same trace. flower then
    leaves the request and tool spans to the CLI and keeps its run and delegation spans, so no
    request is counted twice. Whenever the CLI's tracing is on, set here or in the environment,
    flower does the same."""
    agent_name: str | None = None
    """`gen_ai.agent.name` of the main thread where flower does not know it (`instrument()`, a session
    exported after the fact); a `Runtime` run uses the spec's name. None: `main`."""
    flush_timeout: float = 5.0
    """Seconds a run waits at its end for its spans to reach the backend, in a worker thread (the event
    loop is never blocked). Past it the run returns and the export goes on in the background. 0: do not
    wait (the spans go out with the exporter's next batch, and at the latest when the process exits)."""

    def __post_init__(self) -> None:
        if self.endpoint is not None and (
            not isinstance(self.endpoint, str) or not self.endpoint.startswith(("http://", "https://"))
        ):
            raise SpecError(
                f"TracingPolicy: endpoint must be an http(s):// URL or None, got {self.endpoint!r}"
            )
        for name in ("content", "cli"):
            if not isinstance(getattr(self, name), bool):
                raise SpecError(f"TracingPolicy: {name} must be True or False, got {getattr(self, name)!r}")
        if self.metrics is not None and not isinstance(self.metrics, bool):
            raise SpecError(f"TracingPolicy: metrics must be True, False or None, got {self.metrics!r}")
        if self.agent_name is not None and (not isinstance(self.agent_name, str) or not self.agent_name):
            raise SpecError(
                f"TracingPolicy: agent_name must be a non-empty str or None, got {self.agent_name!r}"
            )
        timeout = self.flush_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 <= timeout <= 600:
            raise SpecError(f"TracingPolicy: flush_timeout must be seconds from 0 to 600, got {timeout!r}")

    @property
    def name(self) -> str:
        """The main thread's agent name when flower does not know it."""
        return self.agent_name or "main"

    @checked
    def metrics_on(self, env: Mapping[str, str] | None = None, *, app_meter: bool = False) -> bool:
        """Whether metrics go out: asked for (`metrics=True`), or configured (see `metrics`)."""
        env = os.environ if env is None else env
        exporters = {part.strip().lower() for part in env.get("OTEL_METRICS_EXPORTER", "").split(",")}
        if self.metrics is False or "none" in exporters:
            return False
        if self.metrics is True:
            return True
        return (
            "otlp" in exporters
            or bool(env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip())
            or app_meter
        )


def signal_url(endpoint: str, signal: str) -> str:
    """The URL of `signal` (`traces`, `metrics`) for flower's `endpoint` argument: a traces URL as given,
    a base URL with `/v1/<signal>` appended (a traces URL's base is what precedes its `/v1/traces`)."""
    base = endpoint.rstrip("/")
    if base.endswith(_TRACES_PATH):
        if signal == "traces":
            return base
        base = base[: -len(_TRACES_PATH)]
    return f"{base}/v1/{signal}"


def _set(env: Mapping[str, str], key: str) -> bool:
    return env.get(key, "").strip().lower() in _ON


def env_enables(env: Mapping[str, str]) -> bool:
    """Whether the standard `OTEL_*` variables ask for traces (see the module docstring)."""
    if _set(env, "OTEL_SDK_DISABLED"):
        return False
    exporters = {part.strip().lower() for part in env.get("OTEL_TRACES_EXPORTER", "").split(",")}
    if "otlp" in exporters:
        return True
    if "none" in exporters:
        return False
    return any(
        env.get(key, "").strip()
        for key in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def _installed() -> bool:
    try:
        return all(importlib.util.find_spec(name) is not None for name in _NEEDED)
    except (ImportError, ValueError):
        return False


_warned: list[bool] = []


def resolve_tracing(
    value: bool | TracingPolicy | None, owner: str, env: Mapping[str, str] | None = None
) -> TracingPolicy | None:
    """The policy a `tracing=` argument means, None when tracing is off.

    `True` and a `TracingPolicy` need the `otel` extra (`SpecError` names it when it is missing);
    `None` follows the environment, and stays off with one warning when the extra is missing.
    """
    if value is False:
        return None
    if value is True or isinstance(value, TracingPolicy):
        if not _installed():
            raise SpecError(f"{owner}: tracing needs OpenTelemetry's SDK and OTLP exporter: {_EXTRA}")
        return value if isinstance(value, TracingPolicy) else TracingPolicy()
    if not env_enables(os.environ if env is None else env):
        return None
    if not _installed():
        if not _warned:
            _warned.append(True)
            logger.warning(
                "the OTEL_* variables ask for traces, but OpenTelemetry's SDK is not installed: flower "
                "runs without tracing (%s)",
                _EXTRA,
            )
        return None
    return TracingPolicy()


def cli_env(policy: TracingPolicy | None) -> dict[str, str]:
    """The environment that turns the CLI's own telemetry on (`policy.cli`), to the same endpoint."""
    if policy is None or not policy.cli:
        return {}
    env = {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        # the CLI exports spans only in this beta (measured with CLI 2.1.332): metrics and logs without it
        "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "otlp" if policy.metrics_on() else "none",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }
    if policy.endpoint is not None:
        env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = signal_url(policy.endpoint, "traces")
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = signal_url(policy.endpoint, "traces")[: -len(_TRACES_PATH)]
    return env


def cli_traces(env: Mapping[str, str]) -> bool:
    """Whether a CLI started with `env` exports its own spans (its request and tool spans)."""
    beta = _set(env, "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA") or _set(env, "ENABLE_ENHANCED_TELEMETRY_BETA")
    exporters = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    return _set(env, "CLAUDE_CODE_ENABLE_TELEMETRY") and beta and exporters not in ("", "none")
