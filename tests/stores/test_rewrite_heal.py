"""Orphan calls get a result; dropped entries leave no gap in the parent chain."""

from __future__ import annotations

import uuid as uuidlib

import pytest

from flower.stores import PrunePolicy
from flower.stores._rewrite import CLI_ORPHAN_NOTE, drop_entries, heal_orphans
from flower.stores._rewrite._transcript import block_size
from flower.stores._rewrite.heal import HEAL_NAMESPACE, is_healed

from .transcripts import Transcript, calls, results, text


def test_an_orphan_gets_a_result_entry_after_its_message() -> None:
    t = Transcript()
    t.prompt("build")
    first, second = t.assistant(t.bash("make", "toolu_make"), t.bash("ls", "toolu_ls"))
    t.result("toolu_ls", "a")
    before = t.snapshot()

    out = heal_orphans(t.entries, PrunePolicy(orphan_note="[NONE]"))

    assert set(results(out.entries)) == set(calls(out.entries)) == {"toolu_make", "toolu_ls"}
    heal = out.entries[out.entries.index(second) + 1]
    assert heal["type"] == "user" and heal["parentUuid"] == first["uuid"] == heal["sourceToolAssistantUUID"]
    assert (
        text(heal["message"]["content"][0]) == "[NONE]" and heal["message"]["content"][0]["is_error"] is True
    )
    assert heal["sessionId"] == first["sessionId"] and heal["isSidechain"] is False
    assert [e for e in out.entries if e is not heal] == before, "no other entry changes"
    (change,) = out.changes
    assert change.kind == "orphan" and change.uuid == heal["uuid"]
    ours, cli = heal["message"]["content"][0], {**heal["message"]["content"][0], "content": CLI_ORPHAN_NOTE}
    assert change.chars_saved == block_size(cli) - block_size(ours) > 0, "in place of the CLI's own result"
    assert change.detail == f"instead of the CLI's own result ({block_size(cli) + 2} chars)"


def test_an_orphan_the_history_went_on_past_counts_what_it_adds() -> None:
    """Not in the last message: the CLI would not answer it with its own result, so ours is all added."""
    t = Transcript()
    t.prompt("build")
    t.assistant(t.bash("make", "toolu_make"), t.bash("ls", "toolu_ls"))
    t.result("toolu_ls", "a")
    t.prompt("and then?")
    t.assistant({"type": "text", "text": "then nothing"})

    (change,) = heal_orphans(t.entries).changes

    healed = next(e for e in heal_orphans(t.entries).entries if e["uuid"] == change.uuid)
    assert change.chars_saved == -block_size(healed["message"]["content"]) and change.detail == ""


def test_healing_is_deterministic_and_idempotent() -> None:
    t = Transcript()
    t.assistant(t.bash("make", "toolu_make"))
    once = heal_orphans(t.entries)
    assert heal_orphans(t.snapshot()).entries == once.entries
    assert heal_orphans(once.entries).entries == once.entries


def test_no_orphans_no_change() -> None:
    t = Transcript()
    t.run("ls", "a", "toolu_ls")
    assert heal_orphans(t.entries).entries == t.entries


def test_drop_entries_relinks_through_a_run_of_dropped_entries() -> None:
    t = Transcript()
    a = t.prompt("a")
    b = t.attachment()
    c = t.attachment()
    t.marker("last-prompt")
    d = t.prompt("d")

    out = drop_entries(t.entries, [b["uuid"], c["uuid"]])

    assert [e.get("uuid") for e in out] == [a["uuid"], None, d["uuid"]]
    assert out[-1]["parentUuid"] == a["uuid"] and out[1]["leafUuid"] == a["uuid"]
    assert t.entries[-1]["parentUuid"] == c["uuid"], "the input is not mutated"


def test_drop_entries_edge_cases() -> None:
    t = Transcript()
    a = t.prompt("a")
    b = t.prompt("b")
    assert drop_entries(t.entries, [a["uuid"]])[0]["parentUuid"] is None
    cyclic = [
        dict(a, parentUuid=b["uuid"]),
        dict(b, parentUuid=a["uuid"]),
        {"type": "user", "uuid": "c", "parentUuid": a["uuid"]},
    ]
    assert drop_entries(cyclic, [a["uuid"], b["uuid"]]) == [{"type": "user", "uuid": "c", "parentUuid": None}]
    assert drop_entries(t.entries, []) == t.entries
    with pytest.raises(TypeError):
        drop_entries([1], ["x"])  # type: ignore[list-item]


