"""Where a run's money goes, request by request: a kept recording's dollars split into parts.

    python benchmarks/cost_parts.py DIR/w3/flower--realistic1.pkl.gz [...] [--clock 35] [--row sonnet]

Each request is priced as the suite prices it (`trace.from_recording`: the row's tokens per character,
the clock's send times, flower's keep-warm pings) through one simulated prompt cache; then every block of
it is billed by where it sat: read from the cache, written to it, or sent uncached, at the request's
model's prices. A block is named by what it is:

- `coordinator prefix` / `worker prefix`: tools and system prompt of the main thread / of a worker;
- `task prompt`: the user's first message; `mandate`: a worker's first message (the coordinator's Agent
  call is counted with the coordinator's own calls, `coordinator calls`);
- `report + frame`: an Agent result in the main thread (the worker's report and the CLI's frame round it);
- `coordinator looks`: the main thread's other tool results; `worker results`: a worker's tool results;
- `coordinator calls` / `worker calls`: what each kept of its own replies (text and tool calls);
- `output`: every reply's output tokens; `keep-warm pings`: the pings' whole requests.

Each part is split into write, read and uncached input dollars, so "written once, re-read N times" shows.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import pricing, timing, warm  # noqa: E402
from suite.runner import load_recording  # noqa: E402
from suite.trace import Sent, agent_call_ids, cut, usages  # noqa: E402

from flower._cost import price_for  # noqa: E402

MTOK = 1_000_000


def _items(body: Mapping[str, Any]) -> list[tuple[str, int, Mapping[str, Any]]]:
    """(role, message index, item) of each block `blocks_of` cuts, in its order."""
    out: list[tuple[str, int, Mapping[str, Any]]] = [
        ("tools", -1, t) for t in body.get("tools") or [] if isinstance(t, dict)
    ]
    system = body.get("system") or []
    out += [
        ("system", -1, s) for s in ([{"type": "text", "text": system}] if isinstance(system, str) else system)
    ]
    for index, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        listed = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        out += [(str(message.get("role")), index, item) for item in listed if isinstance(item, dict)]
    return out


def _part(caller: str, role: str, index: int, item: Mapping[str, Any], agents: set[str]) -> str:
    main = caller == "main"
    if role in ("tools", "system"):
        return "coordinator prefix" if main else "worker prefix"
    if role == "assistant":
        return "coordinator calls" if main else "worker calls"
    if index == 0:
        return "task prompt" if main else "mandate"
    if item.get("type") == "tool_result":
        if main:
            return "report + frame" if str(item.get("tool_use_id")) in agents else "coordinator looks"
        return "worker results"
    return "reminders and prompts"


def parts(path: Path, clock: str = "35", row: pricing.Row = pricing.SONNET) -> dict[str, dict[str, float]]:
    """Dollars of one recording by part and by kind (write, read, input, output), priced on `row`."""
    rec = load_recording(path)
    requests = rec.requests
    callers = ["main" if r.caller == "main" else "worker" for r in requests]
    agents = agent_call_ids(requests)
    sent = [
        cut(r.body, c, r.output_tokens, rec.workload.pad, None)
        for r, c in zip(requests, callers, strict=True)
    ]
    named: dict[int, list[str]] = {}
    for r, c, s in zip(requests, callers, sent, strict=True):
        names = [_part(c, role, i, item, agents) for role, i, item in _items(r.body)]
        names += ["marathon residue"] * (len(s.blocks) - len(names))
        named[id(s)] = names
    counted = pricing.at_rate(sent, row)
    labels = {id(after): named[id(before)] for before, after in zip(sent, counted, strict=True)}
    times = timing.send_times(
        requests, rec.ledger.idle, clock, 1, [s.context for s in counted], getattr(rec.ledger, "about", {})
    )
    idle = [rec.ledger.idle.get(r.seq, 0.0) for r in requests]
    billed: Sequence[Sent] = counted
    at = times
    pings: set[int] = set()
    if warm.keeps_warm(rec.strategy, sent):
        original = warm.ping

        def tagged(request: Sent, number: int, rate: float = 0.25) -> Sent:
            out = original(request, number, rate)
            pings.add(id(out))
            return out

        warm.ping = tagged  # type: ignore[assignment]
        try:
            billed, at = warm.as_flower(counted, times, idle, rate=row.rate)
        finally:
            warm.ping = original
    used = usages(billed, at)
    got: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    order = [id(s) for s in counted]
    remaining = list(order)
    for s, u in zip(billed, used, strict=True):
        price = price_for(s.model)[0]
        # a ping is all "keep-warm pings"; the other requests keep their order
        names = ["keep-warm pings"] * len(s.blocks) if id(s) in pings else labels[remaining.pop(0)]
        write_rate = price.cache_creation if u.cache_creation + u.cache_creation_1h else 0.0
        if u.cache_creation_1h and not u.cache_creation:
            write_rate = price.cache_creation_1h
        done = 0
        written_to = u.cache_read + u.cache_creation + u.cache_creation_1h
        for block, name in zip(s.blocks, names, strict=True):
            start, done = done, done + block.tokens
            read = max(0, min(done, u.cache_read) - start)
            write = max(0, min(done, written_to) - max(start, u.cache_read))
            plain = block.tokens - read - write
            got[name]["read"] += read * price.cache_read / MTOK
            got[name]["write"] += write * write_rate / MTOK
            got[name]["input"] += plain * price.input / MTOK
        who = "keep-warm pings" if id(s) in pings else f"output ({s.caller})"
        got[who]["output"] += u.output * price.output / MTOK
    return {k: dict(v) for k, v in got.items()}


def table(found: Mapping[str, Mapping[str, float]]) -> list[str]:
    total = sum(sum(v.values()) for v in found.values())
    lines = [
        f"{'part':24s} {'write':>8s} {'read':>8s} {'input':>8s} {'output':>8s} {'total':>8s} {'share':>6s}"
    ]
    for name, v in sorted(found.items(), key=lambda kv: -sum(kv[1].values())):
        cells = [v.get(k, 0.0) for k in ("write", "read", "input", "output")]
        lines.append(
            f"{name:24s} "
            + " ".join(f"{c:8.4f}" for c in cells)
            + f" {sum(cells):8.4f} {sum(cells) / total:6.1%}"
        )
    lines.append(f"{'total':24s} {'':35s} {total:8.4f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recordings", nargs="+", type=Path)
    parser.add_argument("--clock", default="35")
    parser.add_argument("--row", default="sonnet", help="sonnet, opus-5 or chars4")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = {}
    for path in args.recordings:
        found = parts(path, args.clock, pricing.row_of(args.row))
        out[str(path)] = found
        if not args.json:
            print(f"\n{path.parent.name}/{path.name} ({args.row}, clock {args.clock})")
            print("\n".join(table(found)))
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
