"""Token usage: `TokenUsage`, tokens of each kind, and `StepUsage`, what a step's threads consumed.

`TokenUsage` is the one usage record of flower: the run, the economy report and the cost model
(`flower._cost`) all give and take it. A step's usage is read as the CLI reports it.

Where the numbers come from (measured, CLI 2.1.332):

- each `ResultMessage.usage` is the main thread's usage for that one turn (a run with background
  subagents, or a handoff, has several turns: they add up);
- `ResultMessage.model_usage` is cumulative over the CLI process and counts every request it made, the
  subagents' included; the last one of each session is its total;
- the subagents' share is the difference. It also holds the CLI's own side requests, if any (a
  compaction summary, when flower's handoff is off);
- the keep-warm pings (`flower._warm`) run in CLI processes of their own: each one's `model_usage`,
  kept apart (`StepUsage.keep_warm`) and counted per model.

The usage on each streamed `AssistantMessage` is used only where no `ResultMessage` came after it (a CLI
that crashed or was killed mid-turn): it carries the reply's *start* (its output tokens are 1), every
block of a multi-block reply repeats it, and a subagent's final reply is not forwarded at all. So a
crashed run counts the input, cache reads and writes of every reply it saw since its last result, as
billed, and their output as the stream's start reports it (a lower bound), instead of nothing.

Example::

    result = await rt.run(lead, "Start.")
    print(result.usage.main.output, "output tokens on the main thread,",
          result.usage.subagents.total, "tokens in the workers")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._util.check import checked

__all__ = ["StepUsage", "TokenUsage"]


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True, kw_only=True)
class TokenUsage:
    """Tokens of each kind, as the API bills them: one reply's, or a sum of them.

    The one usage record of flower: a step's (`StepResult.usage`), a reply read back from a store by the
    economy report, and a request of the simulated prompt cache (`flower.report.PromptCache`) all give one,
    and `flower.report.price` prices any of them.
    """

    input: int = 0
    """Uncached input tokens."""
    cache_read: int = 0
    """Input tokens read from the prompt cache."""
    cache_creation: int = 0
    """Input tokens written to the prompt cache for 5 minutes. Where the source gives only a total (the
    CLI's `model_usage`), every cache write is counted here."""
    cache_creation_1h: int = 0
    """Input tokens written to the prompt cache for 1 hour, when the source tells them apart (the API's
    `cache_creation.ephemeral_1h_input_tokens`, a `PromptCache` with 1-hour marks); 0 otherwise."""
    output: int = 0
    """Output tokens (thinking included)."""

    @property
    def context(self) -> int:
        """Every input token of the request, cached or not: what the CLI counts as its context."""
        return self.input + self.cache_read + self.cache_creation + self.cache_creation_1h

    @property
    def total(self) -> int:
        """Every kind added up: the context and the output."""
        return self.context + self.output

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input=self.input + other.input,
            cache_read=self.cache_read + other.cache_read,
            cache_creation=self.cache_creation + other.cache_creation,
            cache_creation_1h=self.cache_creation_1h + other.cache_creation_1h,
            output=self.output + other.output,
        )

    @checked
    def minus(self, other: TokenUsage) -> TokenUsage:
        """`self - other`, each kind floored at 0."""
        return TokenUsage(
            input=max(0, self.input - other.input),
            cache_read=max(0, self.cache_read - other.cache_read),
            cache_creation=max(0, self.cache_creation - other.cache_creation),
            cache_creation_1h=max(0, self.cache_creation_1h - other.cache_creation_1h),
            output=max(0, self.output - other.output),
        )

    @classmethod
    def from_api(cls, usage: Mapping[str, Any] | None) -> TokenUsage:
        """From the API's `usage` object (`input_tokens`, `cache_read_input_tokens`...); a count that is
        missing or not a positive int is 0. The writes to the 1-hour cache
        (`cache_creation.ephemeral_1h_input_tokens`, part of `cache_creation_input_tokens`) go to
        `cache_creation_1h`, the rest of the writes to `cache_creation`."""
        usage = usage or {}
        written = _count(usage.get("cache_creation_input_tokens"))
        split = usage.get("cache_creation")
        hour = _count(split.get("ephemeral_1h_input_tokens")) if isinstance(split, Mapping) else 0
        hour = min(hour, written)
        return cls(
            input=_count(usage.get("input_tokens")),
            cache_read=_count(usage.get("cache_read_input_tokens")),
            cache_creation=written - hour,
            cache_creation_1h=hour,
            output=_count(usage.get("output_tokens")),
        )

    @classmethod
    def from_model_usage(cls, usage: Mapping[str, Any] | None) -> TokenUsage:
        """From one entry of the CLI's `model_usage` (`inputTokens`, `cacheReadInputTokens`...)."""
        usage = usage or {}
        return cls(
            input=_count(usage.get("inputTokens")),
            cache_read=_count(usage.get("cacheReadInputTokens")),
            cache_creation=_count(usage.get("cacheCreationInputTokens")),
            output=_count(usage.get("outputTokens")),
        )


