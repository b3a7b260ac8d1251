"""The report's pictures (matplotlib, the `plots` extra): context per turn, cost against facts, previews."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .metrics import Metrics

SHOWN = ("baseline_raw", "baseline_cc_default", "mask", "clear_tool_uses", "flower", "flower -delegation")
STYLE = {
    "baseline_raw": ("#888888", "-"),
    "baseline_cc_default": ("#444444", "-"),
    "mask": ("#e0a030", ":"),
    "clear_tool_uses": ("#3070c0", ":"),
    "flower": ("#2a9d4a", "-"),
    "flower -delegation": ("#8fd18f", "--"),
}


def _style(strategy: str) -> tuple[str, str]:
    for prefix in ("mask", "clear_tool_uses"):
        if strategy.startswith(prefix):
            return STYLE[prefix]
    return STYLE.get(strategy, ("#9ad29a" if strategy.startswith("flower") else "#aaaaaa", "-"))


def _ideal(rows: Sequence[Metrics]) -> list[Metrics]:
    return [r for r in rows if r.player == "ideal" and r.size == 0]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def context(rows: Sequence[Metrics], titles: dict[str, str], path: Path, shown: dict[str, set[str]]) -> None:
    """One panel per workload: the main thread's context (tokens) at each of its requests (the ideal player;
    `shown`: the strategies drawn per workload)."""
    plt = _pyplot()
    rows = _ideal(rows)
    keys = list(titles)
    fig, axes = plt.subplots(len(keys), 1, figsize=(9, 3.1 * len(keys)))
    for ax, key in zip(axes, keys, strict=True):
        for row in rows:
            if row.workload != key or row.strategy not in shown[key]:
                continue
            color, line = _style(row.strategy)
            ax.plot([v / 1000 for v in row.series], line, color=color, label=row.strategy, linewidth=1.4)
        ax.axhline(177, color="#cc3333", linewidth=0.8, linestyle="--")
        ax.set_title(titles[key], fontsize=10)
        ax.set_ylabel("k tokens")
        ax.set_xlabel("main-thread request")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=3, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def pareto(rows: Sequence[Metrics], titles: dict[str, str], path: Path) -> None:
    """One panel per workload with probes: all-agent cost against the share of facts answerable at once
    (x: a run that did not finish). The ideal player."""
    plt = _pyplot()
    rows = _ideal(rows)
    keys = [key for key in titles if any(r.workload == key and r.probes + r.verdicts for r in rows)]
    fig, axes = plt.subplots(1, len(keys), figsize=(3.6 * len(keys), 3.8))
    for ax, key in zip(axes, keys, strict=True):
        stacked: dict[float, int] = {}  # labels already at a share: ties are common, stack them inwards
        for row in rows:
            if row.workload != key or ", preview" in row.strategy:
                continue
            asked = row.probes + row.verdicts
            share = 100 * (row.at_once + row.verdicts_at_once) / asked if asked else 100.0
            color = _style(row.strategy)[0]
            marker = "o" if row.finished else "x"
            ax.scatter(row.cost_all, share, color=color, marker=marker, s=36)
            level = stacked[round(share, 1)] = stacked.get(round(share, 1), -1) + 1
            ax.annotate(
                row.strategy.replace("baseline_", "").replace("flower ", "f "),
                (row.cost_all, share),
                xytext=(4, 2 + (-8 if share >= 50 else 8) * level),
                textcoords="offset points",
                fontsize=6,
            )
        ax.set_title(titles[key], fontsize=9)
        ax.set_xlabel("all-agent cost ($)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("facts answered at once (%)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def previews(rows: Sequence[Metrics], path: Path) -> None:
    """The W1 preview sweep: facts and verdicts answered at once, and extra calls, per preview shape."""
    plt = _pyplot()
    chosen = [
        r
        for r in _ideal(rows)
        if r.workload == "w1"
        and (r.strategy in ("flower", "flower -delegation") or ", preview" in r.strategy)
    ]
    labels = [
        r.strategy.replace("flower -delegation", "solo")
        .replace("flower", "coord.")
        .replace(", preview ", "\n")
        + ("" if ", preview" in r.strategy else "\n400 head")
        for r in chosen
    ]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    xs = range(len(chosen))
    ax.bar(
        [x - 0.2 for x in xs],
        [r.at_once + r.verdicts_at_once for r in chosen],
        width=0.4,
        label="answered at once",
        color="#2a9d4a",
    )
    ax.bar(
        [x + 0.2 for x in xs],
        [r.extra_calls for r in chosen],
        width=0.4,
        label="extra calls",
        color="#e0a030",
    )
    ax.set_xticks(list(xs), labels, fontsize=7)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    ax.set_title("W1: spill preview shape (coord. = delegated, solo = main thread does the work)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
