"""mutmut's command line, taught to mutate functions decorated with flower's `@checked`:
`python tools/mutmut_checked.py run ...` is `mutmut run ...` (tools/mutation.py runs it so).

mutmut 3 leaves every decorated function alone (but `@staticmethod` and `@classmethod`): a decorator
could have side effects when the trampoline copies the function, or raise at import when a mutant
changes its arguments. Neither holds for `@checked` (with or without `advice=`), which only wraps a
function in a check of its arguments. So a function whose decorators are all `@checked` is mutated
here like an undecorated one: its trampoline keeps the decorator (the check runs first, at the call,
as in the package), and the original copy and the mutants that the trampoline calls are undecorated
(so the arguments are checked once, by the public function's own check, as without mutmut). The
decorator's own arguments are never mutated.

The change is made in mutmut's process before it generates the mutants (it forks its workers from
this process), on two of its internals; if a release of mutmut renames them, this fails loudly rather
than letting decorated functions go unmutated again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import libcst as cst
from mutmut.mutation import file_mutation

DECORATOR = "checked"


def is_checked(function: cst.FunctionDef) -> bool:
    """Whether `function` has decorators and each is `@checked` or `@checked(...)`."""

    def name(decorator: cst.Decorator) -> str | None:
        node = decorator.decorator
        if isinstance(node, cst.Call):
            node = node.func
        return node.value if isinstance(node, cst.Name) else None

    return bool(function.decorators) and all(name(d) == DECORATOR for d in function.decorators)


def _patch() -> None:
    visitor = file_mutation.MutationVisitor
    skip = getattr(visitor, "_skip_node_and_children", None)
    arrange = getattr(file_mutation, "function_trampoline_arrangement", None)
    if skip is None or arrange is None:
        raise SystemExit(
            "tools/mutmut_checked.py: this mutmut has no MutationVisitor._skip_node_and_children or "
            "function_trampoline_arrangement; teach the patch its new internals"
        )

    def skip_node_and_children(self: Any, node: cst.CSTNode) -> bool:
        skipped = bool(skip(self, node))
        if not skipped or not isinstance(node, cst.FunctionDef) or not is_checked(node):
            return skipped
        # skipped for its decorators, unless a pragma says to skip it (mutmut then records it as
        # ignored), or its name or its place in an enum
        name = node.name.value
        return (
            name in self.ignored_functions
            or name in file_mutation.NEVER_MUTATE_FUNCTION_NAMES
            or node in self._enum_creation_hooks
        )

    def arrangement(
        function: cst.FunctionDef, mutants: Iterable[Any], class_name: str | None
    ) -> tuple[Sequence[Any], Sequence[Any], Sequence[Any], Sequence[str]]:
        declared, nodes, assigned, names = arrange(function, mutants, class_name)
        if not is_checked(function):
            return declared, nodes, assigned, names
        # the first node is the trampoline (decorated, the check outside mutmut's switch); the others
        # are the original copy and the mutants, which it calls
        plain = [nodes[0], *(node.with_changes(decorators=()) for node in nodes[1:])]
        return declared, plain, assigned, names

    visitor._skip_node_and_children = skip_node_and_children  # type: ignore[method-assign]
    file_mutation.function_trampoline_arrangement = arrangement


def main(argv: Sequence[str]) -> None:
    # the working directory first on the import path, as `python -m mutmut` puts it (not this file's)
    sys.path[0] = os.getcwd()
    _patch()
    from mutmut.__main__ import cli

    cli.main(args=list(argv), prog_name="mutmut")


if __name__ == "__main__":
    main(sys.argv[1:])
