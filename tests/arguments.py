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


def _fits_items(value: Any, args: tuple[Any, ...], origin: type) -> bool:
    if not args:
        return True
    if issubclass(origin, collections.abc.Mapping):
        return all(fits(k, args[0]) and fits(v, args[1]) for k, v in value.items())
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return len(value) == len(args) and all(fits(v, a) for v, a in zip(value, args, strict=True))
    return all(fits(v, args[0]) for v in value)


def fits(value: Any, hint: Any) -> bool:
    """Whether `value` is of the type `hint` says (bool is not an int here; a str is not a list of str)."""
    if hint is Any or hint is object or isinstance(hint, typing.TypeVar):
        return True
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(fits(value, arg) for arg in typing.get_args(hint))
    if origin is Literal:
        return any(value == arg and type(value) is type(arg) for arg in typing.get_args(hint))
    if hint is None or hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is collections.abc.Callable or hint is collections.abc.Callable:
        return callable(value)
    cls = origin or hint
    if not isinstance(cls, type):
        return True  # an alias flower does not spell out: no claim
    try:
        if not isinstance(value, cls):
            return False
    except TypeError:  # a Protocol or TypedDict: isinstance cannot tell
        return True
    if isinstance(value, str | bytes) and cls not in (str, bytes):
        return False  # a str is an Iterable[str], but never what a list parameter means
    if isinstance(value, collections.abc.Iterable) and not isinstance(value, str | bytes):
        return _fits_items(value, typing.get_args(hint), cls)
    return True


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def bad_values(param: Parameter) -> Iterator[tuple[Any, bool]]:
    """`(value, must_be_refused)` for every edge value: refused for sure when it does not fit the hint."""
    for value in EDGE_VALUES:
        yield value, not fits(value, param.hint)
