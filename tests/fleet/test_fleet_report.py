"""The fleet report's filters and shapes, over sessions written straight into a real PostgreSQL store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from flower import PostgresSessionStore, SpecError
from flower.report import FleetReport, build_fleet_report


def turn(session: str, n: int, stamp: str) -> list[dict]:
    """A prompt and a reply of the main thread, at `stamp`."""
    usage = {"input_tokens": 1000 + n, "output_tokens": 10}
    return [
        {
            "type": "user",
            "uuid": f"{session}-u{n}",
            "timestamp": stamp,
            "message": {"role": "user", "content": "Go."},
        },
        {
            "type": "assistant",
            "uuid": f"{session}-a{n}",
            "timestamp": stamp,
            "message": {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "ok"}],
                "usage": usage,
            },
        },
    ]


@pytest.fixture
async def fleet(postgres_dsn: str, pg_schema: Callable[[], str]) -> tuple[str, str]:
    schema = pg_schema()
    async with PostgresSessionStore(postgres_dsn, schema=schema) as store:
        for project, session, day in (
            ("-srv-a", "s-old", "01"),
            ("-srv-a", "s-new", "03"),
            ("-srv-b", "s-b", "03"),
        ):
            await store.append(
                {"project_key": project, "session_id": session},
                turn(session, 1, f"2026-11-{day}T10:00:00.000Z"),
            )
    return postgres_dsn, schema


async def test_every_session_in_total_and_per_row(fleet: tuple[str, str]) -> None:
    dsn, schema = fleet
    report = await build_fleet_report(dsn, schema=schema)
    assert [s.session_id for s in report.sessions] == ["s-old", "s-new", "s-b"], "oldest first, every project"
    assert report.total.turns.main == 3 and all(s.turns.main == 1 for s in report.sessions)
    assert sum(s.cost_usd for s in report.sessions) == pytest.approx(report.total.cost.usd)
    data = json.loads(report.to_json())
    assert data["total"]["turns"]["main"] == 3 and data["sessions"][0]["turns"] == {
        "main": 1,
        "subagents": 0,
        "total": 1,
    }


async def test_filters_by_project_session_and_time(fleet: tuple[str, str], tmp_path: Path) -> None:
    dsn, schema = fleet
    by_project = await build_fleet_report(dsn, schema=schema, project_key="-srv-b")
    assert [s.session_id for s in by_project.sessions] == ["s-b"]
    recent = await build_fleet_report(dsn, schema=schema, since="2026-11-02")
    assert {s.session_id for s in recent.sessions} == {"s-new", "s-b"} and recent.filters["since"].startswith(
        "2026-11-02T00:00"
    )
    early = await build_fleet_report(dsn, schema=schema, until="2026-11-02T00:00+00:00")
    assert [s.session_id for s in early.sessions] == ["s-old"]
    one: FleetReport = await build_fleet_report(dsn, schema=schema, sessions=["s-new"])
    assert [s.session_id for s in one.sessions] == ["s-new"] and "s-new"[:8] in one.render_text()
    assert {p.name for p in one.write_plots(tmp_path / "plots")} == {"context.png", "split.png"}


async def test_bad_filters_are_named() -> None:
    with pytest.raises(SpecError, match="since must be an ISO date"):
        await build_fleet_report("postgresql://127.0.0.1:1/x", since="last tuesday")
    with pytest.raises(SpecError, match="a postgresql:// DSN or a PostgresSessionStore"):
        await build_fleet_report("runs/sessions.db")
