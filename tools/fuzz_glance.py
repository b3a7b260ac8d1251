"""Differential fuzzer for `flower.glance`: does bash run only what glance said it would?

Run from the repository root: `python tools/fuzz_glance.py --cases 5000 --seed 1`. Run it with a large
budget and several seeds before widening the tree-sitter-bash pin in pyproject.toml.

It generates random commands that mix whitelisted verbs (from `flower._glance_rules.RULES`) with
mutating and shell-state verbs, in tricky shell syntax. Each command that `is_ephemeral` accepts runs
under `bash --norc --noprofile -c` in a fresh directory: an environment as bare as `env -i` leaves it,
standard input from /dev/null, a timeout, and a PATH holding only stub programs. A stub writes its name
and argv to a log outside the working directory. Bash builtins are disabled (`enable -n`), so `echo`,
`cd` or `eval` reach their stubs too, and `command_not_found_handle` logs any other name bash tries.

A case is a violation when bash ran a verb that is not whitelisted, ran a whitelisted verb with
arguments that glance refuses on their own (`sort -o f`, `find -delete`: a stub cannot see those
write), changed any file, or hung. Generated paths stay inside the case directory (`~` is the working
directory), so that is where files are checked.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from flower._glance_rules import RULES
from flower.glance import glance_verdict, is_ephemeral


def _words(text: str) -> list[str]:
    return text.split()


READ_ONLY = sorted(RULES)
MUTATING = _words("rm touch mv cp tee mkdir chmod ln dd truncate sh bash env xargs sleep nohup timeout")
SHELL_STATE = _words("cd export eval exec source . read alias set unset shopt trap kill")
ARGS = [
    *_words("f a.txt out src/ . .. ~ ~/x ../x /dev/null /dev/zero - -- * *.txt ?.txt [ab] {a,b} {1..2}"),
    *_words("a#b ] $HOME ${HOME} $X ${X:-y} $IFS a${IFS}b $? -l -n -o -i -f -e -c -v -s -d -C -r -5f -uo"),
    *_words("-delete -exec -fprint -name --output=out --out=o --in-place --follow --get --list -I +%s"),
    *_words(".[] p 1,2p s/a/b/ status log diff branch tag config stash remote list user.name add commit"),
    "'s/a/b/w out'", "'1e rm x'", "'{print}'", """'{print > "out"}'""", """'BEGIN{system("x")}'""",
    "\u00e9", "\uff4c\uff53", "\u217cs", "a\u00a0b",  # lookalikes of `ls`, a no-break space
]  # fmt: skip
FIRST_ARGS = {  # a likely first argument, so that verbs with strict rules get accepted often enough
    "git": _words("status log diff show branch tag config stash remote reflog -C --no-pager"),
    "sed": _words("-n p s/a/b/ 1,2p -i -e"),
    "awk": ["'{print}'", "'BEGIN{print 1}'", "-F:"],
    "find": _words(". src -name"),
    "printf": ["%s\\n", "x"],
    "jq": _words(". .a -n"),
}
SEPARATORS = [
    ";", "; ", " && ", "&&", " || ", " | ", "|", " |& ", " & ", "&", "\n", "\n", "\n", " \n", "\n\t",
    "\n\n", " \\\n", " && \\\n", " |\n", "\r\n", " ;; ", " #c\n", ";#c\n",
]  # fmt: skip
REDIRECTS = [
    *_words(">out >>out 2>out <f <a.txt &>out >|out 2>&1 >&2 1>&- >/dev/null 2>/dev/null &>/dev/null"),
    *_words("</dev/null <>f 3>out >&out >~/x >../x <<<x <<<$(x) >(x) <(x)"),
]
HEREDOCS = ("<<EOF", "<<'EOF'", '<<"EOF"', "<<-EOF", "<<\\EOF")
NOISE = list("\r\t\v\x1b\u00a0\u200b#\\'\"`$(){};&|<>\n!*?[]=~")
SEEDS = ("a.txt", "f", "-o", "src/x.py")
STUB = '#!/bin/sh\nprintf "%s\\0" "${0##*/}" "$@" > "$FUZZ_LOG/$$"\nexit STATUS\n'
"""A stub program: its name and argv, NUL-separated, into a file of its own (pipelines run at once)."""


@dataclass
class Case:
    """One generated command and, when glance accepted it, what running it showed."""

    command: str
    records: list[tuple[str, list[str]]] = field(default_factory=list)
    """(verb, argv) of every program bash started; `verb` is `?name` for a name bash could not find."""
    problems: list[str] = field(default_factory=list)
    syntax_error: bool = False
    """Bash reported a syntax error: not a violation (bash ran nothing more), but a misreading."""


@dataclass
class Summary:
    """What one run of the fuzzer found; `accepted` holds the cases glance accepted, all run."""

    cases: int
    accepted: list[Case]
    seconds: float

    @property
    def violations(self) -> list[Case]:
        return [case for case in self.accepted if case.problems]


class Generator:
    """Random shell text, deterministic for a given `random.Random`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.heredocs: list[str] = []

    def command(self) -> str:
        self.heredocs = []
        text = self.sequence(depth=0)
        if self.heredocs:
            text += "\n" + "".join(self.heredocs)
        for _ in range(self.rng.choice((0, 0, 0, 0, 0, 1, 2))):  # a stray character anywhere
            at = self.rng.randrange(len(text) + 1)
            text = text[:at] + self.rng.choice(NOISE) + text[at:]
        return text

    def sequence(self, depth: int) -> str:
        parts = [self.pipeline(depth)]
        for _ in range(self.rng.choice((0, 0, 1, 1, 2, 3))):
            parts += [self.rng.choice(SEPARATORS), self.pipeline(depth)]
        if self.rng.random() < 0.1:
            parts.append(self.rng.choice(("#", " # ", " #")) + self.rng.choice(("x", " rm x", "\nrm x")))
        return "".join(parts)

    def pipeline(self, depth: int) -> str:
        text = self.statement(depth)
        for _ in range(self.rng.choice((0, 0, 0, 1, 1, 2))):
            text += self.rng.choice((" | ", "|", " |& ", " |\n")) + self.statement(depth)
        return text

    def statement(self, depth: int) -> str:
        r, simple = self.rng.random(), self.simple(depth)
        if r < 0.88 or depth > 1:
            return simple
        inner, verb = self.sequence(depth + 1), self.rng.choice(MUTATING)
        return self.rng.choice(
            (f"( {inner} )", f"{{ {inner}; }}", f"! {simple}", f"if {simple}; then {inner}; fi",
             f"[ -f {self.word()} ]", f"[[ -f f ]] && {simple}", f"for v in a; do {inner}; done",
             f"f() {{ {inner}; }}; f", f"time {simple}", f"{simple} &", f"[{verb}]", f"\\{verb}")
        )  # fmt: skip

    def simple(self, depth: int) -> str:
        rng = self.rng
        verb = rng.choice(READ_ONLY if rng.random() < 0.85 else MUTATING + SHELL_STATE)
        words = [self.quoted(verb, 0.05 if verb in RULES else 0.3)]  # a quoted verb may slip through
        if verb in FIRST_ARGS and rng.random() < 0.7:
            words.append(self.quoted(rng.choice(FIRST_ARGS[verb]), 0.1))
        words += [self.word(depth) for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4)))]
        if rng.random() < 0.05:
            words.insert(0, rng.choice(("X=1", "IFS=/", "PATH=.", "a[$(x)]=1")))
        for _ in range(rng.choice((0, 0, 0, 0, 1, 2))):
            words.insert(rng.randrange(len(words) + 1), self.redirect())
        return rng.choice((" ",) * 40 + ("\t", "  ", " \\\n", " \\\n", "\\\n")).join(words)

    def word(self, depth: int = 2) -> str:
        rng = self.rng
        if depth < 2 and rng.random() < 0.04:
            inner = self.sequence(depth + 1)
            return rng.choice((f"$({inner})", f"`{inner}`", f'"$({inner})"', f"<({inner})", f">({inner})"))
        if rng.random() < 0.15:
            return rng.choice(READ_ONLY + MUTATING)  # a verb as an argument (`xargs rm`, `git log | tee`)
        return self.quoted(rng.choice(ARGS), 0.2)

    def quoted(self, word: str, rate: float) -> str:
        """`word`, sometimes quoted, escaped or bracketed in one of the ways bash reads differently."""
        rng = self.rng
        if rng.random() >= rate:
            return word
        cut = rng.randrange(len(word) + 1)
        head, tail = word[:cut], word[cut:]
        single = "'" + word.replace("'", "'\\''") + "'"
        double = '"' + re.sub(r'([\\"$`])', r"\\\1", word) + '"'
        ansi = "$'" + word.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return rng.choice(
            (single, double, ansi, "".join("\\" + c for c in word), f"{head}''{tail}", f'{head}""{tail}',
             f"{head}\\{tail}", f"[{word}]", f"{{{word},}}", f"{word}#")
        )  # fmt: skip

    def redirect(self) -> str:
        if self.rng.random() < 0.08:
            self.heredocs.append(self.rng.choice(("x", "$(x)", "`x`", "$X", "EOF x", "\tEOF")) + "\nEOF\n")
            return self.rng.choice(HEREDOCS)
        return self.rng.choice(REDIRECTS)


