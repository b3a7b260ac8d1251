"""The differential fuzzer of `tools/fuzz_glance`, on a small fixed-seed budget (`-m long`: a larger one), in
bash and zsh.

Every command glance accepts runs in bash and zsh, with stub programs and with real ones; none may run
a verb off the whitelist, run a whitelisted verb with arguments glance refuses on their own, change a
file or hang. The real campaign (hundreds of thousands of cases, several seeds) is run by hand.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

import pytest

from tools import fuzz_glance

pytestmark = [
    pytest.mark.skipif(shutil.which("bash") is None, reason="the fuzzer runs commands under bash"),
    pytest.mark.skipif(
        shutil.which("zsh") is None,
        reason="the fuzzer runs every accepted command under zsh too: install zsh (Debian package `zsh`)",
    ),
    pytest.mark.skipif(shutil.which("git") is None, reason="the fuzzer's working copy is a git repository"),
]


@pytest.mark.parametrize(
    ("cases", "accepted"),
    [(800, 20), pytest.param(6000, 150, marks=pytest.mark.long, id="6000")],
    ids=["800", "6000"],
)
def test_no_violations_on_a_fixed_seed(cases: int, accepted: int) -> None:
    summary = fuzz_glance.fuzz(cases=cases, seed=2024, jobs=2)
    report = "\n".join(fuzz_glance.report(summary))
    assert summary.shells == fuzz_glance.SHELLS, report
    assert len(summary.accepted) >= accepted, report  # the generator still reaches commands glance accepts
    assert summary.violations == [], report


HARMFUL = {
    "rm x": ("bash", "zsh", "bash/real", "zsh/real"),
    "ls > out": ("bash", "zsh", "bash/real", "zsh/real"),
    "sort -o out f": ("bash", "zsh"),
    "pushd /": ("bash", "zsh"),
    "ls#;ls": ("bash",),
    "eval ls": ("bash", "zsh"),
    "ls && touch ../y": ("bash", "zsh", "bash/real", "zsh/real"),
    "[ -v x ]": ("bash", "zsh"),
    "ls {a['$(touch x)']}>/dev/null": ("bash", "bash/real"),  # bash evaluates the subscript
    "echo hi {PATH}>/dev/null; ls": ("bash/real", "zsh/real"),  # ls is looked up in PATH=10
    "echo $HOME['$(touch x)']": ("zsh", "zsh/real"),  # zsh evaluates the subscript
    "printf %d 'path[$(touch x)]'": ("zsh/real",),  # zsh's builtin printf does arithmetic
    "cat /dev/zero": ("bash/real", "zsh/real"),  # never ends
    "tail +f f": ("bash/real",),  # follows the file
    "git status": ("bash/real", "zsh/real"),  # refreshes the index and runs the fsmonitor hook
}


@pytest.mark.parametrize("command", HARMFUL, ids=repr)
def test_the_oracle_sees_what_glance_must_refuse(command: str) -> None:
    """Run a refused command as if glance had accepted it: in the shells named, it is a violation."""
    with tempfile.TemporaryDirectory() as root:
        sandbox = fuzz_glance.Sandbox(Path(root))
        for index, shell in enumerate(HARMFUL[command]):
            run = sandbox.run(index, command, shell)
            fuzz_glance.judge(run)
            assert run.problems, (shell, command, run.records)


def test_a_hardened_git_status_changes_nothing() -> None:
    command = fuzz_glance.campaign.glance_verdict("git status && git diff").command
    with tempfile.TemporaryDirectory() as root:
        sandbox = fuzz_glance.Sandbox(Path(root))
        for index, shell in enumerate(("bash/real", "zsh/real")):
            run = sandbox.run(index, command, shell)
            fuzz_glance.judge(run)
            assert run.problems == [], (shell, run.records)


def test_a_run_that_does_not_end_is_flagged() -> None:
    with tempfile.TemporaryDirectory() as root:
        sandbox = fuzz_glance.Sandbox(Path(root), stub_timeout=0.3)
        hung = sandbox.run(0, "while [[ 1 ]]; do x=1; done", "bash")
        assert hung.problems == ["still running after 0.3 s"]


def test_the_generator_is_deterministic() -> None:
    first = fuzz_glance.Generator(random.Random(7))
    second = fuzz_glance.Generator(random.Random(7))
    assert [first.command() for _ in range(200)] == [second.command() for _ in range(200)]


@pytest.mark.skipif(shutil.which("strace") is None, reason="the fuzzer sees socket calls with strace")
def test_a_connection_is_flagged() -> None:
    with tempfile.TemporaryDirectory() as root:
        sandbox = fuzz_glance.Sandbox(Path(root))
        run = sandbox.run(0, "echo x >/dev/tcp/127.0.0.1/9", "bash/real")  # bash connects by itself
        assert any(problem.startswith("reached the network") for problem in run.problems), run.problems


def test_bytes_that_are_not_utf8_are_judged_by_the_rest() -> None:
    """zsh's BRACE_CCL splits `{é}` into bytes; the re-check reads each as U+FFFD, not as a refusal."""
    harmless = fuzz_glance.Run(records=[("md5sum", ["\udcc3", "\udca9"])])
    fuzz_glance.judge(harmless)
    assert harmless.problems == []
    writes = fuzz_glance.Run(records=[("sort", ["-o", "\udcc3"])])
    fuzz_glance.judge(writes)
    assert writes.problems


def test_a_process_substitution_is_judged_as_the_pipe_it_is() -> None:
    """`<(…)` reaches the program as `/dev/fd/63` (bash) or `/proc/self/fd/11` (zsh): only a pipe to read."""
    for path in ("/dev/fd/63", "/proc/self/fd/11"):
        piped = fuzz_glance.Run(records=[("jq", [path, "remote"])])
        fuzz_glance.judge(piped, "jq <(which x) remote")
        assert piped.problems == [], piped.problems
        written = fuzz_glance.Run(records=[("cat", [path])])
        fuzz_glance.judge(written, f"cat {path}")  # written out, it is a device path: refused
        assert written.problems
