"""What the wall's tests through the real CLI share: a helper worker, the refusal's way to delegate, and a
`Runtime` on the scripted model with more environment for the CLI (the shell, planted secrets)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from flower import Runtime, worker
from flower.testing import ScriptedModel

HELPER = worker("Does anything.", "You do things.", tools=["Bash", "Write"])
WAY = "Delegate it: call the Agent tool with a worker"


def runtime(model: ScriptedModel, workspace: Path, env: dict[str, str]) -> Runtime:
    """A `Runtime` whose CLI talks to `model` with `env` on top of flower's own environment."""

    def configure(options: Any) -> Any:
        return model.attach(dataclasses.replace(options, env={**options.env, **env}))

    return Runtime(workspace, configure=configure)
