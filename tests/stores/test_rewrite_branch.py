"""What a resume replays (`replayed`) and where a load happened (`load_points`, `rewrite_point`)."""

from __future__ import annotations

from typing import Any

import pytest

from flower.stores import CachePolicy
from flower.stores._rewrite import load_points, replayed, resumes, rewrite_point

from .transcripts import Transcript


def uuids(t: Transcript, indices: frozenset[int]) -> list[str]:
    return [t.entries[i]["uuid"] for i in sorted(indices)]


def test_parallel_results_on_side_branches_are_replayed() -> None:
    """The CLI chains the blocks of one reply and hangs each result off its own call: the results of
    the earlier calls sit on side branches, and are replayed all the same."""
    t = Transcript()
    t.prompt("look")
    t.assistant(t.bash("ls", "a"), t.bash("pwd", "b"))
    t.result("a", "x")
    t.result("b", "y")
    t.prompt("next")
    assert replayed(t.entries) == frozenset(range(len(t.entries)))


def test_a_rewound_branch_and_what_precedes_a_compaction_are_not_replayed() -> None:
    t = Transcript()
    t.prompt("first try")
    abandoned = t.assistant({"type": "text", "text": "going the wrong way"})[0]
    t._tip = t.entries[0]["parentUuid"]  # the user edits the prompt: a new branch from the root
    t.prompt("second try")
    kept = t.assistant({"type": "text", "text": "right way"})[0]
    assert abandoned["uuid"] not in uuids(t, replayed(t.entries)) and kept["uuid"] in uuids(
        t, replayed(t.entries)
    )

    t.compact_summary("Summary: the right way")
    t.prompt("go on")
    branch = uuids(t, replayed(t.entries))
    assert kept["uuid"] not in branch and t.entries[-1]["uuid"] in branch
    assert t.entries[-3]["subtype"] == "compact_boundary" and t.entries[-3]["uuid"] == branch[0]


def test_a_missing_parent_ends_the_branch_as_it_ends_the_clis_walk() -> None:
    """Measured with CLI 2.1.332: a resume replays nothing above an entry whose parent is missing."""
    t = Transcript()
    t.prompt("before")
    t.assistant({"type": "text", "text": "answer"})
    t.prompt("after")
    t.entries[2]["parentUuid"] = "missing"
    assert replayed(t.entries) == frozenset({2})


def test_the_newest_leaf_wins_over_progress_and_sidechain_entries() -> None:
    t = Transcript()
    t.prompt("go")
    t.assistant(t.bash("make", "m"))
    progress: dict[str, Any] = {"type": "progress", "uuid": "p1", "parentUuid": t.entries[-1]["uuid"]}
    t.entries.append(progress)  # hook progress under the call: a leaf, but not a message
    t.result("m", "built")
    side: dict[str, Any] = {**t.entries[0], "uuid": "s1", "isSidechain": True}
    t.entries.append(side)
    assert replayed(t.entries) >= {0, 1, 3} and 4 not in replayed(t.entries)
    sidechain = [{**e, "isSidechain": True} for e in t.entries[:4] if e.get("type") != "progress"]
    assert len(replayed(sidechain)) >= 3, "a subagent's own transcript is all sidechain"


@pytest.mark.parametrize("ident", ["", 7], ids=["empty", "a number"])
def test_a_message_id_that_is_no_name_joins_no_abandoned_entry(ident: Any) -> None:
    """Only a non-empty str `message.id` makes entries one API message: the abandoned reply of a rewound
    prompt stays out even when both replies carry the same empty or non-str id."""
    t = Transcript()
    t.prompt("first try")
    (abandoned,) = t.assistant({"type": "text", "text": "going the wrong way"})
    t._tip = t.entries[0]["parentUuid"]  # the user edits the prompt: a new branch from the root
    t.prompt("second try")
    (kept,) = t.assistant({"type": "text", "text": "right way"})
    abandoned["message"]["id"] = kept["message"]["id"] = ident
    assert uuids(t, replayed(t.entries)) == [t.entries[2]["uuid"], kept["uuid"]]


def test_a_prompt_under_a_replayed_reply_is_no_result_of_it() -> None:
    """The entries brought back beside the chain are the API message's other entries and the results
    answering them: a rewound prompt under the same reply, its content a list of text blocks, stays out."""
    t = Transcript()
    t.prompt("look")
    (reply,) = t.assistant({"type": "text", "text": "what next?"})
    abandoned = t.prompt("first try")
    abandoned["message"]["content"] = [{"type": "text", "text": "first try"}]
    t._tip = reply["uuid"]  # the user edits the prompt: a new branch from the reply
    t.prompt("second try")
    t.assistant({"type": "text", "text": "done"})
    assert abandoned["uuid"] not in uuids(t, replayed(t.entries))


