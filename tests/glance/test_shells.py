"""What the refused classes really do, run by real bash, zsh and git; and that glance refuses each.

Each exploit runs in a throw-away directory with a bare environment: it creates `PWNED`, rewrites the
git index, connects, or never ends. The same command is refused by glance, and what glance accepts
in its place (git hardened as the wall runs it) changes nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from flower._glance import glance_verdict
from flower.testing import hang_guard

ZSH = shutil.which("zsh")
GIT = shutil.which("git")
needs_zsh = pytest.mark.skipif(ZSH is None, reason="zsh is not installed (Debian package `zsh`)")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def run(
    shell: str, command: str, cwd: Path, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `command` in `shell` in a process group of its own, killed whole on timeout (default: the hang
    guard; a command that never ends gets a short one) and at the end.

    A read that never ends may be a grandchild of the shell: killing the shell alone would leak it.
    """
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "LC_ALL": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1"}
    program = ZSH if shell == "zsh" else shell
    if program is None:
        pytest.skip("zsh is not installed (Debian package `zsh`)")
    argv = (
        [program, "--norc", "--noprofile", "-c", command]
        if shell == "bash"
        else [program, "-f", "-c", command]
    )
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=hang_guard() if timeout is None else timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            process.communicate()
            raise
        finally:
            _kill_group(process.pid)
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def refused(command: str) -> str:
    verdict = glance_verdict(command)
    assert not verdict.ephemeral, command
    return verdict.reason


@pytest.mark.parametrize(
    "command",
    [
        "ls {a['$(touch PWNED)']}>/dev/null",
        "echo x {a['$(touch PWNED)']}<&0",
        "pwd {a['$(touch PWNED)']}>>/dev/null",
    ],
)
def test_bash_runs_a_subscript_before_a_redirection(command: str, tmp_path: Path) -> None:
    run("bash", command, tmp_path)
    assert (tmp_path / "PWNED").exists()
    assert "{name}" in refused(command)


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_descriptor_variable_replaces_path(shell: str, tmp_path: Path) -> None:
    for fd in range(10, 14):  # the shell picks the first free descriptor from 10 up
        planted = tmp_path / str(fd) / "ls"
        planted.parent.mkdir()
        planted.write_text("#!/bin/sh\n: > PWNED\n")  # a builtin: PATH is now a number
        planted.chmod(0o755)
    command = "echo hi {PATH}>/dev/null; ls"
    run(shell, command, tmp_path)
    assert (tmp_path / "PWNED").exists()
    assert "{name}" in refused(command)


@needs_zsh
@pytest.mark.parametrize(
    "command",
    [
        "echo $HOME['$(touch PWNED)']",
        "echo $path['$(touch PWNED)']",
        "printf %d 'path[$(touch PWNED)]'",
        "printf '%s %x\\n' a 'HOME[`touch PWNED`]'",
    ],
)
def test_zsh_runs_a_subscript(command: str, tmp_path: Path) -> None:
    run("zsh", command, tmp_path)
    assert (tmp_path / "PWNED").exists()
    assert "subscript" in refused(command)
    (tmp_path / "bash").mkdir()
    run("bash", command, tmp_path / "bash")  # bash reads the same text harmlessly: only zsh shows it
    assert not (tmp_path / "bash" / "PWNED").exists()


def _repository(path: Path) -> None:
    assert GIT is not None
    path.mkdir(parents=True, exist_ok=True)
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
    ):
        subprocess.run([GIT, *args], cwd=path, check=True, capture_output=True)


@needs_git
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_git_in_a_bare_repository_committed_in_the_project(shell: str, tmp_path: Path) -> None:
    assert GIT is not None
    project = tmp_path / "project"
    (project / "README").parent.mkdir()
    (project / "README").write_text("x\n")
    _repository(project)
    subprocess.run([GIT, "init", "-q", "--bare", str(project / "sub")], check=True)
    (project / "sub" / "hook").write_text('#!/bin/sh\ntouch "$HOME/PWNED"\n')
    (project / "sub" / "hook").chmod(0o755)
    for key, value in (("core.bare", "false"), ("core.worktree", ".."), ("core.fsmonitor", "sub/hook")):
        subprocess.run([GIT, "--git-dir", str(project / "sub"), "config", key, value], check=True)
    run(shell, "git -C sub status", project)
    assert (project / "PWNED").exists()  # its configuration ran a program
    (project / "PWNED").unlink()
    assert "-C" in refused("git -C sub status")
    hardened = glance_verdict("git status").command
    result = run(shell, hardened, project / "sub")  # as if a directory change had been kept
    assert not (project / "sub" / "PWNED").exists() and "bare repository" in result.stderr
    run(shell, hardened, project)
    assert not (project / "PWNED").exists()


def _one_file_repository(path: Path) -> None:
    (path / "f").write_text("x\n")
    _repository(path)


