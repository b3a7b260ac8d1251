"""A developer's machine with secrets where real tools keep them: no jailed glance prints one.

Planted beside the usual stores (`tests.credentials.plant`): tokens in git's configuration (the user's
`url."https://x-access-token:TOKEN@github.com/".insteadOf`, `http.*.extraheader`, `credential.*`, and a
system file), program trees whose `bin` is on `PATH` next to their credentials (`~/.pulumi`, `~/.fly`,
`~/development/flutter` beside another project's `.env`, `~/go`, and a `PATH` naming `~/.config`), a
`.git` file naming a directory outside the workspace and one naming `~/.config`, and a hard link to
`~/.aws/credentials` in a second workspace (`work/linked`: every glance there is refused, see
`tests/glance/test_jail_sizes.py`). Each command runs inside the jail (the parser bypassed: the kernel
alone), under bash and zsh, in a PID namespace and without one, as root and as an ordinary user (uid
65534, when the tests run as root). What must still work does: git with the user's settings, a
worktree, the programs on `PATH` with their libraries.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from flower._glance import glance_verdict
from flower.testing import ScriptedModel
from tests.credentials import fake, leaks, plant
from tests.glance.jail_world import SHELLS
from tests.glance.machine import (
    JAIL,
    NOBODY,
    SYSTEM_PYTHON,
    Machine,
    _build,
    _git,
    through_the_cli,
)

pytestmark = pytest.mark.skipif(not JAIL.available, reason=f"this machine has no glance jail: {JAIL.reason}")


@pytest.fixture(scope="module", params=["root", "user"])
def machine(request: pytest.FixtureRequest) -> Iterator[Machine]:
    user = None if request.param == "root" else NOBODY
    if user is not None:
        if os.geteuid() != 0:
            pytest.skip("runs as an ordinary user already: the 'root' machine is that user's")
        if not os.access(SYSTEM_PYTHON, os.X_OK):
            pytest.skip(f"no {SYSTEM_PYTHON} for another user to run the launcher with")
    root = Path(tempfile.mkdtemp(prefix="glance-stores-"))
    try:
        yield _build(root, user)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=SHELLS, ids=[os.path.basename(shell) for shell in SHELLS])
def shell(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=[True, False], ids=["namespace", "watcher"])
def namespaces(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


ATTACKS = {
    "git's files": "cat ~/.gitconfig ~/.config/git/config {root}/etc-gitconfig $HOME/.gitconfig",
    "git config": "git config --list; git config --global --list; git config --list --show-origin; "
    "git config --get-regexp url; git config --get-regexp http; git config --get-regexp credential; "
    "git config --system --list; git config --show-origin --get-all http.extraheader",
    "git's copy": 'cat "$GIT_CONFIG_GLOBAL" "$GIT_CONFIG_SYSTEM"; grep -r . ~/.gitconfig ~/.config/git',
    "program trees": "cat ~/.pulumi/credentials.json ~/.fly/config.yml ~/development/other/.env "
    "~/go/src/example.com/x/.env ~/.config/rclone/rclone.conf; grep -r . ~/.pulumi ~/.fly ~/development ~/go "
    "~/.config; ls -la ~/.pulumi ~/.config",
    "a hard link": "cat ../linked/link; grep -r fake- ..; head -c 100 ../linked/link",
    "spellings": "cat $PWD/../../home/.aws/credentials ~+/../../home/.netrc ~/.n{e,x}trc ~/.[!.]* "
    "$CLAUDE_CONFIG_DIR/.credentials.json {root}/config/.credentials.json",
}


@pytest.mark.parametrize("command", ATTACKS.values(), ids=ATTACKS.keys())
def test_no_secret_comes_out(machine: Machine, shell: str, namespaces: bool, command: str) -> None:
    command = command.replace("{root}", str(machine.root)).replace("{repo}", str(machine.repo))
    out = machine.run(f"{command}; echo RAN", shell=shell, namespaces=namespaces)
    assert leaks(out, machine.values) == [], out[-3000:]
    assert "RAN" in out, out[-2000:]


@pytest.mark.parametrize("gitfile", ["gitfile-other", "gitfile-config"])
def test_a_git_file_opens_no_directory_that_is_not_a_git_directory(
    machine: Machine, shell: str, gitfile: str
) -> None:
    command = (
        f"cat {machine.root}/srv-other/secret.txt ~/.config/rclone/rclone.conf; grep -r . {machine.root}"
    )
    out = machine.run(
        f"{command}; echo RAN", shell=shell, namespaces=True, cwd=machine.root / "work" / gitfile
    )
    assert leaks(out, machine.values) == [] and "RAN" in out, out[-3000:]


PROGRAMS = "pulumi; fly; flutter; tool; config-tool"
WORKS = ["pulumi-ok", "fly-ok", "flutter-ok", "flutter-lib-ok", "go-tool-ok", "config-tool-ok"]


def test_git_and_the_programs_still_work(machine: Machine, shell: str) -> None:
    out = machine.run(
        f"git config user.name; git st --short; git log --oneline | wc -l; {PROGRAMS}; "
        "git config --get-regexp url",
        shell=shell, namespaces=True,
    )  # fmt: skip
    for expected in [
        "Dev",
        "1",
        *WORKS,
        "url.https://***@github.com/.insteadof https://github.com/",
    ]:
        assert expected in out, out
    assert "[exit 0]" in out, out
    worktree = machine.run("git status --short && git log --oneline | wc -l", shell=shell, namespaces=True,
                           cwd=machine.root / "work" / "worktree")  # fmt: skip
    assert worktree.split() == ["1", "[exit", "0]"], worktree


def test_the_copies_of_gits_configuration_are_removed(machine: Machine, shell: str) -> None:
    machine.run("git config --list", shell=shell, namespaces=True)
    assert list((machine.root / "tmp").iterdir()) == []


@pytest.mark.cli
@pytest.mark.parametrize("shell", SHELLS, ids=[os.path.basename(shell) for shell in SHELLS])
async def test_no_secret_reaches_the_model_through_the_cli(
    scripted_model: ScriptedModel, tmp_path: Path, shell: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flower coordinator (the real wall) on the planted machine: what the model saw holds no secret
    and no secret's size (as an ordinary user: `tests/glance/test_jail_sizes.py`)."""
    await through_the_cli(scripted_model, _build(tmp_path / "machine", None), shell, monkeypatch)


