"""`hang_guard()`: how long a test harness wait may last before it counts as a hang.

Every wait of the harness (`ScriptedModel.run`, `wait_for`, `OtlpReceiver.wait_for`) and of flower's own
tests is a hang guard, never a speed check: it is there so that a run that will never finish fails with
a diagnosis instead of blocking the suite forever, and it is long enough that a slow or busy machine never
reaches it (the CLI's cold start alone took 20 s and a scripted run several minutes at load average 45).
A test that must see something happen waits for the event itself (a request arriving, a span received),
with this as its bound.

`FLOWER_TEST_HANG_GUARD` sets it in seconds (default 600); raise it for a machine slower still, lower it
to find a hang sooner while you work.
"""

from __future__ import annotations

import math
import os

from .._errors import SpecError

__all__ = ["DEFAULT_HANG_GUARD", "HANG_GUARD_ENV", "hang_guard"]

HANG_GUARD_ENV = "FLOWER_TEST_HANG_GUARD"
"""The environment variable that sets `hang_guard()`, in seconds."""

DEFAULT_HANG_GUARD = 600.0
"""`hang_guard()` when `FLOWER_TEST_HANG_GUARD` is unset: 10 minutes."""


def hang_guard() -> float:
    """Seconds a harness wait lasts before it fails as a hang: `$FLOWER_TEST_HANG_GUARD`, else 600.

    Read on every call, so a test (or `monkeypatch.setenv`) can change it. A value that is not a number
    of seconds > 0 is a `SpecError` naming the variable.

    Example::

        subprocess.run(argv, timeout=hang_guard())       # a hang fails the test; slowness never does
        await scripted_model.run("Go", cwd=workspace)    # the same bound, by default
    """
    raw = os.environ.get(HANG_GUARD_ENV, "").strip()
    if not raw:
        return DEFAULT_HANG_GUARD
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise SpecError(f"{HANG_GUARD_ENV} must be a number of seconds > 0, got {raw!r}")
    return value


def guard(timeout: float | None) -> float:
    """`timeout` when given (checked > 0), else `hang_guard()`."""
    if timeout is None:
        return hang_guard()
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise SpecError(f"timeout must be a number of seconds > 0 (or None: the hang guard), got {timeout!r}")
    return float(timeout)
