"""The wall's decision on a Bash call (`glance_run`), branch by branch, and the user's `Bash(...)` rules.

Each branch of `glance_run` is compared whole with the `GlanceRun` it must give: refused by the parser,
by a settings file that cannot be read, by a rule, by a jail that cannot start, by the core without a
jail, and allowed jailed or not. The jail here is described, never started (`JailSupport`): the command
is only built (`jail_command`); the jail tests run it. The rules come from the options, the settings
argument (text or a file), the settings files and the managed file, read as the CLI reads them.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions

from flower._glance import (
    BashRules,
    GlanceRun,
    JailLimits,
    JailSupport,
    _deny,
    _wall,
    glance_run,
    glance_verdict,
    jail_command,
)
from flower._glance._core import core_refusal
from flower._glance._deny import _matches
from flower.events import GlanceWarning

NO_JAIL = JailSupport(available=False, platform="linux", mechanism="", reason="no Landlock in this kernel")
JAIL = JailSupport(available=True, platform="linux", mechanism="landlock+seccomp", landlock_abi=6)
WARNING = (
    "no glance jail on this machine (no Landlock in this kernel): the coordinator runs only core glances "
    "itself (pwd, ls, cat/head/tail/wc of project files, git status/log/diff/show) and delegates the rest"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("hello\n")
    return root


@pytest.fixture
def fresh_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that has not warned yet (the warning comes once per process)."""
    monkeypatch.setattr(_wall, "_warned", [])
    monkeypatch.setattr(_wall, "_pending", [])


