"""A developer's machine with secrets where real tools keep them: no jailed glance prints one.

Planted beside the usual stores (`tests.credentials.plant`): tokens in git's configuration (the user's
`url."https://x-access-token:TOKEN@github.com/".insteadOf`, `http.*.extraheader`, `credential.*`, and a
system file), program trees whose `bin` is on `PATH` next to their credentials (`~/.pulumi`, `~/.fly`,
`~/development/flutter` beside another project's `.env`, `~/go`, and a `PATH` naming `~/.config`), a
`.git` file naming a directory outside the workspace and one naming `~/.config`, and a hard link to
`~/.aws/credentials` in a second workspace (`work/linked`: every glance there is refused, see
`tests/test_glance_jail_sizes.py`). Each command runs inside the jail (the parser bypassed: the kernel
alone), under bash and zsh, in a PID namespace and without one, as root and as an ordinary user (uid
65534, when the tests run as root). What must still work does: git with the user's settings, a
worktree, the programs on `PATH` with their libraries.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flower import Runtime, coordinator, worker
from flower._glance import JailLimits, glance_verdict, jail_command, jail_support
from flower.testing import ScriptedModel, bash, hang_guard
from tests.credentials import fake, leaks, plant
from tests.jail_world import SHELLS

JAIL = jail_support()
pytestmark = pytest.mark.skipif(not JAIL.available, reason=f"this machine has no glance jail: {JAIL.reason}")
NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass
class Machine:
    """A home, a workspace and what lies around it, the fake values planted, and who runs the glances."""

    root: Path
    home: Path
    repo: Path
    values: dict[str, str]
    path: str
    python: str
    user: int | None

    def run(self, command: str, *, shell: str, namespaces: bool, cwd: Path | None = None) -> str:
        """`command` as the wall hands it to the CLI, run by the CLI's shell: its output and error."""
        jailed = jail_command(command, limits=JailLimits(wall_seconds=hang_guard()), python=self.python)
        jailed = jailed if namespaces else f"{jailed} --namespaces '0'"
        env = {"PATH": self.path, "HOME": str(self.home), "TMPDIR": str(self.root / "tmp"), "SHELL": shell,
               "LC_ALL": "C.UTF-8", "GIT_CONFIG_SYSTEM": str(self.root / "etc-gitconfig"),
               "CLAUDE_CONFIG_DIR": str(self.root / "config")}  # fmt: skip
        ran = subprocess.run(
            [shell, "-c", jailed], cwd=cwd or self.repo, env=env, stdin=subprocess.DEVNULL,
            capture_output=True, timeout=2 * hang_guard(), user=self.user, group=self.user, check=False,
        )  # fmt: skip
        return (ran.stdout + ran.stderr).decode(errors="replace") + f"\n[exit {ran.returncode}]"


