"""Glance reads paths as the file system resolves them, follows `cd`, and keeps a small core without a jail.

Each test builds its own directory: links to /dev/zero, to `/` and out of the project, a named pipe, a
socket. The verdicts come from `glance_verdict(command, cwd=...)` and `glance_run`, as the wall calls
them; nothing here runs a command (the jail tests do).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from flower._glance import BashRules, JailSupport, glance_run, glance_verdict, take_warnings
from flower._glance._core import CORE_CAT_BYTES
from flower.events import GlanceWarning

NO_JAIL = JailSupport(available=False, platform="linux", mechanism="", reason="no Landlock in this kernel")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project holding a link to /dev/zero, a link to `/`, a link out of it, a named pipe and a socket."""
    root = tmp_path / "project"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print(1)\n")
    (root / "README.md").write_text("hello\n")
    (root / "zero").symlink_to("/dev/zero")
    (root / "up").symlink_to("/")
    (root / "out").symlink_to(tmp_path)
    (tmp_path / "secret.txt").write_text("outside\n")
    os.mkfifo(root / "pipe")
    os.mkfifo(root / "src" / "deep" / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))
    server.close()
    return root


def refused(command: str, cwd: Path) -> str:
    verdict = glance_verdict(command, cwd=str(cwd))
    assert not verdict.ephemeral, command
    return verdict.reason


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("cat zero", "device"),
        ("head -c 10 up/dev/zero", "device"),
        ("cat pipe", "named pipe"),
        ("wc -l src/deep/pipe", "named pipe"),
        ("grep x sock", "socket"),
        ("cat up/proc/kmsg", "/proc"),
        ("cat < pipe", "input from a named pipe"),
        ("grep -r x up", "whole tree"),
        ("du -sh up/", "whole tree"),
        ("cd src && cat deep/pipe", "named pipe"),
        ("cd up && cat dev/zero", "device"),
        ("cd up && grep -r x .", "whole tree"),
        ("cd src && cat ../zero", "device"),
        ("ls up/**/x", "top-level directory"),
    ],
)
def test_links_and_pipes_are_resolved_by_the_file_system(project: Path, command: str, reason: str) -> None:
    """The text names a file in the project; the file system says it is a device, a pipe or `/`."""
    assert reason in refused(command, project)
    assert glance_verdict(command).ephemeral or "cd " in command or "<" in command  # text alone: fine


@pytest.mark.parametrize(
    "command",
    [
        "cat README.md src/a.py",
        "ls -l zero pipe sock",  # names only: never opened
        "cd src && wc -l a.py && cd deep && ls",
        "grep -rn print src",
        "ls src/**/*.py",
        "cat out/secret.txt",  # outside the project, but a plain file: the jail lets it be read
    ],
)
def test_ordinary_files_pass(project: Path, command: str) -> None:
    verdict = glance_verdict(command, cwd=str(project))
    assert verdict.ephemeral, verdict.reason


def test_a_cd_leaves_both_directories_possible_after_its_list(project: Path) -> None:
    """After `cd DIR && …`, the next statement runs in DIR or, if the `cd` failed, where it started."""
    assert "named pipe" in refused("cd src && ls; cat pipe", project)
    assert "named pipe" in refused("cd src && ls; cat deep/pipe", project)
    assert "`cd` only as" in refused("cd src; cat a.py", project)
    assert "`cd` only as" in refused("cd src", project)
    assert "`cd` only as" in refused("cd src && ls || cat a.py", project)
    assert "written out in full" in refused("cd $HOME && ls", project)


def test_an_absolute_path_is_resolved_without_a_directory(tmp_path: Path) -> None:
    """`/var/run` is a link to `/run` on many systems: the text `/var/run/../dev/zero` is `/dev/zero`."""
    (tmp_path / "run").mkdir()
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "run").symlink_to(tmp_path / "run")
    deep = "/.." * len(tmp_path.parts)
    command = f"cat {tmp_path}/var/run/..{deep}/dev/zero"
    assert "device" in glance_verdict(command).reason


