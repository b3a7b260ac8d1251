"""Exceptions raised by flower.

The tree is shallow; each class carries the data a caller needs to branch without matching strings::

    FlowerError
    ├── CredentialsError     no API key, token or login for the CLI
    ├── SpecError            an argument, AgentSpec or policy is invalid (also a ValueError and a TypeError)
    ├── StoreError           a session store cannot be opened or used (corrupt or foreign file, bad entry)
    │   └── LeaseError           another runner holds the session's lease (or took it over)
    ├── WorkbenchError       the workbench cannot be created or its index written (also an OSError)
    └── ScriptError          flower.testing: the scripted model met something its script did not plan
        ├── UnexpectedRequest    a request arrived that no script step answers
        ├── UnconsumedSteps      the run ended with script steps left over
        └── ScriptTimeout        a wait on the scripted model or a scripted run timed out
"""

from __future__ import annotations

__all__ = [
    "CredentialsError",
    "FlowerError",
    "LeaseError",
    "ScriptError",
    "ScriptTimeout",
    "SpecError",
    "StoreError",
    "UnconsumedSteps",
    "UnexpectedRequest",
    "WorkbenchError",
]


class FlowerError(Exception):
    """Base class of every exception flower raises on purpose."""


class CredentialsError(FlowerError):
    """No credentials for the Claude Code CLI were found (and the run is not on a scripted model)."""


class SpecError(FlowerError, ValueError, TypeError):
    """An argument, an `AgentSpec` or a policy is invalid; the message names it and says why.

    Every public callable of flower raises it for an argument it refuses, a wrong type included, so one
    `except SpecError` covers them all; it is also a `ValueError` and a `TypeError`, so code written for
    either convention keeps working. (A call that does not match the signature at all, say an unknown
    keyword, gets Python's own `TypeError`.)
    """


class ScriptError(FlowerError):
    """`flower.testing`: the scripted model met something its script did not plan for."""


class UnexpectedRequest(ScriptError, AssertionError):
    """Requests arrived that no script step answers. `requests` holds their summaries."""

    def __init__(self, summaries: list[str]) -> None:
        self.requests = summaries
        """One summary per unanswered request: caller, turn, sizes, tools offered, last user text."""
        count = len(summaries)
        super().__init__(
            f"{count} request(s) reached the scripted model with no script step to answer them "
            f"(the CLI got an error reply):\n" + "\n".join(summaries)
        )


class UnconsumedSteps(ScriptError, AssertionError):
    """The run ended with script steps left over. `remaining` maps caller -> steps left."""

    def __init__(self, remaining: dict[str, int], log: str = "") -> None:
        self.remaining = remaining
        """Caller -> number of steps never requested."""
        detail = ", ".join(f"{caller}: {count}" for caller, count in sorted(remaining.items()))
        seen = f"\nrequests seen:\n{log}" if log else ""
        super().__init__(f"script steps never requested ({detail}){seen}")


class ScriptTimeout(ScriptError, TimeoutError):
    """A wait on the scripted model, or a scripted run, took longer than its timeout."""


class StoreError(FlowerError):
    """A session store cannot be opened or used: a corrupt or foreign file, an entry it cannot hold...

    `path` is the database file involved, when there is one.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        """The database file involved, or None."""


class LeaseError(StoreError):
    """Another runner holds the lease of the session, and it was not released within the timeout; or
    another runner took the session over since this one leased it (`taken_over`).

    `session_id` is the session, `holder` who holds it (runner name, host and pid, as the holder wrote
    them), or None when the holder could not be named.
    """

    def __init__(
        self,
        message: str,
        *,
        session_id: str,
        holder: str | None,
        path: str | None = None,
        taken_over: bool = False,
    ) -> None:
        super().__init__(message, path=path)
        self.session_id = session_id
        """The session whose lease is held."""
        self.holder = holder
        """Who holds it: runner name, host and pid; None when unknown."""
        self.taken_over = taken_over
        """True when this runner had the lease and another took the session since: the store refuses this
        runner's writes to it (fencing), and its run stops."""


class WorkbenchError(FlowerError, OSError):
    """The workbench cannot be used: a directory cannot be created, `INDEX.md` cannot be written...

    `path` is the file or directory involved; the `OSError` behind it is chained (`__cause__`). A
    `Runtime` never lets it end a run: the step goes on without the index, and a `WorkbenchWarning`
    event says why.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        """The file or directory involved, or None."""
