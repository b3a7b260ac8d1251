"""Glances keep credentials out: the environment and the reads are allow-lists, and no capability is left.

Fake values of every credential variable the bundled CLI reads are set in the launcher's environment (the
CLI passes its whole environment to Bash), fake stores are planted in the home directory and in the CLI's
configuration directory (`~/.claude/.credentials.json`, the CLI's OAuth tokens on Linux), and a process
runs with a fake token in its command line. Each class of command that would print them runs inside the
jail, under bash and zsh, in a PID namespace of its own and without one (as on a machine that gives
none): no fake value may come out. The parser refuses the same commands first, with a reason
(`test_the_parser_refuses_*`). Through the real CLI: `tests/e2e/test_glance_jail_cli.py`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import claude_agent_sdk
import pytest

from flower._glance import glance_verdict, jail_support
from flower._glance.jail import ENVIRONMENT
from flower.testing import hang_guard
from tests.credentials import CLI_SCRUB_LIST, VARIABLES, cli_scrub_list, fake, fake_environment, leaks, plant
from tests.glance.jail_world import PYTHON, REFUSED, World

JAIL = jail_support()
needs_jail = pytest.mark.skipif(not JAIL.available, reason=f"this machine has no glance jail: {JAIL.reason}")


class Secrets:
    """The world, the CLI's fake environment, and every fake value that must not come out."""

    def __init__(self, world: World, process: subprocess.Popen[bytes], cmdline: str) -> None:
        self.world, self.process = world, process
        self.config = world.root / "config"  # the CLI's CLAUDE_CONFIG_DIR
        self.env = {**fake_environment(), "CLAUDE_CONFIG_DIR": str(self.config)}
        self.values = {name: value for name, value in self.env.items() if name != "CLAUDE_CONFIG_DIR"}
        self.values |= plant(world.home) | plant(self.config) | {"a command line": cmdline}
        (self.config / ".credentials.json").write_text(
            (self.config / ".claude/.credentials.json").read_text()
        )
        self.values["CLAUDE_CONFIG_DIR/.credentials.json"] = self.values[
            str(self.config / ".claude/.credentials.json")
        ]


@pytest.fixture(scope="module")
def secrets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secrets]:
    world = World(tmp_path_factory.mktemp("secrets"))
    cmdline = fake("command-line")
    process = subprocess.Popen([PYTHON, "-c", "import time; time.sleep(600)", cmdline])
    yield Secrets(world, process, cmdline)
    process.kill()
    process.wait()
    world.close()


