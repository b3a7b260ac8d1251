"""What a glance may read and which environment it gets: the allow-lists, one set of data for every system.

A glance runs without the user's approval, so it must not widen what the coordinator sees: no credential
of the CLI or the app, whether in the environment or in a file. Both are allow-lists:

- `ENVIRONMENT`: the only variables the command gets (plus git's read-only settings), whatever the CLI or
  the app put in theirs (`AWS_SECRET_ACCESS_KEY`, `GH_TOKEN`, `CLAUDE_CODE_OAUTH_REFRESH_TOKEN` …);
- `plan()`: the only files it may read on Linux (Landlock): the workspace (the working directory and its
  git repository), the system's program and library trees (`SYSTEM_TREES`, and the trees `PATH` names),
  the few /etc files programs need (`ETC_FILES`), git's own configuration files in the home directory.
  Never a home directory as such, and never a credential store (`HOME_SECRETS`, `SYSTEM_SECRETS`,
  `$CLAUDE_CONFIG_DIR`), even when an allowed tree holds one: the tree is then granted piece by piece
  around it.

The parser (`flower._glance`) refuses the same credential paths with a reason, and macOS's profile
(`macos.py`) is written from the same lists. Standard library only: the launcher imports this module.
"""

from __future__ import annotations

import os

from . import links

__all__ = [
    "DEVICES", "ENVIRONMENT", "ETC_FILES", "GIT_CONFIG_FILES", "HOME_GIT_FILES", "HOME_SECRETS", "LINKED",
    "LIST_ONLY", "PROC_FILES", "PROC_TREES", "SECRET_NAMES", "SYSTEM_SECRETS", "SYSTEM_TREES", "SYS_TREES",
    "home_of", "is_home_or_above", "linked", "plan", "program_trees", "secrets", "stores", "workspace",
]  # fmt: skip

ENVIRONMENT = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "TERM", "TZ", "COLUMNS", "LINES", "NO_COLOR",
    "COLORTERM", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY",
    "LC_NUMERIC", "LC_TIME", "LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER",
    "LC_TELEPHONE",
)  # fmt: skip
"""The variables a glance's command gets, when the launcher has them: what a look around needs (where
programs are, who and where it is, the language and terminal). Nothing else passes."""

SYSTEM_TREES = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store",
    "/run/current-system", "/snap",
)  # fmt: skip
"""The system's program and library trees (those that exist)."""

ETC_FILES = (
    "passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ld.so.preload",
    "localtime", "timezone", "locale.alias", "locale.conf", "default/locale", "hostname", "hosts",
    "host.conf", "os-release", "lsb-release", "debian_version", "redhat-release", "system-release",
    "alpine-release", "issue", "gitattributes", "zshenv", "zsh/zshenv", "magic",
    "magic.mime", "mime.types", "services", "protocols", "shells", "terminfo",
)  # fmt: skip
"""The /etc files (and two directories) programs read to run: users and groups, the loader's cache, time
zone, locale, release files, git's attributes and zsh's system configuration, `file`'s magic (not
/etc/gitconfig: git reads a copy with its secrets hidden, as of the home's configuration)."""

DEVICES = ("null", "random", "urandom")
"""The devices a glance reads (`/dev/null` is also the only file it may write). Not /dev/zero: it never
ends, and a shared mapping of it would be memory no limit counts; not a terminal: it would take the
user's keystrokes."""

PROC_FILES = (
    "cpuinfo", "meminfo", "loadavg", "uptime", "stat", "version", "filesystems", "swaps", "partitions",
    "diskstats", "vmstat", "cmdline", "devices", "modules", "interrupts", "softirqs", "zoneinfo",
    "buddyinfo", "cgroups", "crypto", "misc", "locks", "consoles", "execdomains", "iomem", "ioports",
    "mdstat", "pagetypeinfo", "slabinfo", "version_signature",
)  # fmt: skip
"""Top-level /proc files of short, finite content about the machine (not about a process)."""
PROC_TREES = ("sys", "pressure", "driver")
"""/proc directories of plain, finite files about the machine."""
SYS_TREES = ("/sys/devices/system/cpu", "/sys/devices/system/node")
"""What `lscpu`, `nproc` and the C library read under /sys."""

