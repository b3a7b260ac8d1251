"""The launcher of a coordinator's own Bash step: `python -I -S own_run.py --keep A,B --max N [--spill DIR]
--b64 COMMAND`.

An own step is a hands-on command the parser could not vouch for, so it is not jailed (it may write), but
it must not hand the model what a glance may not read either:

- the environment is scrubbed to `--keep` (the glance jail's `ENVIRONMENT` allow-list): a command the
  parser does not understand (`python3 -c 'import os; print(os.environ)'`) finds no credential of the
  CLI or the app there; the shell starts without the user's start-up files (`zsh -f`; bash reads only
  `$BASH_ENV`, which is not kept);
- its output (standard output and error together) is cut at `--max` characters: the rest goes to a new
  file in `--spill` (the workbench's `artifacts/`), named in the note, or is not shown at all; `--max 0`
  passes it through whole (an inline coordinator's step: the CLI's cap and flower's spill bound it).

It exits with the shell's status (125 when it could not start the shell). Standard library only: it runs
with `-I -S`, so neither the CLI's nor the app's site-packages are imported.
"""

import base64
import contextlib
import os
import subprocess
import sys
import time

_CHUNK = 1 << 16


def _shell() -> str:
    """The CLI's own shell (the launcher's parent), else $SHELL, bash, zsh."""
    candidates = []
    with contextlib.suppress(OSError):
        candidates.append(os.readlink(f"/proc/{os.getppid()}/exe"))
    candidates += [os.environ.get("SHELL", ""), "/bin/bash", "/bin/zsh", "/usr/bin/zsh"]
    for path in candidates:
        name = os.path.basename(path)
        if os.path.isabs(path) and name.startswith(("bash", "zsh")) and os.access(path, os.X_OK):
            return path
    raise OSError("no bash or zsh to run the command with")


def _open_spill(directory: str, head: bytes) -> tuple[int, str]:
    """A new file in `directory` holding `head` so far, or (-1, '') when none can be made."""
    try:
        fd, path = _spill_file(directory)
        os.write(fd, head)
    except OSError:
        return -1, ""
    return fd, path


def _spill_file(directory: str) -> tuple[int, str]:
    os.makedirs(directory, mode=0o700, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(100):
        path = os.path.join(directory, f"own-step-{stamp}-{os.getpid()}-{attempt}.txt")
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), path
        except FileExistsError:
            continue
    raise OSError(f"no new file name in {directory}")


def main(argv: list[str]) -> int:
    keep: list[str] = []
    limit, spill, encoded = 2000, "", ""
    words = iter(argv)
    for word in words:
        value = next(words)
        if word == "--keep":
            keep = [name for name in value.split(",") if name]
        elif word == "--max":
            limit = int(value)
        elif word == "--spill":
            spill = value
        elif word == "--b64":
            encoded = value
        else:
            raise ValueError(f"unknown option {word}")
    command = base64.urlsafe_b64decode(encoded.encode("ascii")).decode("utf-8")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    shell = _shell()
    zsh = os.path.basename(shell).startswith("zsh")
    argv = [shell, "-f", "-c", command] if zsh else [shell, "-c", command]
    child = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)  # fmt: skip
    assert child.stdout is not None
    if limit == 0:
        while chunk := os.read(child.stdout.fileno(), _CHUNK):
            sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        status = child.wait()
        return status if status >= 0 else 128 - status
    budget = limit * 4  # a character is at most 4 bytes of UTF-8: the head holds `limit` characters
    head, total, fd, path = bytearray(), 0, -1, ""
    while chunk := os.read(child.stdout.fileno(), _CHUNK):
        total += len(chunk)
        room = max(0, budget - len(head))
        head += chunk[:room]
        if chunk[room:]:
            if fd < 0 and spill:
                fd, path = _open_spill(spill, bytes(head))
            if fd >= 0:
                os.write(fd, chunk[room:])
    status = child.wait()
    text = bytes(head).decode("utf-8", errors="replace")
    cut = len(text) > limit or total > len(head)
    if cut and fd < 0 and spill:
        fd, path = _open_spill(spill, bytes(head))
    if fd >= 0:
        os.close(fd)
    shown = text[:limit]
    if cut:
        rest = f"the whole output ({total:,} bytes) is in {path}" if path else "the rest is not shown"
        shown += (
            f"\n[flower: an own step shows at most {limit:,} characters of output; {rest}. "
            "Have a worker read it.]"
        )
    sys.stdout.write(shown)
    sys.stdout.flush()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except Exception as error:  # the command did not run
        sys.stderr.write(f"flower: the own step could not start ({error}); the command was not run.\n")
        code = 125
    sys.exit(code)
