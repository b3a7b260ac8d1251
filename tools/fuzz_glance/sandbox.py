"""Where the glance fuzzer runs accepted commands: stub programs, real programs, bash and zsh.

Each accepted command runs in a fresh copy of a small git repository whose files are newer than its
index (so that a `git status` that refreshes the index would rewrite it) and whose `core.fsmonitor`
names a program off the whitelist (so that git running it is seen). Two passes, each in several shells:

- stubs: bash and zsh with every builtin disabled and a stub program for every name, so that whatever
  the shell would run is logged with its arguments (a stub writes its name and argv to a log);
- real: what the delegation wall hands the CLI, the command inside the glance jail (`glance_run`),
  with builtins enabled and the real programs of the whitelisted verbs, stubs for every other name, so
  that what only a real builtin or program does shows: zsh's `printf` evaluating a subscript, a read
  of a device that never ends (a run the jail did not end within its own limits), and, under strace
  when it is installed, any successful IPv4 or IPv6 socket call (gawk's `/inet/…`, a lookup). The
  jail's refusals (`= -1 EACCES`) are not effects; a run ended by the jail's limits is not a hang.

zsh runs twice: with its default options, and with the options that change how words expand
(`ZSH_OPTIONS`: from `$ZDOTDIR/.zshenv` in the stub pass; in the real pass, where the jailed shell gets
no `ZDOTDIR` and reads no home directory, from a `setopt` line before the command, see `campaign.py`).
An environment as bare as `env -i` leaves it, standard input from /dev/null.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .generate import MUTATING, READ_ONLY, SEEDS, SHELL_STATE

__all__ = ["SHELLS", "STUB", "ZSH_OPTIONS", "Run", "Sandbox"]

STUB = '#!/bin/sh\nprintf "%s\\0" "${0##*/}" "$@" > "$FUZZ_LOG/$$"\nexit STATUS\n'
"""A stub program: its name and argv, NUL-separated, into a file of its own (pipelines run at once)."""
ZSH_OPTIONS = "EXTENDED_GLOB BRACE_CCL RC_QUOTES MAGIC_EQUAL_SUBST KSH_GLOB GLOB_SUBST SH_WORD_SPLIT"
SHELLS = ("bash", "zsh", "zsh+opts", "bash/real", "zsh/real", "zsh+opts/real")
"""Every way a command is run: shell (zsh+opts is zsh with `ZSH_OPTIONS`), and `/real` for the real pass."""
HOOK = "fsmon"
"""The program the template repository names as its `core.fsmonitor`: off the whitelist, so logged."""


@dataclass
class Run:
    """What running one command in one shell showed."""

    records: list[tuple[str, list[str]]] = field(default_factory=list)
    """(verb, argv) of every stub program run; `verb` is `?name` for a name the shell could not find."""
    problems: list[str] = field(default_factory=list)
    syntax_error: bool = False
    """The shell reported a syntax error: not a violation (it ran nothing more), but a misreading."""


class Sandbox:
    """Stub and real program directories, shell preludes, and a fresh working copy for each run."""

    def __init__(self, root: Path, stub_timeout: float = 5.0, real_timeout: float = 2.0) -> None:
        self.root, self.stub_timeout, self.real_timeout = root, stub_timeout, real_timeout
        self.programs = {name: shutil.which(name) for name in ("bash", "zsh", "git", "strace")}
        found = subprocess.run(["bash", "-c", "compgen -b"], capture_output=True, text=True, check=True)
        self.bash_builtins = found.stdout.split()
        names = {*self.bash_builtins, *READ_ONLY, *MUTATING, *SHELL_STATE, "__notfound", HOOK} - {"."}
        if self.programs["zsh"]:
            found = subprocess.run(["zsh", "-fc", "print -l ${(k)builtins}"], capture_output=True, text=True)
            names |= set(found.stdout.split()) - {"."}
        (root / "tmp").mkdir()
        stubs, real = root / "bin", root / "real"
        stubs.mkdir()
        real.mkdir()
        for name in names:
            stub = stubs / name  # `.` cannot be a file name; the shell finds none and calls the handler
            stub.write_text(STUB.replace("STATUS", "1" if name == "false" else "0"))
            stub.chmod(0o555)
            program = shutil.which(name) if name in READ_ONLY else None
            (real / name).symlink_to(program or stub)
        self._preludes()
        self.template = root / "template"
        self._template()

    def available(self, shell: str) -> bool:
        return bool(self.programs[shell.split("+")[0].split("/")[0]])

    def _preludes(self) -> None:
        # The handler names its stub by path: a command that sets PATH (`{PATH}>/dev/null`) must still be
        # seen running what is not found, not make the handler recurse until a time limit.
        notfound = shlex.quote(str(self.root / "bin" / "__notfound"))
        handler = f'command_not_found_handle() {{ {notfound} "$@"; }}\n'  # `enable` goes last:
        disable = " ".join(sorted(self.bash_builtins, key=lambda name: name == "enable"))
        (self.root / "bash.sh").write_text(f"{handler}enable -n {disable}\n")
        (self.root / "bash-real.sh").write_text(handler)
        for variant, options in (("zsh", ""), ("zsh+opts", ZSH_OPTIONS)):
            for real in (False, True):
                home = self.root / f"zdot-{variant}{'-real' if real else ''}"
                home.mkdir()
                lines = [f'command_not_found_handler() {{ {notfound} "$@"; }}']
                lines += [f"setopt {options}"] if options else []
                lines += [] if real else ["disable -m '*'"]  # `disable` itself goes with the rest
                (home / ".zshenv").write_text("\n".join(lines) + "\n")

    def _template(self) -> None:
        """A repository with one commit, files newer than its index, and a fsmonitor hook off the list."""
        home = self.template
        (home / "src").mkdir(parents=True)
        for name in SEEDS:
            (home / name).write_text(f"{name}\n")
        git = self.programs["git"]
        if git is None:
            return
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.root), "GIT_CONFIG_NOSYSTEM": "1"}
        for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=f", "-c", "user.email=f@f",
                     "commit", "-qm", "seed"], ["config", "core.fsmonitor", HOOK]):  # fmt: skip
            subprocess.run([git, *args], cwd=home, env=env, check=True, capture_output=True)
        later = time.time() + 60
        for name in SEEDS:
            os.utime(home / name, (later, later))

    def run(self, index: int, command: str, shell: str) -> Run:
        """Run `command` in `shell` (one of `SHELLS`); what it ran, the files it changed, whether it hung."""
        case = self.root / f"case{index}-{shell.replace('/', '-')}"
        home, log, user = case / "home", case / "log", case / "user"
        shutil.copytree(self.template, home, symlinks=True)
        log.mkdir()
        user.mkdir()  # $HOME: not the working copy, which the jail would then not read (a home directory)
        before = _snapshot(case, log)
        real = shell.endswith("/real")
        base = shell.removesuffix("/real")
        env = {"PATH": str(self.root / ("real" if real else "bin")), "HOME": str(user), "LC_ALL": "C.UTF-8"}
        env |= {"FUZZ_LOG": str(log), "TMPDIR": str(self.root / "tmp"), "GIT_CONFIG_NOSYSTEM": "1"}
        if base == "bash":
            env["BASH_ENV"] = str(self.root / ("bash-real.sh" if real else "bash.sh"))
            argv = [str(self.programs["bash"]), "--norc", "--noprofile", "-c", command]
        else:
            env["ZDOTDIR"] = str(self.root / f"zdot-{base}{'-real' if real else ''}")
            argv = [str(self.programs["zsh"]), "-c", command]
        trace = self.root / "tmp" / f"{case.name}.trace"
        if real and self.programs["strace"]:
            argv = [str(self.programs["strace"]), *_TRACE, "-o", str(trace), *argv]
        if real:
            env["SHELL"] = str(self.programs[base.split("+")[0]])  # the launcher runs the CLI's shell
        done, held = os.pipe()  # every process the shell starts holds `held`: EOF when the last one ends
        with subprocess.Popen(
            argv, cwd=home, env=env, stdin=subprocess.DEVNULL, stdout=held, stderr=held,
            pass_fds=(held,), start_new_session=True,
        ) as process:  # fmt: skip
            os.close(held)
            timeout = self.real_timeout if real else self.stub_timeout
            output = _drained(done, time.monotonic() + timeout)
            os.close(done)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        result = Run()
        if output is None:
            result.problems.append(f"still running after {timeout:g} s")
        result.problems += _network(trace.parent, trace.name)
        result.syntax_error = b"syntax error" in (output or b"") or b"parse error" in (output or b"")
        for entry in sorted(log.iterdir(), key=lambda path: path.stat().st_mtime_ns):
            text = entry.read_bytes().decode("utf-8", "surrogateescape").replace(str(home), "~")
            name, *args = text.split("\0")[:-1]
            result.records.append(("?" + args.pop(0), args) if name == "__notfound" else (name, args))
        after = _snapshot(case, log)
        for path in sorted(before.keys() | after.keys()):
            if before.get(path) != after.get(path):
                what = "created" if path not in before else "deleted" if path not in after else "changed"
                result.problems.append(f"{what} {path}")
        shutil.rmtree(case, ignore_errors=True)
        return result


_TRACE = ["-ff", "-qq", "-e", "trace=socket,connect,bind,sendto,sendmsg", "-e", "signal=none"]
"""strace options: the socket calls of every process, one trace file per process (no split lines)."""
_SUCCEEDED = re.compile(r"\)\s+= [0-9]+")


def _network(directory: Path, prefix: str) -> list[str]:
    """A problem for each of the first IPv4 or IPv6 socket calls that succeeded (a refusal by the jail,
    `= -1 EACCES`, is no effect; a local socket is no network)."""
    calls = []
    for trace in sorted(directory.glob(prefix + "*")):
        lines = trace.read_text(errors="replace").splitlines()
        trace.unlink()
        calls += [line for line in lines if "AF_INET" in line and _SUCCEEDED.search(line)]
    return [f"reached the network: {call[:160]}" for call in calls[:3]]


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
