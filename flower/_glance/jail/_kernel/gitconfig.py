"""git's configuration for a glance: the user's and the system's files, copied with their secrets hidden.

git needs the user's configuration (`safe.directory`, excludes, aliases, the diff and log settings), and
CI images and Go setups keep tokens in it: `url."https://x-access-token:TOKEN@github.com/".insteadOf`,
`http.<url>.extraheader = AUTHORIZATION: basic …`, `credential.*`. The jail never grants the files
themselves (`~/.gitconfig`, `~/.config/git/config`, `/etc/gitconfig`): the launcher, outside the jail,
writes one copy of each with every secret hidden into a private directory of its own, grants only the
copies, and points git at them (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`). Whichever way a command reads
git's configuration (`git config --list --show-origin`, `git config --get-regexp url`, `cat
$GIT_CONFIG_GLOBAL`), no read path reaches a token.

Hidden (`scrub`): the user information of every URL (`https://user:TOKEN@host` becomes
`https://***@host`, in section names too), every value of a `credential` section, of
`http.*.extraheader` and of any key whose name holds `pass`, `token`, `secret`, `cookie` or `auth`,
words that look like a known token (`ghp_…`, `glpat-…`, `sk-ant-…` …) anywhere, and comments. Dropped:
`include` and `includeIf` sections (the files they name are not granted). Standard library only, no
`re` (it costs the launcher ~10 ms at every glance).
"""

from __future__ import annotations

import os

__all__ = ["HIDDEN", "Prepared", "holds_secret", "prepare", "scrub"]

HIDDEN = '"<hidden: a glance sees no secret>"'
"""What a hidden value becomes."""
_SECRET_KEY_PARTS = ("pass", "token", "secret", "cookie", "auth", "extraheader")
_TOKEN_PREFIXES = (
    "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-", "gldt-", "xoxb-", "xoxp-", "xapp-",
    "sk-ant-", "sk-proj-", "npm_", "pypi-AgE", "hf_", "AKIA", "ASIA",
)  # fmt: skip
_WORD_ENDS = frozenset(" \t\"'=;#,")


def scrub(text: str) -> str:
    """`text`, a git configuration file, with every secret hidden and its includes and comments dropped."""
    out: list[str] = []
    section, hiding, continued = "", False, False
    for line in text.splitlines():
        if continued:  # the rest of a value that ends with `\`
            continued = _continues(line)
            if not hiding:
                out.append(_hide_tokens(_hide_userinfo(line)))
            continue
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("["):
            header, _, rest = stripped.partition("]")
            section = header[1:].strip().split(" ")[0].split(".")[0].lower()
            out.append(_hide_tokens(_hide_userinfo(header)) + "]")
            stripped = rest.strip()
            if not stripped or stripped[0] in "#;":
                continue
        if section in ("include", "includeif"):
            continued, hiding = _continues(stripped), True
            continue
        key = stripped.split("=", 1)[0].strip().lower()
        hiding = section == "credential" or any(part in key for part in _SECRET_KEY_PARTS)
        continued = _continues(stripped)
        if hiding:
            out.append(f"\t{key} = {HIDDEN}" if "=" in stripped else f"\t{key}")
        else:
            out.append("\t" + _hide_tokens(_hide_userinfo(stripped)))
    return "\n".join(out) + "\n"