HOME_GIT_FILES = (".config/git/ignore", ".config/git/attributes")
"""git's own files in the home directory that hold no secret: its default excludes and attributes."""
GIT_CONFIG_FILES = (".gitconfig", ".config/git/config")
"""git's configuration in a home directory: never granted, as it may hold tokens (`url.*.insteadOf`,
`http.*.extraheader`, `credential.*`); git reads a copy with its secrets hidden (`gitconfig.py`)."""

HOME_SECRETS = (
    ".claude", ".claude.json", ".claude.json.backup", ".ssh", ".aws", ".azure", ".config/gh",
    ".config/gcloud", ".config/hub", ".config/op", ".config/git/credentials", ".netrc", "_netrc",
    ".git-credentials", ".docker", ".kube", ".gnupg", ".local/share/keyrings", ".password-store", ".pgpass",
    ".my.cnf", ".npmrc", ".yarnrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
    ".gem/credentials", ".terraform.d", ".terraformrc", ".vault-token", ".pulumi/credentials.json",
    ".fly/config.yml", ".config/rclone", ".config/doctl", ".config/hcloud", ".config/glab-cli",
    ".config/stripe", ".s3cfg", ".boto", ".kaggle", ".config/configstore", "Library/Keychains",
    ".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history",
    ".node_repl_history",
)  # fmt: skip
"""Credential stores in a home directory (and shell histories, where pasted tokens stay)."""
SECRET_NAMES = (".credentials.json", ".netrc", "_netrc", ".git-credentials", ".pgpass", ".claude.json",
                "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")  # fmt: skip
"""File names that hold credentials wherever they are (the CLI's OAuth tokens, SSH private keys)."""
SYSTEM_SECRETS = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/master.passwd",
    "/etc/security/opasswd", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private", "/etc/pki/tls/private",
    "/etc/ssh", "/etc/krb5.keytab", "/etc/NetworkManager/system-connections", "/var/lib/sss",
    "/Library/Keychains", "/private/etc/master.passwd",
)  # fmt: skip
"""Credential stores of the system: password hashes, private TLS and SSH host keys, sudo rules."""

LIST_ONLY = "\0"
"""Marks a rule of `plan()` that grants listing a directory (and those below it), not reading its files."""

_HOME_PARENTS = ("/home", "/Users")
"""Directories whose entries are home directories."""
_ROOT_HOMES = ("/root", "/var/root")
_LIBRARIES = ("lib", "lib64", "libexec")
_RUNTIMES = ("versions", "installs", "libexec")
"""Beside a version manager's `shims` (pyenv, rbenv, nodenv, asdf): the runtimes its shims run."""


