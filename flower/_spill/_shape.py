"""Which parts of a tool output to spill, and the same output with those parts replaced (pure functions).

The CLI silently ignores an `updatedToolOutput` whose shape differs from the tool's output schema (measured
with CLI 2.1.327), so a replacement keeps every key, every type and every untouched value; only a string is
swapped for a (shorter) string. Lists are left alone unless asked: they can hold image blocks. Untouched
subtrees are shared with the input, never copied, so a 50 MB string is not duplicated here.

Structural exclusions, decided from the output itself:

- a Read of anything but text (`type` image, pdf, notebook, parts): its base64 data must reach the API;
- a Bash output with `isImage: true`: its `stdout` is image data;
- any value under a key named `base64`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

__all__ = ["Candidate", "FieldPath", "find_candidates", "get_at", "replace_at"]

FieldPath: TypeAlias = tuple[str | int, ...]
ListMode: TypeAlias = Literal["keep", "strings"]

_MAX_DEPTH: Final = 32


@dataclass(frozen=True)
class Candidate:
    """A part of a tool output to spill."""

    path: FieldPath
    """Keys and list indexes from the top of the output; `()` is the output itself."""
    kind: Literal["text", "lines"]
    """`text`: a string. `lines`: a list of strings (spilled joined by newlines)."""
    chars: int

    @property
    def field(self) -> str:
        """The path as a dotted name for people and the manifest (`file.content`, `stdout`)."""
        return ".".join(str(part) for part in self.path) or "output"


def find_candidates(
    tool_name: str, output: object, *, threshold: int, lists: ListMode = "keep"
) -> list[Candidate]:
    """Every part of `output` at or over `threshold` characters that may be spilled, in document order.

    With `lists="strings"`, a list made only of strings whose lines add up to `threshold` is a candidate
    (Glob and Grep file lists), and in a mixed list a single string item may be (WebSearch commentary);
    items that are not strings are never touched.
    """
    if threshold < 1:
        return []
    if isinstance(output, Mapping):
        if tool_name == "Read" and output.get("type") != "text":
            return []
        if tool_name == "Bash" and output.get("isImage") is True:
            return []
    found: list[Candidate] = []
    _walk(output, (), threshold, lists, found, 0)
    if tool_name == "Bash" and isinstance(output, Mapping):
        _bash_persisted(output, threshold, found)
    return found


def _walk(
    value: object, path: FieldPath, threshold: int, lists: ListMode, found: list[Candidate], depth: int
) -> None:
    if isinstance(value, str):
        if len(value) >= threshold:
            found.append(Candidate(path, "text", len(value)))
        return
    if depth >= _MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key != "base64" and isinstance(key, str):
                _walk(item, (*path, key), threshold, lists, found, depth + 1)
        return
    if isinstance(value, list) and lists == "strings":
        if value and all(isinstance(item, str) for item in value):
            chars = sum(len(item) for item in value) + len(value) - 1
            if chars >= threshold:
                found.append(Candidate(path, "lines", chars))
            return
        for index, item in enumerate(value):
            if isinstance(item, str) and len(item) >= threshold:
                found.append(Candidate((*path, index), "text", len(item)))


def _bash_persisted(output: Mapping[str, Any], threshold: int, found: list[Candidate]) -> None:
    """Bash keeps only the first 30,000 chars in `stdout` when it saved the whole output to a file.

    The whole output's size is `persistedOutputSize`: spill `stdout` (from that file) when the whole
    output reaches the threshold, even if the truncated `stdout` does not.
    """
    size = output.get("persistedOutputSize")
    stdout = output.get("stdout")
    if not isinstance(size, int) or size < threshold or not isinstance(stdout, str):
        return
    if any(candidate.path == ("stdout",) for candidate in found):
        return
    found.insert(0, Candidate(("stdout",), "text", len(stdout)))


def get_at(output: object, path: FieldPath) -> object:
    """The value at `path` (`KeyError`/`IndexError`/`TypeError` when the path does not exist)."""
    value = output
    for part in path:
        if isinstance(part, int):
            if not isinstance(value, list):
                raise TypeError(f"not a list at {part!r}")
            value = value[part]
        else:
            if not isinstance(value, Mapping):
                raise TypeError(f"not a mapping at {part!r}")
            value = value[part]
    return value


def replace_at(
    output: object, replacements: Mapping[FieldPath, object], *, drop: Collection[str] = ()
) -> object:
    """A new output with the values at `replacements`' paths swapped, and top-level keys in `drop` removed.

    Only the containers on the way to a replaced value are rebuilt; everything else is shared with `output`,
    which is never mutated. Key order is kept.
    """
    if () in replacements:
        return replacements[()]
    result = _rebuild(output, (), replacements)
    if drop and isinstance(result, dict):
        result = {key: value for key, value in result.items() if key not in drop}
    return result


def _rebuild(value: object, path: FieldPath, replacements: Mapping[FieldPath, object]) -> object:
    depth = len(path)
    below = [p for p in replacements if len(p) > depth and p[:depth] == path]
    if not below:
        return value
    if isinstance(value, Mapping):
        rebuilt: dict[Any, object] = {}
        for key, item in value.items():
            here = (*path, key)
            rebuilt[key] = replacements[here] if here in replacements else _rebuild(item, here, replacements)
        return rebuilt
    if isinstance(value, list):
        items: list[object] = []
        for index, item in enumerate(value):
            here = (*path, index)
            items.append(replacements[here] if here in replacements else _rebuild(item, here, replacements))
        return items
    return value
