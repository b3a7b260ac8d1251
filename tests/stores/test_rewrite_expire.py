"""Expiry: the bodies of old ephemeral command results become a one-line note; the newest stay."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flower._errors import SpecError
from flower.stores import EphemeralPolicy
from flower.stores._rewrite import expire_ephemeral, short_command
from flower.stores._rewrite.expire import entry_time, idle_cutoff

from .transcripts import Transcript, around_the_body, dumps, results, text

GIT = EphemeralPolicy(predicate=lambda command: command.startswith(("git status", "ls")))


def status(i: int) -> str:
    """A `git status -s` body longer than the note that would replace it."""
    return "\n".join(f" M src/package/module_{i}_{k}.py" for k in range(8))


def statuses(count: int, *, other_every: int = 0) -> Transcript:
    t = Transcript()
    t.prompt("look around")
    for i in range(count):
        t.run("git status -s", status(i), f"toolu_gs{i}")
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
        assert text(found[f"toolu_gs{i}"]) == status(i)
    assert all(text(found[f"toolu_mk{i}"]) == f"built {i}" for i in (0, 3, 6, 9))
    assert [c.tool_use_id for c in out.changes] == [f"toolu_gs{i}" for i in range(4)]
    assert all(c.kind == "expired" and c.detail == "git status -s" for c in out.changes)
    assert t.entries == before, "the input is never mutated"
    assert len(out.entries) == len(before)


def test_the_result_block_stays_and_keeps_its_shape() -> None:
    t = Transcript()
    t.run("ls", [{"type": "text", "text": status(0)}], "toolu_a")
    t.run("ls", status(1), "toolu_b")

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
        t.run(command, status(i), f"toolu_{i}")

    out = expire_ephemeral(t.entries, EphemeralPolicy(keep_recent=0))

    assert [c.tool_use_id for c in out.changes] == ["toolu_0", "toolu_3"]


def test_denials_interrupts_images_and_protected_entries_are_not_sites() -> None:
    t = Transcript()
    t.run("git status", "denied", "toolu_denied", denial="permission-rule")
    t.run("git status", "", "toolu_interrupted", interrupted=True)
    t.run("git status", [{"type": "image", "source": {"type": "base64", "data": "AA=="}}], "toolu_image")
    t.run("git status", status(0), "toolu_plain")
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


def test_a_result_as_short_as_its_note_keeps_its_body_and_its_place_in_the_window() -> None:
    """A one-line `date` or an empty output is shorter than any note: replacing it would make the
    history longer. It keeps its body, and it still counts as one of the `keep_recent` newest."""
    t = Transcript()
    t.run("git status -s", status(0), "toolu_long")
    t.run("date", "Sat Nov 29 10:00:00 UTC 2026", "toolu_date")
    t.run("ls", "", "toolu_empty")
    t.run("git status -s", status(1), "toolu_new")
    policy = EphemeralPolicy(keep_recent=1, predicate=lambda command: True)

    out = expire_ephemeral(t.entries, policy)

    found = results(out.entries)
    assert [c.tool_use_id for c in out.changes] == ["toolu_long"]
    assert text(found["toolu_date"]) == "Sat Nov 29 10:00:00 UTC 2026" and text(found["toolu_empty"]) == ""
    assert text(found["toolu_new"]) == status(1)
    assert expire_ephemeral(out.entries, policy).changes == (), "a note already in place is not counted"


def test_the_same_history_always_gives_the_same_bytes() -> None:
    t = statuses(12, other_every=2)
    assert dumps(expire_ephemeral(t.entries, GIT).entries) == dumps(
        expire_ephemeral(t.snapshot(), GIT).entries
    )


def test_an_expired_note_does_not_change_as_the_history_grows() -> None:
    t = statuses(10)
    first = dumps(expire_ephemeral(t.entries, GIT).entries)
    t.run("git status -s", status(99), "toolu_later")
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
    with pytest.raises(TypeError, match=r"^expected a list of transcript entries, got str$"):
        expire_ephemeral("not a list")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got generator$"):  # one pass would use it up
        expire_ephemeral(entry for entry in [{"type": "user"}])  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="keep_recent"):
        EphemeralPolicy(keep_recent=-1)
    with pytest.raises(SpecError, match="batch"):
        EphemeralPolicy(batch=0)
    with pytest.raises(SpecError, match="may only use"):
        EphemeralPolicy(note="{cmd} expired")


# -- a pause: after an idle hour the newest snapshots are as stale as the oldest ------------------------

HOUR = 3600.0
T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC).timestamp()


def timed(t: Transcript, *, pause_after: int | None = None, pause: float = 2 * HOUR) -> Transcript:
    """Give every entry a timestamp a second apart; a `pause` before entry `pause_after` if given."""
    moment = T0
    for position, entry in enumerate(t.entries):
        if "timestamp" not in entry:
            continue
        if position == pause_after:
            moment += pause
        entry["timestamp"] = datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z")
        moment += 1
    return t


def test_a_pause_before_the_load_expires_the_newest_too() -> None:
    t = timed(statuses(8))
    last = T0 + len(t.entries)

    soon = expire_ephemeral(t.entries, GIT, now=last + 60)
    later = expire_ephemeral(t.entries, GIT, now=last + 2 * HOUR)

    assert [c.tool_use_id for c in soon.changes] == ["toolu_gs0", "toolu_gs1"]
    assert len(later.changes) == 8, "every snapshot before the pause is stale"
    found = results(later.entries)
    assert text(found["toolu_gs0"]) == (
        "[result of `git status -s` expired: the session was idle for 1 h or more after it; "
        "state may have changed; re-run it if needed]"
    )
    assert text(found["toolu_gs7"]) == text(found["toolu_gs0"]), "the same note for each: a constant"


def test_a_pause_inside_the_history_gives_the_same_notes_at_every_later_load() -> None:
    t = statuses(8)
    t.prompt("continue")  # the resumed session wrote past the pause
    t.run("git status -s", status(100), "toolu_after")
    timed(t, pause_after=len(t.entries) - 3)

    first = expire_ephemeral(t.entries, GIT, now=T0 + 3 * HOUR)
    again = expire_ephemeral(t.entries, GIT)  # no clock at all: the pause is in the history

    assert dumps(first.entries) == dumps(again.entries), "the same bytes: the prompt-cache prefix holds"
    expired = {c.tool_use_id for c in first.changes}
    assert expired == {f"toolu_gs{i}" for i in range(8)} and "toolu_after" not in expired


def test_short_gaps_entries_without_time_and_none_change_nothing() -> None:
    t = timed(statuses(4))
    assert expire_ephemeral(t.entries, GIT, now=T0 + 30 * 60).changes == ()
    untimed = statuses(4)
    for entry in untimed.entries:
        entry.pop("timestamp", None)
    assert expire_ephemeral(untimed.entries, GIT, now=T0 + 10 * HOUR).changes == ()
    off = EphemeralPolicy(predicate=GIT.predicate, stale_after=None)
    assert expire_ephemeral(t.entries, off, now=T0 + 10 * HOUR).changes == ()


def test_the_pause_length_is_a_policy() -> None:
    t = timed(statuses(3))
    quick = EphemeralPolicy(predicate=GIT.predicate, stale_after=600)
    out = expire_ephemeral(t.entries, quick, now=T0 + 900)
    assert len(out.changes) == 3
    assert "idle for 10 min or more" in text(results(out.entries)["toolu_gs0"])


@pytest.mark.parametrize("value", [0, -1, True, "3600", float("inf"), float("nan")])
def test_a_bad_pause_length_is_refused(value: object) -> None:
    with pytest.raises(SpecError, match=r"stale_after must be (None or )?a (positive )?number"):
        EphemeralPolicy(stale_after=value)  # type: ignore[arg-type]


def at(seconds: float) -> dict[str, str]:
    return {"timestamp": datetime.fromtimestamp(T0 + seconds, UTC).isoformat().replace("+00:00", "Z")}


def test_idle_cutoff_on_entries_written_by_hand() -> None:
    entries = [at(0), {"type": "no time"}, at(600), at(700)]
    assert idle_cutoff(entries, None, now=T0 + 10 * HOUR) == 0  # no pause length: no cutoff
    assert idle_cutoff(entries, 601) == 0, "no pause that long"
    assert idle_cutoff(entries, 600) == 2, "a pause of exactly stale_after, past an entry without a time"
    assert idle_cutoff(entries, 600, now=T0 + 1_300) == 4, "the pause before the load counts"
    assert idle_cutoff(entries, 600, now=T0 + 1_299) == 2


def test_exactly_one_over_keep_recent_expires_one() -> None:
    out = expire_ephemeral(statuses(3).entries, EphemeralPolicy(predicate=GIT.predicate, keep_recent=2))
    assert [c.tool_use_id for c in out.changes] == ["toolu_gs0"]


def test_the_default_policy_and_the_branch_given() -> None:
    t = statuses(8)
    assert [c.tool_use_id for c in expire_ephemeral(t.entries).changes] == ["toolu_gs0", "toolu_gs1"]
    assert expire_ephemeral(t.entries, GIT, branch=frozenset()).changes == ()


def test_only_text_results_of_bash_calls_are_sites() -> None:
    """A Monitor call with a command, a Read, a result of no call and an image result are no sites: the
    text of the last status is then the only one over keep_recent."""
    t = statuses(1)
    t.assistant(t.call("Monitor", {"command": "git status -s"}, "toolu_mon"))
    t.result("toolu_mon", status(50))
    t.assistant(t.call("Read", {"file_path": "/a.py"}, "toolu_read"))
    t.result("toolu_read", status(51))
    t.run("git status -s", status(52), "toolu_gs_last")
    last = t.entries[-1]["message"]["content"]
    last[:0] = [  # merged in front of the status in the same entry
        {"type": "tool_result", "tool_use_id": "nobody", "content": "x"},
        {"type": "tool_result", "tool_use_id": ["not", "an", "id"], "content": "x"},
    ]
    t.run("git status -s", [{"type": "image", "source": {"type": "base64", "data": "AAAA"}}], "toolu_gs_img")
    out = expire_ephemeral(t.entries, EphemeralPolicy(predicate=GIT.predicate, keep_recent=1))
    assert [c.tool_use_id for c in out.changes] == ["toolu_gs0"]


def result_after_a_pause() -> Transcript:
    """`git status -s` called, two idle hours, then its result (`toolu_gs`)."""
    t = Transcript()
    t.prompt("status?")
    t.assistant(t.bash("git status -s", "toolu_gs"))
    t.pause(2 * HOUR)
    t.result("toolu_gs", status(0))
    return t


def test_a_result_right_after_the_pause_is_not_before_it() -> None:
    assert expire_ephemeral(result_after_a_pause().entries, GIT).changes == ()


def test_an_entry_time_needs_a_zoned_iso_string() -> None:
    assert entry_time({"timestamp": "2026-11-29T10:00:00Z"}) == T0
    assert entry_time({"timestamp": "2026-11-29T10:00:00"}) is None  # no zone: no instant
    assert entry_time({"timestamp": 1_800_000_000}) is None
    assert entry_time({"timestamp": ""}) is None


def test_an_old_format_refusal_is_no_output_to_expire() -> None:
    """CLI 2.1.42 marked no refusal: its fixed sentence names the call (here with a kept denial's note)."""
    t = Transcript()
    t.prompt("status?")
    t.assistant(t.bash("git status -s", "toolu_gs"))
    sentence = "Permission to use Bash with command git status -s has been denied."
    entry = t.result("toolu_gs", sentence + "\n" + "[also refused earlier: " + "x" * 300 + "]", is_error=True)
    entry["toolUseResult"] = f"Error: {sentence}"
    assert expire_ephemeral(t.entries, EphemeralPolicy(predicate=GIT.predicate, keep_recent=0)).changes == ()


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("", ""),
        ("x" * 80, "x" * 80),  # exactly 80: whole
        ("x" * 78 + "  y", "x" * 78 + "…"),  # cut at 79, its trailing blank dropped
        ("  ls\n\n  -la  ", "ls…"),
    ],
)
def test_short_command_at_its_boundaries(command: str, shown: str) -> None:
    assert short_command(command) == shown