def _under(path: str, top: str) -> bool:
    """Whether `path` is `top` or below it (both absolute and normalized)."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def _homes(env: dict[str, str]) -> list[str]:
    home = env.get("HOME", "")
    return [*_ROOT_HOMES, *([os.path.normpath(home)] if os.path.isabs(home) else [])]


def home_of(path: str, env: dict[str, str]) -> str | None:
    """The home directory `path` (absolute, normalized) lies in, or None."""
    for home in _homes(env):
        if _under(path, home) and home != "/":
            return home
    for parent in _HOME_PARENTS:
        if path.startswith(parent + "/"):
            return parent + "/" + path[len(parent) + 1 :].split("/")[0]
    return None


def is_home_or_above(path: str, env: dict[str, str]) -> bool:
    """Whether `path` is `/`, a home directory, or holds one (`/home`): never read as a whole."""
    if path in ("/", *_HOME_PARENTS):
        return True
    home = home_of(path, env)
    return (home is not None and path == home) or any(_under(home, path) for home in _homes(env))


def _real(path: str) -> str | None:
    try:
        return os.path.realpath(path) if os.path.exists(path) else None
    except (OSError, ValueError):
        return None


def workspace(cwd: str, env: dict[str, str]) -> list[str]:
    """The directories of the workspace: `cwd` and the git repository it is in (its work tree, and the
    git directories a `.git` file names, when they are git directories: `_git_dirs`), none of them a home
    directory or above one."""
    found: list[str] = []
    real = _real(cwd)
    if real is None or is_home_or_above(real, env):
        return found
    found.append(real)
    directory = real
    while not is_home_or_above(directory, env):
        dot_git = directory + "/.git"
        if os.path.isdir(dot_git):
            found.append(directory)
            break
        if os.path.isfile(dot_git):
            found += [directory, *_git_dirs(directory, dot_git, env)]
            break
        directory = os.path.dirname(directory)
    return [path for path in dict.fromkeys(found) if not is_home_or_above(path, env)]


def _git_dirs(directory: str, dot_git: str, env: dict[str, str]) -> list[str]:
    """The git directory a `.git` file names (`gitdir: …`, a worktree or a submodule) and its common one,
    each only when it is a git directory (`_is_git_dir`): a `.git` file is text anyone who writes the
    workspace can write (an unpacked archive, a worker), so it must not open `/srv/other` or `~/.config`."""
    try:
        with open(dot_git, encoding="utf-8") as file:
            line = file.readline(4096).strip()
    except (OSError, ValueError):
        return []
    if not line.startswith("gitdir:"):
        return []
    gitdir = _real(os.path.join(directory, line[len("gitdir:") :].strip()))
    if gitdir is None or not _is_git_dir(gitdir, directory, env):
        return []
    try:
        with open(gitdir + "/commondir", encoding="utf-8") as file:
            common = _real(os.path.join(gitdir, file.readline(4096).strip()))
    except (OSError, ValueError):
        common = None
    if common is not None and not (
        _is_git_dir(common, directory, env) and os.path.isdir(common + "/objects")
    ):
        common = None
    return [gitdir, *([common] if common else [])]


def _is_git_dir(path: str, work_tree: str, env: dict[str, str]) -> bool:
    """Whether `path` (resolved) may be granted as the git directory of `work_tree`: it holds a `HEAD`
    file and an `objects` directory or a `commondir` file; it is neither `work_tree` nor above it (that
    would grant its neighbours), nor a home directory or above one, nor in a home's dotfiles (`~/.config`:
    applications' data, not a repository of the project)."""
    if _under(work_tree, path) or is_home_or_above(path, env):
        return False
    home = home_of(path, env)
    if home is not None and path[len(home) + 1 :].startswith("."):
        return False
    return os.path.isfile(path + "/HEAD") and (
        os.path.isdir(path + "/objects") or os.path.isfile(path + "/commondir")
    )


def program_trees(env: dict[str, str]) -> list[str]:
    """`SYSTEM_TREES`, and what `PATH`'s other directories need to run their programs: a `bin` (or
    `sbin`) directory with the `lib`, `lib64` and `libexec` beside it (`~/.nvm/versions/node/v22/bin`
    and its `lib`), never the tree that holds them (`~/.pulumi`, whose `bin` is on `PATH`, also holds
    `credentials.json`); a version manager's `shims` with the runtimes beside it (`~/.pyenv/versions`);
    any other directory (`~/.config`) only by its executable files, each granted alone."""
    found = [real for tree in SYSTEM_TREES if (real := _real(tree))]
    for entry in env.get("PATH", "").split(":"):
        real = _real(entry) if os.path.isabs(entry) else None
        if real is None or not os.path.isdir(real) or is_home_or_above(real, env):
            continue
        if any(_under(real, tree) for tree in found):
            continue
        if os.path.basename(real) == "shims":  # a version manager's: the versions its shims run
            parent = os.path.dirname(real)
            found += [real, *(real for name in _RUNTIMES if (real := _real(f"{parent}/{name}")))]
            continue
        if os.path.basename(real) not in ("bin", "sbin"):
            found += _executables(real)
            continue
        found.append(real)
        parent = os.path.dirname(real)
        if not is_home_or_above(parent, env):
            found += [real for name in _LIBRARIES if (real := _real(f"{parent}/{name}"))]
    return list(dict.fromkeys(found))


