"""apply_steps fails open, step by step, and says what it skipped: a step that raises, a trim without a
writer, a history that is not one; and a step gets the load's time and branch."""

from __future__ import annotations

import logging
import time
from typing import Any, cast

import pytest

from flower._errors import SpecError
from flower.stores import CachePolicy, EphemeralPolicy, PrunePolicy, TrimPolicy
from flower.stores._rewrite import Spill, spill_name
from flower.stores._rewrite._transcript import Rewritten
from flower.stores._rewrite.pipeline import apply_steps, rewrite_history, rewrite_steps

from .transcripts import Transcript, results, text


def history() -> list[dict[str, Any]]:
    t = Transcript()
    t.prompt("build")
    t.run("ls", "a b", "toolu_ls")
    return t.entries


def test_a_failing_step_is_skipped_named_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[Any, Any]] = []

    def broken(entries: list[Any], moment: Any, branch: Any) -> Rewritten:
        raise ValueError("no good")

    def spilling(entries: list[Any], moment: Any, branch: Any) -> Rewritten:
        return Rewritten(entries[:1], spills=(Spill(spill_name("body"), "body"),))

    def probe(entries: list[Any], moment: Any, branch: Any) -> Rewritten:
        seen.append((moment, branch))
        return Rewritten(entries[:1])

    entries = history()
    before = time.perf_counter()
    with caplog.at_level(logging.ERROR, logger="flower.stores"):
        applied = apply_steps(entries, [("broken", broken), ("trim", spilling), ("probe", probe)], now=1e9)
    assert applied.errors == (
        "broken: ValueError: no good",
        "trim: SpecError: trim moved bodies to files but no writer was given",
    )
    assert applied.entries == entries[:1]  # the probe's result, after the two skipped
    assert 0 <= applied.seconds <= time.perf_counter() - before
    assert [r.getMessage() for r in caplog.records] == [
        "flower.stores: the broken rewrite failed; the history is kept without it",
        "flower.stores: the trim rewrite failed; the history is kept without it",
    ]
    ((moment, branch),) = seen
    assert moment is not None and branch is not None


def test_a_history_that_is_not_one_comes_back_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    odd: list[Any] = [{"type": "user"}, "not an entry"]
    before = time.perf_counter()
    with caplog.at_level(logging.ERROR, logger="flower.stores"):
        applied = apply_steps(odd, [])
    assert applied.entries == odd and applied.changes == () and len(applied.errors) == 1
    assert applied.errors[0].startswith("history: ") and 0 <= applied.seconds <= time.perf_counter() - before
    (record,) = caplog.records
    assert (
        record.getMessage() == f"flower.stores: the history is returned unrewritten: {applied.errors[0][9:]}"
    )


def test_a_broken_clock_leaves_the_history_as_stored(caplog: pytest.LogCaptureFixture) -> None:
    """The staging itself fails (the load's time is no number): the history comes back unrewritten."""
    entries = history()
    before = time.perf_counter()
    with caplog.at_level(logging.ERROR, logger="flower.stores"):
        applied = apply_steps(
            entries, rewrite_steps(prune=PrunePolicy()), now=cast(float, "noon"), cache=CachePolicy()
        )
    assert applied.entries == entries and applied.changes == () and not applied.warm
    (error,) = applied.errors
    assert error.startswith("history: TypeError: ")
    assert 0 <= applied.seconds <= time.perf_counter() - before
    assert [r.getMessage() for r in caplog.records] == ["flower.stores: the history is returned unrewritten"]


def test_the_load_time_reaches_the_steps() -> None:
    """A pause of `stale_after` before the load expires every ephemeral result, the recent ones too."""
    t = Transcript()
    t.prompt("status?")
    t.run("git status", "M file\n" * 100, "toolu_gs")
    ephemeral = EphemeralPolicy(predicate=lambda command: command == "git status", stale_after=600)
    assert rewrite_history(t.entries, ephemeral=ephemeral, now=t.last_time + 100).changes == ()
    (change,) = rewrite_history(t.entries, ephemeral=ephemeral, now=t.last_time + 1_000).changes
    assert (change.kind, change.tool_use_id) == ("expired", "toolu_gs")


def test_every_spill_of_a_rewrite_is_returned_once() -> None:
    t = Transcript()
    t.prompt("read")
    t.run("cat a", "a" * 500, "toolu_a")
    t.run("cat b", "b" * 500, "toolu_b")
    t.run("cat c", "a" * 500, "toolu_c")  # the same body: the same file
    out = rewrite_history(t.entries, trim=TrimPolicy(keep_recent=0, min_chars=100), spill_dir="/spill")
    assert out.spills == (Spill(spill_name("a" * 500), "a" * 500), Spill(spill_name("b" * 500), "b" * 500))
    assert rewrite_history(t.entries, prune=PrunePolicy()).spills == ()


def test_a_warm_load_counts_a_change_to_a_call_the_cli_still_replays() -> None:
    """The last cold load dropped two denials; since, the session was rewound to the first call's
    message: that call is replayed (its change counts), the other denial is not (reported apart)."""
    t = Transcript()
    t.prompt("clean up")
    (first,) = t.assistant(t.bash("rm -rf a", "toolu_a"))
    t.result("toolu_a", "no", denial="permission-rule")
    t.assistant(t.bash("rm -rf b", "toolu_b"))
    t.result("toolu_b", "no", denial="permission-rule")
    t.assistant({"type": "text", "text": "Both refused."})
    t.pause(1_000)
    t._tip = first["uuid"]  # rewound to the first call's message, in a resumed process
    t.resume("try another way")
    t.assistant({"type": "text", "text": "Trying."})

    out = rewrite_history(t.entries, prune=PrunePolicy(keep_denials=0), now=t.last_time + 60)

    assert [(c.kind, c.tool_use_id) for c in out.changes] == [("denial", "toolu_a")]
    assert [(c.kind, c.tool_use_id) for c in out.unreplayed] == [("denial", "toolu_b")]


