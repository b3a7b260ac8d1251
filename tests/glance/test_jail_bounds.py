"""The jail's bounds hold: memory for one process and for all, nothing outliving the launcher, live budgets,
and the launcher's own account of how a command ended. Under bash and zsh, with the real launcher.

The probes of an outside review: a process that raises its stack limit and grows its stack, two processes
that queue memory in a socket pair's buffers, the launcher SIGKILLed during `sleep 60 & wait`, a command
that exits 124 to look timed out, a loop of short processes that a budget of forks over the run refused.
No wall-clock assertion: "ended" is read from the launcher's exit status and note, and the survivors of a
killed launcher are looked for until a hang guard of seconds (the time it takes is `bench_jail.py`'s).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from flower._glance import jail_support
from flower.testing import hang_guard
from tests.glance.jail_world import MEMORY, PYTHON, REFUSED, World, _stragglers

pytestmark = pytest.mark.skipif(
    not jail_support().available, reason=f"this machine has no glance jail: {jail_support().reason}"
)

CRASH = (
    "[glance: the command was killed by SIGSEGV, which is how a process ends past a memory limit of a glance "
    "(8 MiB of stack, 512 MiB of data, 4,096 MiB of address space): delegate it]"
)


def _python(code: str) -> str:
    return f'{PYTHON} -c "{code}"'


def test_the_stack_limit_cannot_be_raised_and_the_stack_ends_at_it(world: World, shell: str) -> None:
    """The review's probe raised the soft stack limit (the hard one was unlimited) and grew 1,500 MiB."""
    raised = world.run(
        "ulimit -s unlimited 2>/dev/null; ulimit -s; ulimit -Hs; "
        + _python("import resource; resource.setrlimit(resource.RLIMIT_STACK, (1 << 31,) * 2)"),
        shell=shell,
    )
    assert raised.out.startswith("8192\n8192\n"), raised.out  # zsh says nothing, bash says it cannot
    assert raised.out.rstrip().endswith("ValueError: not allowed to raise maximum limit"), raised.out
    nested = "import sys; sys.setrecursionlimit(10 ** 8); x = []\nfor _ in range(10 ** 6): x = [x]\nrepr(x)"
    grown = world.run(_python(nested), shell=shell, wall=hang_guard())
    assert grown.rc == 128 + signal.SIGSEGV and grown.out.rstrip().endswith(CRASH), grown.out[-500:]


@pytest.mark.parametrize(
    ("probe", "error"),
    [
        ("import socket; a, b = socket.socketpair()", "PermissionError: [Errno 13] Permission denied"),
        (
            "import socket; socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)",
            "PermissionError: [Errno 13]",
        ),
        (
            "import mmap; mmap.mmap(-1, 1 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x100)",
            "PermissionError: [Errno 1] Operation not permitted",
        ),
        (
            "import mmap; mmap.mmap(-1, 5 << 30, prot=mmap.PROT_READ)",
            "OSError: [Errno 12] Cannot allocate memory",
        ),
    ],
    ids=["socketpair", "datagram socketpair", "MAP_GROWSDOWN", "address space"],
)
def test_memory_no_limit_counts_is_refused(world: World, shell: str, probe: str, error: str) -> None:
    """Socket buffers (the review queued 1.4 GiB in a socket pair), a stack-like mapping that the data
    limit does not count, and address space past the limit: each refused by the kernel."""
    ran = world.run(_python(probe), shell=shell)
    assert error in ran.out and ran.rc == 1, ran.out


def test_one_process_is_held_to_the_memory_budget(world: World, shell: str) -> None:
    """The budget is checked from the first process: one under its own data limit but over the budget."""
    ran = world.run(_python("import time; x = bytearray(300 << 20); time.sleep(5)") + "; echo done",
                    shell=shell, wall=hang_guard(), memory_bytes=200 << 20)  # fmt: skip
    assert ran.rc == MEMORY and ran.out.rstrip().endswith(
        "[glance: stopped at 200 MiB of memory, the memory limit of a glance: delegate it]"
    ), ran.out
    assert "done" not in ran.out


PIPES = (  # each of 8 processes fills pipes until it runs out of descriptors, then holds them
    "import fcntl, os, time\n"
    "for _ in range(3): os.fork()\n"
    "try:\n"
    "    while True:\n"
    "        r, w = os.pipe(); fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)\n"
    "        try:\n"
    "            while True: os.write(w, bytes(65536))\n"
    "        except BlockingIOError: pass\n"
    "except OSError: pass\n"
    "time.sleep(600)"
)


def test_pipe_buffers_count_toward_the_memory_budget(world: World, shell: str) -> None:
    """Kernel memory no process limit counts: with socket pairs refused, pipes are where it can queue
    (100 processes held 426 MiB in full pipes). Each pipe held counts in the launcher's sum."""
    ran = world.run(f"{PYTHON} -c '{PIPES}'", shell=shell, wall=hang_guard(), memory_bytes=256 << 20)
    assert ran.rc == MEMORY and ran.out.rstrip().endswith(
        "[glance: stopped at 256 MiB of memory, the memory limit of a glance: delegate it]"
    ), ran.out[-500:]