def _continues(line: str) -> bool:
    """Whether a value line goes on to the next one: it ends with an odd number of backslashes."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _hide_userinfo(text: str) -> str:
    """Every `scheme://userinfo@` in `text` with its user information hidden."""
    found, start = [], 0
    while (at := text.find("://", start)) >= 0:
        end = at + 3
        while end < len(text) and text[end] not in "/\"' \t?#":
            end += 1
        authority = text[at + 3 : end]
        if "@" in authority:
            found.append(text[start : at + 3] + "***" + authority[authority.rindex("@") :])
        else:
            found.append(text[start:end])
        start = end
    return "".join(found) + text[start:]


def _hide_tokens(text: str) -> str:
    """Every word of `text` that starts like a known token, hidden."""
    for prefix in _TOKEN_PREFIXES:
        start = 0
        while (at := text.find(prefix, start)) >= 0:
            end = at + len(prefix)
            while end < len(text) and text[end] not in _WORD_ENDS and text[end] not in "/@:":
                end += 1
            if (at == 0 or text[at - 1] in _WORD_ENDS or text[at - 1] in "/@:") and end - at >= len(
                prefix
            ) + 8:
                text = text[:at] + "***" + text[end:]
                end = at + 3
            start = end
    return text


class Prepared:
    """The copies the launcher wrote: the variables that point git at them, the files to grant, and the
    directory to remove once the command has ended."""

    __slots__ = ("directory", "env", "files")

    def __init__(self, env: dict[str, str], files: list[str], directory: str | None) -> None:
        self.env, self.files, self.directory = env, files, directory

    def remove(self) -> None:
        """Remove the copies (the launcher's own directory); never raises."""
        if self.directory is None:
            return
        for path in self.files:
            try:  # noqa: SIM105 - contextlib costs the launcher an import
                os.unlink(path)
            except OSError:
                pass
        try:  # noqa: SIM105
            os.rmdir(self.directory)
        except OSError:
            pass


def _sources(env: dict[str, str]) -> dict[str, list[str]]:
    """The files git would read as its system and its global configuration, in git's order."""
    home = env.get("HOME", "")
    if "GIT_CONFIG_GLOBAL" in env:
        user = [env["GIT_CONFIG_GLOBAL"]]
    else:
        xdg = env.get("XDG_CONFIG_HOME", "") or (f"{home}/.config" if os.path.isabs(home) else "")
        user = [
            *([f"{xdg}/git/config"] if xdg else []),
            *([f"{home}/.gitconfig"] if os.path.isabs(home) else []),
        ]
    nosystem = env.get("GIT_CONFIG_NOSYSTEM", "").lower() not in ("", "0", "false", "no", "off")
    system = [] if nosystem else [env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"]
    return {"GIT_CONFIG_SYSTEM": system, "GIT_CONFIG_GLOBAL": user}


def _read(path: str) -> str:
    if not os.path.isabs(path) or path == "/dev/null":
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read(1 << 20)
    except (OSError, ValueError):
        return ""


def prepared(env: dict[str, str]) -> Prepared:
    """`prepare(env)`, or, when a copy cannot be written, no user or system configuration at all
    (`/dev/null` for both): git then reads none, which hides every secret too."""
    try:
        return prepare(env)
    except OSError:
        return Prepared({"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}, [], None)


def prepare(env: dict[str, str]) -> Prepared:
    """Write the scrubbed copies for a command the launcher is about to run, in a new directory (mode
    0700) under `$TMPDIR` (else /tmp); a configuration with no file becomes `/dev/null`. Raises
    `OSError` when a copy cannot be written (`prepared` then gives git no configuration at all)."""
    texts = {name: "".join(_read(path) + "\n" for path in paths) for name, paths in _sources(env).items()}
    if not any(text.strip() for text in texts.values()):
        return Prepared({name: "/dev/null" for name in texts}, [], None)
    base = env.get("TMPDIR", "")
    base = base if os.path.isabs(base) and os.path.isdir(base) else "/tmp"
    directory = f"{base.rstrip('/')}/flower-glance-{os.getpid()}-{os.urandom(6).hex()}"
    os.mkdir(directory, 0o700)
    prepared = Prepared({}, [], directory)
    try:
        for name, text in texts.items():
            if not text.strip():
                prepared.env[name] = "/dev/null"
                continue
            path = f"{directory}/{name.rsplit('_', 1)[1].lower()}"
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o400)
            prepared.files.append(path)
            with open(descriptor, "w", encoding="utf-8") as file:
                file.write(scrub(text))
            prepared.env[name] = path
    except BaseException:
        prepared.remove()
        raise
    return prepared


def holds_secret(text: str) -> bool:
    """Whether the git configuration `text` holds what `scrub` hides (a comment with a token included)."""
    return HIDDEN in scrub(text) or _hide_tokens(_hide_userinfo(text)) != text