def _executables(directory: str) -> list[str]:
    """The executable regular files of `directory` (resolved), none named like credentials."""
    found: list[str] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return found
    for name in names:
        real = _real(f"{directory}/{name}")
        if real is None or os.path.basename(real) in SECRET_NAMES or name in SECRET_NAMES:
            continue
        try:
            mode = os.stat(real).st_mode
        except OSError:
            continue
        if mode & 0o170000 == 0o100000 and mode & 0o111:  # a regular file, executable
            found.append(real)
    return found


def secrets(env: dict[str, str], trees: list[str]) -> list[str]:
    """The credential stores (resolved) that lie in `trees`: they are cut out of what a glance reads."""
    found = []
    for path in stores(env, trees):
        if os.path.lexists(path) and (real := _real(path)) and any(_under(real, tree) for tree in trees):
            found.append(real)
    return found


def stores(env: dict[str, str], trees: list[str]) -> list[str]:
    """The credential stores of the system, of `$CLAUDE_CONFIG_DIR`, and of each home directory that
    `trees` or the environment name (git's configuration included)."""
    candidates = [*SYSTEM_SECRETS]
    config = env.get("CLAUDE_CONFIG_DIR", "")
    if os.path.isabs(config):
        candidates.append(config)
    homes = {home for tree in trees if (home := home_of(tree, env))} | set(_homes(env))
    for home in sorted(homes):
        candidates += [f"{home}/{name}" for name in (*HOME_SECRETS, *GIT_CONFIG_FILES)]
    return candidates


def linked(env: dict[str, str], trees: list[str]) -> list[str]:
    """The other names (hard links) of credential files in the trees a glance may read outside the
    system's (`links.py`). Raises `OSError` when it cannot look in full."""
    own = [tree for tree in trees if not any(_under(tree, top) for top in SYSTEM_TREES)]
    devices = set()
    for tree in own:
        try:
            devices.add(os.stat(tree).st_dev)
        except OSError:
            continue
    inodes = links.credential_inodes(stores(env, trees), devices) if devices else set()
    return links.find_links(own, inodes)


LINKED = (
    "`{path}` is another name (a hard link) of a credential file: Landlock keeps its content from a glance, "
    "not its size and times (`ls -l`, `stat`, `find -size`), so no glance runs while it is there; remove it"
)
"""Why the launcher refuses every glance while a tree it may read holds a hard link to a credential file."""


def plan(cwd: str, env: dict[str, str]) -> list[str]:
    """Every path a glance may read on Linux, credential stores cut out. A directory is granted with what
    is below it; a path that does not exist is left to the caller to skip (it opens each one). Raises
    `OSError` (the launcher refuses the command) when a readable tree holds a hard link to a credential
    file (`LINKED`: the kernel judges a path's reads, never its `stat`, so cutting the link out would
    still show its size), or when such links cannot be looked for in full."""
    trees: list[str] = []
    for tree in [*workspace(cwd, env), *program_trees(env)]:
        if not any(_under(tree, other) for other in trees):
            trees = [other for other in trees if not _under(other, tree)] + [tree]
    found = linked(env, trees)
    if found:
        raise OSError(LINKED.format(path=found[0]))
    cut = secrets(env, trees)
    rules = [
        rule for tree in trees for rule in _carve(tree, [secret for secret in cut if _under(secret, tree)])
    ]
    home = env.get("HOME", "")
    rules += [f"{home}/{name}" for name in HOME_GIT_FILES] if os.path.isabs(home) else []
    return rules + [f"/etc/{name}" for name in ETC_FILES]


def _carve(path: str, cut: list[str]) -> list[str]:
    """`path`, without the paths in `cut` (each below or equal to it): a directory that holds one is
    granted entry by entry (links skipped: their targets are checked on their own), and listed
    (`LIST_ONLY`), so that `ls` and `git status` still see the names there."""
    if path in cut:
        return []
    if not cut or not os.path.isdir(path):
        return [path]
    rules: list[str] = [LIST_ONLY + path]
    try:
        names = os.listdir(path)
    except OSError:
        return rules
    for name in names:
        child = path.rstrip("/") + "/" + name
        if not os.path.islink(child):
            rules += _carve(child, [secret for secret in cut if _under(secret, child)])
    return rules