def _launcher_of(shell_pid: int) -> int:
    deadline = time.monotonic() + hang_guard()
    while time.monotonic() < deadline:
        for task in os.listdir(f"/proc/{shell_pid}/task"):
            for child in Path(f"/proc/{shell_pid}/task/{task}/children").read_text().split():
                if b"run.py" in Path(f"/proc/{child}/cmdline").read_bytes():
                    return int(child)
        time.sleep(0.05)
    raise AssertionError("the launcher did not start")


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespace", "watcher"])
def test_nothing_outlives_a_killed_launcher(world: World, shell: str, namespaces: bool) -> None:
    marker = uuid.uuid4().hex
    jailed = world.jailed("sleep 600 & sleep 600 & wait", wall=hang_guard(), namespaces=namespaces)
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    process = subprocess.Popen(
        [shell, "-c", jailed + " && :"], cwd=world.repo, env=world.env(marker, shell), **quiet
    )
    launcher = _launcher_of(process.pid)
    deadline = time.monotonic() + hang_guard()
    while time.monotonic() < deadline:  # both sleeps started
        if len(_stragglers(marker)) >= 3:
            break
        time.sleep(0.05)
    before = _stragglers(marker)
    assert len(before) >= 3, before  # the shell and its two sleeps
    os.kill(launcher, signal.SIGKILL)
    process.wait(timeout=hang_guard())
    deadline = time.monotonic() + hang_guard()
    while time.monotonic() < deadline:  # a hang guard: they are gone within milliseconds (bench_jail.py)
        if not (left := _stragglers(marker)):
            break
        time.sleep(0.1)
    assert not left, f"still running after the launcher was killed: {left}"


@pytest.mark.parametrize("code", [124, 137, 141])
def test_an_exit_status_the_command_chose_gets_no_note(world: World, shell: str, code: int) -> None:
    ran = world.run(f"echo out; exit {code}", shell=shell)
    assert ran.rc == code and ran.out == "out\n", ran.out  # no `[glance: …]` note: the launcher ended nothing


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespace", "watcher"])
def test_a_signal_and_the_cpu_limit_are_told_by_the_launcher(
    world: World, shell: str, namespaces: bool
) -> None:
    """In a PID namespace too: the shell is not the namespace's first process, which the kernel spares the
    signals it sends itself."""
    killed = world.run("kill -TERM $$; echo survived", shell=shell, namespaces=namespaces)
    assert killed.rc == 128 + signal.SIGTERM, killed.out
    assert killed.out == "\n[glance: the command was killed by SIGTERM]\n"
    spin = world.run(
        _python("while True: pass"), shell=shell, wall=hang_guard(), cpu_seconds=1, namespaces=namespaces
    )
    assert spin.rc == 128 + signal.SIGXCPU, spin.out
    assert spin.out == "\n[glance: stopped at 1 s of CPU, the CPU limit of a glance: delegate it]\n"


def test_the_process_budget_counts_processes_alive_at_once(world: World, shell: str) -> None:
    """A loop of short processes one after another passes (a budget of forks over the run refused it);
    processes at once past the budget fail, and the launcher says how many it refused."""
    loop = world.run("for i in $(seq 60); do /bin/true || echo FAILED; done; echo END", shell=shell,
                     processes=3, wall=hang_guard())  # fmt: skip
    assert loop.rc == 0 and loop.out == "END\n", loop.out
    many = world.run(  # the sleeps outlast the shell (the launcher ends them): 4 at once, whatever the load
        "sleep 600 & sleep 600 & sleep 600 & sleep 600 & echo END",
        shell=shell,
        processes=3,
        wall=hang_guard(),
    )
    assert (
        "process or thread creation" in many.out
        and "refused, past the 3 processes and 256 threads at once" in many.out
    ), many.out
    assert many.rc != REFUSED and many.effects == []


def test_the_thread_budget_counts_threads_alive_at_once(world: World, shell: str) -> None:
    start = (
        "import threading, time; ts = [threading.Thread(target=time.sleep, args=({pause},))"
        " for _ in range({n})]\nfor t in ts: t.start(){join}\nprint('STARTED')"
    )
    at_once = world.run(
        _python(start.format(pause=2, n=20, join="")), shell=shell, threads=32, wall=hang_guard()
    )
    assert "STARTED" in at_once.out, at_once.out
    over = world.run(
        _python(start.format(pause=2, n=40, join="")), shell=shell, threads=32, wall=hang_guard()
    )
    assert (
        "can't start new thread" in over.out and "refused, past the 128 processes and 32 threads" in over.out
    )
    one_by_one = world.run(
        _python(start.format(pause=0, n=60, join="; t.join()")), shell=shell, threads=8, wall=hang_guard()
    )
    assert "STARTED" in one_by_one.out, one_by_one.out
