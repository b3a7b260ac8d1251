"""No glance shows a credential file's size or times: not in a listing, not through another name.

Landlock judges reads, never `stat`: a jailed `ls -l` shows the size of every entry it lists, a file it
may not read included. So the launcher refuses every glance while a tree it may read holds another name
(a hard link) of a credential file (`reads.LINKED`), and the parser refuses, with the reason, a listing
with sizes or times of a directory that holds a credential file or such a link (`_metadata`). The
machine is `tests/glance/machine.py`'s, each planted file grown to a size of its own
(`pad`), so that a size in an output is seen; the real CLI runs here as an ordinary user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import claude_agent_sdk
import pytest

from flower._glance import glance_verdict
from flower.testing import ScriptedModel
from tests.credentials import leaks
from tests.glance.jail_world import SHELLS
from tests.glance.machine import JAIL, NOBODY, SYSTEM_PYTHON, Machine, _build, pad, size_leaks
from tests.glance.machine import through_the_cli as _through_the_cli

pytestmark = pytest.mark.skipif(not JAIL.available, reason=f"this machine has no glance jail: {JAIL.reason}")


@pytest.fixture(scope="module", params=["root", "user"])
def machine(request: pytest.FixtureRequest) -> Iterator[tuple[Machine, dict[str, str]]]:
    user = None if request.param == "root" else NOBODY
    if user is not None:
        if os.geteuid() != 0:
            pytest.skip("runs as an ordinary user already: the 'root' machine is that user's")
        if not os.access(SYSTEM_PYTHON, os.X_OK):
            pytest.skip(f"no {SYSTEM_PYTHON} for another user to run the launcher with")
    root = Path(tempfile.mkdtemp(prefix="glance-sizes-"))
    try:
        built = _build(root, user)
        yield built, pad(built.values)
    finally:
        shutil.rmtree(root, ignore_errors=True)


SIZES = (
    "ls -la; ls -l link; stat link; stat -c %s link; du -ab; find . -printf '%s %p\\n'; find . -size -50k; "
    "wc -c < link; ls -laS --full-time; echo RAN"
)
"""What would show the linked credential's size, run in the directory that holds the link."""


@pytest.mark.parametrize("shell", SHELLS, ids=[os.path.basename(shell) for shell in SHELLS])
@pytest.mark.parametrize("namespaces", [True, False], ids=["namespace", "watcher"])
def test_no_glance_runs_where_a_hard_link_to_a_credential_file_is(
    machine: tuple[Machine, dict[str, str]], shell: str, namespaces: bool
) -> None:
    """The kernel alone (the parser bypassed): the launcher refuses the command, with the reason."""
    planted, sizes = machine
    linked = planted.root / "work" / "linked"
    extra = "; print -l *(L+0)" if shell.endswith("zsh") else ""
    out = planted.run(SIZES + extra, shell=shell, namespaces=namespaces, cwd=linked)
    assert "another name (a hard link) of a credential file" in out, out[-2000:]
    assert out.rstrip().endswith("[exit 125]") and "RAN" not in out, out[-2000:]
    assert leaks(out, planted.values) == [] and size_leaks(out, sizes) == [], out[-2000:]
    elsewhere = planted.run("ls -la; stat README.md; du -ab . | wc -l", shell=shell, namespaces=namespaces)
    assert "README.md" in elsewhere and elsewhere.rstrip().endswith("[exit 0]"), elsewhere[-2000:]
    assert size_leaks(elsewhere, sizes) == [], elsewhere[-2000:]


