"""The context window of each model, as the bundled CLI reports it (`rawMaxTokens`).

A store keeps no window: the CLI reports it in `get_context_usage()` (and in a `ResultMessage`), neither
of which is a transcript line. So the report asks the CLI, once per model and process: it starts the
bundled CLI with a throwaway configuration directory, no tools and no settings, asks, and stops it. No
API request is made (measured with CLI 2.1.332: 0.4 to 1.3 s a model, with no key set). A model the CLI
cannot be asked about is left out, and the report falls back to `flower.report._pricing.window_for`.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterable

import anyio
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

__all__ = ["cli_windows"]

logger = logging.getLogger("flower.report")

_ASKED: dict[str, int | None] = {}
"""model -> the window the CLI reported (None: it could not say); one question per process."""
_TIMEOUT = 30.0


async def _ask(model: str) -> int | None:
    with tempfile.TemporaryDirectory(prefix="flower-window-") as directory:
        env = {
            "CLAUDE_CONFIG_DIR": directory,
            "CLAUDE_CODE_TMPDIR": directory,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # nothing may leave the machine; nothing is sent
            "ANTHROPIC_API_KEY": "",
        }
        options = ClaudeAgentOptions(model=model, env=env, setting_sources=[], tools=[], cwd=directory)
        with anyio.fail_after(_TIMEOUT):
            async with ClaudeSDKClient(options) as client:
                usage = await client.get_context_usage()
    window = usage.get("rawMaxTokens")
    return window if isinstance(window, int) and window > 0 else None


async def cli_windows(models: Iterable[str]) -> dict[str, int]:
    """`model -> window` for each model the bundled CLI could report (the others are left out)."""
    found: dict[str, int] = {}
    for model in dict.fromkeys(m for m in models if m and m != "<synthetic>"):
        if model not in _ASKED:
            try:
                _ASKED[model] = await _ask(model)
            except Exception as exc:  # no CLI, a timeout, a refusal: the table answers instead
                logger.info("flower.report: the CLI could not report the window of %s: %s", model, exc)
                _ASKED[model] = None
        window = _ASKED[model]
        if window is not None:
            found[model] = window
    return found
