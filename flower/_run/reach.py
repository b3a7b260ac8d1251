"""Fail fast when the CLI cannot reach the API at all, with the cause in the CLI's own words.

The CLI retries a request that got no HTTP response (DNS failure, connection refused, a TLS handshake
that fails) and a 401/403 ten times over about 3.5 minutes (measured, CLI 2.1.332), and its `api_retry`
messages say only `error: "unknown"` with no status; the cause (`ENOTFOUND`, `ECONNREFUSED`, `EPROTO`)
appears only in the `api_error` entries of the session's transcript. So before the step's first answer
from the API, flower stops the session after `UNREACHABLE_AFTER` such retries in a row (about 1.5 s)
and reads the cause from the transcript its store received. Once the API has answered in the step, a
connection error is taken for a passing one and the CLI's retries run their course.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, project_key_for_directory

UNREACHABLE_AFTER = 2
"""Retries in a row, before any answer, after which the API is taken for unreachable (~1.5 s)."""

_UNREACHABLE_KINDS = frozenset({"unknown", "authentication_failed"})


def retry_message(data: Mapping[str, Any]) -> str:
    """What an `api_retry` message says, for a person ("unknown" alone says nothing)."""
    status, kind = data.get("error_status"), str(data.get("error") or "")
    attempt, most = data.get("attempt"), data.get("max_retries")
    tries = f" (attempt {attempt} of {most})" if attempt and most else ""
    if status is None and kind in ("", "unknown"):
        return f"no response from the API: the connection failed; the CLI retries{tries}"
    return f"HTTP {status if status is not None else '?'} {kind}; the CLI retries{tries}"


def is_unreachable(data: Mapping[str, Any]) -> bool:
    """An `api_retry` for no response at all, or for credentials the API refused (401/403)."""
    kind = str(data.get("error") or "")
    status = data.get("error_status")
    if kind == "unknown":
        return status is None
    return kind in _UNREACHABLE_KINDS and status in (401, 403)


def transcript_cause(entries: Sequence[Mapping[str, Any]] | None) -> str | None:
    """The last `api_error` entry of a transcript, as one line: the CLI's words, then the system's."""
    for entry in reversed(entries or ()):
        if entry.get("type") != "system" or entry.get("subtype") != "api_error":
            continue
        error = entry.get("error")
        if not isinstance(error, Mapping):
            continue
        parts = [str(error.get("formatted") or error.get("message") or "").strip()]
        connection = error.get("connection")
        if isinstance(connection, Mapping) and connection.get("message"):
            parts.append(str(connection["message"]).strip())
        return " — ".join(p for p in parts if p) or None
    return None


async def unreachable_cause(options: ClaudeAgentOptions, session_id: str | None, status: int | None) -> str:
    """Why the API could not be reached: from the session's transcript in the store, else in general."""
    cause = None
    store = getattr(options.session_store, "inner", options.session_store)  # unrewritten entries
    if store is not None and session_id and options.cwd is not None:
        key = {"project_key": project_key_for_directory(str(options.cwd)), "session_id": session_id}
        try:
            cause = transcript_cause(await store.load(key))  # type: ignore[arg-type]
        except Exception:  # the explanation is a bonus: never fail the report of the failure on it
            cause = None
    if cause is None:
        cause = (
            f"the API refused the credentials (HTTP {status})"
            if status in (401, 403)
            else "no response from the API (the connection failed)"
        )
    base = {**os.environ, **options.env}.get("ANTHROPIC_BASE_URL")
    where = f" at {base}" if base else ""
    end = "" if cause.endswith((".", "?", "!")) else "."
    return (
        f"cannot reach the API{where}: {cause}{end} flower stopped the CLI after {UNREACHABLE_AFTER} failed "
        "attempts before any answer (the CLI would retry for minutes); check the network, the proxy and "
        "ANTHROPIC_BASE_URL, or the API key"
    )
