"""What a page of the docs says a program prints, checked against what it printed.

A page marks the output block of a program with `<!-- docs-output: NAME -->` right before its ```text
block. The block is compared line by line with the program's standard output, blanks collapsed, where
the page may write:

- `<~N>` for a number that varies from run to run (the length of a history that holds a temporary
  path, a date `ls` prints): it matches a number within 10% of N;
- `<anything else>` for a value that differs at every run (a commit hash, a session id, a temporary
  directory): it matches any text on that line.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["assert_prints", "docs_output"]

ROOT = Path(__file__).resolve().parent.parent
_PLACEHOLDER = re.compile(r"<~([\d,.]+)>|<[^<>\s][^<>]*>")
_NUMBER = r"([\d,]+(?:\.\d+)?)"
TOLERANCE = 0.10


def docs_output(page: str, name: str) -> str:
    """The output block `docs/<page>` shows for `name` (after `<!-- docs-output: name -->`)."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    found = re.search(rf"<!-- docs-output: {re.escape(name)} -->\n```text\n(.*?)```", text, re.S)
    assert found, (
        f"docs/{page} shows no output of {name} (a ```text block after <!-- docs-output: {name} -->)"
    )
    return found.group(1)


def _collapse(line: str) -> str:
    return " ".join(line.split())


def _line_pattern(expected: str) -> tuple[re.Pattern[str], list[float]]:
    """A regex for one expected line, and the numbers its `<~N>` placeholders stand for, in order."""
    parts, approx, at = [], [], 0
    for hit in _PLACEHOLDER.finditer(expected):
        parts.append(re.escape(expected[at : hit.start()]))
        if hit.group(1) is not None:
            approx.append(float(hit.group(1).replace(",", "")))
            parts.append(_NUMBER)
        else:
            parts.append(r"(?:.+?)")
        at = hit.end()
    parts.append(re.escape(expected[at:]))
    return re.compile("".join(parts)), approx


def assert_prints(expected: str, out: str, what: str) -> None:
    """`out` (what `what` printed) is `expected` (a docs block), line for line, as the module says."""
    want = [_collapse(line) for line in expected.strip("\n").splitlines()]
    got = [_collapse(line) for line in out.strip("\n").splitlines()]
    assert len(want) == len(got), f"{what} printed {len(got)} lines, the docs show {len(want)}:\n{out}"
    for number, (line, printed) in enumerate(zip(want, got, strict=True), 1):
        pattern, approx = _line_pattern(line)
        matched = pattern.fullmatch(printed)
        assert matched, f"{what}, line {number}: the docs show\n  {line}\nit printed\n  {printed}"
        values = [float(value.replace(",", "")) for value in matched.groups()]
        for shown, value in zip(approx, values, strict=True):
            assert abs(value - shown) <= TOLERANCE * max(abs(shown), 1), (
                f"{what}, line {number}: printed {value:g} where the docs say about {shown:g}:\n  {printed}"
            )