class Sandbox:
    """A directory of stub programs, and a fresh working directory for each run."""

    def __init__(self, root: Path, bash: str, timeout: float) -> None:
        self.root, self.bash, self.timeout = root, bash, timeout
        found = subprocess.run([bash, "-c", "compgen -b"], capture_output=True, text=True, check=True)
        builtins = _words(found.stdout)
        self.stubs = root / "bin"
        self.stubs.mkdir()
        for name in {*builtins, *READ_ONLY, *MUTATING, *SHELL_STATE, "__notfound"} - {"."}:
            stub = self.stubs / name  # `.` cannot be a file name; bash finds none and calls the handler
            stub.write_text(STUB.replace("STATUS", "1" if name == "false" else "0"))
            stub.chmod(0o555)
        (root / "prelude.sh").write_text(  # `enable` goes last, and the handler is defined before
            'command_not_found_handle() { __notfound "$@"; }\n'
            f"enable -n {' '.join(sorted(builtins, key=lambda name: name == 'enable'))}\n"
        )

    def run(self, index: int, case: Case) -> None:
        """Run `case.command`; fill in what it ran, the files it changed, and whether it hung."""
        home, log = self.root / f"case{index}" / "home", self.root / f"case{index}" / "log"
        (home / "src").mkdir(parents=True)
        log.mkdir()
        for name in SEEDS:
            (home / name).write_text(f"{name}\n")
        before = _snapshot(home.parent, log)
        env = {"PATH": str(self.stubs), "HOME": str(home), "LC_ALL": "C.UTF-8"}  # and nothing else
        env |= {"BASH_ENV": str(self.root / "prelude.sh"), "FUZZ_LOG": str(log)}
        done, held = os.pipe()  # every process bash starts holds `held`: EOF when the last one ends
        with subprocess.Popen(
            [self.bash, "--norc", "--noprofile", "-c", case.command], cwd=home, env=env,
            stdin=subprocess.DEVNULL, stdout=held, stderr=held, pass_fds=(held,), start_new_session=True,
        ) as process:  # fmt: skip
            os.close(held)
            output = _drained(done, time.monotonic() + self.timeout)
            os.close(done)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        if output is None:
            case.problems.append(f"still running after {self.timeout:g} s")
        case.syntax_error = b"syntax error" in (output or b"")
        for entry in sorted(log.iterdir(), key=lambda path: path.stat().st_mtime_ns):
            text = entry.read_bytes().decode("utf-8", "surrogateescape").replace(str(home), "~")
            name, *args = text.split("\0")[:-1]
            case.records.append(("?" + args.pop(0), args) if name == "__notfound" else (name, args))
        after = _snapshot(home.parent, log)
        for path in sorted(before.keys() | after.keys()):
            if before.get(path) != after.get(path):
                what = "created" if path not in before else "deleted" if path not in after else "changed"
                case.problems.append(f"{what} {path}")
        shutil.rmtree(home.parent)