def test_entries_without_uuids_are_all_in_scope_and_markers_never() -> None:
    assert replayed([{"type": "user"}, {"type": "assistant"}]) == frozenset({0, 1})
    t = Transcript()
    t.prompt("go")
    t.marker("last-prompt")
    assert replayed(t.entries) == frozenset({0})


# -- load points ---------------------------------------------------------------------------------------


def session(pause: float, *, marked: bool) -> Transcript:
    t = Transcript()
    t.prompt("start")
    t.run("git status", "clean", "g0")
    t.pause(pause)
    prompt = (t.resume if marked else t.prompt)("go on")
    queued = {"type": "queue-operation", "operation": "enqueue", "timestamp": prompt["timestamp"]}
    t.entries.insert(t.entries.index(prompt), queued)
    t.run("git status", "clean", "g1")
    t.prompt("and now")  # the same process, seconds later
    return t


def test_load_points_tell_the_idle_time_and_the_resumed_processes() -> None:
    t = session(600, marked=True)
    first, second = load_points(t.entries)
    assert first.marked and first.cold and 600 <= (first.idle or 0) < 660
    assert not second.marked and not second.cold
    assert [p.index for p in resumes(t.entries)] == [first.index]
    assert resumes(session(600, marked=False).entries) == [], "without the CLI's marks: no resume"


def test_the_cli_marks_older_resumes_with_a_session_start_hook() -> None:
    t = session(10, marked=False)
    hook = {"type": "progress", "data": {"hookEvent": "SessionStart", "hookName": "SessionStart:resume"}}
    t.entries.insert(3, hook)
    assert [p.marked for p in load_points(t.entries)] == [True, False]


def test_synthetic_replies_and_queue_operations_tell_the_load_time() -> None:
    """A resumed CLI writes "No response requested." (`<synthetic>`) before the prompt: not a request,
    so the idle time runs from the message before it."""
    t = session(600, marked=True)
    prompt = load_points(t.entries)[0].index
    synthetic = {
        **t.entries[2],
        "uuid": "syn",
        "type": "assistant",
        "timestamp": t.entries[prompt]["timestamp"],
    }
    text = [{"type": "text", "text": "No response requested."}]
    synthetic["message"] = {"model": "<synthetic>", "content": text}
    t.entries.insert(prompt - 1, synthetic)
    assert load_points(t.entries)[0].cold


def test_the_lifetime_the_cli_asked_for_wins() -> None:
    t = session(600, marked=True)
    for entry in t.entries:
        if entry.get("type") == "assistant":
            entry["promptCacheRequested"] = "1h"
    assert not load_points(t.entries)[0].cold and load_points(t.entries)[0].lifetime == 3600


def test_the_rewrite_point() -> None:
    t = session(600, marked=True)
    last = t.last_time
    resumed = load_points(t.entries)[0]
    assert rewrite_point(t.entries, last + 600, CachePolicy()) == (len(t.entries), last + 600, False)
    assert rewrite_point(t.entries, last + 30, CachePolicy()) == (resumed.index, resumed.time, True)
    assert rewrite_point(t.entries, last + 30, None) == (len(t.entries), last + 30, False)
    assert rewrite_point(t.entries, None, CachePolicy()) == (len(t.entries), None, False)
    quick = session(10, marked=True)
    assert rewrite_point(quick.entries, quick.last_time + 30, CachePolicy()) == (0, None, True)
    assert rewrite_point(t.entries, last + 30, CachePolicy(ttl=1200))[0] == 0, "10 min: warm for 20"


def node(kind: str, uuid: str, parent: str | None) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "message": {"role": kind, "content": "x"}}


def test_the_leaf_is_a_message_and_the_walk_survives_odd_links() -> None:
    prompt, reply = node("user", "p", None), node("assistant", "a", "p")
    assert replayed([prompt, reply, node("attachment", "t", "a")]) == {0, 1}, "an attachment is no leaf"
    assert replayed([prompt, reply, node("user", "", "a")]) == {0, 1}, "an empty uuid is none"
    assert replayed([node("system", "s", None), prompt, reply]) == {1, 2}, "a root with no message above"
    loop = [node("attachment", "z", "x"), node("attachment", "x", "y"), node("attachment", "y", "x")]
    assert replayed([prompt, reply, *loop]) == {0, 1}, "a cycle of links ends the walk"
    # lines out of order (a parent written after its child): the leaf is the newest end, not the newest
    # message, and a named entry is no end however late it comes
    assert replayed([reply, prompt]) == {0, 1}, "a parent written after its child is no leaf"
