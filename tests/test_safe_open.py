"""`_safe_open`: regular files only; a FIFO, a device, a socket or a symlink is refused without blocking."""

from __future__ import annotations

import fcntl
import os
import socket
import stat
from pathlib import Path

import pytest

from flower._util.safe_open import NotRegularFileError, append_regular, open_regular, read_regular


def test_a_regular_file_reads_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    append_regular(path, b"one\n")
    append_regular(path, b"two\n")
    assert read_regular(path) == b"one\ntwo\n" and read_regular(path, 3) == b"one"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    fd = open_regular(path)
    try:
        assert not fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK, "an ordinary descriptor once checked"
    finally:
        os.close(fd)


ACCESS = {"read": lambda path: read_regular(path), "append": lambda path: append_regular(path, b"x\n")}


@pytest.mark.parametrize("access", ACCESS)
def test_a_fifo_is_refused_at_once(tmp_path: Path, access: str) -> None:
    fifo = tmp_path / "INDEX.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError, match="a FIFO"):
        ACCESS[access](fifo)


@pytest.mark.parametrize("access", ACCESS)
def test_a_symlink_is_refused_even_to_a_regular_file(tmp_path: Path, access: str) -> None:
    target = tmp_path / "secret"
    target.write_text("do not read me")
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(NotRegularFileError, match="a symbolic link"):
        ACCESS[access](tmp_path / "link")
    with pytest.raises(NotRegularFileError, match="a symbolic link"):
        ACCESS[access](tmp_path / "dangling")
    assert target.read_text() == "do not read me" and not (tmp_path / "nowhere").exists()


def test_devices_sockets_and_directories_are_refused(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFileError, match="a character device"):
        read_regular("/dev/zero")
    with pytest.raises(NotRegularFileError, match="a directory"):
        read_regular(tmp_path)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock"))
        with pytest.raises(NotRegularFileError, match="a socket"):
            append_regular(tmp_path / "sock", b"x")
    finally:
        server.close()
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing")