def _drained(fd: int, deadline: float) -> bytes | None:
    """The last 4 KiB read from `fd` up to end of file; `None` if that did not come by `deadline`."""
    output = b""
    while (left := deadline - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            if not (chunk := os.read(fd, 1 << 16)):
                return output
            output = (output + chunk)[-4096:]
    return None


def _snapshot(top: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Size and modification time of every file under `top` but in `skip`; directories by name only."""
    found: dict[str, tuple[int, int]] = {}
    for directory, subdirs, files in os.walk(top):
        subdirs[:] = [name for name in subdirs if Path(directory, name) != skip]
        found |= {str(Path(directory, name).relative_to(top)) + "/": (0, 0) for name in subdirs}
        for name in files:
            info = Path(directory, name).lstat()
            found[str(Path(directory, name).relative_to(top))] = (info.st_size, info.st_mtime_ns)
    return found


def _quote(arg: str) -> str:
    """`arg` as shell text that glance can read.

    Glance refuses control characters and non-UTF-8 text in a command, so such a value came from a
    run-time expansion (`$'\\r'`) and is written as one. A backslash and a newline are quoted apart:
    glance refuses `x\\<newline>y` even inside quotes, but not `'x\\''<newline>y'`.
    """
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f\udc80-\udcff]", arg):
        raw = arg.encode("utf-8", "surrogateescape")
        return (
            "$'" + "".join(chr(b) if 32 <= b < 127 and b not in b"\\'" else f"\\x{b:02x}" for b in raw) + "'"
        )
    return "".join(shlex.quote(piece) for piece in re.split(r"(?<=\\)(?=\n)", arg))


def judge(case: Case) -> None:
    """Add a problem for each program run that is off the whitelist or that glance refuses on its own.

    Standard input and devices are about terminating, which stubs cannot observe, so the re-check
    feeds /dev/null and renames `/dev/`. `[ … ]` is re-checked as `test …`: bash's `[` may get no `]`
    (`[ x\\ ]`), and then it fails.
    """
    for verb, args in case.records:
        shown = shlex.join([verb.removeprefix("?"), *args]).encode("utf-8", "backslashreplace").decode()
        words = args[: -1 if args[-1:] == ["]"] else None] if verb == "[" else args
        quoted = [_quote(arg.replace("/dev/", "/DEV/")) for arg in words]
        alone = " ".join(["test" if verb == "[" else verb, *quoted, "</dev/null"])
        if verb.startswith("?"):
            case.problems.append(f"tried to run `{shown}`: bash found no such program")
        elif verb not in RULES:
            case.problems.append(f"ran `{shown}`: not a whitelisted verb")
        elif not is_ephemeral(alone):
            case.problems.append(f"ran `{shown}`, refused alone: {glance_verdict(alone).reason}")


def fuzz(cases: int, seed: int, jobs: int = 2, timeout: float = 5.0) -> Summary:
    """Generate `cases` commands from `seed`, run those glance accepts, and judge what they ran."""
    bash = shutil.which("bash")
    if bash is None:
        raise RuntimeError("bash is not on PATH")
    start, generator = time.perf_counter(), Generator(random.Random(seed))
    batch = [Case(generator.command()) for _ in range(cases)]
    accepted = [case for case in batch if is_ephemeral(case.command)]
    with tempfile.TemporaryDirectory(prefix="fuzz-glance-") as root, ThreadPoolExecutor(jobs) as pool:
        sandbox = Sandbox(Path(root), bash, timeout)
        list(pool.map(sandbox.run, range(len(accepted)), accepted))
    for case in accepted:
        judge(case)
    return Summary(cases, accepted, time.perf_counter() - start)


def report(summary: Summary, seed: int) -> Iterator[str]:
    """A markdown table of the numbers, then each violation with what bash ran, then the syntax errors."""
    runs = sum(len(case.records) for case in summary.accepted)
    syntax = [case.command for case in summary.accepted if case.syntax_error]
    yield "| seed | cases | accepted (run) | programs re-checked | bash syntax error | violations | cases/s |"
    yield "|---:|---:|---:|---:|---:|---:|---:|"
    yield (
        f"| {seed} | {summary.cases} | {len(summary.accepted)} | {runs} | {len(syntax)}"
        f" | {len(summary.violations)} | {summary.cases / summary.seconds:,.0f} |"
    )
    for case in summary.violations:
        yield f"\nVIOLATION {case.command!r}"
        yield from (f"  ran: {shlex.join([verb, *args])!r}" for verb, args in case.records)
        yield from (f"  {problem}" for problem in case.problems)
    yield from (f"\nbash syntax error (not a violation): {command!r}" for command in syntax)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="bash runs in parallel")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds before a run counts as hung")
    options = parser.parse_args(argv)
    summary = fuzz(options.cases, options.seed, options.jobs, options.timeout)
    print("\n".join(report(summary, options.seed)))
    return 1 if summary.violations else 0


if __name__ == "__main__":
    sys.exit(main())