def test_the_steps_run_on_everything_get_their_name_and_the_loads_time() -> None:
    seen: list[tuple[str, Any]] = []

    def failing(name: str) -> Any:
        def step(entries: list[Any], moment: Any, branch: Any) -> Rewritten:
            seen.append((name, moment))
            raise ValueError("no good")

        return step

    applied = apply_steps(history(), [(n, failing(n)) for n in ("mend_links", "heal_orphans")], now=1e9)
    assert applied.errors == ("mend_links: ValueError: no good", "heal_orphans: ValueError: no good")
    assert seen == [("mend_links", 1e9), ("heal_orphans", 1e9)]


def test_a_warm_load_relinks_the_later_entries_over_what_the_last_cold_load_dropped() -> None:
    """The resumed prompt hangs off an API error that the last cold load dropped: it is relinked to the
    error's parent, as the cold load returned it."""
    t = Transcript()
    t.prompt("build")
    t.assistant({"type": "text", "text": "Building."})
    error = t.api_error()
    t.pause(1_000)
    prompt = t.resume("go on")
    t.assistant({"type": "text", "text": "Going on."})
    assert prompt["parentUuid"] == error["uuid"]

    out = rewrite_history(t.entries, prune=PrunePolicy(), now=t.last_time + 60)

    assert error["uuid"] not in [e.get("uuid") for e in out.entries]
    (resumed,) = [e for e in out.entries if e.get("uuid") == prompt["uuid"]]
    assert resumed["parentUuid"] == error["parentUuid"]


def test_a_call_answered_after_the_last_cold_load_is_not_answered_again() -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant(t.bash("make", "toolu_make"))
    t.pause(1_000)
    t.resume("still there?")  # written while make ran; its result comes after
    t.result("toolu_make", "built")
    t.assistant({"type": "text", "text": "Built."})

    out = rewrite_history(t.entries, prune=PrunePolicy(), now=t.last_time + 60)

    assert [c.kind for c in out.changes] == []
    assert out.entries == t.entries


def test_a_link_mended_off_the_branch_still_counts_at_a_warm_load() -> None:
    """Mending runs over the whole history at every load: its change is named even on an entry the CLI
    no longer replays (here a turn the session was rewound from)."""
    t = Transcript()
    t.prompt("build")
    t.assistant({"type": "text", "text": "Built."})
    t.pause(1_000)
    t.resume("go on")
    (went_on,) = t.assistant({"type": "text", "text": "Going on."})
    t._tip = "lost-in-a-crash"
    cut = t.prompt("and then?")
    t.assistant({"type": "text", "text": "Then this."})
    t._tip = went_on["uuid"]  # rewound: the turn after the cut is off the branch
    t.prompt("no, this")
    t.assistant({"type": "text", "text": "This."})

    out = rewrite_history(t.entries, prune=PrunePolicy(), now=t.last_time + 60)

    assert [(c.kind, c.uuid) for c in out.changes] == [("relinked", cut["uuid"])]
    assert out.unreplayed == ()


def test_the_steps_in_order_each_with_the_policy_given() -> None:
    prune = PrunePolicy(
        keep_denials=0, interrupt_note="[STOPPED]", superseded_note="[OLD {path}: {by}]", orphan_note="[CUT]"
    )
    steps = rewrite_steps(prune=prune, ephemeral=EphemeralPolicy(), trim=TrimPolicy(), spill_dir="/s")
    assert [name for name, _ in steps] == [
        "mend_links",
        "drop_api_errors",
        "drop_denials",
        "neutralise_interrupts",
        "supersede_reads",
        "expire_ephemeral",
        "trim_results",
        "heal_orphans",
    ]
    with pytest.raises(SpecError, match=r"^trimming needs a spill directory the agent can Read$"):
        rewrite_steps(trim=TrimPolicy())
    assert [name for name, _ in rewrite_steps(spill_dir="/s")] == ["mend_links"], "no trim policy, no trim"

    t = Transcript()
    t.prompt("go")
    t.run("rm -rf x", "no", "toolu_rm", denial="permission-rule")
    t.assistant(t.bash("sleep 100", "toolu_stop"))
    t.result("toolu_stop", "stopped", interrupted=True)
    for ident in ("r1", "r2"):
        t.assistant(t.call("Read", {"file_path": "/a.py"}, ident))
        record = {
            "filePath": "/a.py",
            "content": "a\n" * 200,
            "numLines": 200,
            "startLine": 1,
            "totalLines": 200,
        }
        t.result(ident, "     1\ta\n" * 200)["toolUseResult"] = {"type": "text", "file": record}
    t.assistant(t.bash("sleep 1", "toolu_early"))
    t.prompt("and?")  # the history went on past that call without its result
    t.assistant(t.bash("make", "toolu_make"))
    t._tip = "lost-in-a-crash"  # a resume after a crash chained to an answer the store never got
    t.prompt("go on")

    out = rewrite_history(t.entries, prune=prune)

    found = results(out.entries)
    assert "toolu_rm" not in found and text(found["toolu_stop"]) == "[STOPPED]"
    assert text(found["r1"]) == "[OLD /a.py: Read]"
    assert text(found["toolu_early"]) == text(found["toolu_make"]) == "[CUT]"
