"""Which store a run writes to: its label for messages, and its identity for the outbox.

The label is how messages name the store (its path, or its DSN without password and its schema); the
identity is what it is, whatever names it (`SqliteSessionStore.identity()`,
`PostgresSessionStore.identity()`, or an app store's own `identity()`). The outbox keys waiting rows by
the identity, so any path or DSN that reaches the same store delivers them. A store that cannot say
(unreachable now, or an app store without `identity()`) is known by its label only: `label:<label>`.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import anyio

from .._errors import StoreError
from ._outbox import LABEL
from ._postgres.store import PostgresSessionStore
from ._sqlite.store import SqliteSessionStore

__all__ = ["identity_of", "label_of"]

logger = logging.getLogger("flower.stores")

_WAIT: Final = 5.0
"""Seconds a run waits for its store to say who it is before it goes on without knowing."""


def label_of(store: Any) -> str:
    """The store as messages name it (never a password)."""
    if isinstance(store, PostgresSessionStore):
        return store.label
    if isinstance(store, SqliteSessionStore):
        return store.path
    return f"{type(store).__qualname__} at {id(store):#x}"


async def identity_of(store: Any, *, wait: float = _WAIT) -> str | None:
    """The store's identity, asked for up to `wait` seconds; None when it cannot say now (unreachable,
    read-only of an old layout). An app store without an `identity()` method is known by its label."""
    method = getattr(store, "identity", None)
    if not callable(method):
        return LABEL + label_of(store)
    try:
        with anyio.fail_after(wait):
            found = await method()
    except (StoreError, TimeoutError, OSError) as exc:
        logger.info("flower.stores: %s cannot say who it is now: %s", label_of(store), exc)
        return None
    return found if isinstance(found, str) and found else None