def test_the_added_entry_whole() -> None:
    """Its uuid is derived from the holder and the calls (a copied history keeps it): pinned here."""
    t = Transcript()
    (holder,) = t.assistant(t.bash("make", "toolu_make"))
    holder["uuid"] = "holder-1"

    (heal,) = [
        e for e in heal_orphans(t.entries, PrunePolicy(orphan_note="[NONE]")).entries if e is not holder
    ]

    assert heal == {
        "parentUuid": "holder-1",
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_make", "content": "[NONE]", "is_error": True}
            ],
        },
        "uuid": "3f40683d-4f04-5e43-a004-97bb4ca19c7a",  # uuid5(HEAL_NAMESPACE, "holder-1\ntoolu_make")
        "sourceToolAssistantUUID": "holder-1",
        # the holder's fields the CLI reads to place an entry (here those a Transcript writes)
        **{field: holder[field] for field in ("isSidechain", "sessionId", "cwd", "version", "timestamp")},
    }


def _details(t: Transcript) -> list[str]:
    return [change.detail for change in heal_orphans(t.entries).changes]


def test_an_api_error_after_the_last_message_is_passed_over() -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant(t.bash("make", "toolu_make"))
    t.api_error()
    assert [d.startswith("instead of") for d in _details(t)] == [True]


def test_an_orphan_in_an_api_error_entry_is_not_the_last_message() -> None:
    t = Transcript()
    t.prompt("build")
    (holder,) = t.assistant(t.bash("make", "toolu_make"))
    holder["isApiErrorMessage"] = True
    assert _details(t) == [""]


def test_an_orphan_in_an_api_error_entry_with_no_message_on_the_branch_is_not_the_last_message() -> None:
    """A branch holding nothing but the API-error entry (no prompt above it) has no last message."""
    t = Transcript()
    (holder,) = t.assistant(t.bash("make", "toolu_make"))
    holder["isApiErrorMessage"] = True
    assert _details(t) == [""]


def test_a_prompt_after_the_orphan_means_the_history_went_on() -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant(t.bash("make", "toolu_make"))
    t.prompt("and now?")
    assert _details(t) == [""]


def test_the_last_message_without_an_id_is_its_one_entry() -> None:
    t = Transcript()
    t.prompt("build")
    (holder,) = t.assistant(t.bash("make", "toolu_make"))
    del holder["message"]["id"]
    assert [d.startswith("instead of") for d in _details(t)] == [True]


def test_a_call_id_held_twice_is_answered_once() -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant(t.bash("make", "toolu_dup"), t.bash("make", "toolu_dup"), merged=True)
    out = heal_orphans(t.entries)
    assert [c.tool_use_id for c in out.changes] == ["toolu_dup"]


def test_the_answer_goes_after_the_last_entry_of_the_calls_message() -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant(t.bash("make", "toolu_make"), {"type": "text", "text": "Running make."})
    out = heal_orphans(t.entries)
    assert out.entries[:-1] == t.entries and out.entries[-1]["uuid"] == out.changes[0].uuid


def test_an_assistant_entry_without_a_message_ends_the_history_after_the_orphan() -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant(t.bash("make", "toolu_make"))
    (odd,) = t.assistant({"type": "text", "text": "x"})
    odd["message"] = "not a mapping"  # a reply with no message id: the call's message is not the last
    assert _details(t) == [""]


def test_two_orphans_of_the_last_message_each_save_what_the_clis_own_result_would_cost() -> None:
    """The brackets of the one entry's content count once, for the CLI's answers and ours alike."""
    t = Transcript()
    t.prompt("build")
    t.assistant(t.bash("make", "toolu_make"), t.bash("make test", "toolu_test"), merged=True)
    out = heal_orphans(t.entries, PrunePolicy(orphan_note="[NONE]"))  # one entry answers both
    ours = {"type": "tool_result", "tool_use_id": "toolu_test", "content": "[NONE]", "is_error": True}
    cli = {**ours, "content": CLI_ORPHAN_NOTE}
    assert [c.tool_use_id for c in out.changes] == ["toolu_make", "toolu_test"]
    assert [c.chars_saved for c in out.changes] == [block_size(cli) - block_size(ours)] * 2


def test_what_is_healed() -> None:
    t = Transcript()
    (holder,) = t.assistant(t.bash("make", "toolu_make"))
    (healed,) = [e for e in heal_orphans(t.entries).entries if e is not holder]
    extra = {"type": "tool_result", "tool_use_id": 7, "content": "x"}
    content = healed["message"]["content"]
    empty = {
        "parentUuid": "p",
        "uuid": str(uuidlib.uuid5(HEAL_NAMESPACE, "p")),  # what an entry answering no call would get
        "sourceToolAssistantUUID": "p",
        "message": {"role": "user", "content": []},
    }
    assert is_healed(healed) is True
    for entry in (
        {**healed, "toolUseResult": {}},  # the CLI's own result entries carry one
        {k: v for k, v in healed.items() if k != "sourceToolAssistantUUID"},
        {**healed, "parentUuid": None},
        {**healed, "parentUuid": "another"},
        {**healed, "uuid": None},
        {**healed, "message": {**healed["message"], "content": [*content, extra]}},
        empty,
    ):
        assert is_healed(entry) is False, entry
