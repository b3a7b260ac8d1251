"""The price rows every run is priced on, and the tokens per character each one counts.

Every recording is priced twice, as the API would bill the same requests on two models:

- **Sonnet 4.6** (`claude-sonnet-4-6`, the model the suite's runs are recorded under: $3 input, $15
  output, $0.30 cache read, $3.75 cache write per million tokens; smallest cacheable prefix 1,024);
- **the CLI's default model** (`flower._cost.DEFAULT_MODEL`, its `claude-opus-5` row: $4, $20, cache
  reads at 0.05x input, $5 write; smallest cacheable prefix 512).

A request's blocks are counted in tokens at the row's own rate (`RATES`): the what-if's
(`flower.report._what_if.replay.model_rate`), whose older families are measured on real Claude Code
transcripts by `measure` (`python benchmarks/calibrate_rates.py DIR`, the what-if's `family_rates`: the
context tokens a request's `usage` grew by over the characters it added). The suite cuts every request
into blocks at characters / 4 (`flower._cost.tokens_of`) and `at_rate` scales each block, each output and
each context size by `rate * 4`. The tables are Sonnet 4.6 at its rate (`Trace.costs[clock]`); the
default model's row is `Trace.costs[key(clock, OPUS)]`, and characters / 4 on Sonnet 4.6 (`CHARS4`) is
the stated sensitivity row.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from flower._cost import DEFAULT_MODEL, Block
from flower.report._what_if.replay import family_rates, model_rate, thread_of

SUITE_RATE = 0.25
"""Tokens per character the suite's blocks are cut at (`flower._cost.tokens_of`: characters / 4)."""

RATES: dict[str, float] = {model: model_rate(model) for model in ("claude-sonnet-4-6", DEFAULT_MODEL)}
"""Tokens per character of each priced model: the what-if's (`flower.report._what_if.replay.model_rate`,
the product's one measure). The corpus (CLI 2.0.74-2.1.42) holds no Sonnet 4.6 and no Opus 5 session;
both take the newest models' 0.5 (Sonnet 4.6 and Opus 4.7+ measure 0.45-0.55), not the 0.33/0.35 their
older families measure here (`measure`). See docs/benchmarks.md, "Tokens"."""
FAMILY = {"claude-sonnet-4-6": "claude-sonnet-4-5", DEFAULT_MODEL: "claude-opus-4-6"}
"""The nearest family the corpus measures for each priced model (shown beside its rate, not used)."""


@dataclass(frozen=True)
class Row:
    """One way of pricing a run: a model's price row and its tokens per character."""

    name: str
    """How the tables name it."""
    model: str
    """The model priced (`flower._cost.price_for`)."""
    rate: float
    """Tokens per character."""
    suffix: str
    """What a cost's key adds to the clock's name (`key`); empty for the headline row."""


SONNET = Row("Sonnet 4.6", "claude-sonnet-4-6", RATES["claude-sonnet-4-6"], "")
OPUS = Row("Opus 5 (the CLI's default)", DEFAULT_MODEL, RATES[DEFAULT_MODEL], "@opus-5")
CHARS4 = Row("Sonnet 4.6, characters / 4", "claude-sonnet-4-6", SUITE_RATE, "@chars4")
ROWS = (SONNET, OPUS)
"""The price rows every table is given for; `SONNET` is the headline (`Trace.costs[clock]`)."""
SENSITIVITY = (CHARS4,)
"""Rows priced only at the headline clocks, as a stated sensitivity."""
HEADLINE_CLOCKS = ("calibrated", "35")
"""The clocks every row is priced under (the headline row: under every clock of `timing.CLOCKS`)."""


def key(clock: str, row: Row = SONNET) -> str:
    """The key of `row`'s all-agent dollars under `clock` in `Trace.costs` (`calibrated@opus-5`)."""
    return f"{clock}{row.suffix}"


def row_of(name: str) -> Row:
    """The row whose suffix `name` (a `--price` value: `sonnet`, `opus-5`, `chars4`) names."""
    for row in (*ROWS, *SENSITIVITY):
        if row.suffix.lstrip("@") == name or (not row.suffix and name == "sonnet"):
            return row
    raise KeyError(name)


S = TypeVar("S")


def _scale(tokens: int, factor: float) -> int:
    return round(tokens * factor)


def at_rate(sent: Sequence[S], row: Row) -> list[S]:
    """`sent` (`trace.Sent`, cut at characters / 4) as `row` counts it: its model, and every block, output
    and context size scaled from the suite's rate to the row's."""
    factor = row.rate / SUITE_RATE
    memo: dict[tuple[int, int, float | None], Block] = {}

    def blocks(found: Iterable[Block]) -> list[Block]:
        out = []
        for b in found:
            got = memo.get((b.key, b.tokens, b.breakpoint))
            if got is None:
                got = memo[(b.key, b.tokens, b.breakpoint)] = dataclasses.replace(
                    b, tokens=_scale(b.tokens, factor)
                )
            out.append(got)
        return out

    out = []
    for s in sent:
        more: dict[str, Any] = {"ignored": blocks(s.ignored)} if hasattr(s, "ignored") else {}
        out.append(
            dataclasses.replace(  # type: ignore[type-var]
                s,
                model=row.model,
                blocks=blocks(s.blocks),  # type: ignore[attr-defined]
                output=_scale(s.output, factor),  # type: ignore[attr-defined]
                context=_scale(s.context, factor),  # type: ignore[attr-defined]
                **more,
            )
        )
    return out


def measure(directory: Path, *, share: float = 0.9) -> dict[str, tuple[float, int, int]]:
    """Per model family, from the transcripts (`*.jsonl`) under `directory`: (median tokens per
    character, requests measured, sessions), by the what-if's own measure
    (`flower.report._what_if.replay.family_rates`, each transcript one session)."""
    sessions = []
    for path in sorted(directory.glob("*.jsonl")):
        entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        sessions.append([thread_of("main", [e for e in entries if isinstance(e, dict)])])
    return family_rates(sessions, share=share)


__all__ = [
    "CHARS4",
    "FAMILY",
    "HEADLINE_CLOCKS",
    "OPUS",
    "RATES",
    "ROWS",
    "SENSITIVITY",
    "SONNET",
    "SUITE_RATE",
    "Row",
    "at_rate",
    "key",
    "measure",
    "row_of",
]
