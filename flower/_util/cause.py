"""An exception as words for a person: never an empty message."""

from __future__ import annotations

__all__ = ["cause_text"]


def cause_text(exc: BaseException) -> str:
    """`str(exc)`, or, when that says nothing (`TimeoutError()`), the exception's type (and its repr when its
    arguments say something `str` did not).

    A message like "error: " with nothing after it leaves the user with no cause at all.
    """
    text = str(exc).strip()
    if text:
        return text
    name = type(exc).__name__
    if all(not str(arg).strip() for arg in exc.args):
        return f"{name} (no message)"
    return f"{name} (no message): {exc!r}"