@dataclass(frozen=True, kw_only=True)
class StepUsage:
    """A step's tokens: the main thread's, the subagents', and both per model.

    `by_model` is what a price table needs (subagents may run on another model); `main` and
    `subagents` say where the tokens went.
    """

    main: TokenUsage = field(default_factory=TokenUsage)
    """The main thread's turns (every generation of the step, handoff turns included)."""
    subagents: TokenUsage = field(default_factory=TokenUsage)
    """Everything else the CLI billed during the step: the subagents (and CLI side requests, if any)."""
    by_model: Mapping[str, TokenUsage] = field(default_factory=dict)
    """Main thread, subagents and keep-warm pings together, per model name as the CLI reports it."""
    keep_warm: TokenUsage = field(default_factory=TokenUsage)
    """The keep-warm pings' tokens (`flower._warm`): the coordinator's prefix read again while it waited on
    a worker. Part of `by_model` and `total`, in neither `main` nor `subagents`."""

    @property
    def total(self) -> TokenUsage:
        """Main thread, subagents and keep-warm pings together."""
        return self.main + self.subagents + self.keep_warm


class UsageMeter:
    """Adds up a step's usage from its `ResultMessage`s (see the module docstring for the sources).

    The CLI's `model_usage` gives one count of cache writes per model; the main thread's `usage` splits
    them by lifetime (`cache_creation.ephemeral_1h_input_tokens`). The main thread's 1-hour writes are
    moved to `cache_creation_1h` of its model (`main_model`, the model of its replies), so a coordinator
    on the 1-hour cache is priced at the 1-hour rate; a subagent's writes count as 5-minute ones (the CLI
    keeps subagents at 5 minutes unless asked otherwise, and reports no split for them).
    """

    def __init__(self) -> None:
        self._main = TokenUsage()
        self._per_session: dict[str, dict[str, TokenUsage]] = {}  # session -> model -> cumulative usage
        self._pings: dict[str, TokenUsage] = {}  # model -> the keep-warm pings' usage
        # session -> message id -> (model, the main thread's?, usage) of the replies since its last result
        self._replies: dict[str, dict[str, tuple[str, bool, TokenUsage]]] = {}
        self.main_model: str | None = None
        """The model of the main thread's replies, when one was seen."""

    def add_result(self, session_id: str, usage: Mapping[str, Any] | None, models: object) -> None:
        """One `ResultMessage`: its `usage` (this turn, main thread) and `model_usage` (cumulative)."""
        self._main = self._main + TokenUsage.from_api(usage)
        self._replies.pop(session_id, None)  # counted by this result
        if isinstance(models, Mapping) and models:
            self._per_session[session_id] = {
                str(name): TokenUsage.from_model_usage(entry if isinstance(entry, Mapping) else None)
                for name, entry in models.items()
            }

    def add_reply(
        self, session_id: str, message_id: str, model: str, usage: Mapping[str, Any] | None, *, main: bool
    ) -> None:
        """One streamed reply (`AssistantMessage`): counted only if no `ResultMessage` of its session
        follows it (the CLI ended without one: crashed, killed)."""
        if model == "<synthetic>" or not usage:
            return
        self._replies.setdefault(session_id, {})[message_id] = (model, main, TokenUsage.from_api(usage))

    def add_ping(self, model: str, usage: TokenUsage) -> None:
        """One keep-warm ping's usage (its own CLI process's `model_usage`, 1-hour writes apart)."""
        self._pings[model] = self._pings.get(model, TokenUsage()) + usage

    def usage(self) -> StepUsage:
        by_model: dict[str, TokenUsage] = {}
        for models in self._per_session.values():
            for name, used in models.items():
                by_model[name] = by_model.get(name, TokenUsage()) + used
        pinged = sum(self._pings.values(), TokenUsage())
        hour = self._main.cache_creation_1h
        if hour and by_model:
            main = self.main_model
            if main is None or main not in by_model:
                main = max(by_model, key=lambda n: by_model[n].cache_creation)
            used = by_model[main]
            moved = min(hour, used.cache_creation)
            by_model[main] = dataclasses.replace(
                used,
                cache_creation=used.cache_creation - moved,
                cache_creation_1h=used.cache_creation_1h + moved,
            )
        main_thread = self._main
        for replies in self._replies.values():  # a session that ended without its result (a crash)
            for model, mine, seen in replies.values():
                by_model[model] = by_model.get(model, TokenUsage()) + seen
                main_thread = main_thread + seen if mine else main_thread
        total = sum(by_model.values(), TokenUsage())
        if not by_model:  # an old CLI without model_usage: the main thread is all that is known
            total = main_thread
        for name, used in self._pings.items() if by_model else ():  # else: priced with the main thread
            by_model[name] = by_model.get(name, TokenUsage()) + used
        return StepUsage(
            main=main_thread, subagents=total.minus(main_thread), by_model=by_model, keep_warm=pinged
        )