def _settings(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class TestGlanceRun:
    def test_a_refusal_of_the_parser_is_passed_on(self, project: Path) -> None:
        verdict = glance_verdict("rm -rf src", cwd=str(project))
        expected = GlanceRun(False, "`rm` is not a read-only command", "", False, verdict)
        assert glance_run("rm -rf src", cwd=str(project), support=JAIL) == expected

    def test_settings_that_cannot_be_read_refuse(self, project: Path) -> None:
        rules = BashRules(settings='{"permissions": {"deny": "Bash(ls)"}}', cwd=str(project))
        reason = (
            "the permission settings could not be read (permissions.deny is not a list), so no glance runs"
        )
        expected = GlanceRun(False, reason, "", False, glance_verdict("ls", cwd=str(project)))
        assert glance_run("ls", cwd=str(project), rules=rules, support=JAIL) == expected

    def test_a_rule_of_the_working_directory_refuses(self, project: Path) -> None:
        """The rules read the project's settings where the command runs, when the options name no cwd."""
        _settings(project, ".claude/settings.json", '{"permissions": {"deny": ["Bash(ls:*)"]}}')
        rules = BashRules(setting_sources=("project",))
        expected = GlanceRun(
            False, "the permission rule `Bash(ls:*)` matches it", "", False, glance_verdict("ls src")
        )
        assert glance_run("ls src", cwd=str(project), rules=rules, support=JAIL) == expected

    def test_an_accepted_glance_runs_in_the_jail_with_the_limits(self, project: Path) -> None:
        limits = JailLimits(wall_seconds=2, output_bytes=1_000)
        verdict = glance_verdict("git status", cwd=str(project))
        jailed = jail_command(verdict.command, limits=limits)
        expected = GlanceRun(True, verdict.reason, jailed, True, verdict)
        assert expected.command != jail_command(verdict.command)  # the limits are in the command
        run = glance_run("git status", cwd=str(project), rules=BashRules(), limits=limits, support=JAIL)
        assert run == expected

    def test_a_jail_that_cannot_start_refuses(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(sys, "executable", "")
        reason = "the glance jail cannot start (jail_command needs the absolute path of a Python interpreter)"
        expected = GlanceRun(False, reason, "", False, glance_verdict("ls", cwd=str(project)))
        assert glance_run("ls", cwd=str(project), support=JAIL) == expected

    def test_without_a_jail_a_core_glance_runs_unjailed(self, project: Path, fresh_warning: None) -> None:
        verdict = glance_verdict("git log -3", cwd=str(project))
        expected = GlanceRun(True, verdict.reason, verdict.command, False, verdict)
        assert glance_run("git log -3", cwd=str(project), support=NO_JAIL) == expected

    def test_without_a_jail_the_rest_is_refused(self, project: Path, fresh_warning: None) -> None:
        why = core_refusal("grep -rn x src", str(project))
        assert why == "`grep` is not one of the core commands"
        reason = (
            "this machine has no glance jail (no Landlock in this kernel), and without one only core "
            f"commands run here: {why}"
        )
        expected = GlanceRun(False, reason, "", False, glance_verdict("grep -rn x src", cwd=str(project)))
        assert glance_run("grep -rn x src", cwd=str(project), support=NO_JAIL) == expected

    def test_the_warning_is_logged_and_sent_once(
        self, project: Path, fresh_warning: None, caplog: pytest.LogCaptureFixture
    ) -> None:
        with caplog.at_level(logging.WARNING, logger="flower.glance"):
            for _ in range(3):
                glance_run("pwd", cwd=str(project), support=NO_JAIL)
        assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
            ("flower.glance", logging.WARNING, WARNING)
        ]
        assert _wall.take_warnings() == [GlanceWarning(message=WARNING, reason="no Landlock in this kernel")]
        assert _wall.take_warnings() == []


class TestRules:
    @pytest.mark.parametrize(
        ("rule", "command", "matches"),
        [
            ("Bash", "anything at all", True),
            ("Bash()", "ls", True),
            ("Bash(*)", "ls -la\nmore", True),
            ("Bash(:*)", "ls", True),
            ("Bash(git log :*)", "git log", True),
            ("Bash(cat:*)", "cab x", False),
            ("Bash(cat:*)", "cat x", True),
            ("Bash(echo *)", "echo a\nb", True),
            ("Bash(echo *)", "cat a", False),
            ("Bash(git log)", "git log -1", True),
            ("Bash(git log)", "git logs", False),
        ],
    )
    def test_a_rule_matches_as_the_cli_would_or_more(self, rule: str, command: str, matches: bool) -> None:
        assert _matches(rule, command) is matches

    def test_bash_alone_denies_every_glance(self, project: Path) -> None:
        rules = BashRules(disallowed=("Read", "Bash"), setting_sources=(), cwd=str(project))
        assert rules.match("ls", ["ls"]) == "Bash"

    def test_a_settings_file_named_relative_to_the_cwd_is_read_with_its_bom(self, project: Path) -> None:
        (project / "custom.json").write_bytes('\ufeff{"permissions": {"ask": ["Bash(ls)"]}}'.encode())
        rules = BashRules(settings=" custom.json ", setting_sources=(), cwd=str(project))
        assert rules.rules() == ["Bash(ls)"]

    def test_settings_files_with_a_bom_are_read(self, project: Path) -> None:
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_bytes(
            '\ufeff{"permissions": {"deny": [" Bash(cat:*) ", "Read", 3]}}'.encode()
        )
        assert BashRules(setting_sources=("project",), cwd=str(project)).rules() == ["Bash(cat:*)"]

    def test_the_options_cwd_comes_before_the_commands(self, project: Path, tmp_path: Path) -> None:
        _settings(project, ".claude/settings.local.json", '{"permissions": {"deny": ["Bash(pwd)"]}}')
        rules = BashRules(setting_sources=("local",), cwd=str(project))
        assert rules.rules(cwd=str(tmp_path)) == ["Bash(pwd)"]
        assert rules.rules() == ["Bash(pwd)"]
        assert BashRules(setting_sources=("local",)).rules(cwd=str(project)) == ["Bash(pwd)"]

    def test_settings_that_are_not_an_object_hold_no_rule(self, project: Path) -> None:
        _settings(project, "list.json", "[1, 2]")
        assert BashRules(settings="list.json", setting_sources=(), cwd=str(project)).rules() == []
        assert BashRules(settings='{"permissions": 3}', setting_sources=(), cwd=str(project)).rules() == []

    def test_a_list_that_is_not_one_is_an_error_naming_it(self, project: Path) -> None:
        settings = '{"permissions": {"ask": {"Bash": 1}}}'
        rules = BashRules(settings=settings, setting_sources=(), cwd=str(project))
        with pytest.raises(ValueError, match=r"^permissions\.ask is not a list$"):
            rules.rules()

    def test_the_user_file_defaults_to_the_home_directory(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("HOME", str(tmp_path))
        _settings(tmp_path, ".claude/settings.json", '{"permissions": {"deny": ["Bash(whoami)"]}}')
        assert BashRules(setting_sources=("user",), cwd=str(tmp_path)).rules() == ["Bash(whoami)"]

    def test_the_managed_file_is_always_read(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        managed = _settings(project, "managed.json", '{"permissions": {"deny": ["Bash(id)"]}}')
        monkeypatch.setitem(_deny._MANAGED, sys.platform, str(managed))
        assert BashRules(setting_sources=(), cwd=str(project)).rules() == ["Bash(id)"]
        monkeypatch.delitem(_deny._MANAGED, sys.platform)
        assert BashRules(setting_sources=(), cwd=str(project)).rules() == []


class TestFromOptions:
    def test_every_field_is_taken(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        options = ClaudeAgentOptions(
            disallowed_tools=["Bash(rm:*)", "Write"],
            settings='{"permissions": {}}',
            setting_sources=["project"],
            cwd=tmp_path,
            env={"CLAUDE_CONFIG_DIR": "/from/options"},
        )
        assert BashRules.from_options(options) == BashRules(
            disallowed=("Bash(rm:*)", "Write"),
            settings='{"permissions": {}}',
            setting_sources=("project",),
            cwd=str(tmp_path),
            config_dir="/from/options",
        )
        given = BashRules.from_options(options, env={"CLAUDE_CONFIG_DIR": "/given"})
        assert given.config_dir == "/given"

    def test_the_defaults(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/from/process")
        rules = BashRules.from_options(ClaudeAgentOptions())
        assert rules == BashRules(setting_sources=None, config_dir="/from/process")
        assert BashRules.from_options(ClaudeAgentOptions(), env={}).config_dir == "/from/process"

    def test_anything_without_the_fields_gives_the_defaults(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        assert BashRules.from_options(object()) == BashRules(setting_sources=None)
