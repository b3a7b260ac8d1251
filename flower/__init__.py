"""flower: keep a long-horizon Claude Agent SDK run economical with its context."""

from ._errors import FlowerError, SpecError
from ._version import __version__

__all__ = ["FlowerError", "SpecError", "__version__"]
