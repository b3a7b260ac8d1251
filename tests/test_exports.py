"""The public surface: every name in `__all__` exists, is documented, and the lists are sorted."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "flower",
    "flower.cost",
    "flower._doctor",
    "flower.events",
    "flower.glance",
    "flower.handoff",
    "flower._hooks",
    "flower.report",
    "flower.spill",
    "flower.stores",
    "flower.stores._outbox",
    "flower.stores._rewrite",
    "flower._terminal",
    "flower.testing",
    "flower.versions",
    "flower._wall",
    "flower.warm",
    "flower.workbench",
]


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then everything else."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key), "keep __all__ sorted (constants, classes, functions)"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.{attr} is in __all__ but missing"


@pytest.mark.parametrize("name", MODULES)
def test_public_names_have_docstrings(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        value = getattr(module, attr)
        if callable(value) and not isinstance(value, str):
            assert (value.__doc__ or "").strip(), f"{name}.{attr} has no docstring"