@needs_git
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_git_status_and_diff_rewrite_the_index_unless_hardened(shell: str, tmp_path: Path) -> None:
    _one_file_repository(tmp_path)
    index = tmp_path / ".git" / "index"
    for step, command in enumerate(("git status", "git diff", "git status -s && git diff --stat")):
        for typed in (False, True):
            earlier = time.time() - 1000 - 10 * step - typed  # a new time: git must look at the file again
            os.utime(tmp_path / "f", (earlier, earlier))
            before = index.stat().st_mtime_ns
            verdict = glance_verdict(command)
            assert verdict.ephemeral, verdict.reason
            run(shell, command if typed else verdict.command, tmp_path)
            assert (index.stat().st_mtime_ns != before) is typed, (command, typed)


@needs_git
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_git_runs_no_fsmonitor_hook_when_hardened(shell: str, tmp_path: Path) -> None:
    _one_file_repository(tmp_path)
    (tmp_path / ".git" / "hook").write_text('#!/bin/sh\ntouch "$HOME/PWNED"\n')
    (tmp_path / ".git" / "hook").chmod(0o755)
    assert GIT is not None
    subprocess.run([GIT, "config", "core.fsmonitor", ".git/hook"], cwd=tmp_path, check=True)
    for command in ("git status", "git diff", "git ls-files -m"):
        run(shell, glance_verdict(command).command, tmp_path)
        assert not (tmp_path / "PWNED").exists(), command
        run(shell, command, tmp_path)
        assert (tmp_path / "PWNED").exists(), command
        (tmp_path / "PWNED").unlink()


@needs_git
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_git_describe_dirty_rewrites_the_index_whatever_the_options(shell: str, tmp_path: Path) -> None:
    _one_file_repository(tmp_path)
    later = time.time() + 10
    os.utime(tmp_path / "f", (later, later))
    before = (tmp_path / ".git" / "index").stat().st_mtime_ns
    command = "git --no-optional-locks -c diff.autoRefreshIndex=false describe --always --dirty"
    run(shell, command, tmp_path)
    assert (tmp_path / ".git" / "index").stat().st_mtime_ns != before
    assert "--dirty" in refused("git describe --always --dirty")


@pytest.mark.parametrize(
    "command",
    [
        "tail +f f",
        "tail +cf f",
        "cat //dev/zero",
        "wc -c < //dev/zero",
        "cat /proc/self/root/dev/zero",
        "echo /dev/zero; cat $_",
        "md5sum {-c,} sums",
        "cat /{\\dev,x}/zero",  # found by the fuzzer: the parser splits the word at `\d`
    ],
)
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_reads_that_never_end(shell: str, command: str, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x\n")
    (tmp_path / "sums").write_text(f"{'0' * 32}  /dev/zero\n")  # what `md5sum -c sums` reads
    with pytest.raises(subprocess.TimeoutExpired):
        run(shell, command + " >/dev/null", tmp_path, timeout=1.0)
    refused(command)


def test_zsh_brace_ccl_makes_slash_of_a_variable(tmp_path: Path) -> None:
    result = run("zsh", "setopt BRACE_CCL; print -l {${HOME}}", tmp_path)  # HOME is the absolute tmp_path
    assert "/" in result.stdout.split()
    # the glance refuses it: its word could be `/` (any letter of it, under BRACE_CCL) or the home
    # directory itself, whose credential stores a glance never reads; the reason names the first it meets
    reason = refused("du {${HOME}} awk")
    assert "`/`" in reason or "credential store (`~/.claude`)" in reason, reason


@pytest.mark.skipif(shutil.which("gawk") is None, reason="gawk is not installed")
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_gawk_connects_to_an_inet_operand(shell: str, tmp_path: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.settimeout(hang_guard())
    connected: list[bool] = []

    def accept() -> None:
        try:
            connection, _ = listener.accept()
            connection.close()
            connected.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    command = f"gawk '{{print}}' /inet/tcp/0/127.0.0.1/{port}"
    run(shell, command, tmp_path)
    thread.join()
    listener.close()
    assert connected
    assert "network" in refused(f"awk '{{print}}' /inet/tcp/0/127.0.0.1/{port}")


@needs_git
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_partial_clone_fetches_unless_hardened(shell: str, tmp_path: Path) -> None:
    assert GIT is not None
    source = tmp_path / "source"
    (source / "f").parent.mkdir()
    (source / "f").write_text("hello\n")
    _repository(source)
    subprocess.run([GIT, "config", "uploadpack.allowFilter", "true"], cwd=source, check=True)
    clone = tmp_path / "clone"
    subprocess.run(
        [GIT, "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{source}", str(clone)],
        check=True,
        capture_output=True,
    )
    hardened = run(shell, glance_verdict("git show HEAD:f").command, clone)
    assert hardened.returncode != 0 and "not allowed" in hardened.stderr  # no transport: nothing fetched
    assert run(shell, "git show HEAD:f", clone).stdout == "hello\n"  # as typed, it fetches the blob
