"""The differential fuzzer of `tools/fuzz_glance.py`, on a small fixed-seed budget.

Every command glance accepts runs under bash with stub programs; none may run a verb off the whitelist,
run a whitelisted verb with arguments glance refuses on their own, write a file or hang. The real
campaign (tens of thousands of cases, several seeds) is run by hand before a grammar upgrade.
"""

from __future__ import annotations

import importlib.util
import random
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the fuzzer runs commands under bash")


def _load_fuzzer() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tools" / "fuzz_glance.py"
    spec = importlib.util.spec_from_file_location("fuzz_glance", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


fuzz_glance = _load_fuzzer()


def test_no_violations_on_a_fixed_seed() -> None:
    summary = fuzz_glance.fuzz(cases=1500, seed=2024, jobs=2)
    report = "\n".join(fuzz_glance.report(summary, 2024))
    assert len(summary.accepted) >= 50, report  # the generator still reaches commands glance accepts
    assert summary.violations == [], report


def test_the_oracle_sees_what_glance_must_refuse() -> None:
    """Run refused commands as if glance had accepted them: each must come out as a violation."""
    harmful = [
        "rm x",
        "ls > out",
        "sort -o out f",
        "cd /",
        "ls#;ls",
        "eval ls",
        "ls && touch ../y",
        "[ -v x ]",
    ]
    with tempfile.TemporaryDirectory() as root:
        sandbox = fuzz_glance.Sandbox(Path(root), shutil.which("bash"), timeout=5.0)
        for index, command in enumerate(harmful):
            case = fuzz_glance.Case(command)
            sandbox.run(index, case)
            fuzz_glance.judge(case)
            assert case.problems, command
        sandbox.timeout = 0.3
        hung = fuzz_glance.Case("while [[ 1 ]]; do x=1; done")
        sandbox.run(len(harmful), hung)
        assert hung.problems == ["still running after 0.3 s"]


def test_the_generator_is_deterministic() -> None:
    first = fuzz_glance.Generator(random.Random(7))
    second = fuzz_glance.Generator(random.Random(7))
    assert [first.command() for _ in range(200)] == [second.command() for _ in range(200)]
