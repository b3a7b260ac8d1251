"""A throwaway PostgreSQL cluster for the tests, when `FLOWER_TEST_POSTGRES_DSN` does not give one.

CI (`.ci/run`) starts a cluster and exports its DSN; on a dev machine with PostgreSQL's binaries, the
suite starts its own the same way: `initdb` into a temp directory (as the `postgres` user when run as
root: the server refuses root), listening on 127.0.0.1 only, trust authentication, stopped at the end.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from flower.testing import hang_guard

ENV = "FLOWER_TEST_POSTGRES_DSN"


def _bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Cluster:
    """A running throwaway cluster."""

    directory: Path
    bindir: Path
    port: int
    as_postgres: bool

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=hang_guard())

    options: str = ""

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def halt(self, mode: str = "immediate") -> None:
        """Stop the server (`-m immediate`: as if it crashed), keeping its data for `resume()`."""
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", mode, "-w", "stop")

    def resume(self) -> None:
        """Start the server again on the same port and data (crash recovery first, after `-m immediate`)."""
        data, log = str(self.directory / "data"), str(self.directory / "log")
        self._run("pg_ctl", "-D", data, "-l", log, "-o", self.options, "-w", "start")


def start(*, durable: bool = False) -> Cluster | str:
    """Start a cluster; or the reason why none can be started here. `durable`: fsync on (benchmarks);
    the tests run with fsync off, as a throwaway cluster can."""
    bindir = _bindir()
    if bindir is None or not (bindir / "initdb").exists():
        return "no PostgreSQL server binaries (initdb, pg_ctl) on this machine"
    as_postgres = os.geteuid() == 0
    if as_postgres and shutil.which("runuser") is None:
        return "running as root without runuser: cannot start PostgreSQL as the postgres user"
    directory = Path(tempfile.mkdtemp(prefix="flower-pg-"))
    if as_postgres:
        shutil.chown(directory, "postgres")
    cluster = Cluster(directory, bindir, _free_port(), as_postgres)
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={cluster.port} -c unix_socket_directories={directory} "
        f"-c fsync={'on' if durable else 'off'} -c max_connections=200"
    )
    cluster.options = options
    try:
        cluster._run("initdb", "-D", str(directory / "data"), "-U", "postgres", "--auth=trust", "--no-sync")
        cluster._run(
            "pg_ctl",
            "-D",
            str(directory / "data"),
            "-l",
            str(directory / "log"),
            "-o",
            options,
            "-w",
            "start",
        )
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(directory, ignore_errors=True)
        return f"could not start a throwaway PostgreSQL cluster: {exc}"
    return cluster
