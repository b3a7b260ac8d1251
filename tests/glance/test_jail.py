"""Real attack commands run inside the glance jail, under bash and zsh: none may have its effect.

Each command runs as the CLI runs a glance the wall rewrote (`tests/glance/jail_world.py`): the real launcher,
the real kernel, a repository full of traps, listeners, a victim process. The parser would refuse most
of these commands; here they go straight to the jail, to show that what a parser misses is harmless.

No wall-clock assertion: a run that "ends" is one the launcher ended by its own limit (124 for time,
137 for memory, 141 for output), which the test reads from the exit status. The long matrix (older
Landlock ABIs, memory and expansion bombs) is marked `long`: `pytest -m long` runs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from flower._glance import jail_support
from flower._glance.jail import LAUNCHER
from flower.testing import hang_guard
from tests.glance.jail_world import CUT, MEMORY, PYTHON, REFUSED, SHELLS, TIMEOUT, World

pytestmark = pytest.mark.skipif(
    not jail_support().available, reason=f"this machine has no glance jail: {jail_support().reason}"
)

HAVE = {name: shutil.which(name) is not None for name in ("node", "gawk", "python3", "chattr", "strace")}


def _needs(command: str) -> None:
    for name, found in HAVE.items():
        if f"{name} " in command and not found:
            pytest.skip(f"{name} is not installed")


ATTACKS = {
    # files
    "touch": "touch X",
    "touch existing (utimensat)": "touch README.md",
    "echo >": "echo x > X",
    "append >>": "echo x >> a",
    "truncate by :>": ": > a",
    "truncate(1)": "truncate -s 0 a",
    "mkdir": "mkdir D",
    "rm": "rm -f README.md",
    "rm -r": "rm -rf sub",
    "mv": "mv a c",
    "ln -s": "ln -s a L",
    "ln (hard)": "ln a H",
    "cp": "cp a c",
    "chmod": "chmod 000 a",
    "chown": "chown nobody a",
    "mkfifo": "mkfifo F",
    "chattr": "chattr +A a",
    "write to TMPDIR": 'echo x > "$TMPDIR/x"; mktemp',
    "write to HOME": "echo x > ~/x; mkdir ~/.config",
    "write to the shared /tmp": "echo x > {outside}",
    "/proc/self write": "echo 1000 > /proc/self/oom_score_adj",
    "sed -i": "sed -i s/a/z/ a",
    "dd of=": "dd if=/dev/urandom of=a bs=1 count=1",
    "zsh =(…) temp file": "cat =(echo x)",
    "here-document": "cat <<EOF\nx\nEOF",
    "zsh/files builtins": "zmodload zsh/files && { mkdir D; rm -f README.md; mv a c; chmod 000 b; ln a H }",
    "zsh/mapfile": "zmodload zsh/mapfile && mapfile[X]=x && mapfile[a]=x",
    "zsh/system sysopen": "zmodload zsh/system && sysopen -w -o creat -u fd X && syswrite -o $fd x",
    "memfd fallocate": "python3 -c \"import os; os.posix_fallocate(os.memfd_create('x'), 0, 1 << 30)\"",
    # git
    "git status (index refresh)": "git status",
    "git status, optional locks on": "env GIT_OPTIONAL_LOCKS=1 git -c diff.autoRefreshIndex=true status",
    "git status, the repository's fsmonitor": "git -c core.fsmonitor={repo}/hook.sh status",
    "git commit (hooks)": "git -c user.name=x -c user.email=x@x commit --allow-empty -m x",
    "git config": "git config x.y z",
    "git checkout (hook)": "git checkout -b other",
    # network
    "bash /dev/tcp": "exec 3<>/dev/tcp/127.0.0.1/{port}; echo x >&3",
    "bash /dev/udp": "echo x > /dev/udp/127.0.0.1/{udp}",
    "zsh ztcp": "zmodload zsh/net/tcp && ztcp 127.0.0.1 {port}",
    "gawk /inet/tcp": 'gawk \'BEGIN { print "x" |& "/inet/tcp/0/127.0.0.1/{port}" }\'',
    "gawk /inet/udp": 'gawk \'BEGIN { print "x" |& "/inet/udp/0/127.0.0.1/{udp}" }\'',
    "python tcp": "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\"",
    "python abstract unix": "python3 -c \"import socket; s = socket.socket(1); s.connect('\\0{abstract}')\"",
    # identity, processes, the kernel
    "zsh EUID=": "EUID=65534; id -u",
    "python setresuid": 'python3 -c "import os; os.setresuid(65534, 65534, 65534)"',
    "unshare -r": "unshare -r id",
    "kill the victim": "kill -9 {victim}",
    "kill the victim's group": "kill -9 -{victim}",
    "stop the victim": "kill -STOP {victim}",
    "kill the launcher": "kill -9 $PPID",
    "setsid escape": "setsid sleep 100 & sleep 0.2",
    "nohup background job": "nohup sleep 100 >/dev/null 2>&1 &",
    # the third audit's examples, run as they were accepted
    "zsh $#HOME[$(touch X)]": "echo $#HOME['$(touch X)']",
    "zsh printf %d PATH=10": "printf %d PATH=10 && git status",
    "zsh [ -t PATH=10 ]": "[ -t PATH=10 ] ; git log -1",
    "gawk SYMTAB ARGV": 'awk \'BEGIN{SYMTAB["AR" "GV"][1]="/inet/tcp/0/127.0.0.1/{port}"}{print}\' README.md',
    "diff -l runs pr": "diff -l a b",
}


ATTACKS_LONG = {  # system calls made one by one: the strace test shows the kernel refusing their kind
    "setxattr": "python3 -c \"import os; os.setxattr('a', 'user.x', b'1')\"",
    "O_RDONLY|O_TRUNC": "python3 -c \"import os; os.open('a', os.O_RDONLY | os.O_TRUNC)\"",
    "git update-index --refresh": "git update-index --refresh",
    "git gc": "git gc",
    "python unix": "python3 -c \"import socket; s = socket.socket(1); s.connect('{unix}')\"",
    "python socketpair datagram": 'python3 -c "import socket; a, b = socket.socketpair(1, 2); '
    "a.sendto(b'x', '{unix}')\"",
    "renice the victim": "renice -n 19 -p {victim}",
    "prlimit the victim": "prlimit --pid {victim} --nofile=1:1",
    "ipcmk shared memory": "ipcmk -M 4096",
    "keyctl": "python3 -c \"import ctypes; print(ctypes.CDLL(None).syscall(248, b'u', b'k', b'v', 1, -4))\"",
    "io_uring": 'python3 -c "import ctypes; print(ctypes.CDLL(None).syscall(425, 8, bytes(120)))"',
    "python double fork": 'python3 -c "import os, time\nif os.fork() == 0: time.sleep(100)"',
    "core dump": 'python3 -c "import os; os.abort()"',
}


def _cases(short: dict[str, str], long: dict[str, str]) -> list[object]:
    """The commands as test parameters, the `long` ones marked so that the default run leaves them out."""
    return [pytest.param(command, id=name) for name, command in short.items()] + [
        pytest.param(command, id=name, marks=pytest.mark.long) for name, command in long.items()
    ]


def _by_shell(short: dict[str, str], long: dict[str, str]) -> list[object]:
    """Each command with each shell it applies to: zsh's modules (`zmodload`) with zsh alone, so that no
    case is made only to be skipped."""
    cases: list[object] = []
    for marks, commands in (((), short), ((pytest.mark.long,), long)):
        for name, command in commands.items():
            zsh_only = "zmodload" in command
            cases += [pytest.param(shell, command, id=f"{name}-{os.path.basename(shell)}", marks=marks)
                      for shell in SHELLS if not zsh_only or "zsh" in os.path.basename(shell)]  # fmt: skip
    return cases


@pytest.mark.parametrize(("shell", "command"), _by_shell(ATTACKS, ATTACKS_LONG))
def test_an_attack_has_no_effect(world: World, shell: str, command: str) -> None:
    _needs(command)
    ran = world.run(command, shell=shell)
    assert ran.effects == [], f"{command!r} under {shell}: {ran.effects}\n{ran.out}"
    assert ran.rc not in (REFUSED, -9), ran.out  # it really ran, inside the jail, and the launcher lived


ENDLESS = {
    "cat /dev/zero": "cat /dev/zero",
    "cat /var/run/../dev/zero": "cat /var/run/../dev/zero",
    "a link to /dev/zero in the project": "grep -R TODO .",
    "a named pipe in the project": "cat fifo",
    "tail -f": "tail -f README.md",
    "yes": "yes",
    "a fork bomb": ":(){ :|:& };:; wait; sleep 100",
}
ENDLESS_LONG = {
    "sleep": "sleep 100",
    "a shell loop": "while :; do :; done",
    "an awk loop": "awk 'BEGIN { while (1) {} }'",
    "a zsh fork bomb": "f() { f | f & }; f; wait; sleep 100",
    "a flood from /dev/urandom": "cat /dev/urandom",
    "a flood from seq": "seq 1 100000000",
}


@pytest.mark.parametrize("command", _cases(ENDLESS, ENDLESS_LONG))
def test_an_endless_command_is_ended_by_the_jail(world: World, shell: str, command: str) -> None:
    ran = world.run(command, shell=shell, wall=1, peak=True)
    assert ran.effects == [], f"{command!r} under {shell}: {ran.effects}"
    assert ran.rc != 0, ran.out[-500:]  # ended by a limit (time, output, processes) or refused, never done
    assert len(ran.raw) < 24_000 + 1024
    assert ran.maxrss_mib < 600, f"peak resident memory {ran.maxrss_mib:.0f} MiB"


BOMBS = {  # the shell or program may fail and go on: what matters is that memory and output stay bounded
    "memory, shell": "x=$(head -c 3000000000 /dev/urandom | tr -d -c x); echo ${#x}",
    "memory, python": 'python3 -c "x = bytearray(3 << 30); print(len(x))"',
    "memory, shared mapping": 'python3 -c "import mmap; m = mmap.mmap(-1, 3 << 30); '
    "m.write(b'x' * (3 << 30))\"",
    "memory, /dev/zero mapping": "python3 -c \"import mmap; f = open('/dev/zero', 'rb'); "
    'm = mmap.mmap(f.fileno(), 3 << 30, prot=mmap.PROT_READ); print(sum(m[::4096]))"',
    "memory, memfd": "python3 -c \"import os; fd = os.memfd_create('x'); os.ftruncate(fd, 3 << 30)\"",
    "memory, awk": "awk 'BEGIN { s = \"x\"; while (1) s = s s }'",
    "expansion": "echo x{1..100000000} | wc -c",
    "zsh glob from /": "ls -d /**/zzz",
    "many processes at once": "for i in $(seq 200); do sleep 5 & done; wait",
}


@pytest.mark.long
@pytest.mark.parametrize("command", BOMBS.values(), ids=BOMBS.keys())
def test_a_bomb_stays_within_the_limits(world: World, shell: str, command: str) -> None:
    ran = world.run(command, shell=shell, wall=2, peak=True)
    assert ran.effects == [], f"{command!r} under {shell}: {ran.effects}"
    assert len(ran.raw) < 24_000 + 1024
    assert ran.maxrss_mib < 600, f"peak resident memory {ran.maxrss_mib:.0f} MiB"


def test_the_memory_of_all_processes_together_is_bounded(world: World, shell: str) -> None:
    """Each process holds at most its data limit; together they hold at most the memory budget."""
    grow = "python3 -c 'import time; x = bytearray(120 << 20); time.sleep(3600)'"  # until the budget ends it
    ran = world.run(
        f"{grow} | {grow} | {grow}; echo done", shell=shell, wall=hang_guard(), memory_bytes=200 << 20
    )
    assert ran.rc == MEMORY and "[glance: stopped at 200 MiB of memory" in ran.out, ran.out
    assert "done" not in ran.out and ran.effects == []


@pytest.mark.parametrize("change", ["printf '%d\\n' EUID=65534", "EUID=65534", "(( EUID = 65534 ))"])
def test_the_identity_does_not_change(world: World, shell: str, change: str) -> None:
    ran = world.run(f"{change}; id -u; id -ru", shell=shell)
    assert "65534" not in ran.out.split(), ran.out


def test_the_time_and_output_limits_report_themselves(world: World, shell: str) -> None:
    slow = world.run("sleep 100", shell=shell, wall=1)
    assert slow.rc == TIMEOUT and "[glance: stopped after 1 s" in slow.out
    flood = world.run("yes", shell=shell, output_bytes=1000, wall=hang_guard())
    assert flood.rc == CUT and flood.out.startswith("y\ny\n") and len(flood.out) < 1200
    assert flood.out.rstrip().endswith("narrow it or delegate it]")


BENIGN = {
    "git status": ("git status", "On branch"),
    "git log": ("git log --oneline -5", " s"),
    "git show": ("git show HEAD:README.md | head -1", "hello"),
    "git blame": ("git blame a | head -1", "b"),
    "git grep": ("git grep -n TODO | head -1", "README.md:2"),
    "ls -la": ("ls -la", "README.md"),
    "ls -l /dev/tty": ("ls -l /dev/tty /dev/null", "/dev/null"),
    "grep -rn": ("grep -rn print --exclude-dir=.git .", "x.py"),
    "find -name": ("find . -name '*.py'", "./sub/x.py"),
    "head, cat, sed, sort, uniq": ("head -1 a; cat b | sort | uniq -c | head -1; sed -n 2p a", "b"),
    "awk": ("awk -F: '{print $1}' /etc/passwd | head -1", "root"),
    "python3 --version": ("python3 --version", "Python 3"),
    "node --version": ("node --version", "v"),
    "diff <(sort a) <(sort b)": ("diff <(sort a) <(sort b) && echo SAME", "SAME"),
    "cd sub && git log": ("cd sub && git log --oneline -1 && pwd", "/sub"),
    "> /dev/null": ("echo x > /dev/null && echo ok 2>/dev/null", "ok"),
    "system": ("id -u; uname -s; df -h . | tail -1; free -m | head -1; uptime; date +%Y", "Linux"),
    "ps": ("ps aux | head -2", "PID"),
    "/proc": ("head -1 /proc/meminfo; cat /proc/self/status | head -1", "MemTotal"),
    "stat, file, md5sum, du": ("stat -c %s a; file a; md5sum a; du -sh . | cut -f2", "ASCII text"),
    "jq": ("echo '{\"a\": 1}' | jq .a", "1"),
    "command -v": ("command -v git", "git"),
    "standard input is /dev/null": ("cat; echo done", "done"),
    "arithmetic": ("echo $((1 + 2))", "3"),
}


@pytest.mark.parametrize(("command", "expected"), BENIGN.values(), ids=BENIGN.keys())
def test_a_benign_command_works_in_the_jail(world: World, shell: str, command: str, expected: str) -> None:
    for program in ("node", "jq"):
        if (command.startswith(program) or f"| {program}" in command) and not shutil.which(program):
            pytest.skip(f"{program} is not installed")
    ran = world.run(command, shell=shell, wall=hang_guard())  # it ends by itself, however slowly
    assert ran.effects == [], ran.effects
    assert ran.rc == 0, f"{command!r} under {shell} exited {ran.rc}:\n{ran.out}"
    assert expected in ran.out, ran.out


def test_the_terminal_is_not_read(world: World, shell: str) -> None:
    os.write(world.pty_master, b"SECRET-KEYSTROKES\n")
    ran = world.run("cat {pts}; head -c 100 < {pts}", shell=shell, wall=hang_guard())  # refused: no wait
    assert "SECRET" not in ran.out and "Permission denied" in ran.out


@pytest.mark.skipif(not HAVE["strace"], reason="strace is not installed")
@pytest.mark.parametrize(
    ("namespaces", "kill"), [(True, "ESRCH"), (False, "EPERM")], ids=["namespace", "watcher"]
)
def test_strace_shows_the_kernel_refusing(world: World, tmp_path: Path, namespaces: bool, kill: str) -> None:
    """The refusals come from the kernel: each call returns its error (EACCES from Landlock or the socket
    filter, EPERM from seccomp or Landlock's signal scope; in a PID namespace of its own, the command sees
    no other process to signal at all: ESRCH).

    Each process is traced to a file of its own (`-ff`): in one shared file a call that another process
    interrupts is printed in two halves (`<unfinished ...>`, `<... resumed>`), which a busy machine makes
    likely (the launcher polls the command's memory meanwhile), and its refusal would not match."""
    trace = tmp_path / "trace"
    bash = shutil.which("bash") or "/bin/bash"
    command = (
        "exec 3<>/dev/tcp/127.0.0.1/{port}; touch X; touch README.md; chmod 000 a; kill -9 {victim}; "
        "python3 -c 'import os; os.setresuid(65534, 65534, 65534)'; echo DONE"
    )
    calls = "trace=socket,openat,utimensat,fchmodat,kill,setresuid"
    jailed = world.jailed(command, wall=hang_guard(), namespaces=namespaces)  # strace slows every process
    strace = ["strace", "-ff", "-qq", "-o", str(trace), "-e", calls, bash, "-c", jailed]
    done = subprocess.run(
        strace, cwd=world.repo, env=world.env("strace", bash), capture_output=True, timeout=hang_guard()
    )
    assert b"DONE" in done.stdout, done  # every step ran to its end: the trace holds each call
    text = "\n".join(part.read_text() for part in sorted(tmp_path.glob("trace.*")))
    for expected in (
        r"socket\(AF_INET, SOCK_STREAM, IPPROTO_TCP\)\s+= -1 EACCES",
        r'openat\(AT_FDCWD, "X", O_WRONLY\|O_CREAT.*\s+= -1 EACCES',
        r'utimensat\(AT_FDCWD, "README.md", NULL, 0\)\s+= -1 EPERM',
        r'fchmodat\(AT_FDCWD, "a", 000\)\s+= -1 EPERM',
        rf"kill\({world.victim.pid}, SIGKILL\)\s+= -1 {kill}",
        r"setresuid\(65534, 65534, 65534\)\s+= -1 EPERM",
    ):
        assert re.search(expected, text), f"{expected} not in the trace:\n{text[-3000:]}"
    assert world.victim.poll() is None, "the victim lives"


@pytest.mark.skipif(not HAVE["strace"], reason="strace is not installed")
@pytest.mark.parametrize(
    ("call", "error"),
    [
        ("landlock_create_ruleset", "ENOSYS"),
        ("landlock_add_rule", "EINVAL"),
        ("landlock_restrict_self", "EPERM"),
        ("seccomp", "EINVAL"),
        ("prctl", "EINVAL"),
        ("capset", "EPERM"),
        ("prlimit64", "EPERM"),
    ],
)
def test_it_fails_closed_when_a_step_fails(world: World, call: str, error: str) -> None:
    """Make one confinement call fail (strace injects the error): the command must not run at all."""
    marker = world.tmp / f"RAN-{call}"
    inject = ["-e", f"trace={call}", "-e", f"inject={call}:error={error}"]
    jailed = world.jailed(f": > {marker}; echo RAN") + " && :"
    argv = ["strace", "-f", "-qq", "-o", "/dev/null", *inject, "bash", "-c", jailed]
    env = world.env("inject", shutil.which("bash") or "/bin/bash")
    done = subprocess.run(argv, cwd=world.repo, env=env, capture_output=True, timeout=hang_guard(), text=True)
    assert done.returncode == REFUSED, done
    assert "the command was not run" in done.stderr
    assert "RAN" not in done.stdout and not marker.exists()


def test_bad_arguments_refuse_to_run(world: World) -> None:
    for argv in (["--b64"], ["--wall", "0", "--b64", "dHJ1ZQ=="], ["--nope", "1", "--b64", "dHJ1ZQ=="], []):
        done = subprocess.run([PYTHON, "-I", "-S", str(LAUNCHER), *argv], capture_output=True, text=True)
        assert done.returncode == REFUSED and "the command was not run" in done.stderr, argv


OLDER_KERNELS = [
    "touch X",
    ": > a",
    "python3 -c \"import os; os.open('a', os.O_RDONLY | os.O_TRUNC)\"",
    "truncate -s 0 a",
    "ln a H",
    "mv a c",
    "exec 3<>/dev/tcp/127.0.0.1/{port}",
    "python3 -c \"import socket; s = socket.socket(1); s.connect('\\0{abstract}')\"",
    "kill -9 {victim}",
    "kill -STOP -{victim}",
    "kill -9 $PPID",
    "git status",
]


@pytest.mark.long
@pytest.mark.parametrize("abi", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("command", OLDER_KERNELS)
def test_an_older_landlock_abi_is_made_up_by_seccomp(
    world: World, shell: str, abi: int, command: str
) -> None:
    """This kernel may have a newer ABI; `--abi` makes the jail use an older one, as on Linux 5.13 to 6.11."""
    ran = world.run(command, shell=shell, abi=abi)
    assert ran.effects == [], f"{command!r} at ABI {abi}: {ran.effects}\n{ran.out}"
    assert ran.rc not in (REFUSED, -9), ran.out


@pytest.mark.long
@pytest.mark.parametrize("abi", [1, 5])
@pytest.mark.parametrize(
    "command", [c for c in OLDER_KERNELS if "kill" in c or "abstract" in c or "touch" in c]
)
def test_an_older_landlock_abi_without_a_pid_namespace(
    world: World, shell: str, abi: int, command: str
) -> None:
    """Without a PID namespace, the seccomp stand-ins hold too (signals only within the group)."""
    ran = world.run(command, shell=shell, abi=abi, namespaces=False)
    assert ran.effects == [], f"{command!r} at ABI {abi}: {ran.effects}\n{ran.out}"
    assert ran.rc not in (REFUSED, -9), ran.out


@pytest.mark.parametrize("abi", [1, 5])
def test_benign_commands_work_at_an_older_abi(world: World, shell: str, abi: int) -> None:
    command = "git status && diff <(sort a) <(sort b); cd sub && ps | head -1 && echo x > /dev/null"
    ran = world.run(command, shell=shell, abi=abi, wall=hang_guard())
    assert ran.effects == [] and "On branch" in ran.out and "PID" in ran.out, ran.out
