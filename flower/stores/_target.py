"""The refusal of an outbox delivery that reached a store other than the one its entries were written for.

An outbox row is bound to the identity of its store (`flower.stores._identity`). The DSN or path that
named that store may reach another database later (a fail-over, a restored backup, a file replaced), so
a delivery names the identity it expects and the store checks it in the append's own transaction: the
mechanism that decides, not a check made before it.
"""

from __future__ import annotations

from .._errors import StoreError

__all__ = ["not_this_store"]


def not_this_store(expected: str, found: str | None, where: str, *, path: str | None = None) -> StoreError:
    """The `StoreError` of an append refused because `where` is the store `found`, not `expected`."""
    what = f"the store {found}" if found else "a store without an identity"
    return StoreError(
        f"{where} is {what}, not {expected} the entries were written for: they are not delivered there, "
        "and wait in the outbox (`flower doctor` lists them)",
        path=path,
    )
