"""The run's figures as metrics, read from the same span specs: GenAI names where the conventions have one.

- `gen_ai.client.token.usage` (histogram, by `gen_ai.token.type` input/output) and
  `gen_ai.client.operation.duration` per model reply; `gen_ai.invoke_agent.duration` per run and
  delegation; `gen_ai.execute_tool.duration` per tool call;
- `flower.tokens` (counter, by `flower.token.kind`: input, output, cache_read, cache_write): one add
  per run from its root, so their sums over runs equal the `StepResult.usage` totals;
- `flower._cost` (USD), `flower.delegations`, `flower.denials`, `flower.handoffs`, `flower.spill.chars`
  (all from the run's root), `flower.store.rewrites` (by `flower.store.change`: expired, trimmed, pruned).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from . import _names as n
from ._spans import SpanSpec

_TOKEN_BUCKETS: Final = [
    1,
    4,
    16,
    64,
    256,
    1024,
    4096,
    16384,
    65536,
    262144,
    1048576,
    4194304,
    16777216,
    67108864,
]
_DURATION_BUCKETS: Final = [
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
]
_KINDS: Final = (
    ("input", n.UNCACHED_INPUT),
    ("output", n.OUTPUT_TOKENS),
    ("cache_read", n.CACHE_READ),
    ("cache_write", n.CACHE_WRITE),
)


def _number(value: object, kind: type[int] | type[float] = int) -> int | float:
    """An attribute's number (0 when it is absent or not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return kind(0)
    return kind(value)


class Instruments:
    """The instruments of one meter, and how a run's specs are recorded on them."""

    def __init__(self, meter: Any) -> None:
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.agent_duration = meter.create_histogram(
            "gen_ai.invoke_agent.duration", unit="s", explicit_bucket_boundaries_advisory=_DURATION_BUCKETS
        )
        self.tool_duration = meter.create_histogram(
            "gen_ai.execute_tool.duration", unit="s", explicit_bucket_boundaries_advisory=_DURATION_BUCKETS
        )
        self.tokens = meter.create_counter(
            "flower.tokens",
            unit="{token}",
            description="Tokens of flower's runs, by kind (StepResult.usage).",
        )
        self.cost = meter.create_counter(
            "flower.cost", unit="USD", description="StepResult.cost_usd of each run."
        )
        self.delegations = meter.create_counter("flower.delegations", unit="{delegation}")
        self.denials = meter.create_counter("flower.denials", unit="{call}")
        self.handoffs = meter.create_counter("flower.handoffs", unit="{handoff}")
        self.spill_chars = meter.create_counter("flower.spill.chars", unit="{char}")
        self.rewrites = meter.create_counter("flower.store.rewrites", unit="{change}")

    def record(self, specs: Sequence[SpanSpec]) -> None:
        """Record one run: its root (the first spec) and every span under it."""
        for spec in specs:
            attrs = spec.attributes
            seconds = max(0, spec.end_ns - spec.start_ns) / 1e9
            base = {n.PROVIDER_NAME: n.PROVIDER, n.AGENT_NAME: str(attrs.get(n.AGENT_NAME, ""))}
            operation = attrs.get(n.OPERATION)
            if operation == n.CHAT:
                model = {**base, n.OPERATION: n.CHAT, n.REQUEST_MODEL: str(attrs.get(n.REQUEST_MODEL, ""))}
                self.token_usage.record(
                    _number(attrs.get(n.INPUT_TOKENS)), {**model, "gen_ai.token.type": "input"}
                )
                self.token_usage.record(
                    _number(attrs.get(n.OUTPUT_TOKENS)), {**model, "gen_ai.token.type": "output"}
                )
                self.duration.record(seconds, model)
            elif operation == n.EXECUTE_TOOL:
                tool = {**base, n.OPERATION: n.EXECUTE_TOOL, n.TOOL_NAME: str(attrs.get(n.TOOL_NAME, ""))}
                self.tool_duration.record(seconds, tool)
            elif operation == n.INVOKE_AGENT:
                self.agent_duration.record(seconds, {**base, n.OPERATION: n.INVOKE_AGENT})
                if spec.parent is None:
                    self._run(spec, base)

    def _run(self, spec: SpanSpec, base: dict[str, str]) -> None:
        attrs = spec.attributes
        for kind, key in _KINDS:
            self.tokens.add(_number(attrs.get(key)), {**base, n.TOKEN_KIND: kind})
        self.cost.add(float(_number(attrs.get(n.COST), float)), base)
        self.delegations.add(_number(attrs.get(n.DELEGATIONS)), base)
        self.denials.add(_number(attrs.get(n.DENIALS)), base)
        self.handoffs.add(_number(attrs.get(n.HANDOFFS)), base)
        for change, key in (
            ("expired", n.STORE_EXPIRED),
            ("trimmed", n.STORE_TRIMMED),
            ("pruned", n.STORE_PRUNED),
        ):
            if key in attrs:
                self.rewrites.add(_number(attrs.get(key)), {**base, "flower.store.change": change})
        self.spill_chars.add(_number(attrs.get(n.SPILL_CHARS)), base)
