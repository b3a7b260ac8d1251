"""The user's `Bash(...)` deny rules, checked against the command the model wrote.

A glance runs as a rewritten command (the jail's launcher, or git with read-only options), and the CLI
checks its permission rules against the rewritten text: a rule written for the model's command
(`"deny": ["Bash(git log:*)"]`) no longer matches it. So the wall checks the model's command itself
against every `Bash` rule it can see, and refuses the glance when one matches:

- the options' `disallowed_tools` (`Bash(rm:*)`);
- the settings given in the options (`settings`: JSON text or a file path);
- the settings files the options' `setting_sources` load: `user` (`$CLAUDE_CONFIG_DIR/settings.json`),
  `project` (`.claude/settings.json`) and `local` (`.claude/settings.local.json`) in the working
  directory (all three when `setting_sources` is None), and the managed settings file, which the CLI
  always reads.

`deny` and `ask` rules both count (a headless run cannot ask; a glance must not skip the question). The
files are read at each check, so an edit during a run holds at once. A file that exists but cannot be
read refuses every glance (fail closed). The matching errs toward refusing: `Bash(git log)` also
matches `git log -1`, and each simple command of a compound is matched on its own.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BashRules"]

_MANAGED = {
    "linux": "/etc/claude-code/managed-settings.json",
    "darwin": "/Library/Application Support/ClaudeCode/managed-settings.json",
}
_SOURCES = ("user", "project", "local")


@dataclass(frozen=True, kw_only=True)
class BashRules:
    """Where the user's `Bash(...)` permission rules come from; `match()` reads them and checks a command."""

    disallowed: tuple[str, ...] = ()
    """The options' `disallowed_tools` (only the `Bash` entries matter)."""
    settings: str | None = None
    """The options' `settings`: JSON text, or the path of a settings file (relative to `cwd`)."""
    setting_sources: tuple[str, ...] | None = ()
    """The options' `setting_sources`; None loads all three (the CLI's default)."""
    cwd: str | None = None
    """The directory the CLI runs in (project and local settings, a relative `settings` path)."""
    config_dir: str | None = None
    """`CLAUDE_CONFIG_DIR` as the CLI sees it (user settings); None: `~/.claude`."""

    @classmethod
    def from_options(cls, options: Any, env: Mapping[str, str] | None = None) -> BashRules:
        """The rules of a `ClaudeAgentOptions` (or of anything with its fields)."""
        merged = {**os.environ, **(env if env is not None else (getattr(options, "env", None) or {}))}
        sources = getattr(options, "setting_sources", None)
        cwd = getattr(options, "cwd", None)
        return cls(
            disallowed=tuple(str(tool) for tool in getattr(options, "disallowed_tools", None) or ()),
            settings=getattr(options, "settings", None),
            setting_sources=None if sources is None else tuple(str(source) for source in sources),
            cwd=None if cwd is None else str(cwd),
            config_dir=merged.get("CLAUDE_CONFIG_DIR"),
        )

    def rules(self, cwd: str | None = None) -> list[str]:
        """Every `Bash` deny and ask rule in force now. Raises `OSError`/`ValueError` for a settings file
        that exists but cannot be read or parsed."""
        found = [rule for rule in self.disallowed if _is_bash(rule)]
        base = Path(self.cwd or cwd or os.getcwd())
        if self.settings:
            text = self.settings.strip()
            found += _from_text(text if text.startswith("{") else (base / text).read_text("utf-8-sig"))
        for path in self._files(base):
            if path.is_file():
                found += _from_text(path.read_text("utf-8-sig"))
        return found

    def _files(self, base: Path) -> list[Path]:
        sources = _SOURCES if self.setting_sources is None else self.setting_sources
        config = Path(self.config_dir) if self.config_dir else Path.home() / ".claude"
        files = {"user": config / "settings.json", "project": base / ".claude" / "settings.json"}
        files["local"] = base / ".claude" / "settings.local.json"
        managed = _MANAGED.get(sys.platform)
        return [files[source] for source in sources if source in files] + ([Path(managed)] if managed else [])

    def match(self, command: str, segments: Iterable[str], cwd: str | None = None) -> str:
        """The first rule that matches `command` or one of its simple commands, or ''."""
        parts = [command.strip(), *(segment.strip() for segment in segments)]
        for rule in self.rules(cwd):
            if any(_matches(rule, part) for part in parts):
                return rule
        return ""


def _is_bash(rule: str) -> bool:
    return rule == "Bash" or rule.startswith("Bash(")


def _from_text(text: str) -> list[str]:
    data = json.loads(text)
    permissions = data.get("permissions") if isinstance(data, dict) else None
    if not isinstance(permissions, dict):
        return []
    found: list[str] = []
    for key in ("deny", "ask"):
        rules = permissions.get(key) or []
        if not isinstance(rules, list):
            raise ValueError(f"permissions.{key} is not a list")
        found += [rule for rule in rules if isinstance(rule, str) and _is_bash(rule.strip())]
    return [rule.strip() for rule in found]


def _matches(rule: str, command: str) -> bool:
    """Whether `Bash(...)` `rule` matches `command`, erring toward a match.

    `Bash` and `Bash(*)` match everything; `Bash(x:*)` every command that starts with `x`; a `*`
    anywhere matches any text; `Bash(x)` matches `x` and `x` followed by more words.
    """
    inner = rule[len("Bash(") :].removesuffix(")").strip()  # `Bash` alone leaves nothing
    if not inner:
        return True  # `*` and `:*` match everything through the rules below
    if inner.endswith(":*"):
        return command.startswith(inner[:-2].rstrip())
    if "*" in inner:
        pattern = ".*".join(re.escape(piece) for piece in inner.split("*"))
        return re.fullmatch(pattern, command, re.S) is not None
    return command == inner or command.startswith(inner + " ")