@pytest.mark.parametrize(("body", "text", "expired"), around_the_body(len("git status -s")))
def test_a_body_expires_only_when_the_note_is_shorter_as_text_and_in_json(
    body: str, text: str, expired: bool
) -> None:
    t = Transcript()
    t.run("git status -s", body, "toolu_gs")
    policy = EphemeralPolicy(predicate=GIT.predicate, keep_recent=0, note=text + "{command}")
    assert [c.tool_use_id for c in expire_ephemeral(t.entries, policy).changes] == (
        ["toolu_gs"] if expired else []
    )


def test_a_site_passed_over_does_not_stop_the_later_ones() -> None:
    """A body already expired by an earlier rewrite (a copied history; its note longer than the one it
    would get now: counted then, not again), one as short as the note: the next still expires."""
    policy = EphemeralPolicy(predicate=GIT.predicate, keep_recent=0)
    t = statuses(3)
    found = results(t.entries)
    found["toolu_gs0"]["content"] = policy.note.format(command="git status -s", keep=1000, newer=100)
    found["toolu_gs1"]["content"] = "clean"
    assert [c.tool_use_id for c in expire_ephemeral(t.entries, policy).changes] == ["toolu_gs2"]


def test_a_result_right_after_the_pause_gets_the_count_note_not_the_idle_one() -> None:
    policy = EphemeralPolicy(predicate=GIT.predicate, keep_recent=0)
    out = expire_ephemeral(result_after_a_pause().entries, policy)
    assert text(results(out.entries)["toolu_gs"]) == policy.note.format(
        command="git status -s", keep=0, newer=0
    )
