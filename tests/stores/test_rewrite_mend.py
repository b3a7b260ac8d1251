"""A stored chain with a missing link is mended on load; what a load adds reaches the store with the next
append; a run's appends are checked for a parent the store never received."""

from __future__ import annotations

from typing import Any

import pytest

from flower._run.chain import Links
from flower.stores import PrunePolicy
from flower.stores._carry import Carried
from flower.stores._rewrite import heal_orphans, mend_links, replayed
from flower.stores._rewrite.pipeline import apply_steps, rewrite_steps

from .corpus import missing_reason, sessions
from .transcripts import Transcript, results

KEY: Any = {"project_key": "-repo", "session_id": "5e55a0e0-0000-4000-8000-000000000000"}


def killed_then_resumed(t: Transcript) -> tuple[dict[str, Any], dict[str, Any]]:
    """A session killed while `make` ran, then resumed as flower used to store it: the resumed turn hangs
    off the answer the load gave the cut call, which the store never received. (call, resumed prompt)"""
    t.run("ls", "a b", "toolu_ls")
    (call,) = t.assistant(t.bash("make", "toolu_make"))
    healed = heal_orphans(t.entries)  # what the resume's load returned, and the CLI chained to
    answer = next(e for e in healed.entries if e not in t.entries)
    t._tip = answer["uuid"]  # the store has every entry but that answer
    prompt = t.prompt("Go on.")
    t.run("echo more", "more", "toolu_more")
    return call, prompt


def test_the_answer_a_crash_cut_call_got_is_restored_where_it_was() -> None:
    t = Transcript()
    t.prompt("build")
    call, prompt = killed_then_resumed(t)
    assert call not in [t.entries[i] for i in replayed(t.entries)], "stored so, one chain is cut in two"

    out = mend_links(t.entries, PrunePolicy(orphan_note="[CUT]"))

    answer = out.entries[out.entries.index(call) + 1]
    assert answer["uuid"] == prompt["parentUuid"] and answer["parentUuid"] == call["uuid"]
    assert results(out.entries)["toolu_make"]["content"] == "[CUT]"
    assert [e for e in out.entries if e is not answer] == t.entries, "no stored entry changes"
    on_branch = [out.entries[i].get("uuid") for i in sorted(replayed(out.entries))]
    assert prompt["uuid"] in on_branch and call["uuid"] in on_branch, "one chain again, root to leaf"
    (change,) = out.changes
    assert change.kind == "relinked" and change.uuid == prompt["uuid"] and "restored" in change.detail


def test_any_other_missing_parent_is_relinked_to_the_tip_before_it() -> None:
    t = Transcript()
    t.prompt("build")
    t.run("ls", "a b", "toolu_ls")
    tip = t.attachment()
    t._tip = "lost-in-a-crash"
    prompt = t.prompt("Go on.")
    t.run("echo more", "more", "toolu_more")

    out = mend_links(t.entries)

    mended = next(e for e in out.entries if e["uuid"] == prompt["uuid"])
    assert mended["parentUuid"] == tip["uuid"] and prompt["parentUuid"] == "lost-in-a-crash", "a copy"
    assert len(out.entries) == len(t.entries)
    (change,) = out.changes
    assert change.kind == "relinked" and "lost-in-a-crash" in change.detail and tip["uuid"] in change.detail


def test_a_tip_that_is_an_unanswered_call_is_answered_before_the_relink() -> None:
    t = Transcript()
    t.prompt("build")
    (call,) = t.assistant(t.bash("make", "toolu_make"))
    t._tip = "lost-in-a-crash"
    prompt = t.prompt("Go on.")

    out = mend_links(t.entries)

    answer = out.entries[out.entries.index(call) + 1]
    assert answer["parentUuid"] == call["uuid"] and "toolu_make" in results(out.entries)
    assert out.entries[-1]["uuid"] == prompt["uuid"] and out.entries[-1]["parentUuid"] == answer["uuid"]
    assert heal_orphans(out.entries).entries == out.entries, "healing then finds nothing left to answer"


def test_what_is_not_a_crash_is_left_alone() -> None:
    t = Transcript()
    first = t.prompt("a copy that starts mid-session")
    first["parentUuid"] = "older"  # the first entry of a partial copy: nothing before it to join
    t.run("ls", "a", "toolu_ls")
    side = t.prompt("a subagent's entry names the main transcript's (a compaction agent's do)")
    side["isSidechain"], side["parentUuid"] = True, "in-the-main-transcript"
    assert mend_links(t.entries).entries == t.entries and not mend_links(t.entries).changes


def test_real_sessions_have_no_link_to_mend() -> None:
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    for session in sessions():  # read as the stores read a transcript (two entries on one line too)
        out = mend_links(session.entries)
        assert not out.changes, (session.name, out.changes[:2])


