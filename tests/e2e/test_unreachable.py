"""An API the CLI cannot reach ends the run after two attempts, with the cause in the CLI's words.

Each test points the real CLI at an address that fails in one way (a closed port, a host that does not
resolve, a server that does not speak TLS, credentials refused with 401) through ANTHROPIC_BASE_URL.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from flower import FailureReason, Runtime, worker
from flower.events import ApiError, Event
from flower.testing import ScriptedModel, bash, drop_connection, http_error

pytestmark = pytest.mark.cli

HELPER = worker("Helps.", "You help.", tools=["Bash"])


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def not_tls() -> Iterator[int]:
    """A loopback server that answers a TLS handshake with plain text, then hangs up."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"this is not TLS\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(5)
        server.close()


async def unreachable_run(
    model: ScriptedModel, workspace: Path, base_url: str | None
) -> tuple[FailureReason | None, str, list[ApiError]]:
    env = {"ANTHROPIC_BASE_URL": base_url} if base_url else {}
    events: list[Event] = []
    result = await Runtime(workspace, env=env, configure=model.attach).run(
        HELPER, "Hi.", on_event=events.append
    )
    errors = [e for e in events if isinstance(e, ApiError)]
    assert result.ok is (result.reason is None)
    return result.reason, result.error or "", errors


def assert_gave_up_after_two(errors: list[ApiError], error: str, *causes: str) -> None:
    retrying = [e for e in errors if e.retrying]
    assert [e.message.rsplit("(", 1)[-1] for e in retrying] == ["attempt 1 of 10)", "attempt 2 of 10)"]
    final = errors[-1]
    assert not final.retrying and final.message == error
    assert error.startswith("cannot reach the API at ") and "after 2 failed attempts" in error
    for cause in causes:
        assert cause in error, error


async def test_a_closed_port(scripted_model: ScriptedModel, workspace: Path) -> None:
    reason, error, errors = await unreachable_run(
        scripted_model, workspace, f"http://127.0.0.1:{closed_port()}"
    )

    assert reason is FailureReason.UNREACHABLE
    assert errors[0].message == "no response from the API: the connection failed; the CLI retries " + (
        "(attempt 1 of 10)"
    )
    assert_gave_up_after_two(errors, error, "Connection refused", "(ECONNREFUSED)")
    assert scripted_model.requests() == []


async def test_a_host_that_does_not_resolve(scripted_model: ScriptedModel, workspace: Path) -> None:
    reason, error, errors = await unreachable_run(scripted_model, workspace, "http://nonexistent.invalid")

    assert reason is FailureReason.UNREACHABLE
    assert_gave_up_after_two(errors, error, "(ENOTFOUND)", "getaddrinfo ENOTFOUND nonexistent.invalid")


async def test_a_server_that_does_not_speak_tls(
    scripted_model: ScriptedModel, workspace: Path, not_tls: int
) -> None:
    reason, error, errors = await unreachable_run(scripted_model, workspace, f"https://127.0.0.1:{not_tls}")

    assert reason is FailureReason.UNREACHABLE
    assert_gave_up_after_two(errors, error, "(EPROTO)", "TLS handshake failed")


async def test_credentials_the_api_refuses(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", lambda request: http_error(401, "invalid x-api-key"))

    reason, error, errors = await unreachable_run(scripted_model, workspace, None)

    assert reason is FailureReason.CREDENTIALS_REFUSED and [e.status for e in errors] == [401, 401, 401]
    assert errors[0].message == "HTTP 401 authentication_failed; the CLI retries (attempt 1 of 10)"
    assert_gave_up_after_two(errors, error, "401 invalid x-api-key")
    assert len(scripted_model.requests("main")) == 2


async def test_once_the_api_answered_connection_errors_are_left_to_the_clis_retries(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [bash("echo hi"), drop_connection(), drop_connection(), "done"])
    events: list[Event] = []

    result = await Runtime(workspace, configure=scripted_model.attach).run(
        HELPER, "Hi.", on_event=events.append
    )

    assert result.ok and result.text == "done"
    assert [(e.status, e.retrying) for e in events if isinstance(e, ApiError)] == [(None, True), (None, True)]
