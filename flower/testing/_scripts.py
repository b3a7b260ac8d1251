"""A caller's script: a list of steps consumed one per request, or a callable asked for every request."""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable, Iterable
from typing import TypeAlias

from .._errors import SpecError
from ._requests import RecordedRequest
from ._steps import DropConnection, HttpError, Reply, Step, StreamError, as_concrete

__all__ = ["Concrete", "Script", "ScriptLike"]

Concrete: TypeAlias = Reply | HttpError | DropConnection | StreamError
ScriptLike: TypeAlias = "Script | Iterable[Step] | Callable[[RecordedRequest], object]"
"""What `ScriptedModel.script()` accepts: a `Script`, a list of steps, or a callable."""

_MAX_INDIRECTION = 16


class Script:
    """The steps of one caller.

    - A list (any iterable) of steps is consumed in order, one step per request; retries consume steps too,
      so `[http_error(529), "ok"]` answers a request and its retry. When it runs out, the next request is
      unexpected.
    - A callable is asked for every request and never runs out; returning `None` makes that request
      unexpected. It may be `async`.
    """

    def __init__(self, steps: Iterable[Step] | Callable[[RecordedRequest], object]) -> None:
        if isinstance(steps, str | bytes) or not (callable(steps) or isinstance(steps, Iterable)):
            raise SpecError(
                f"a script is a list of steps or a callable(request) -> step, got {type(steps).__name__}"
            )
        self._function: Callable[[RecordedRequest], object] | None = None
        self._steps: deque[object] = deque()
        if callable(steps) and not isinstance(steps, Iterable):
            self._function = steps
        else:
            for step in steps:
                if not callable(step):
                    as_concrete(step)  # validate shorthand now, not mid-run
                self._steps.append(step)

    @classmethod
    def of(cls, script: ScriptLike) -> Script:
        """`script` itself if it is a `Script`, else a `Script` over it (a list of steps or a callable)."""
        return script if isinstance(script, Script) else cls(script)

    @property
    def remaining(self) -> int:
        """Steps not consumed yet (0 for a callable script)."""
        return len(self._steps)

    def extend(self, steps: Iterable[Step]) -> None:
        """Append steps to a list script."""
        if self._function is not None:
            raise SpecError("cannot extend a callable script")
        for step in steps:
            if not callable(step):
                as_concrete(step)
            self._steps.append(step)

    def take(self) -> object | None:
        """The next raw step (a callable is returned as is), or None when the list is exhausted."""
        if self._function is not None:
            return self._function
        return self._steps.popleft() if self._steps else None


async def resolve(step: object, request: RecordedRequest) -> Concrete | None:
    """Call dynamic steps until a concrete answer comes out (None: the script declined the request)."""
    for _ in range(_MAX_INDIRECTION):
        if step is None:
            return None
        if callable(step) and not isinstance(step, Reply | HttpError | DropConnection | StreamError):
            step = step(request)
            if inspect.isawaitable(step):
                step = await step
            continue
        return as_concrete(step)
    raise SpecError(f"a dynamic step returned callables {_MAX_INDIRECTION} times in a row")