def test_a_load_mends_first_at_every_load_and_says_so() -> None:
    t = Transcript()
    t.prompt("build")
    _, prompt = killed_then_resumed(t)
    steps = rewrite_steps(prune=PrunePolicy())
    assert steps[0][0] == "mend_links"
    applied = apply_steps(t.snapshot(), steps)
    assert [c.kind for c in applied.changes] == ["relinked"], "mended, and no second answer"
    assert prompt["uuid"] in {applied.entries[i].get("uuid") for i in replayed(applied.entries)}


def test_what_a_load_added_goes_first_in_the_next_append_of_that_transcript_once() -> None:
    carried = Carried()
    stored = [{"uuid": "a"}, {"uuid": "b", "parentUuid": "a"}]
    answer = {"uuid": "h", "parentUuid": "b"}
    assert carried.loaded(KEY, stored, [*stored, answer]) == {"a", "b"}
    other = {**KEY, "subpath": "subagents/agent-1"}
    assert carried.take(other, [{"uuid": "s"}]) == [{"uuid": "s"}], "another transcript's append"
    new = [{"uuid": "n", "parentUuid": "h"}]
    assert carried.take(KEY, new) == [answer, *new]
    assert carried.take(KEY, new) == new, "once"
    carried.loaded(KEY, stored, [*stored, answer])
    assert carried.take(KEY, [answer, *new]) == [answer, *new], "never twice in one batch"
    carried.loaded(KEY, stored, [*stored, answer])
    carried.loaded(KEY, [*stored, answer], [*stored, answer])
    assert carried.take(KEY, new) == new, "a later load that added nothing forgets it"


def test_a_run_whose_entries_name_a_parent_never_stored_has_a_gap() -> None:
    links = Links("s1")
    links.loaded({"a", "b"})
    links.appended("", [{"type": "user", "uuid": "c", "parentUuid": "b"}, {"type": "queue-operation"}])
    side = {"type": "user", "uuid": "s", "parentUuid": "c", "isSidechain": True}
    links.appended("subagents/agent-1", [side])
    assert links.gaps() == []
    links.appended("", [{"type": "assistant", "uuid": "d", "parentUuid": "cut"}])
    (gap,) = links.gaps()
    assert (gap.uuid, gap.parent, gap.kind) == ("d", "cut", "assistant")
    assert gap.describe() == "entry d (assistant) of session s1 names as its parent cut"


def test_the_answer_to_parallel_calls_goes_after_the_last_entry_of_their_message() -> None:
    t = Transcript()
    t.prompt("build")
    t.run("ls", "a b", "toolu_ls")
    first, second = t.assistant(t.bash("make", "toolu_a"), t.bash("make test", "toolu_b"))  # one message
    healed = heal_orphans(t.entries)
    answer = next(e for e in healed.entries if e not in t.entries and e["parentUuid"] == first["uuid"])
    t._tip = answer["uuid"]  # the resumed turn continued the first call's answer
    prompt = t.prompt("Go on.")

    out = mend_links(t.entries)

    at = out.entries.index(second)
    assert out.entries[at - 1] is first and out.entries[at + 1]["uuid"] == answer["uuid"]
    assert "toolu_a" in results(out.entries) and out.entries[-1] is prompt
    assert out.entries[at + 2] is prompt and len(out.entries) == len(t.entries) + 1


def test_the_tip_is_the_newest_main_thread_entry_nothing_continues() -> None:
    t = Transcript()
    t.prompt("build")
    t.run("ls", "a b", "toolu_ls")
    tip = t.attachment()
    side = t.prompt("a subagent's prompt, written in between")
    side["isSidechain"], side["parentUuid"] = True, None
    t._tip = "lost-in-a-crash"
    first = t.prompt("Go on.")
    t._tip = "lost-too"
    second = t.prompt("And on.")

    out = mend_links(t.entries)

    parents = {e["uuid"]: e["parentUuid"] for e in out.entries}
    assert parents[first["uuid"]] == tip["uuid"], "not the subagent's entry"
    assert parents[second["uuid"]] == first["uuid"], "the first mend made the tip the first one continues"
    assert [c.uuid for c in out.changes] == [first["uuid"], second["uuid"]]


def test_nothing_to_mend_in_a_history_whose_first_entry_names_an_older_one() -> None:
    t = Transcript()
    t._tip = "older-than-this-copy"
    t.prompt("a partial copy")
    t.run("ls", "a", "toolu_ls")
    out = mend_links(t.entries)
    assert out.entries == t.entries and out.changes == ()


def entry(kind: str, uuid: str, parent: str | None, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "isSidechain": False,
        "message": {"role": kind, "id": f"msg_{uuid}", "content": list(blocks)},
    }