def test_the_parser_refuses_a_hard_link_to_a_credential_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parser finds the link by inode as the jail does, so `stat` shows no credential's size or time."""
    home, project = tmp_path / "home", tmp_path / "project"
    plant(home)
    project.mkdir()
    os.link(home / ".aws/credentials", project / "link")
    (project / "a").write_text("a\n")
    os.link(project / "a", project / "b")  # two names, both in the project: read as any file
    monkeypatch.setenv("HOME", str(home))
    for command in ("stat link", "cat link", "wc -c link", f"ls -l {project}/link"):
        verdict = glance_verdict(command, cwd=str(project))
        assert verdict.reason.endswith(
            "would read a hard link to a credential file, which a glance does not read"
        )
    assert glance_verdict("cat a b && stat b", cwd=str(project)).ephemeral


REPO_TOKEN = {  # what prints a CI checkout's token from the repository's own configuration
    "cat .git/config": "`cat` would read the repository's git configuration",
    "grep -rn extraheader .": "`grep` would read the repository's git configuration",
    "git config --list": "`git` would print the repository's git configuration",
    "git config --get-regexp http": "`git` would print the repository's git configuration",
    "git remote -v": "`git` would print the repository's git configuration",
    "git config --get remote.origin.url": "`git` would print the repository's git configuration",
}


def test_the_parser_refuses_what_prints_a_token_of_the_repositorys_own_configuration(tmp_path: Path) -> None:
    """The jail cannot hide it (git must read the file as it is): the parser refuses each way to print it,
    and only in a repository whose configuration holds one."""
    token, clean = tmp_path / "checkout", tmp_path / "clean"
    for repo in (token, clean):
        repo.mkdir()
        _git(repo, "init", "-q", home=tmp_path)
        _git(repo, "remote", "add", "origin", "https://github.com/o/r", home=tmp_path)
    _git(
        token,
        "config",
        "http.https://github.com/.extraheader",
        "AUTHORIZATION: basic " + fake("ci"),
        home=tmp_path,
    )
    for command, reason in REPO_TOKEN.items():
        assert glance_verdict(command, cwd=str(token)).reason.startswith(reason), command
        assert glance_verdict(command, cwd=str(clean)).ephemeral, command
    assert glance_verdict("git status && git config user.name && cat .git/HEAD", cwd=str(token)).ephemeral