class TestWithoutAJail:
    """Where no jail can be had, only the core commands run, on files inside the project."""

    @pytest.mark.parametrize(
        "command",
        [
            "pwd",
            "ls -la src",
            "cat README.md | head -n 3",
            "wc -l src/a.py README.md",
            "git status --short && git log --oneline -5 -- src",
            "head -n 20 src/a.py 2>/dev/null; tail -5 README.md",
            "date +%Y-%m-%d && uname -a && whoami",
        ],
    )
    def test_core_commands_run_unjailed(self, project: Path, command: str) -> None:
        run = glance_run(command, cwd=str(project), support=NO_JAIL)
        assert run.allowed and not run.jailed, run.reason
        assert run.command == glance_verdict(command).command  # git hardened, nothing else

    @pytest.mark.parametrize(
        ("command", "why"),
        [
            ("cat zero", "device"),  # the parser already refuses it
            ("cat pipe", "named pipe"),
            ("cat out/secret.txt", "outside the working directory"),
            ("cat /etc/hostname", "outside the working directory"),
            ("ls up", "outside the working directory"),
            ("cat src", "regular file"),
            ("grep -rn x src", "not one of the core commands"),
            ("cat 'README.md'", "only plain words"),
            ("cat README.md > /dev/null", "only plain words"),
            ("cat README.md2>/dev/null", "only plain words"),
            ("echo =ls", "only plain words"),
            ("git show --format=%H", "not allowed"),
            ("git stash list", "only git"),
            ("cd src && ls", "not one of the core commands"),
            ("python3 --version", "not one of the core commands"),
            ("ls | cat", "after a pipe"),
        ],
    )
    def test_everything_else_is_refused_with_the_reason(self, project: Path, command: str, why: str) -> None:
        run = glance_run(command, cwd=str(project), support=NO_JAIL)
        assert not run.allowed and run.command == ""
        assert why in run.reason, run.reason

    def test_a_big_file_is_not_printed(self, project: Path) -> None:
        (project / "big.log").write_bytes(b"x" * (CORE_CAT_BYTES + 1))
        assert "at most 1 MiB" in glance_run("cat big.log", cwd=str(project), support=NO_JAIL).reason
        assert glance_run("tail -n 5 big.log", cwd=str(project), support=NO_JAIL).allowed

    def test_the_warning_comes_once_per_process(self, project: Path) -> None:
        take_warnings()  # whatever an earlier test of this process left
        for _ in range(3):
            glance_run("ls", cwd=str(project), support=NO_JAIL)
        warnings = take_warnings()
        assert len(warnings) <= 1 and take_warnings() == []
        for warning in warnings:
            assert isinstance(warning, GlanceWarning) and "no Landlock in this kernel" in warning.message


def test_the_users_bash_rules_hold_for_the_command_as_written(project: Path, tmp_path: Path) -> None:
    """Rules from the options, the settings argument and the settings files, deny and ask alike."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text('{"permissions": {"ask": ["Bash(git diff:*)"]}}')
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text('{"permissions": {"deny": ["Bash(head *)"]}}')
    rules = BashRules(
        disallowed=("Bash(wc)", "Read"),
        settings='{"permissions": {"deny": ["Bash(cat:*)", "Write"]}}',
        setting_sources=None,
        cwd=str(project),
        config_dir=str(config),
    )
    for command, rule in [
        ("cat README.md", "Bash(cat:*)"),
        ("ls && git diff HEAD", "Bash(git diff:*)"),
        ("head -3 README.md", "Bash(head *)"),
        ("wc -l README.md", "Bash(wc)"),
    ]:
        run = glance_run(command, cwd=str(project), rules=rules)
        assert not run.allowed and f"`{rule}`" in run.reason, (command, run.reason)
    assert glance_run("ls -la", cwd=str(project), rules=rules).allowed
    only_project = BashRules(setting_sources=("project",), cwd=str(project), config_dir=str(config))
    assert glance_run("git diff HEAD", cwd=str(project), rules=only_project).allowed  # user file not loaded


def test_process_substitutions_nest_as_deep_as_the_rest() -> None:
    """`<(…)` inside `<(…)`: checked to the same depth as other nesting, then refused (never a crash)."""

    def nested(depth: int) -> str:
        return "cat " + "<(cat " * depth + "f" + ")" * depth

    assert glance_verdict(nested(99)).ephemeral
    assert "levels deep" in glance_verdict(nested(101)).reason
    assert "levels deep" in glance_verdict(nested(1_400)).reason
