"""`RequestLog`: the scripted model's thread-safe record of every request it received.

The server thread writes it (`record`, `annotate`, `add_unexpected`) and test threads read it (`requests`,
`describe`, `wait_for_sync`), so it owns the lock and the condition waiters sleep on. `ScriptedModel`
delegates its public log methods here, where their user-facing docstrings stay.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from .._errors import ScriptTimeout, SpecError
from ._guard import guard
from ._http import HttpRequest
from ._requests import RecordedRequest

__all__ = ["RequestLog"]


class RequestLog:
    """Requests in arrival order, per-caller counters and the summaries of unexpected requests.

    `lock` is reentrant on purpose: a failure message (`describe`) is built while it is held, as in
    `wait_for_sync`. `ScriptedModel` guards its scripts with the same lock.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)
        self._entries: list[RecordedRequest] = []
        self._unexpected: list[str] = []
        self._counts: dict[str, int] = {}

    # -- writing (server thread) ---------------------------------------------------------------------

    def record(self, caller: str, body: dict[str, Any], request: HttpRequest) -> RecordedRequest:
        """Append a request of `caller`, numbering it in the log and among that caller's requests."""
        turn = sum(
            1 for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "assistant"
        )
        with self._changed:
            index = self._counts.get(caller, 0)
            self._counts[caller] = index + 1
            recorded = RecordedRequest(
                seq=len(self._entries),
                caller=caller,
                index=index,
                turn=turn,
                body=body,
                headers=dict(request.headers),
                path=request.target,
                received_at=time.monotonic(),
            )
            self._entries.append(recorded)
        return recorded

    def annotate(self, recorded: RecordedRequest, answer: str, unexpected: str | None = None) -> None:
        """Note how a recorded request was answered (and, if it found no step, why); wake waiters."""
        with self._changed:
            self._entries[recorded.seq] = dataclasses.replace(recorded, answer=answer)
            if unexpected is not None:
                self._unexpected.append(unexpected)
            self._changed.notify_all()

    def set_usage(self, recorded: RecordedRequest, usage: dict[str, int]) -> None:
        """Note the usage the reply to a recorded request reported."""
        with self._changed:
            current = self._entries[recorded.seq]
            self._entries[recorded.seq] = dataclasses.replace(current, usage=usage)

    def add_unexpected(self, message: str) -> None:
        """Note a failure outside any recorded request (say, a script that raised); wake waiters."""
        with self._changed:
            self._unexpected.append(message)
            self._changed.notify_all()

    # -- reading (test threads) ----------------------------------------------------------------------

    def unexpected(self) -> list[str]:
        """A copy of the unexpected-request summaries so far."""
        with self.lock:
            return list(self._unexpected)

    def requests(self, caller: str | None = None) -> list[RecordedRequest]:
        with self.lock:
            return [r for r in self._entries if caller is None or r.caller == caller]

    def request(self, caller: str, index: int) -> RecordedRequest:
        found = self.requests(caller)
        try:
            return found[index]
        except IndexError:
            raise IndexError(
                f"{caller!r} sent {len(found)} request(s); no index {index}.\n{self.describe()}"
            ) from None

    def callers(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.requests():
            seen.setdefault(r.caller, None)
        return list(seen)

    def describe(self, last: int = 12) -> str:
        return "\n".join(r.summary() for r in self.requests()[-last:]) or "(no requests)"

    def wait_for_sync(
        self, count: int = 1, *, caller: str | None = None, timeout: float | None = None
    ) -> list[RecordedRequest]:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise SpecError(f"wait_for: count must be an int >= 1, got {count!r}")
        timeout = guard(timeout)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [r for r in self._entries if caller is None or r.caller == caller]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ScriptTimeout(
                        f"waited {timeout:g} s for {count} request(s) from {caller or 'any caller'}, "
                        f"got {len(found)}.\n{self.describe()}"
                    )
                self._changed.wait(left)
