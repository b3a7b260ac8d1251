"""Expiry: the bodies of old ephemeral command results become a one-line note; the newest stay."""

from __future__ import annotations

import pytest

from flower._errors import SpecError
from flower.stores import EphemeralPolicy
from flower.stores.rewrite import expire_ephemeral, short_command

from .transcripts import Transcript, dumps, results, text

GIT = EphemeralPolicy(predicate=lambda command: command.startswith(("git status", "ls")))


def statuses(count: int, *, other_every: int = 0) -> Transcript:
    t = Transcript()
    t.prompt("look around")
    for i in range(count):
        t.run("git status -s", f" M file{i}.py", f"toolu_gs{i}")
        if other_every and i % other_every == 0:
            t.run("make build", f"built {i}", f"toolu_mk{i}")
    return t


def test_all_but_the_six_newest_expire() -> None:
    t = statuses(10, other_every=3)
    before = t.snapshot()

    out = expire_ephemeral(t.entries, GIT)

    found = results(out.entries)
    for i in range(4):
        assert text(found[f"toolu_gs{i}"]).startswith("[result of `git status -s` expired: at least 6 newer")
    for i in range(4, 10):
        assert text(found[f"toolu_gs{i}"]) == f" M file{i}.py"
    assert all(text(found[f"toolu_mk{i}"]) == f"built {i}" for i in (0, 3, 6, 9))
    assert [c.tool_use_id for c in out.changes] == [f"toolu_gs{i}" for i in range(4)]
    assert all(c.kind == "expired" and c.detail == "git status -s" for c in out.changes)
    assert t.entries == before, "the input is never mutated"
    assert len(out.entries) == len(before)


def test_the_result_block_stays_and_keeps_its_shape() -> None:
    t = Transcript()
    t.run("ls", [{"type": "text", "text": "a\nb"}], "toolu_a")
    t.run("ls", "c", "toolu_b")

    out = expire_ephemeral(t.entries, EphemeralPolicy(keep_recent=0, predicate=lambda c: True))

    first, second = results(out.entries)["toolu_a"], results(out.entries)["toolu_b"]
    assert isinstance(first["content"], list) and first["content"][0]["type"] == "text"
    assert isinstance(second["content"], str)
    assert first["tool_use_id"] == "toolu_a" and first["is_error"] is False


def test_nothing_changes_below_the_window() -> None:
    t = statuses(6)
    out = expire_ephemeral(t.entries, GIT)
    assert out.entries == t.entries and out.changes == ()


def test_batches_move_the_window_in_steps() -> None:
    policy = EphemeralPolicy(keep_recent=6, batch=4, predicate=GIT.predicate)
    expired = {n: len(expire_ephemeral(statuses(n).entries, policy).changes) for n in (9, 10, 11, 13, 14, 18)}
    assert expired == {9: 0, 10: 4, 11: 4, 13: 4, 14: 8, 18: 12}


def test_the_default_predicate_is_glance() -> None:
    t = Transcript()
    for i, command in enumerate(
        ["git status -s", "git status && rm -rf x", "python3 -c 'print(1)'", "ls -la"]
    ):
        t.run(command, f"out {i}", f"toolu_{i}")

    out = expire_ephemeral(t.entries, EphemeralPolicy(keep_recent=0))

    assert [c.tool_use_id for c in out.changes] == ["toolu_0", "toolu_3"]


def test_denials_interrupts_images_and_protected_entries_are_not_sites() -> None:
    t = Transcript()
    t.run("git status", "denied", "toolu_denied", denial="permission-rule")
    t.run("git status", "", "toolu_interrupted", interrupted=True)
    t.run("git status", [{"type": "image", "source": {"type": "base64", "data": "AA=="}}], "toolu_image")
    t.run("git status", "kept body", "toolu_plain")
    t.entries[-1]["isMeta"] = True

    out = expire_ephemeral(t.entries, EphemeralPolicy(keep_recent=0, predicate=lambda c: True))

    assert out.changes == () and out.entries == t.entries


def test_newer_counts_and_keep_fields() -> None:
    policy = EphemeralPolicy(keep_recent=1, note="{command}|{keep}|{newer}", predicate=GIT.predicate)
    out = expire_ephemeral(statuses(4).entries, policy)
    assert [text(results(out.entries)[f"toolu_gs{i}"]) for i in range(3)] == [
        "git status -s|1|3",
        "git status -s|1|2",
        "git status -s|1|1",
    ]


def test_the_same_history_always_gives_the_same_bytes() -> None:
    t = statuses(12, other_every=2)
    assert dumps(expire_ephemeral(t.entries, GIT).entries) == dumps(
        expire_ephemeral(t.snapshot(), GIT).entries
    )


def test_an_expired_note_does_not_change_as_the_history_grows() -> None:
    t = statuses(10)
    first = dumps(expire_ephemeral(t.entries, GIT).entries)
    t.run("git status -s", "later", "toolu_later")
    second = dumps(expire_ephemeral(t.entries, GIT).entries)
    changed = next(i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
    assert "toolu_gs4" in second[changed], "only the result that left the window changes"


def test_short_command() -> None:
    assert short_command("git status -s") == "git status -s"
    assert short_command("  git status\n  git log -3\n") == "git status…"
    assert short_command("ls " + "x" * 200) == "ls " + "x" * 76 + "…"


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="entry 1 is a list"):
        expire_ephemeral([{"type": "user"}, []])
    with pytest.raises(TypeError):
        expire_ephemeral("not a list")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="keep_recent"):
        EphemeralPolicy(keep_recent=-1)
    with pytest.raises(SpecError, match="batch"):
        EphemeralPolicy(batch=0)
    with pytest.raises(SpecError, match="may only use"):
        EphemeralPolicy(note="{cmd} expired")
