"""A runner in a process of its own, for the lease tests.

`python -m tests.fleet.lease_runner LOCATION SCHEMA SESSION TIMEOUT` leases SESSION in the store at LOCATION
(a SQLite path or a DSN) and prints JSON lines: `asking`, then `held` with the seconds waited or `refused`
with the error's session and holder; when held, it keeps the lease until its stdin says `release`, then
says `releasing` (still held) and `released`. Each line has `at`, the machine's monotonic clock (shared
by every process), so a test orders two runners' lines without timing them."""

from __future__ import annotations

import json
import sys
import time

import anyio

from flower import LeaseError, PostgresSessionStore, SqliteSessionStore


def say(**fields: object) -> None:
    print(json.dumps({**fields, "at": time.monotonic()}), flush=True)


async def main(location: str, schema: str, session_id: str, timeout: float) -> None:
    store = (
        PostgresSessionStore(location, schema=schema)
        if location.startswith("postgres")
        else SqliteSessionStore(location)
    )
    say(event="asking")
    try:
        async with store.lease(session_id, timeout=timeout) as lease:
            say(event="held", waited=lease.waited, holder=lease.holder)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            say(event="releasing")  # still held: whoever gets it next gets it after this line
        say(event="released")
    except LeaseError as exc:
        say(event="refused", session_id=exc.session_id, holder=exc.holder, message=str(exc))
    finally:
        await store.aclose()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]))