def test_a_call_answered_anywhere_in_the_history_is_not_answered_again() -> None:
    call = {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_x", "content": "ok"}
    prompt = entry("user", "p", None, {"type": "text", "text": "go"})
    asked = entry("assistant", "a", "p", call)
    cut = entry("user", "b", "gone", {"type": "text", "text": "again"})  # names an entry the store lost
    answered = entry("user", "r", "a", result)  # the call's answer, written after it
    out = mend_links([prompt, asked, cut, answered])
    assert [e["uuid"] for e in out.entries] == ["p", "a", "b", "r"]  # no answer added
    assert out.entries[2]["parentUuid"] == "a" and [c.kind for c in out.changes] == ["relinked"]


def test_a_broken_link_joins_the_newest_entry_no_earlier_one_names() -> None:
    said = {"type": "text", "text": "."}
    older = entry("user", "p", None, said)
    child = entry("assistant", "c", "a1", said)  # written before its parent (parallel writers)
    parent = entry("assistant", "a1", "p", said)
    cut = entry("user", "b", "gone", said)
    out = mend_links([older, child, parent, cut])
    assert out.entries[3]["parentUuid"] == "c"  # a1 is named by c: c is the tip


def part(
    kind: str, uuid: str | None, parent: str | None, message: str, *blocks: dict[str, Any]
) -> dict[str, Any]:
    """An entry of the API message `message` (the CLI writes one entry per block); no uuid with None."""
    made = entry(kind, uuid or "", parent, *blocks)
    made["message"]["id"] = message
    if uuid is None:
        del made["uuid"]
    return made


CALL = {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "make"}}


def test_a_restored_answer_goes_after_its_message_not_after_the_next_one() -> None:
    """The resumed run's reply (another API message) hangs off the answer: the answer goes before it."""
    prompt = part("user", "p", None, "", {"type": "text", "text": "build"})
    holder = part("assistant", "a1", "p", "m1", CALL)
    answer = mend_links([prompt, holder], PrunePolicy())  # nothing to mend: no missing link
    assert answer.entries == [prompt, holder]
    healed = next(e for e in heal_orphans([prompt, holder]).entries if e.get("uuid") not in ("p", "a1"))
    reply = part("assistant", "b", healed["uuid"], "m2", {"type": "text", "text": "Built."})

    out = mend_links([prompt, holder, reply], PrunePolicy())

    assert [e["uuid"] for e in out.entries] == ["p", "a1", healed["uuid"], "b"]


def test_an_answer_for_the_tip_goes_after_the_last_entry_of_its_message() -> None:
    """The tip's message goes on in the entry whose parent is missing, the last of the history."""
    prompt = part("user", "p", None, "", {"type": "text", "text": "build"})
    holder = part("assistant", "a1", "p", "m1", CALL)
    rest = part("assistant", "a2", "lost", "m1", {"type": "text", "text": "and more"})

    out = mend_links([prompt, holder, rest], PrunePolicy())

    added = out.entries[-1]
    assert [e["uuid"] for e in out.entries[:-1]] == ["p", "a1", "a2"]
    assert added["parentUuid"] == "a1" and out.entries[2]["parentUuid"] == added["uuid"]


def test_an_assistant_entry_without_a_uuid_is_no_tip_and_needs_no_answer() -> None:
    prompt = part("user", "p", None, "", {"type": "text", "text": "build"})
    anonymous = part("assistant", None, "p", "m1", CALL)
    reply = part("assistant", "a", "p", "m2", {"type": "text", "text": "Done."})
    broken = part("user", "q", "lost", "", {"type": "text", "text": "Go on."})

    out = mend_links([prompt, anonymous, reply, broken], PrunePolicy())

    assert out.entries == [prompt, anonymous, reply, {**broken, "parentUuid": "a"}]


def test_an_entry_without_a_message_ends_the_tips_message() -> None:
    prompt = part("user", "p", None, "", {"type": "text", "text": "build"})
    holder = part("assistant", "a1", "p", "m1", CALL)
    odd = {**part("assistant", "a2", "lost", "m1"), "message": "not a mapping"}

    out = mend_links([prompt, holder, odd], PrunePolicy())

    added = out.entries[2]
    assert [e["uuid"] for e in out.entries] == ["p", "a1", added["uuid"], "a2"]
    assert added["parentUuid"] == "a1" and out.entries[3]["parentUuid"] == added["uuid"]


def test_only_an_entry_with_a_uuid_and_an_earlier_entry_is_mended() -> None:
    first = part("user", "f", "older-file", "", {"type": "text", "text": "a partial copy starts here"})
    reply = part("assistant", "a", "f", "m1", {"type": "text", "text": "Done."})
    blank = part("user", "", "lost", "", {"type": "text", "text": "no uuid"})
    broken = part("user", "q", "lost", "", {"type": "text", "text": "Go on."})

    out = mend_links([first, reply, blank, broken], PrunePolicy())

    assert out.entries == [first, reply, blank, {**broken, "parentUuid": "a"}]
    assert [c.uuid for c in out.changes] == ["q"]
