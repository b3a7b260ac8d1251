"""The smallest session store a layer may wrap: append and load only, no SessionStore base."""

from __future__ import annotations


class AppendLoadOnly:
    """The protocol's minimum, duck-typed (no SessionStore base): append and load."""

    def __init__(self) -> None:
        self.data: dict[str, list] = {}

    async def append(self, key, entries):  # type: ignore[no-untyped-def]
        self.data.setdefault(f"{key['project_key']}/{key['session_id']}/{key.get('subpath')}", []).extend(
            entries
        )

    async def load(self, key):  # type: ignore[no-untyped-def]
        return self.data.get(f"{key['project_key']}/{key['session_id']}/{key.get('subpath')}")
