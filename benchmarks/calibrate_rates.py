"""Tokens per character per model, measured on real Claude Code transcripts: what the suite's price rows
count (`suite/pricing.py`, `RATES`).

    python benchmarks/calibrate_rates.py DIR      # DIR: transcripts (*.jsonl), main or subagent

For each transcript whose requests are nine in ten one model's: the context tokens each request's
`usage` grew by over the characters it added (tool output and the previous reply), on the requests that
added at least 2,000 characters of tool output after a reply that was at most 5 % thinking; the median
per model family (`flower.report._what_if.replay.family_rates`, the what-if's own measure, which
`MODEL_RATES` holds).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite.pricing import FAMILY, RATES, SUITE_RATE, measure  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="a directory of Claude Code transcripts (*.jsonl)")
    args = parser.parse_args()
    found = measure(args.directory)
    print(f"{'model family':22s} {'tokens/char':>11s} {'requests':>8s} {'sessions':>8s}")
    for model, (rate, requests, sessions) in found.items():
        print(f"{model:22s} {rate:>11.3f} {requests:>8d} {sessions:>8d}")
    print(f"\nthe suite cuts blocks at {SUITE_RATE} tokens/char (characters / 4); its price rows count:")
    for model, rate in RATES.items():
        measured = found.get(FAMILY[model])
        said = f"measured {measured[0]:.3f}" if measured else "not in this corpus"
        print(f"  {model}: {rate} (the what-if's model_rate; nearest family {FAMILY[model]}, {said})")


if __name__ == "__main__":
    main()
