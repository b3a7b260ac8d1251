"""Fake credentials planted for a run whose glances go through the jail, and the shells it runs under."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from flower.testing import ScriptedModel
from flower.testing._cli_env import FAKE_API_KEY
from tests.credentials import CHANGE_THE_CLI, VARIABLES, fake_environment, plant

SHELLS = [path for path in ("/bin/bash", shutil.which("zsh")) if path and os.access(path, os.X_OK)]


def _secrets(scripted_model: ScriptedModel, home: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The CLI's fake environment (every credential variable but those it needs to reach the scripted
    model, whose own fake key counts), and every value that must not reach the model."""
    env = fake_environment(tuple(name for name in VARIABLES if name not in CHANGE_THE_CLI))
    config = Path(scripted_model.config_dir)
    values = {**env, **plant(home), **plant(config), "the scripted model's key": FAKE_API_KEY}
    (config / ".credentials.json").write_text((config / ".claude" / ".credentials.json").read_text())
    return {**env, "HOME": str(home)}, values
