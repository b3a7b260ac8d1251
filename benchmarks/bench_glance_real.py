"""How many of the Bash commands of real sessions that a coordinator would run itself does glance refuse?

Run from the repository root: `python benchmarks/bench_glance_real.py` (`--list` prints every command
with its verdict). It reads a directory of real Claude Code sessions, not part of the repository
(`FLOWER_REAL_TRANSCRIPTS`; `tests/stores/corpus.py` says where else it looks), every Bash call of the
main thread (not a subagent's: `X--agent-Y.jsonl` files and `isSidechain` entries are left out), and
prints the refusal rate and the refused commands by reason.

What a coordinator would send: a coordinator delegates builds, tests, installs and every write, whatever
glance says, so those commands are counted apart (`hands-on`), by a rule written here and not by glance:
a simple command whose program is a build, test or package tool, a program run by path, a writer
(`rm`, `mkdir`, `git commit`...), or an output redirection to a file. Every other command is one a
coordinator would try to run itself, and each is checked as the wall checks it with a jail
(`glance_verdict` from the session's working directory).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Iterator

from flower._glance import glance_verdict
from tests.stores.corpus import real_dir as corpus_dir

HANDS_ON = frozenset(
    """rm rmdir mkdir mv cp chmod chown touch ln tee truncate dd install make cmake cargo go rustc gcc clang
    javac mvn gradle npm npx yarn pnpm bun deno pip pip3 uv poetry pytest tox nox mix elixir iex bd gh just
    mise docker kubectl terraform kill pkill killall brew apt apt-get tsc eslint prettier ruff black mypy
    """.split()  # noqa: SIM905 - a list of words reads better as words
)
"""Programs that build, test, install, write or manage processes: a coordinator delegates them."""
GIT_WRITES = frozenset(
    """add commit push pull fetch checkout switch restore reset rebase merge cherry-pick revert am apply
    rm mv clean init clone gc stash tag submodule worktree""".split()  # noqa: SIM905
)
_SEPARATOR = re.compile(r"&&|\|\||[;|\n(){}]|\$\(|`")
_KEYWORDS = frozenset({"then", "do", "else", "if", "while", "until", "!", "time"})
_WRITE = re.compile(r"(?<![0-9&<>])>>?\s*(?!/dev/null|&)[^\s&|;]")


def commands() -> Iterator[tuple[str, str, str | None]]:
    """(file, command, working directory) of every main-thread Bash call, in order."""
    for path in sorted(corpus_dir().glob("*.jsonl")):
        if "--agent-" in path.name:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("isSidechain") or entry.get("type") != "assistant":
                continue
            for block in (entry.get("message") or {}).get("content") or []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_use"
                    and block.get("name") == "Bash"
                ):
                    command = (block.get("input") or {}).get("command")
                    if isinstance(command, str):
                        yield path.name, command, entry.get("cwd")


def hands_on(command: str) -> bool:
    """Whether a coordinator would delegate `command` whatever glance says (see the module docstring)."""
    for piece in _SEPARATOR.split(command):
        words = piece.split()
        while words and (words[0] in _KEYWORDS or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0])):
            words.pop(0)
        if not words:
            continue
        program, first = words[0], words[1] if len(words) > 1 else ""
        name = program.rsplit("/", 1)[-1]
        if name in HANDS_ON or (program.startswith(("/", "./", "../", "~/")) and name not in ("ls", "cat")):
            return True
        if name == "git" and first in GIT_WRITES:
            return True
        if name == "sed" and first == "-i":
            return True
    return bool(_WRITE.search(command.replace("2>&1", "")))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every command with its verdict")
    options = parser.parse_args()
    if not corpus_dir().is_dir():
        raise SystemExit(f"no real transcripts at {corpus_dir()}: this benchmark needs them")
    total = delegated = 0
    refused: dict[str, list[str]] = {}
    for name, command, cwd in commands():
        total += 1
        if hands_on(command):
            delegated += 1
            if options.list:
                print(f"hands-on  {name}: {command[:100]!r}")
            continue
        verdict = glance_verdict(command, cwd=cwd)
        if options.list:
            print(f"{'glance' if verdict.ephemeral else 'REFUSED':9s} {name}: {command[:100]!r}")
        if not verdict.ephemeral:
            refused.setdefault(verdict.reason, []).append(command)
    looked = total - delegated
    count = sum(len(found) for found in refused.values())
    print(f"{total} main-thread Bash commands in {corpus_dir().name}/: {delegated} hands-on (delegated),")
    rate = 100 * count / max(looked, 1)
    print(f"{looked} a coordinator would run itself; glance refuses {count} ({rate:.1f} %)")
    for reason, found in sorted(refused.items(), key=lambda item: -len(item[1])):
        print(f"\n{len(found)} x {reason}")
        for command in found:
            print(f"    {command[:150]!r}")
    by_program = Counter(re.split(r"\s", command.strip(), maxsplit=1)[0] for _, command, _ in commands())
    print(f"\nmost frequent first words: {', '.join(f'{p} {n}' for p, n in by_program.most_common(8))}")


if __name__ == "__main__":
    main()
