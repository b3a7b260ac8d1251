"""Does the CLI have a way to authenticate? Checked before a run so a missing key fails clearly, at once."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .._errors import CredentialsError

_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_PROVIDERS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no", "off")


def credential_sources(env: Mapping[str, str]) -> list[str]:
    """Where the CLI would find credentials: variable names and the login file, never their values.

    `env` is what the CLI will get on top of this process's environment (its entries win).
    """
    merged = {**os.environ, **env}
    found = [f"{key} is set" for key in _KEYS if merged.get(key)]
    found += [f"{key} is on" for key in _PROVIDERS if _truthy(merged.get(key))]
    config = merged.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    login = Path(config) / ".credentials.json"
    if login.is_file():
        found.append(f"a CLI login ({login})")
    return found


def has_credentials(env: Mapping[str, str]) -> bool:
    """An API key or token, a cloud provider switch, or a CLI login in the config directory."""
    return bool(credential_sources(env))


def require_credentials(env: Mapping[str, str]) -> None:
    if not has_credentials(env):
        raise CredentialsError(
            "no credentials for the Claude Code CLI: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN / "
            "CLAUDE_CODE_OAUTH_TOKEN), log in with the `claude` CLI, or run offline against "
            "flower.testing.ScriptedModel (Runtime(..., configure=model.attach)). "
            "Runtime(check_credentials=False) skips this check."
        )
