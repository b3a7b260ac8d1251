"""The fake tool behind every benchmark command: `python3 gen.py <label> [--retry]`, run by the real CLI.

Copied into each benchmark workspace next to `bench.json`, which describes every output a workload can
print: its size, seed, kind, exit code and the needle lines planted in it. The text is pseudo-random log
lines from a seeded generator, so every strategy sees byte-identical outputs. Standard library only: it
runs under whatever `python3` the CLI's Bash finds.

Kinds:
- `log`: lines of text with needles; `test`: the same, ending with a verdict line (exit 1 on FAIL);
- `fetch`: a network failure (a long traceback, exit 1) unless `--retry`;
- `edit`: bumps the version in `state/status.txt` and says what changed;
- `once`: a `log` that can be printed only once (a non-idempotent tool): a second run fails.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

WORDS = (  # noqa: SIM905
    "alpha beta gamma delta worker queue cache shard replica index token batch commit merge "
    "parser lexer buffer socket stream retry backoff timeout config schema record vector"
).split(" ")
HEAD_WINDOW = 400
TAIL_WINDOW = 100


def _line(rng: random.Random, number: int) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12)))
    level = rng.choice(("INFO", "INFO", "INFO", "DEBUG", "WARN"))
    return f"{number:06d} {level} {words}"


def body(spec: dict[str, Any], size: int) -> str:
    """`size` chars of seeded log lines with the needle lines of `spec` at their planned places."""
    rng = random.Random(spec["seed"])
    lines: list[str] = []
    used = 0
    while used < size:
        line = _line(rng, len(lines))
        lines.append(line)
        used += len(line) + 1
    text = "\n".join(lines)[:size]
    for needle in spec.get("needles", []):
        text = _plant(text, needle["text"], needle["where"], needle["u"])
    return text


def _plant(text: str, needle: str, where: str, u: float) -> str:
    """Overwrite a stretch of `text` with a needle line, keeping the length (head/middle/tail windows)."""
    line = f"\n{needle}\n"
    room = len(text) - len(line)
    if where == "head":
        start = int(u * max(0, HEAD_WINDOW - len(line)))
    elif where == "tail":
        start = len(text) - len(line) - int(u * max(0, TAIL_WINDOW - len(line)))
    else:
        start = int(len(text) * (0.3 + 0.4 * u))
    start = max(0, min(start, room))
    return text[:start] + line + text[start + len(line) :]


def _trace(spec: dict[str, Any]) -> str:
    rng = random.Random(spec["seed"])
    frames: list[str] = []
    while sum(len(f) for f in frames) < spec["size"]:
        module = rng.choice(WORDS)
        frames.append(
            f'  File "/srv/app/{module}/{rng.choice(WORDS)}.py", line {rng.randint(10, 900)}, in '
            f"{rng.choice(WORDS)}_{rng.choice(WORDS)}\n    {_line(rng, len(frames))}\n"
        )
    return "Traceback (most recent call last):\n" + "".join(frames) + "ConnectionResetError: peer reset\n"


def _edit(root: Path, spec: dict[str, Any]) -> str:
    status = root / "state" / "status.txt"
    version = int(status.read_text().split()[2]) + 1 if status.exists() else 1
    rng = random.Random(spec["seed"])
    files = "\n".join(f" M src/{rng.choice(WORDS)}_{i}.py" for i in range(rng.randint(8, 24)))
    status.parent.mkdir(exist_ok=True)
    status.write_text(f"STATE v {version} (current)\n{files}\n")
    return f"edited {spec['label']}: state is now v {version}"


def main(argv: list[str]) -> int:
    root = Path.cwd()
    specs = json.loads((root / "bench.json").read_text())
    label = argv[1]
    spec = specs[label]
    kind = spec["kind"]
    if kind == "edit":
        print(_edit(root, spec))
        return 0
    if kind == "fetch" and "--retry" not in argv:
        sys.stdout.write(_trace(spec))
        return 1
    if kind == "fetch":
        print(f"fetched {label}: 200 OK, {spec['seed'] % 97 + 3} records")
        return 0
    if kind == "once":
        marker = root / ".consumed" / label
        if marker.exists():
            print(f"error: {label} was already consumed (this source can be read once)")
            return 1
        marker.parent.mkdir(exist_ok=True)
        marker.write_text("")
    text = body(spec, spec["size"])
    if kind == "test":
        text = text[: max(0, spec["size"] - len(spec["verdict"]) - 1)] + "\n" + spec["verdict"]
    sys.stdout.write(text + "\n")
    return int(spec.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
