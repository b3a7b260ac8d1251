"""Times of a report's filters: an ISO date or date-time as an aware datetime, and whether a session was
active in a range."""

from __future__ import annotations

from datetime import UTC, datetime

from .._errors import SpecError
from ._load import SessionData

__all__ = ["parse_time", "within"]


def parse_time(value: str | datetime | None, name: str) -> datetime | None:
    """An aware datetime from an ISO date or date-time (UTC when no zone is given)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise SpecError(
                f"{name} must be an ISO date or date-time (2026-11-30T08:00), got {value!r}"
            ) from exc
    if not isinstance(value, datetime):
        raise SpecError(f"{name} must be a datetime or an ISO string, got {type(value).__name__}")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _stamp(text: str) -> datetime | None:
    try:
        return parse_time(text, "timestamp") if text else None
    except SpecError:
        return None


def within(session: SessionData, since: datetime | None, until: datetime | None) -> bool:
    """The session was active in [since, until]: it ended after `since` and started before `until`."""
    started, ended = _stamp(session.started), _stamp(session.ended)
    if since is not None and (ended is None or ended < since):
        return False
    return not (until is not None and (started is None or started > until))
