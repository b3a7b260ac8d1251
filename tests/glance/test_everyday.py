"""Everyday looks stay glances: at most 2 % of a hand-written table of them is refused, and the verbs added
for them (`xxd`, `strings`, `rg` without a path, `find -exec`, `xargs`) do what they say in the jail."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from flower._glance import glance_verdict, jail_support
from tests.glance.jail_world import World
from tests.glance.table import EVERYDAY

MOST_REFUSED = 0.02


def test_at_most_two_percent_of_everyday_looks_are_refused(tmp_path: Path) -> None:
    refused = {
        command: verdict.reason
        for command in EVERYDAY
        if not (verdict := glance_verdict(command, cwd=str(tmp_path))).ephemeral
    }
    assert len(EVERYDAY) >= 150 and len(set(EVERYDAY)) == len(EVERYDAY)
    assert len(refused) <= MOST_REFUSED * len(EVERYDAY), refused


JAIL = jail_support()
RUNS = {  # an everyday look: what it prints in the jail, in the world's repository
    "xxd README.md | head -1": "00000000: 6865 6c6c 6f0a",
    "strings -n 4 README.md | head -1": "hello",
    "rg -c TODO": "README.md:3",
    "rg --files | sort | head -3": "README.md\na\nb",
    "find . -name '*.md' -exec wc -l {} +": "6 ./README.md",
    "find . -name x.py -exec head -1 {} \\;": "print('x')",
    "git ls-files | xargs grep -l TODO": "README.md",
    "git ls-files README.md | xargs -n 1 head -n 1": "hello",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    world = World(tmp_path_factory.mktemp("everyday"))
    yield world
    world.close()


@pytest.mark.skipif(not JAIL.available, reason=f"this machine has no glance jail: {JAIL.reason}")
@pytest.mark.parametrize(("command", "expected"), RUNS.items(), ids=RUNS.keys())
def test_the_new_everyday_verbs_work_in_the_jail(
    world: World, shell: str, command: str, expected: str
) -> None:
    if command.startswith("rg") and shutil.which("rg") is None:
        pytest.skip("rg is not installed here")
    verdict = glance_verdict(command, cwd=str(world.repo))
    assert verdict.ephemeral, verdict.reason
    ran = world.run(verdict.command, shell=shell, wall=30)
    assert expected in ran.out and ran.rc == 0 and ran.effects == [], ran.out
