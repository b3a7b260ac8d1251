"""`FLOWER_LOG`: a switch for flower's own log records, read once when flower is imported.

`FLOWER_LOG=debug` (or `info`, `warning`, `error`) gives the `flower` logger that level and a handler
that writes to stderr. The root logger is left alone, so an app's own logging setup is not changed;
an app that configures logging itself can leave the variable unset and set the `flower` logger's level.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

ENV_VAR = "FLOWER_LOG"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _EnvHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler `FLOWER_LOG` installs (a class of its own, so it is installed once)."""


def configure_from_env(environ: Mapping[str, str] | None = None) -> logging.Handler | None:
    """Install the stderr handler on the `flower` logger if `FLOWER_LOG` asks for it; return it."""
    value = (environ if environ is not None else os.environ).get(ENV_VAR, "").strip().lower()
    if not value:
        return None
    logger = logging.getLogger("flower")
    for handler in logger.handlers:
        if isinstance(handler, _EnvHandler):
            return handler
    handler = _EnvHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
    logger.setLevel(LEVELS.get(value, logging.WARNING))
    if value not in LEVELS:
        logger.warning("%s=%r is not one of %s: using warning", ENV_VAR, value, ", ".join(LEVELS))
    return handler