REFUSED = {  # from the workspace; the reason's start
    "ls -la ~": "`ls -la` would show the size and times of the credential files",
    "ls -S ~": "`ls -S` would show the size and times of the credential files",
    "ls -lt $HOME": "`ls -lt` would show the size and times of the credential files",
    "ls -l ~/.pulumi": "`ls -l` would show the size and times of the credential files",
    "ls -l ~/.config/git": "`ls -l` would show the size and times of the credential files",
    "ls -l /etc": "`ls -l` would show the size and times of",
    "ls -l /e*": "`ls -l` would show the size and times of the credential files `/etc` may hold",
    "stat ~/.netrc": "`stat` would read a credential store",
    "stat ../linked/link": "`stat` would read a hard link to a credential file",
    "ls -l ../linked": "`ls` would show the size and times of `",
    "stat ../linked/*": "`stat` would show the size and times of `",
    "du -a ../linked": "`du` would show the size and times of `",
    "find .. -size -50k": "`find` would show the size and times of `",
    "tree -s ../linked": "`tree` would show the size and times of `",
    "ls -lR ..": "`ls` would show the size and times of `",
    "cd ../linked && ls -la": "`ls` would show the size and times of `",
    "stat $PWD/../linked/link": "`stat` names a path known only at run time, and a credential file has",
    "ls -lL ../symlinked": "`ls` would show, through the link `",
    "stat -L ../symlinked/*": "`stat` would show, through the link `",
}
ACCEPTED = (
    "ls -a ~", "ls -1 ~", "ls -ld ~", "ls -la", "ls -l .", "du -sh .", "find . -name '*.md'", "tree",
    "stat README.md", "ls ../linked", "tree ../linked", "ls -la /tmp", "ls -l ../symlinked",
)  # fmt: skip


def test_the_parser_refuses_a_listing_that_shows_a_credential_files_size(
    machine: tuple[Machine, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    planted, _ = machine
    monkeypatch.setenv("HOME", str(planted.home))
    symlinked = planted.root / "work" / "symlinked"  # `-L` shows what a symbolic link leads to
    if not symlinked.exists():
        symlinked.mkdir()
        (symlinked / "netrc").symlink_to(planted.home / ".netrc")
    for command, reason in REFUSED.items():
        verdict = glance_verdict(command, cwd=str(planted.repo))
        assert verdict.reason.startswith(reason), (command, verdict.reason)
    for command in ACCEPTED:
        assert glance_verdict(command, cwd=str(planted.repo)).ephemeral, command


def _cli_as(user: int, root: Path) -> str:
    """A script that starts the bundled CLI as `user` (and its group, no other), without `IS_SANDBOX`."""
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    script = root / "cli-as-user"
    script.write_text(
        f"#!/bin/sh\nunset IS_SANDBOX\nexec setpriv --reuid={user} --regid={user} --clear-groups -- "
        f"'{bundled}' \"$@\"\n"
    )
    script.chmod(0o755)
    return str(script)


@pytest.mark.cli
@pytest.mark.parametrize("shell", SHELLS, ids=[os.path.basename(shell) for shell in SHELLS])
async def test_no_secret_nor_its_size_reaches_the_model_through_the_cli_run_as_a_user(
    scripted_model: ScriptedModel, shell: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real CLI run as uid 65534 (its glances too, jailed without a PID namespace), the flower
    coordinator in this process: the request log holds no planted value and no planted file's size."""
    if os.geteuid() != 0:
        pytest.skip("the CLI already runs as an ordinary user: the root-less run is the root test's")
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    setpriv = shutil.which("setpriv")
    if setpriv is None or not bundled.is_file():
        pytest.skip("needs setpriv (util-linux) and the SDK's bundled CLI to run the CLI as another user")
    trial = subprocess.run(  # as the CLI's shell runs the launcher: not through setpriv's own exec
        [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "/bin/sh", "-c",
         f"'{SYSTEM_PYTHON}' -I -S -c pass"], capture_output=True, check=False,
    )  # fmt: skip
    if trial.returncode != 0:
        pytest.skip(f"uid {NOBODY} cannot run {SYSTEM_PYTHON}, which runs the launcher for it")
    # the wall names this process's interpreter in the jailed command: one the user can run, as an app
    # run by that user has
    monkeypatch.setattr(sys, "executable", SYSTEM_PYTHON)
    root = Path(tempfile.mkdtemp(prefix="glance-sizes-cli-"))
    root.chmod(0o755)  # the user reaches the machine below it
    try:
        planted = _build(root / "machine", NOBODY)
        await _through_the_cli(scripted_model, planted, shell, monkeypatch, cli_path=_cli_as(NOBODY, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
