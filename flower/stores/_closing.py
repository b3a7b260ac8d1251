"""`async with store:` for flower's stores: the block's end closes the store, even when cancelled."""

from __future__ import annotations

from types import TracebackType
from typing import Self

import anyio

__all__ = ["AsyncClosing"]


class AsyncClosing:
    """Mixin: `__aenter__` returns the store, `__aexit__` awaits its `aclose()` shielded from cancellation."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with anyio.CancelScope(shield=True):
            await self.aclose()
