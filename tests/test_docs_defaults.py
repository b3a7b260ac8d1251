"""Every default the docs state is the code's: change one without the other and this fails.

Three ways a page states a default, each read from the Markdown and compared with
`inspect.signature` of the public callable it names:
- a signature: `` `coordinator(name, instructions, workers, *, glance=True, ...)` `` (a span that names
  a positional parameter or `*`): every `name=literal` in it is a default;
- a signature shown as a block (```text or ```python holding `name(...) -> ...` alone);
- a parameter's default in words: `` `own_steps` (default 1 with a coordinator) ``, for the callable the
  paragraph documents (the nearest signature before it);
- a policy's defaults: `` `TrimPolicy(keep_recent=20, min_chars=2000)`, off by default `` ("by
  default" or "the default" right after the span).
Values that are not literals (`...`, `WORKER_RULES`) are not compared.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import flower

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("**/*.md")])
PUBLIC: dict[str, Any] = {name: getattr(flower, name) for name in flower.__all__}

_CALL = re.compile(r"`([A-Za-z_][\w.]*)\(([^`]*)\)`")
_KWARG = re.compile(r"([a-z_]\w*)=([^,()]+)")
_IN_WORDS = re.compile(r"`([a-z_]\w*)` \(default `?([^`),;]+?)`?(?: with [^)]*)?\)")
_NONE = object()


def _literal(text: str) -> Any:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return _NONE
    return _NONE if value is Ellipsis else value


def _signature_like(args: str) -> bool:
    return bool(re.search(r"(^|, )\*(,|$)", args) or re.match(r"\s*[a-z_]\w*\s*(,|$)", args))


def stated(text: str) -> Iterator[tuple[str, str, Any]]:
    """(callable, parameter, value) for every default `text` states, as the module docstring says."""
    documented: str | None = None
    spans = [(m.start(), m) for m in _CALL.finditer(text)] + [
        (m.start(), m) for m in _IN_WORDS.finditer(text)
    ]
    for _, match in sorted(spans, key=lambda pair: pair[0]):
        if match.re is _IN_WORDS:
            value = _literal(match.group(2))
            if documented is not None and value is not _NONE:
                yield documented, match.group(1), value
            continue
        name, args = match.group(1).split(".")[-1], match.group(2)
        if name not in PUBLIC:
            continue
        signature = _signature_like(args)
        if signature:
            documented = name
        after = text[match.end() : match.end() + 25].lower()
        policy = name.endswith("Policy") and ("by default" in after or "the default" in after)
        if signature or policy:
            for key, raw in _KWARG.findall(args):
                value = _literal(raw)
                if value is not _NONE:
                    yield name, key, value


_FENCE = re.compile(r"^```(?:text|python)\n(.*?)^```", re.S | re.M)
_SIGNATURE = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)\s*(?:->.*)?", re.S)


def fenced(raw: str) -> Iterator[tuple[str, str, Any]]:
    """(callable, parameter, value) for every signature block of the page's raw Markdown."""
    for block in _FENCE.findall(raw):
        code = " ".join(line.split("#")[0] for line in block.splitlines()).strip()
        match = _SIGNATURE.fullmatch(code)
        if match is None or match.group(1).split(".")[-1] not in PUBLIC:
            continue
        name, args = match.group(1).split(".")[-1], " ".join(match.group(2).split())
        if _signature_like(args):
            for key, value_text in _KWARG.findall(args):
                value = _literal(value_text)
                if value is not _NONE:
                    yield name, key, value


def _default(name: str, parameter: str) -> Any:
    target: Callable[..., Any] = PUBLIC[name]
    found = inspect.signature(target).parameters.get(parameter)
    assert found is not None, f"{name} has no parameter {parameter!r}"
    return found.default


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_default_a_page_states_is_the_codes(page: Path) -> None:
    raw = page.read_text(encoding="utf-8")
    wrong = [
        f"{name}({parameter}={value!r}): the code's default is {_default(name, parameter)!r}"
        for name, parameter, value in [*stated(" ".join(raw.split())), *fenced(raw)]
        if _default(name, parameter) != value
    ]
    assert wrong == [], f"{page.relative_to(ROOT)} states defaults the code does not have: {wrong}"


def test_the_pages_state_the_defaults_users_tune_most() -> None:
    """The check reads what it should: the defaults users tune most are among those it compares."""
    every: set[tuple[str, str]] = set()
    for page in PAGES:
        raw = page.read_text(encoding="utf-8")
        every |= {(n, p) for n, p, _ in [*stated(" ".join(raw.split())), *fenced(raw)]}
    for pair in [
        ("Runtime", "spill_threshold"),
        ("Runtime", "workbench"),
        ("coordinator", "own_steps"),
        ("coordinator", "glance"),
        ("worker", "model"),
        ("TrimPolicy", "keep_recent"),
        ("TrimPolicy", "min_chars"),
        ("EphemeralPolicy", "keep_recent"),
        ("Workbench", "max_entries"),
        ("instrument", "spill_threshold"),
        ("instrument", "keep_denials"),
    ]:
        assert pair in every, pair


def test_the_check_catches_a_changed_default() -> None:
    page = (
        "`coordinator(name, instructions, workers, *, glance=False, own_steps=1)` and `Runtime(trim=True)`."
    )
    assert ("coordinator", "glance", False) in list(stated(page))
    assert ("Runtime", "trim", True) not in list(stated(page))  # an example, not a default
    policy = "`TrimPolicy(keep_recent=21, min_chars=2000)`, off by default; `HandoffPolicy(reserve=5)` here."
    assert ("TrimPolicy", "keep_recent", 21) in list(stated(policy))
    assert ("HandoffPolicy", "reserve", 5) not in list(stated(policy))
