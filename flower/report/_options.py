"""`ReportOptions`: how a report reads a run (the window, the rules a mandate may restate, layer 4's
policies at its resumes)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._errors import SpecError
from .._util.check import check_fields
from .._wall.rules import WORKER_RULES
from ..stores import CachePolicy, EphemeralPolicy, PrunePolicy, TrimPolicy

__all__ = ["ReportOptions"]


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """How to read a run: the window for the extrapolation, the rules a mandate may restate, and the
    layer-4 policies its resumes ran with (the Runtime's defaults unless told)."""

    window: int | None = None
    """The context window in tokens; None takes the one the CLI reports for the main thread's model."""
    ask_cli: bool = True
    """Ask the bundled CLI for each model's window (`rawMaxTokens`, no API request); False, or when it
    cannot answer: the table of `flower.report._pricing`."""
    rules: tuple[str, ...] = (WORKER_RULES,)
    """Texts the workers already had: a mandate copying them restates them."""
    scripts: tuple[str, ...] = ()
    """Extra `scripts/` directories (the workbench's own and any `.flower/scripts` are always looked at)."""
    keep_denials: int = 1
    """`PrunePolicy.keep_denials` of the resumes (the Runtime's `keep_denials`)."""
    ephemeral: EphemeralPolicy | None = field(default_factory=EphemeralPolicy)
    """The expiry policy of the resumes; None when expiry was off."""
    trim: TrimPolicy | None = None
    """The trim policy of the resumes; None (the default) when trim was off."""
    cache: CachePolicy | None = field(default_factory=CachePolicy)
    """The cache policy of the resumes' store (a warm resume repeats the last cold one); None when it
    had none."""

    def __post_init__(self) -> None:
        check_fields(self)
        if self.window is not None and self.window <= 0:
            raise SpecError(f"ReportOptions.window must be a positive int of tokens, got {self.window!r}")
        PrunePolicy(keep_denials=self.keep_denials)  # checks it
