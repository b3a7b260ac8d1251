"""write_spills, the one writer of layer 4: what each refusal names, a body the CLI wrote with a lone
surrogate, and a write that fails half-way."""

from __future__ import annotations

import os
import resource
import signal
from pathlib import Path

import pytest

from flower._errors import SpecError, StoreError
from flower.stores._rewrite import Spill, spill_name, write_spills


def test_each_refusal_names_the_path_it_is_about(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    name = spill_name("body")
    (spill / name).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StoreError, match=r"refusing to replace .*: not a regular file") as caught:
        write_spills(spill, [Spill(name, "body")])
    assert caught.value.path == str(spill / name)
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match=r"the spill directory .*file is not a directory") as caught:
        write_spills(tmp_path / "file", [])
    assert caught.value.path == str(tmp_path / "file")
    with pytest.raises(StoreError, match=r"cannot create the spill directory .*file/spill: ") as caught:
        write_spills(tmp_path / "file" / "spill", [])
    assert caught.value.path == str(tmp_path / "file" / "spill")
    with pytest.raises(SpecError, match=r"must be an absolute path, got 'relative/spill'$"):
        write_spills("relative/spill", [])


def test_a_body_with_a_lone_surrogate_is_written_as_the_cli_wrote_it(tmp_path: Path) -> None:
    body = "before \ud800 after"
    (path,) = write_spills(tmp_path / "spill", [Spill(spill_name(body), body)])
    assert path.read_bytes() == body.encode("utf-8", errors="surrogatepass")


def test_a_write_that_fails_leaves_no_file_and_names_it(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    body = "x" * 10_000
    name = spill_name(body)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails with EFBIG
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_000, old_limit[1]))
    try:
        with pytest.raises(StoreError, match=r"cannot write the spill file .*: ") as caught:
            write_spills(spill, [Spill(name, body)])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert caught.value.path == str(spill / name)
    assert os.listdir(spill) == [".gitignore"]  # neither the body nor its temporary
