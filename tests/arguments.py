"""What tests/test_arguments.py needs: a callable's parameters with their type hints, the bad values to try
on each, and whether a value fits a hint.

Values come from the hint, so a parameter added later is covered without a new row: a value that does not
fit the hint (an `object()`, `None` where None is not allowed, a str where a list is expected...) must be
refused, and edge values that fit it (an empty string, a negative or huge number, NaN) must be accepted or
refused with a `SpecError` that names the parameter.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import math
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Union


class Bad:
    """A value of no type flower knows."""

    def __repr__(self) -> str:
        return "<Bad>"


BAD = Bad()
EDGE_VALUES: tuple[Any, ...] = (BAD, None, "", "x", -1, 2**64, True, 1.5, math.nan, [BAD], {"key": BAD})
"""Tried on every parameter."""


@dataclass(frozen=True)
class Parameter:
    name: str
    hint: Any
    kind: inspect._ParameterKind


def target_of(obj: Any) -> Callable[..., Any]:
    """What holds the hints: a dataclass itself, a class's `__init__`, or the function."""
    if isinstance(obj, type):
        return obj if dataclasses.is_dataclass(obj) else obj.__init__  # type: ignore[misc]
    return typing.cast(Callable[..., Any], obj)


def parameters(obj: Any) -> list[Parameter]:
    """The parameters a caller passes (not `self`), with their resolved hints (Any when there is none)."""
    # names a hint spells as a string somewhere down an alias (`"Awaitable[None] | None"`) resolve here
    known = {**vars(collections.abc), **{name: getattr(typing, name) for name in typing.__all__}}
    hints = typing.get_type_hints(target_of(obj), localns=known)
    found = []
    for name, param in inspect.signature(obj).parameters.items():
        if name == "self" or param.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        found.append(Parameter(name, hints.get(name, Any), param.kind))
    return found


def _leaves(hint: Any) -> list[Any]:
    """The alternatives of a hint: `A | B | None` -> [A, B, None]."""
    if typing.get_origin(hint) in (Union, types.UnionType):
        return [leaf for arg in typing.get_args(hint) for leaf in _leaves(arg)]
    return [hint]


def _container_accepts(leaf: Any, value: Any) -> bool:
    """For the edge values only: a container holding `BAD` fits no typed container but one of Any."""
    items = list(value.values()) if isinstance(value, dict) else list(value)
    args = [a for a in typing.get_args(leaf) if a is not Ellipsis]
    holds_bad = any(item is BAD for item in items)
    if not holds_bad:
        return True
    if not args:
        return True
    item_hint = args[-1] if isinstance(value, dict) else args[0]
    if isinstance(value, dict) and not issubclass(typing.get_origin(leaf) or leaf, collections.abc.Mapping):
        return True  # a dict iterates over its keys: a list of str sees ["key"]
    return item_hint is Any


def _accepts(leaf: Any, value: Any) -> bool:
    origin = typing.get_origin(leaf) or leaf
    if leaf is None or leaf is type(None):
        return value is None
    if origin is Literal:
        return any(value == arg and type(value) is type(arg) for arg in typing.get_args(leaf))
    simple = {bool: lambda v: type(v) is bool, int: lambda v: type(v) is int, str: lambda v: type(v) is str}
    if leaf in simple:
        return simple[leaf](value)
    if leaf is float:
        return type(value) in (int, float) and math.isfinite(value)
    if origin is collections.abc.Callable:
        return callable(value)
    if not isinstance(origin, type):
        return True
    if issubclass(origin, collections.abc.Iterable) and origin is not str:
        if isinstance(value, str | bytes) or not isinstance(value, collections.abc.Iterable):
            return False
        if issubclass(origin, collections.abc.Mapping) and not isinstance(value, collections.abc.Mapping):
            return False
        return _container_accepts(leaf, value)
    try:
        return isinstance(value, origin)
    except TypeError:  # a Protocol or TypedDict: no claim
        return True


def fits(value: Any, hint: Any) -> bool:
    """Whether one of the hint's alternatives takes `value` (bool is not an int, a str not a list)."""
    leaves = _leaves(hint)
    if any(leaf is Any or leaf is object or isinstance(leaf, typing.TypeVar) for leaf in leaves):
        return True
    return any(_accepts(leaf, value) for leaf in leaves)


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def bad_values(param: Parameter) -> Iterator[tuple[Any, bool]]:
    """`(value, must_be_refused)` for every edge value: refused for sure when it does not fit the hint."""
    for value in EDGE_VALUES:
        yield value, not fits(value, param.hint)
