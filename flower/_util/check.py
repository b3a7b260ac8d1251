"""Argument checks from type hints: one helper for every public callable, one wording for every refusal.

`@checked` on a function (or an `__init__`, or a method) checks each argument against the function's type
hints before the body runs; `check_fields(self)` in a dataclass's `__post_init__` does the same for its
fields. A value of the wrong type raises `SpecError` naming the callable and the argument, and saying what
was expected: "Runtime: env must be a mapping of str to str or None, got 3". So a parameter or a field
added later is checked without a line of code; the rules that types cannot say (a range, a non-empty
string, a template's fields) stay explicit in each callable.

What a hint means here (strict, never coercing): `int` is not satisfied by a bool, `float` takes an int but
not NaN or infinity, a `str` never counts as a sequence of str, a Literal is one of its values, a Callable
is anything callable, a Protocol is checked by the methods listed in `_STRUCTURAL` (else not at all). The
items of a list, tuple, set or mapping are checked too; a one-shot iterator is not (it would be used up).
For dataclass fields, a `tuple[X, ...]` given as a list is kept as a tuple.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import math
import os
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, ParamSpec, TypeVar, Union

from claude_agent_sdk import SessionStore

from .._errors import SpecError

__all__ = ["check_fields", "checked", "describe", "fits"]

P = ParamSpec("P")
R = TypeVar("R")

_STRUCTURAL: dict[Any, tuple[str, ...]] = {
    SessionStore: ("append", "load"),
    typing.TextIO: ("write", "flush"),
}
"""Protocols taken as arguments, with the methods a value needs to be one (the SDK's own test)."""
_NAMES: dict[Any, str] = {
    str: "a str",
    int: "an int",
    float: "a number",
    bool: "True or False",
    type(None): "None",
    os.PathLike: "a path",
    collections.abc.Callable: "a callable",
}
_LOCALS: dict[str, Any] = {**vars(collections.abc), **{n: getattr(typing, n) for n in typing.__all__}}


def describe(hint: Any) -> str:
    """What a hint asks for, in words: `str | None` -> "a str or None"."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(dict.fromkeys(describe(arg) for arg in args))
    if origin is Literal:
        return "one of " + ", ".join(repr(arg) for arg in args)
    if hint in _NAMES or origin in _NAMES:
        return _NAMES.get(hint) or _NAMES[origin]
    cls = origin or hint
    if cls is tuple and args and Ellipsis not in args:  # a fixed shape: "a (str, AgentSpec) pair"
        shape = "pair" if len(args) == 2 else "tuple"
        return f"a ({', '.join(_bare(arg) for arg in args)}) {shape}"
    if isinstance(cls, type) and issubclass(cls, collections.abc.Mapping) and len(args) == 2:
        return f"a mapping of {_bare(args[0])} to {_bare(args[1])}"
    if isinstance(cls, type) and issubclass(cls, collections.abc.Iterable) and cls is not str and args:
        item = _bare(args[0])
        return f"a sequence of {item}s" if typing.get_origin(args[0]) is tuple else f"a sequence of {item}"
    return f"a {getattr(cls, '__name__', str(cls))}"


def _bare(hint: Any) -> str:
    text = describe(hint)
    return text[2:] if text.startswith("a ") else text[3:] if text.startswith("an ") else text


def _items(value: Any, hint: Any, cls: type) -> bool:
    args = [arg for arg in typing.get_args(hint) if arg is not Ellipsis]
    if not args or isinstance(value, collections.abc.Iterator):
        return True
    if isinstance(value, collections.abc.Mapping):
        return len(args) < 2 or all(fits(k, args[0]) and fits(v, args[1]) for k, v in value.items())
    if cls is tuple and len(args) > 1:
        return len(value) == len(args) and all(fits(v, a) for v, a in zip(value, args, strict=True))
    return all(fits(item, args[0]) for item in value)


def fits(value: Any, hint: Any) -> bool:
    """Whether `value` is of the type `hint` names (see the module docstring for what that means)."""
    if hint is str or hint is bool:  # the most frequent hints, first
        return isinstance(value, hint)
    if hint is Any or hint is object or isinstance(hint, TypeVar | str | typing.ForwardRef):
        return True
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(fits(value, arg) for arg in typing.get_args(hint))
    if origin is Literal:
        return any(value == arg and type(value) is type(arg) for arg in typing.get_args(hint))
    if hint is None or hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if hint is collections.abc.Callable or origin is collections.abc.Callable:
        return callable(value)
    if hint in _STRUCTURAL:
        return all(callable(getattr(value, name, None)) for name in _STRUCTURAL[hint])
    cls = origin or hint
    if not isinstance(cls, type):
        return True  # an alias this helper does not know: no claim
    try:
        if not isinstance(value, cls):
            return False
    except TypeError:  # a Protocol or a TypedDict: isinstance cannot tell
        return True
    if isinstance(value, str | bytes):
        return cls in (str, bytes) or not issubclass(cls, collections.abc.Iterable)
    if isinstance(value, collections.abc.Iterable):
        return _items(value, hint, cls)
    return True


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def refuse(owner: str, name: str, hint: Any, value: Any, advice: str = "") -> SpecError:
    """The error for `value` given as `name`, which must be of type `hint` (then `advice`, if any)."""
    return SpecError(f"{owner}: {name} must be {describe(hint)}, got {_shown(value)}{advice}")


@functools.cache
def _hints(function: Any) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(function, localns=_LOCALS)
    except (NameError, TypeError):  # a name only known to type checkers: that callable goes unchecked
        return {}
    hints.pop("return", None)
    return hints


@typing.overload
def checked(function: Callable[P, R], /) -> Callable[P, R]: ...


@typing.overload
def checked(*, advice: dict[str, str]) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


def checked(
    function: Callable[P, R] | None = None, /, *, advice: dict[str, str] | None = None
) -> Callable[P, R] | Callable[[Callable[P, R]], Callable[P, R]]:
    """Check every argument of `function` against its type hints at each call (`SpecError` naming it).

    For a coroutine function the check runs at the call, before the coroutine is created.
    `@checked(advice={"workers": "..."})` adds a sentence to the refusal of an argument, for a mistake
    worth a word more than the type (a list where names are needed).
    """
    if function is None:
        return functools.partial(_checked, advice=advice or {})
    return _checked(function, advice=advice or {})


def _checked(function: Callable[P, R], advice: dict[str, str]) -> Callable[P, R]:
    owner = function.__qualname__.removesuffix(".__init__")
    kinds = inspect.Parameter
    params = inspect.signature(function).parameters.values()
    positional = [p.name for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    rest = next((p.name for p in params if p.kind is kinds.VAR_POSITIONAL), None)

    def check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        # no signature.bind (7 us a call): a call that does not match the signature fails in the function
        hints = _hints(function)
        if not hints:
            return
        given = [*zip(positional, args, strict=False), *kwargs.items()]
        if rest is not None:
            given += [(rest, item) for item in args[len(positional) :]]
        for name, value in given:
            hint = hints.get(name)
            if hint is not None and not fits(value, hint):
                raise refuse(owner, name, hint, value, advice.get(name, ""))

    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def checked_coroutine(*args: Any, **kwargs: Any) -> Any:
            check(args, kwargs)
            return await function(*args, **kwargs)

        return typing.cast(Callable[P, R], checked_coroutine)

    @functools.wraps(function)
    def checked_function(*args: P.args, **kwargs: P.kwargs) -> R:
        check(args, kwargs)
        return function(*args, **kwargs)

    return checked_function


def check_fields(instance: Any) -> None:
    """Check every field of a dataclass instance against its hint; a tuple field given as a list is kept
    as a tuple. Call it first in `__post_init__`."""
    cls: Any = type(instance)
    hints = _hints(cls)
    for field in dataclasses.fields(instance):
        hint = hints.get(field.name)
        value = getattr(instance, field.name)
        if hint is None:
            continue
        tuple_hint = _tuple_of(hint)
        if tuple_hint is not None and isinstance(value, list | collections.abc.KeysView | set | frozenset):
            value = tuple(value)
            object.__setattr__(instance, field.name, value)
        if not fits(value, hint):
            raise SpecError(f"{cls.__name__}.{field.name} must be {describe(hint)}, got {_shown(value)}")


def _tuple_of(hint: Any) -> Any:
    """`tuple[X, ...]` (or `tuple[X, ...] | None`) -> the tuple hint, else None."""
    for candidate in (hint, *typing.get_args(hint)):
        if typing.get_origin(candidate) is tuple:
            return candidate
    return None