@pytest.fixture(params=[True, False], ids=["namespace", "watcher"])
def namespaces(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


CLASSES = {
    "the environment": (
        "env; printenv; printenv AWS_BEARER_TOKEN_BEDROCK; export -p; declare -x; set; typeset 2>/dev/null; "
        "echo $AWS_SECRET_ACCESS_KEY $GH_TOKEN $CLAUDE_CODE_OAUTH_REFRESH_TOKEN $ANTHROPIC_CUSTOM_HEADERS; "
        "cat /proc/self/environ /proc/$$/environ /proc/$PPID/environ /proc/1/environ"
    ),
    "credential stores": (
        "cat ~/.claude/.credentials.json $HOME/.claude/.credentials.json {root}/config/.credentials.json; "
        "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc ~/.git-credentials ~/.config/gh/hosts.yml "
        "~/.docker/config.json ~/.bash_history; ls -la ~ ~/.ssh {root}/config; "
        "grep -r fake- ~ {root}/config /etc /tmp 2>/dev/null"
    ),
    "other processes": "cat /proc/*/cmdline /proc/*/environ; ps auxww; ls /proc/{process}",
}


@needs_jail
@pytest.mark.parametrize("command", CLASSES.values(), ids=CLASSES.keys())
def test_no_credential_comes_out_of_the_jail(
    secrets: Secrets, shell: str, namespaces: bool, command: str
) -> None:
    command = command.replace("{process}", str(secrets.process.pid))
    ran = secrets.world.run(
        f"{command}; echo RAN", shell=shell, namespaces=namespaces, env=secrets.env, wall=hang_guard()
    )
    assert leaks(ran.out, secrets.values) == [], ran.out[-3000:]
    assert ran.rc != REFUSED and ran.out.rstrip().endswith("RAN"), ran.out[-2000:]  # it ran, to its end
    assert ran.effects == []


@needs_jail
def test_the_environment_is_the_allow_list(secrets: Secrets, shell: str) -> None:
    ran = secrets.world.run("env", shell=shell, env=secrets.env, wall=hang_guard())
    names = {line.split("=", 1)[0] for line in ran.out.splitlines() if "=" in line}
    git = {name for name in names if name.startswith("GIT_")}
    given = {**secrets.env, **secrets.world.env("marker", shell)}  # what the launcher had
    made = {"SHLVL", "_", "OLDPWD", "LOGNAME"}  # what the shells set themselves (zsh: LOGNAME)
    assert names - git - made == (set(given) & set(ENVIRONMENT)) - made
    assert {"PATH", "HOME", "SHELL", "PWD", "LC_ALL"} <= names and not names & set(VARIABLES)
    assert git == {
        "GIT_CONFIG_COUNT",
        "GIT_OPTIONAL_LOCKS",
        "GIT_TERMINAL_PROMPT",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
    } | {f"GIT_CONFIG_{kind}_{index}" for kind in ("KEY", "VALUE") for index in range(6)}


def test_the_credential_list_covers_the_bundled_clis_own() -> None:
    """The fake set holds every variable the installed CLI keeps from a sandboxed subprocess."""
    binary = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not binary.is_file():
        pytest.skip("the SDK has no bundled CLI")
    found = cli_scrub_list(binary)
    if found is None:
        pytest.skip("this CLI's binary has no list of subprocess credential variables to compare with")
    assert set(found) <= set(VARIABLES), set(found) - set(VARIABLES)
    assert found == CLI_SCRUB_LIST


READS = {  # path: readable in the jail (the world's repository is the workspace)
    "README.md": True,
    "/etc/passwd": True,
    "/etc/hostname": True,
    "/usr/bin/env": True,
    "/etc/shadow": False,  # root may read it by its owner bit: Landlock is the wall
    "/etc/gshadow": False,
    "/etc/ssh/sshd_config": False,
    "{home}/.gitconfig": False,  # git reads a copy with its secrets hidden
    "{home}/.config/git/ignore": True,  # git's excludes
    "{home}/notes.txt": False,  # a home directory
    "{root}/outside.txt": False,  # neither workspace nor system
    "{tmp}": False,  # the CLI's temp dir, listed
    "/tmp": False,
    "/": False,
    "/dev/null": True,
    "/dev/zero": False,
}


@needs_jail
def test_reads_are_an_allow_list(secrets: Secrets, shell: str, namespaces: bool) -> None:
    world = secrets.world
    (world.home / ".gitconfig").write_text("[user]\n\tname = t\n")
    (world.home / ".config/git").mkdir(parents=True, exist_ok=True)
    (world.home / ".config/git/ignore").write_text("*.swp\n")
    (world.home / "notes.txt").write_text("notes\n")
    (world.root / "outside.txt").write_text("outside\n")
    probes = "; ".join(
        f"if [ -d {path} ]; then ls {path}; else head -c 1 {path}; fi >/dev/null 2>&1 && echo 'READ {path}' "
        f"|| echo 'DENIED {path}'"
        for path in READS
    )
    ran = world.run(probes, shell=shell, namespaces=namespaces, wall=hang_guard())
    seen = {line.split(" ", 1)[1]: line.startswith("READ") for line in ran.out.splitlines()}
    assert seen == {world.fill(path): readable for path, readable in READS.items()}, ran.out


@needs_jail
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: dropping capabilities matters for root")
def test_root_keeps_no_capability_to_read_past_file_permissions(secrets: Secrets, shell: str) -> None:
    """A workspace file of another user, mode 0600: root reads it only with CAP_DAC_OVERRIDE or
    CAP_DAC_READ_SEARCH, which the jail drops (Landlock allows the workspace)."""
    private = secrets.world.repo / "private.txt"
    private.write_text("private\n")
    os.chown(private, 65534, 65534)
    private.chmod(0o600)
    try:
        ran = secrets.world.run(
            "cat private.txt; grep ^Cap /proc/self/status", shell=shell, wall=hang_guard()
        )
    finally:
        private.unlink()
    assert "private.txt: Permission denied" in ran.out and "private\n" not in ran.out
    caps = dict(line.split(":\t") for line in ran.out.splitlines() if line.startswith("Cap"))
    assert {caps[name] for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {"0000000000000000"}


REFUSED_WITH = {
    "env": "`env` prints the environment, which may hold credentials (API keys, tokens)",
    "env -0": "`env` prints the environment, which may hold credentials (API keys, tokens)",
    "printenv": "`printenv` prints the environment, which may hold credentials (API keys, tokens)",
    "printenv AWS_BEARER_TOKEN_BEDROCK": "`printenv` prints the environment",
    "env | grep PATH": "`env` prints the environment",
    "set": "`set` prints every shell variable",
    "compgen -v": "`compgen` lists the shell's variables",
    "export -p": "as `export -p` and `declare -x`, prints the environment",
    "declare -x": "as `export -p` and `declare -x`, prints the environment",
    "ps aux": "`ps` prints other processes' command lines",
    "cat /proc/self/environ": "`cat` would read a process's environment (`/proc/…/environ`)",
    "od -c /proc/self/environ": "`od` would read a process's environment (`/proc/…/environ`)",
    "cat /proc/1/cmdline": "`cat` would read another process's /proc directory",
    "cat /proc/*/cmdline": "`cat` would read another process's /proc directory",
    "cat ~/.claude/.credentials.json": "`cat` would read a credential store (`~/.claude`), which a glance",
    "cat $HOME/.claude/.credentials.json": "`cat` would read a credential store (`~/.claude`)",
    "cat ${HOME}/.ssh/id_rsa": "`cat` would read a credential store (`~/.ssh`)",
    "cat /root/.aws/credentials": "`cat` would read a credential store (`~/.aws`)",
    "head -3 /home/bob/.netrc": "`head` would read a credential store (`~/.netrc`)",
    "cat ~/.config/gh/hosts.yml": "`cat` would read a credential store (`~/.config/gh`)",
    "cat ~/.git-credentials": "`cat` would read a credential store (`~/.git-credentials`)",
    "cat ~/.docker/config.json": "`cat` would read a credential store (`~/.docker`)",
    "ls ~/.gnupg": "`ls` would read a credential store (`~/.gnupg`)",
    "cat ~/.s*/id*": "`cat` would read a credential store (`~/.ssh`)",
    "cat ~/$X/hosts.yml": "`cat` would read a credential store (`~/.claude`)",
    "cat /etc/shadow": "`cat` would read a credential store (`/etc/shadow`)",
    "cat /etc/gshadow": "`cat` would read a credential store (`/etc/gshadow`)",
    "cat /etc/ssl/private/server.key": "`cat` would read a credential store (`/etc/ssl/private`)",
    "cat .credentials.json": "`cat` would read a file named like credentials (`.credentials.json`)",
    "cat keys/id_ed25519": "`cat` would read a file named like credentials (`id_ed25519`)",
    "cat < ~/.netrc": "input from a credential store (`~/.netrc`)",
    "grep -r token ~": "`grep` would read a tree that holds a credential store (`~/.claude`)",
    "grep -r token /home": "`grep` would read every home directory below it, with their credential stores",
    "grep -r token /root": "`grep` would read a tree that holds a credential store (`~/.claude`)",
    "grep -r token /etc": "`grep` would read a tree that holds a credential store (`/etc/shadow`)",
}


@pytest.mark.parametrize(("command", "reason"), REFUSED_WITH.items(), ids=REFUSED_WITH.keys())
def test_the_parser_refuses_what_prints_credentials(command: str, reason: str) -> None:
    verdict = glance_verdict(command, cwd="/srv/project")
    assert not verdict.ephemeral and reason in verdict.reason, verdict.reason


def test_the_parser_refuses_the_clis_configuration_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/srv/cli-config")
    verdict = glance_verdict("cat /srv/cli-config/settings.json", cwd="/srv/project")
    assert (
        verdict.reason
        == "`cat` would read a credential store (`/srv/cli-config`), which a glance does not read"
    )


def test_the_parser_refuses_a_walk_from_a_home_directory() -> None:
    verdict = glance_verdict("grep -rn token", cwd="/root")
    assert verdict.reason == (
        "`grep` would read a tree that holds a credential store (`~/.claude`), which a glance does not read"
    )
    assert glance_verdict("cat .ssh/config", cwd="/home/bob").reason.startswith(
        "`cat` would read a credential store (`~/.ssh`)"
    )


KEPT = [
    "cat /proc/self/status",
    "cat /proc/cpuinfo",
    "cat /etc/passwd",
    "cat /etc/os-release",
    "echo ~/.ssh",
    "cat .claude/settings.json",  # the project's, not the CLI's
    "cat *.json",
    "ls -la",
    "grep -rn token src",
    "git config user.name",
]


@pytest.mark.parametrize("command", KEPT)
def test_neighbours_of_credential_reads_stay_glances(command: str) -> None:
    verdict = glance_verdict(command, cwd="/srv/project")
    assert verdict.ephemeral, verdict.reason