def _git(cwd: Path, *args: str, home: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _program(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _secret(path: Path, values: dict[str, str], template: str = "{token}\n") -> str:
    token = fake(path.name.strip(".").replace(".", "-"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(template.format(token=token))
    values[str(path)] = token
    return token


def _build(root: Path, user: int | None) -> Machine:
    home, work = root / "home", root / "work"
    repo = work / "repo"
    for directory in (home, repo, root / "tmp", root / "config"):
        directory.mkdir(parents=True)
    values = plant(home) | plant(root / "config")
    gitconfig = (
        '[user]\n\tname = Dev\n\temail = dev@example.com\n[url "https://x-access-token:{token}@github.com/"]'
        "\n\tinsteadOf = https://github.com/\n"
        '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {token}-header\n'
        "[credential]\n\thelper = store\n\tusername = dev\n\tpassword = {token}-password\n"
        "# an old token: {token}-comment\n[alias]\n\tst = status\n"
    )
    _secret(home / ".gitconfig", values, gitconfig)
    _secret(
        home / ".config/git/config", values, '[url "https://oauth2:{token}@gitlab.com/"]\n\tinsteadOf = gl:\n'
    )
    _secret(root / "etc-gitconfig", values, "[http]\n\textraheader = Authorization: Bearer {token}\n")
    path = []
    for tree, secret in ((".pulumi", "credentials.json"), (".fly", "config.yml")):
        _program(home / tree / "bin" / tree.strip("."), f"echo {tree.strip('.')}-ok")
        _secret(home / tree / secret, values)
        path.append(str(home / tree / "bin"))
    _program(home / "development/flutter/bin/flutter", 'echo flutter-ok; . "$(dirname "$0")/../lib/lib.sh"')
    (home / "development/flutter/lib").mkdir(parents=True)
    (home / "development/flutter/lib/lib.sh").write_text("echo flutter-lib-ok\n")
    _secret(home / "development/other/.env", values, "API_KEY={token}\n")
    _program(home / "go/bin/tool", "echo go-tool-ok")
    _secret(home / "go/src/example.com/x/.env", values, "TOKEN={token}\n")
    _program(home / ".config/config-tool", "echo config-tool-ok")
    _secret(home / ".config/rclone/rclone.conf", values, "[s3]\nsecret_access_key = {token}\n")
    path += [str(home / "development/flutter/bin"), str(home / "go/bin"), str(home / ".config")]
    (repo / "README.md").write_text("hello\n")
    _git(repo, "init", "-q", home=home)
    _git(repo, "add", "-A", home=home)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "s", home=home)
    _git(repo, "worktree", "add", "-q", str(work / "worktree"), home=home)
    (work / "linked").mkdir()
    (work / "linked" / "notes.txt").write_text("notes\n")
    os.link(home / ".aws/credentials", work / "linked" / "link")
    other = root / "srv-other"
    _secret(other / "secret.txt", values)
    for name, target in (("gitfile-other", other), ("gitfile-config", home / ".config")):
        (work / name).mkdir()
        (work / name / ".git").write_text(f"gitdir: {target}\n")
    python = os.path.realpath(sys.executable)
    if user is not None:
        python = SYSTEM_PYTHON
        for top, _, files in os.walk(root):
            for entry in [top, *(os.path.join(top, file) for file in files)]:
                os.lchown(entry, user, user)
        root.chmod(0o755)
    system = [entry for entry in os.environ["PATH"].split(":") if not entry.startswith(str(Path.home()))]
    return Machine(root, home, repo, values, ":".join([*path, *system]), python, user)


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


THROUGH_THE_CLI = {  # the model's command: what the wall answers (a refusal's reason) or the jail shows
    "cat ~/.gitconfig": "`cat` would read git's configuration (`~/.gitconfig`)",
    "git config --list --show-origin": "user.name=Dev",
    "git config --get-regexp url": "url.https://***@github.com/.insteadof https://github.com/",
    "cat ~/.pulumi/credentials.json": "`cat` would read a credential store (`~/.pulumi/credentials.json`)",
    "grep -r . ~/.pulumi": "`grep` would read a tree that holds a credential store",
    "cat ~/.config/rclone/rclone.conf": "`cat` would read a credential store (`~/.config/rclone`)",
    "cat ~/development/other/.env": "Permission denied",
    "cat ~/go/src/example.com/x/.env": "Permission denied",
    "cat ../linked/link": "`cat` would read a hard link to a credential file",
    "ls -l ../linked": "would show the size and times of `",
    "stat ../linked/*": "another name (a hard link) of a credential file",
    "ls -la ~": "`ls -la` would show the size and times of the credential files",
    "cat $PWD/../../home/.aws/credentials": "`cat` would read a credential store (`~/.aws`)",
    "cat ~/.n{e,x}trc": "`cat` would read a credential store (`~/.netrc`)",
    "cat $CLAUDE_CONFIG_DIR/.claude.json": "`$CLAUDE_CONFIG_DIR` names the CLI's configuration directory",
    "git status --short && echo looked": "looked",
}


@pytest.mark.cli
@pytest.mark.parametrize("shell", SHELLS, ids=[os.path.basename(shell) for shell in SHELLS])
async def test_no_secret_reaches_the_model_through_the_cli(
    scripted_model: ScriptedModel, tmp_path: Path, shell: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flower coordinator (the real wall) on the planted machine: what the model saw holds no secret
    and no secret's size (as an ordinary user: `tests/test_glance_jail_sizes.py`)."""
    await through_the_cli(scripted_model, _build(tmp_path / "machine", None), shell, monkeypatch)


async def through_the_cli(
    scripted_model: ScriptedModel, planted: Machine, shell: str, monkeypatch: pytest.MonkeyPatch,
    cli_path: str | None = None,
) -> None:  # fmt: skip
    """Run `THROUGH_THE_CLI` through a flower coordinator on `planted` (the CLI started by `cli_path`, if
    given); assert on the request log that no planted value nor size reached the model."""
    monkeypatch.setenv("HOME", str(planted.home))  # the app's home is the planted one, as the CLI's is
    values = planted.values | plant(Path(scripted_model.config_dir))
    sizes = pad(values)
    if planted.user is not None:
        for top, directories, files in os.walk(Path(scripted_model.config_dir).parent):
            for entry in [top, *(os.path.join(top, name) for name in [*directories, *files])]:
                os.lchown(entry, planted.user, planted.user)
    commands = [*THROUGH_THE_CLI, "id -u"]  # the last: who ran the glances
    scripted_model.script("main", [*(bash(command) for command in commands), "looked"])
    spec = coordinator(
        "lead", "Goal: look.", {"helper": worker("Does.", "You do.", tools=["Bash"])}, own_steps=0
    )
    env = {"HOME": str(planted.home), "PATH": planted.path, "SHELL": shell,
           "GIT_CONFIG_SYSTEM": str(planted.root / "etc-gitconfig")}  # fmt: skip

    def configure(options: Any) -> Any:
        options = dataclasses.replace(
            options, env={**options.env, **env}, cli_path=cli_path or options.cli_path
        )
        return scripted_model.attach(options)

    result = await Runtime(planted.repo, configure=configure).run(spec, "Look around.")

    assert result.ok, result.error
    seen_by_the_model = json.dumps([request.body for request in scripted_model.requests()])
    assert leaks(seen_by_the_model, values) == []
    assert size_leaks(seen_by_the_model, sizes) == []
    results = scripted_model.request("main", -1).tool_results
    expected = [*THROUGH_THE_CLI.values(), str(os.geteuid() if planted.user is None else planted.user)]
    for command, want, seen in zip(commands, expected, results, strict=True):
        assert want in seen.text, (command, seen.text)


def pad(values: dict[str, str]) -> dict[str, str]:
    """Grow each planted file to a size no output shows by chance (40,009 bytes and up, each its own);
    return each file's size by path."""
    sizes = {}
    for i, path in enumerate(sorted(values)):
        if os.path.isfile(path) and not os.path.islink(path):
            size = 40_009 + 1_013 * i
            with open(path, "a", encoding="utf-8") as file:
                file.write("\n" * (size - os.path.getsize(path)))
            sizes[path] = str(size)
    return sizes


def size_leaks(text: str, sizes: dict[str, str]) -> list[str]:
    """The paths whose size (in bytes, as a whole number) `text` shows."""
    return [
        path for path, size in sizes.items() if re.search(rf"(?<![0-9A-Za-z]){size}(?![0-9A-Za-z])", text)
    ]


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
