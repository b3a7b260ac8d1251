"""When tracing is on (one argument, or the standard OTEL_* variables), and what the CLI is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import Runtime, SpecError, TracingPolicy, coordinator, worker
from flower.tracing._tracing_policy import cli_env, cli_traces, env_enables, resolve_tracing, signal_url


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "console,otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, False),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": " "}, False),
        ({"OTEL_SERVICE_NAME": "app"}, False),
    ],
)
def test_the_standard_variables_turn_tracing_on(env: dict[str, str], on: bool) -> None:
    assert env_enables(env) is on
    resolved = resolve_tracing(None, "Runtime", env)
    assert (resolved is not None) is on
    assert resolve_tracing(False, "Runtime", env) is None


def test_one_argument_turns_it_on_and_a_policy_says_how(tmp_path: Path) -> None:
    assert resolve_tracing(True, "Runtime", {}) == TracingPolicy()
    policy = TracingPolicy(endpoint="http://127.0.0.1:4318", content=True)
    assert resolve_tracing(policy, "Runtime", {}) is policy
    assert Runtime(tmp_path, tracing=policy).tracing is policy
    assert TracingPolicy().name == "main" and TracingPolicy(agent_name="app").name == "app"


@pytest.mark.parametrize(
    "bad",
    [
        {"endpoint": "collector:4318"},
        {"content": "yes"},
        {"agent_name": ""},
        {"flush_timeout": -1},
        {"flush_timeout": True},
        {"metrics": "yes"},
    ],
)
def test_a_policy_refuses_what_it_cannot_use(bad: dict[str, object]) -> None:
    with pytest.raises(SpecError, match="TracingPolicy"):
        TracingPolicy(**bad)  # type: ignore[arg-type]


def test_tracing_takes_a_bool_none_or_a_policy(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="Runtime: tracing must be True or False or a TracingPolicy or None"):
        Runtime(tmp_path, tracing="on")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("endpoint", "traces", "metrics"),
    [
        ("http://collector:4318", "http://collector:4318/v1/traces", "http://collector:4318/v1/metrics"),
        ("http://collector:4318/", "http://collector:4318/v1/traces", "http://collector:4318/v1/metrics"),
        # what Phoenix prints is the traces URL itself: used as given, never /v1/traces/v1/traces
        (
            "http://localhost:6006/v1/traces",
            "http://localhost:6006/v1/traces",
            "http://localhost:6006/v1/metrics",
        ),
        ("https://h/api/otel/v1/traces/", "https://h/api/otel/v1/traces", "https://h/api/otel/v1/metrics"),
    ],
)
def test_an_endpoint_is_a_base_url_or_the_traces_url_itself(endpoint: str, traces: str, metrics: str) -> None:
    assert signal_url(endpoint, "traces") == traces and signal_url(endpoint, "metrics") == metrics
    env = cli_env(TracingPolicy(cli=True, endpoint=endpoint))
    assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == traces
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces" == traces


@pytest.mark.parametrize(
    ("metrics", "env", "on"),
    [
        (None, {}, False),  # a traces-only receiver: no metrics request it would refuse
        (None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, False),
        (None, {"OTEL_METRICS_EXPORTER": "otlp"}, True),
        (None, {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}, True),
        (True, {}, True),
        (True, {"OTEL_METRICS_EXPORTER": "none"}, False),
        (False, {"OTEL_METRICS_EXPORTER": "otlp"}, False),
    ],
)
def test_metrics_go_out_only_when_configured(metrics: bool | None, env: dict[str, str], on: bool) -> None:
    assert TracingPolicy(metrics=metrics).metrics_on(env) is on
    assert TracingPolicy(metrics=None).metrics_on({}, app_meter=True)  # the app's own meter provider


def test_the_cli_is_told_to_trace_only_when_asked() -> None:
    assert cli_env(None) == {} and cli_env(TracingPolicy()) == {}
    env = cli_env(TracingPolicy(cli=True, endpoint="http://127.0.0.1:4318"))
    assert env["CLAUDE_CODE_ENABLE_TELEMETRY"] == env["CLAUDE_CODE_ENHANCED_TELEMETRY_BETA"] == "1"
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:4318"
    assert cli_traces(env)
    assert not cli_traces({**env, "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "0"})  # metrics and logs only
    assert not cli_traces({**env, "OTEL_TRACES_EXPORTER": "none"})
    assert cli_traces(
        {
            "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
            "ENABLE_ENHANCED_TELEMETRY_BETA": "true",
            "OTEL_TRACES_EXPORTER": "otlp",
        }
    )


def test_the_cli_gets_the_telemetry_environment_and_the_app_env_wins(tmp_path: Path) -> None:
    workspace = tmp_path
    rt = Runtime(workspace, tracing=TracingPolicy(cli=True), env={"OTEL_LOGS_EXPORTER": "none"})
    spec = coordinator("lead", "Goal.", {"w": worker("Does things.", "You do things.", tools=["Bash"])})
    env = rt.options(spec, block="").env
    assert env["CLAUDE_CODE_ENHANCED_TELEMETRY_BETA"] == "1" and env["OTEL_LOGS_EXPORTER"] == "none"
    assert "CLAUDE_CODE_ENABLE_TELEMETRY" not in Runtime(workspace, tracing=False).options(spec, block="").env
