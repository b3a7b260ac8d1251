"""Pruning: denied calls go (call and result together), API errors go, interrupted results are neutralised."""

from __future__ import annotations

from typing import Any

import pytest

from flower._errors import SpecError
from flower.stores import Change, PrunePolicy
from flower.stores._rewrite import (
    OLD_INTERRUPTS,
    OLD_REJECTION,
    denial_kind,
    drop_api_errors,
    drop_denials,
    neutralise_interrupts,
    tool_calls,
)
from flower.stores._rewrite._transcript import block_size, content_blocks, is_protected

from .transcripts import INTERRUPTED, Transcript, ancestors, calls, results, text


def three_denials() -> Transcript:
    t = Transcript()
    t.prompt("clean up")
    for i in range(3):
        t.assistant(
            {"type": "text", "text": f"Removing build {i}."},
            t.bash("git status", f"toolu_ok{i}"),
            t.bash(f"rm -rf build{i}", f"toolu_rm{i}"),
        )
        t.result(f"toolu_ok{i}", f"clean {i}")
        t.result(f"toolu_rm{i}", "PreToolUse:Bash hook error: no deletions", denial="permission-rule")
        t.attachment()
    t.prompt("go on")
    return t


def test_all_but_the_newest_denial_go_with_their_calls() -> None:
    t = three_denials()
    before = t.snapshot()

    out = drop_denials(t.entries)

    assert set(calls(out.entries)) == {"toolu_ok0", "toolu_ok1", "toolu_ok2", "toolu_rm2"}
    assert set(results(out.entries)) == {"toolu_ok0", "toolu_ok1", "toolu_ok2", "toolu_rm2"}
    dropped, (noted,) = out.changes[:-1], out.changes[-1:]
    assert [c.tool_use_id for c in dropped] == ["toolu_rm0", "toolu_rm1"]
    assert all(c.kind == "denial" and c.detail == "Bash" and c.chars_saved > 100 for c in dropped)
    assert (noted.kind, noted.tool_use_id) == ("denial_note", "toolu_rm2")
    assert text(results(out.entries)["toolu_rm2"]) == (
        "PreToolUse:Bash hook error: no deletions\n"
        "[also refused earlier (not shown): `rm -rf build0`, `rm -rf build1`]"
    ), "the kept denial names what was dropped"
    assert len(out.entries) == len(before) - 4, "the emptied call and result entries are dropped"
    assert t.entries == before


def test_other_blocks_of_the_message_are_untouched() -> None:
    t = three_denials()
    out = drop_denials(t.entries)
    kept = {e["uuid"]: e for e in out.entries if "uuid" in e}
    for entry in t.entries:
        if entry.get("uuid") in kept and entry.get("type") == "assistant":
            assert kept[entry["uuid"]]["message"] == entry["message"]


def test_the_chain_is_reconnected_over_dropped_entries() -> None:
    t = three_denials()
    out = drop_denials(t.entries)
    uuids = {e["uuid"] for e in out.entries if "uuid" in e}
    for entry in out.entries:
        assert entry.get("parentUuid") is None or entry["parentUuid"] in uuids
    last = out.entries[-1]["uuid"]
    dropped = {e["uuid"] for e in t.entries if "uuid" in e} - uuids
    assert ancestors(out.entries, last) == [a for a in ancestors(t.entries, last) if a not in dropped]


def test_a_denied_call_in_a_merged_entry_loses_only_its_block() -> None:
    t = Transcript()
    t.prompt("go")
    t.assistant(
        {"type": "text", "text": "two calls"},
        t.bash("rm -rf x", "toolu_rm"),
        t.bash("ls", "toolu_ls"),
        merged=True,
    )
    t.result("toolu_rm", "denied", denial="permission-rule")
    t.result("toolu_ls", "a b")

    out = drop_denials(t.entries, PrunePolicy(keep_denials=0))

    (assistant,) = [e for e in out.entries if e["type"] == "assistant"]
    assert [b.get("id") or b["type"] for b in assistant["message"]["content"]] == ["text", "toolu_ls"]
    assert set(results(out.entries)) == {"toolu_ls"}


def test_keep_denials_and_kinds() -> None:
    t = three_denials()
    assert len(drop_denials(t.entries, PrunePolicy(keep_denials=0)).changes) == 3
    assert drop_denials(t.entries, PrunePolicy(keep_denials=5)).entries == t.entries
    t2 = Transcript()
    t2.run("rm x", "This command requires approval", "toolu_prompted", denial="user-rejected")
    assert drop_denials(t2.entries, PrunePolicy(keep_denials=0)).changes == ()


def test_a_pair_with_a_protected_half_is_never_split() -> None:
    t = Transcript()
    t.run("rm -rf x", "denied", "toolu_rm", denial="permission-rule")
    t.entries[-1]["isMeta"] = True
    assert drop_denials(t.entries, PrunePolicy(keep_denials=0)).entries == t.entries


def test_api_errors_are_dropped_and_the_leaf_reference_follows() -> None:
    t = Transcript()
    t.prompt("go")
    t.run("make", "ok", "toolu_make")
    error = t.api_error()
    t.marker("last-prompt")
    t.prompt("again")

    out = drop_api_errors(t.entries)

    assert error not in out.entries and all(not e.get("isApiErrorMessage") for e in out.entries)
    (change,) = out.changes
    assert change.kind == "api_error" and change.uuid == error["uuid"] and change.chars_saved == 0
    assert change.detail.endswith("chars the CLI does not replay")  # it leaves them out by itself
    system_uuid = error["parentUuid"]
    (marker,) = [e for e in out.entries if e["type"] == "last-prompt"]
    assert marker["leafUuid"] == system_uuid
    assert out.entries[-1]["parentUuid"] == system_uuid
    assert drop_api_errors(Transcript().entries).entries == []


def test_interrupted_results_are_neutralised_in_place() -> None:
    t = Transcript()
    t.run('python3 -c "import time; time.sleep(30)"', "", "toolu_sleep", interrupted=True)
    t.prompt("[Request interrupted by user for tool use]")
    t.run("rm x", "This command requires approval", "toolu_prompted", denial="user-rejected")
    policy = PrunePolicy(interrupt_note="[NEUTRAL]")

    out = neutralise_interrupts(t.entries, policy)

    found = results(out.entries)
    assert text(found["toolu_sleep"]) == "[NEUTRAL]" and found["toolu_sleep"]["is_error"] is True
    assert text(found["toolu_prompted"]) == "This command requires approval"
    assert len(out.entries) == len(t.entries)
    (change,) = out.changes
    assert change.kind == "interrupt" and change.chars_saved == len(INTERRUPTED) - len("[NEUTRAL]")
    assert "[Request interrupted by user for tool use]" in [
        e["message"]["content"]
        for e in out.entries
        if e["type"] == "user" and isinstance(e["message"]["content"], str)
    ]


def test_policy_checks() -> None:
    with pytest.raises(SpecError, match="keep_denials"):
        PrunePolicy(keep_denials=-1)
    with pytest.raises(SpecError, match="denial_kinds"):
        PrunePolicy(denial_kinds=("permission-rule", 1))  # type: ignore[arg-type]
    assert PrunePolicy(denial_kinds=["permission-rule"]).denial_kinds == ("permission-rule",)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="interrupt_note"):
        PrunePolicy(interrupt_note=" ")
    with pytest.raises(SpecError, match="heal_orphans"):
        PrunePolicy(heal_orphans=1)  # type: ignore[arg-type]


def test_the_note_names_each_dropped_call_once_and_stops_at_eight() -> None:
    t = Transcript()
    t.prompt("go")
    for i in range(12):
        t.assistant(t.bash(f"rm -rf b{i % 10}", f"toolu_rm{i}"))
        t.result(f"toolu_rm{i}", "no", denial="permission-rule")
    t.assistant(t.call("Write", {"file_path": "/ws/a.py", "content": "x"}, "toolu_w"))
    t.result("toolu_w", "no", denial="permission-rule")
    t.assistant(t.bash("git push", "toolu_push"))
    t.result("toolu_push", "no", denial="permission-rule")

    note = text(results(drop_denials(t.entries).entries)["toolu_push"])

    assert note.startswith("no\n[also refused earlier (not shown): `rm -rf b0`, `rm -rf b1`,")
    assert note.endswith("`rm -rf b7` and 3 more]"), "10 distinct commands and a Write: 8 shown"
    unnoted = drop_denials(t.entries, PrunePolicy(denial_note=None))
    assert text(results(unnoted.entries)["toolu_push"]) == "no"
    assert {c.kind for c in unnoted.changes} == {"denial"}
    with pytest.raises(SpecError, match="denial_note"):
        PrunePolicy(denial_note="{nope}")


# -- old format: CLI 2.1.42 and earlier wrote no toolDenialKind ---------------------------------------


def old_format(t: Transcript, ident: str, command: str, text_: str) -> None:
    """A call and its refusal as CLI 2.1.42 wrote them: an error result, no structural mark."""
    t.assistant(t.bash(command, ident))
    entry = t.result(ident, text_, is_error=True)
    entry["toolUseResult"] = f"Error: {text_}"


def test_old_format_refusals_are_the_clis_fixed_sentences_naming_their_own_call() -> None:
    t = Transcript()
    t.prompt("look")
    for i in range(2):
        command = f"cd /tmp/x && ls -la dir{i}/"
        old_format(
            t, f"toolu_p{i}", command, f"Permission to use Bash with command {command} has been denied."
        )
    old_format(
        t, "toolu_fake", "cat notes.txt", "Permission to use Bash with command rm -rf / has been denied."
    )
    old_format(t, "toolu_stop", "sleep 60", OLD_REJECTION)
    said = OLD_REJECTION.split(" STOP")[0] + " To tell you how to proceed, the user said:\nuse the other dir"
    old_format(t, "toolu_said", "ls dir9", said)

    pruned = drop_denials(t.entries)
    calm = neutralise_interrupts(pruned.entries)

    assert [c.tool_use_id for c in pruned.changes] == ["toolu_p0", "toolu_p1"]  # dropped, then noted
    assert text(results(calm.entries)["toolu_p1"]).endswith("(not shown): `cd /tmp/x && ls -la dir0/`]")
    assert "toolu_fake" in results(calm.entries), "a sentence that names another command is an output"
    assert [c.tool_use_id for c in calm.changes] == ["toolu_stop"]
    assert text(results(calm.entries)["toolu_said"]) == said, "the user's own words stay"


def test_the_shorter_interrupt_sentence_of_cli_2_1_17_is_an_interrupt_too() -> None:
    """CLI 2.1.17 also answered an interrupted call "The user doesn't want to take this action right now.
    STOP …", its `toolUseResult` the same text, then the "[Request interrupted by user for tool use]"
    prompt. The result loses its stale order; an output that merely says it stays."""
    sentence = OLD_INTERRUPTS[1]
    t = Transcript()
    t.prompt("deploy")
    t.assistant(t.bash("./deploy.sh", "toolu_stop"))
    stopped = t.result("toolu_stop", sentence, is_error=True)
    stopped["toolUseResult"] = sentence
    t.prompt("[Request interrupted by user for tool use]")
    t.assistant(t.bash("cat notes.txt", "toolu_cat"))
    t.result("toolu_cat", sentence)  # a file that quotes it: no error, an output

    calm = neutralise_interrupts(t.entries)

    assert sentence.startswith("The user doesn't want to take this action right now. STOP")
    assert [c.tool_use_id for c in calm.changes] == ["toolu_stop"]
    entry = next(e for e in calm.entries if e.get("uuid") == stopped["uuid"])
    assert text(entry["message"]["content"][0]) == PrunePolicy().interrupt_note
    assert entry["toolUseResult"] == PrunePolicy().interrupt_note, "the CLI's copy says it too"
    assert text(results(calm.entries)["toolu_cat"]) == sentence


def test_the_note_is_recorded_as_a_change_with_its_entry_its_text_and_what_it_added() -> None:
    t = three_denials()
    out = drop_denials(t.entries, PrunePolicy(denial_note="[{count} refused before: {calls}]"))
    noted = out.changes[-1]
    kept = next(e for e in out.entries if "toolu_rm2" in results([e]))
    note = "[2 refused before: `rm -rf build0`, `rm -rf build1`]"
    assert text(results(out.entries)["toolu_rm2"]) == f"PreToolUse:Bash hook error: no deletions\n{note}"
    assert (noted.kind, noted.uuid, noted.tool_use_id, noted.detail) == (
        "denial_note",
        kept["uuid"],
        "toolu_rm2",
        note,
    )
    assert noted.chars_saved == -len("\\n" + note)  # what the note adds as the CLI replays it (JSON)


def test_the_note_shows_exactly_eight_calls_without_a_count_of_more() -> None:
    t = Transcript()
    t.prompt("go")
    for i in range(9):
        t.assistant(t.bash(f"rm -rf b{i}", f"toolu_rm{i}"))
        t.result(f"toolu_rm{i}", "no", denial="permission-rule")
    note = text(results(drop_denials(t.entries).entries)["toolu_rm8"])
    assert note.endswith("`rm -rf b6`, `rm -rf b7`]")  # 8 dropped, 8 shown


def refused(t: Transcript, command: str, ident: str) -> dict[str, Any]:
    """A Bash call and its refusal by a permission rule; returns the refusal's entry."""
    t.assistant(t.bash(command, ident))
    return t.result(ident, "no", denial="permission-rule")


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        ({"name": "Bash", "input": {"command": "echo `date`"}}, "`echo 'date'`"),  # no backtick inside
        ({"name": "Bash", "input": {"command": "  "}}, "Bash"),
        ({"name": "Monitor", "input": {"command": "tail -f log"}}, "Monitor"),  # a command of Bash only
        ({"name": "Read", "input": {"file_path": "/ws/a.py"}}, "Read(/ws/a.py)"),
        ({"name": "Grep", "input": {"file_path": " ", "path": "src", "pattern": "x"}}, "Grep(src)"),
        ({"name": "Task", "input": "not a mapping"}, "Task"),
        ({"input": {"command": "ls"}}, "?"),
        ({"name": "", "input": {}}, "?"),
    ],
)
def test_the_note_names_a_dropped_call_by_its_command_or_main_argument(
    call: dict[str, Any], shown: str
) -> None:
    t = Transcript()
    t.prompt("go")
    t.assistant({"type": "tool_use", "id": "toolu_x", **call})
    t.result("toolu_x", "no", denial="permission-rule")
    refused(t, "git push", "toolu_push")
    note = text(results(drop_denials(t.entries).entries)["toolu_push"])
    assert note == f"no\n[also refused earlier (not shown): {shown}]"


def test_the_note_finds_the_kept_result_past_protected_entries_and_other_results() -> None:
    t = Transcript()
    t.prompt("go")
    for name in "ab":
        refused(t, f"rm -rf {name}", f"toolu_rm{name}")
    t.assistant(t.bash("git status", "toolu_gs"), t.bash("git push", "toolu_push"))
    t.meta("a meta entry: never rewritten")
    kept = t.result("toolu_push", "no", denial="permission-rule")
    kept["message"]["content"].insert(
        0, {"type": "tool_result", "tool_use_id": "toolu_gs", "content": "clean"}
    )
    out = drop_denials(t.entries, PrunePolicy(keep_denials=2))  # both results of the last entry are kept
    assert text(results(out.entries)["toolu_push"]) == (
        "no\n[also refused earlier (not shown): `rm -rf a`, `rm -rf b`]"
    )


def test_an_api_error_change_says_the_size_the_cli_leaves_out() -> None:
    t = Transcript()
    t.prompt("go")
    error = t.api_error()
    content = error["message"]["content"]
    (change,) = drop_api_errors(t.entries).changes
    assert change == Change(
        kind="api_error", uuid=error["uuid"], detail=f"{block_size(content)} chars the CLI does not replay"
    )
    assert block_size(content) > 0
    for message in (None, "not a mapping"):
        error["message"] = message
        (change,) = drop_api_errors(t.entries).changes
        assert change.detail == "0 chars the CLI does not replay"


def test_api_errors_alone_and_only_on_the_branch_given() -> None:
    t = Transcript()
    error = t.api_error()
    assert [c.uuid for c in drop_api_errors([error]).changes] == [error["uuid"]]
    assert drop_api_errors([error], branch=frozenset()).changes == ()


def test_an_api_error_holding_a_call_stays() -> None:
    t = Transcript()
    t.prompt("go")
    error = t.api_error()
    error["message"]["content"].append(t.bash("ls", "toolu_ls"))
    assert drop_api_errors(t.entries).changes == ()


def test_interrupts_only_on_the_branch_given_each_block_and_entry_in_turn() -> None:
    t = Transcript()
    prompt = t.prompt("look")
    t.assistant(t.bash("sleep 100", "toolu_a"))
    t.result("toolu_a", INTERRUPTED, interrupted=True)
    t._tip = prompt["uuid"]  # rewound to the prompt: the first call and its interrupt are off the branch
    t.assistant(t.bash("sleep 200", "toolu_b"), t.bash("sleep 300", "toolu_c"), merged=True)
    both = t.result("toolu_b", INTERRUPTED, interrupted=True)
    note = PrunePolicy().interrupt_note
    both["message"]["content"] = [
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": note, "is_error": True},  # done already
        {"type": "tool_result", "tool_use_id": 7, "content": INTERRUPTED, "is_error": True},
    ]
    out = neutralise_interrupts(t.entries)
    assert [(c.uuid, c.tool_use_id) for c in out.changes] == [(both["uuid"], None)]
    assert neutralise_interrupts(t.entries, branch=frozenset()).changes == ()


def test_a_denied_result_without_a_string_id_is_neither_dropped_nor_counted() -> None:
    t = Transcript()
    t.prompt("clean up")
    for i in range(2):
        refused(t, f"rm -rf build{i}", f"toolu_rm{i}")
    t.assistant(t.bash("rm -rf all", "toolu_all"))
    t.result("toolu_all", "no", denial="permission-rule")["message"]["content"][0]["tool_use_id"] = 7
    out = drop_denials(t.entries)
    assert [c.tool_use_id for c in out.changes if c.kind == "denial"] == ["toolu_rm0"]
    assert "toolu_rm1" in results(out.entries)


def test_two_denials_in_one_entry_are_two_calls_to_keep_or_drop() -> None:
    """CLI versions that merged parallel results wrote both refusals in one entry: keeping one denial
    keeps the newer call, as with one entry each."""
    t = Transcript()
    t.prompt("go")
    t.assistant(t.bash("rm -rf x", "toolu_x"), t.bash("rm -rf y", "toolu_y"), merged=True)
    both = t.result("toolu_x", "denied", denial="permission-rule")
    both["message"]["content"].append({"type": "tool_result", "tool_use_id": "toolu_y", "content": "denied"})
    out = drop_denials(t.entries, PrunePolicy(keep_denials=1))
    assert [(c.kind, c.tool_use_id) for c in out.changes] == [
        ("denial", "toolu_x"),
        ("denial_note", "toolu_y"),
    ]


def test_what_drop_denials_learns_from_each_entry() -> None:
    """A call in a protected entry pins its pair; a refusal's other blocks are passed over; a call without
    a name is named ""; only the branch given counts."""
    t = Transcript()
    t.prompt("go")
    (pinned,) = t.assistant(t.bash("rm -rf p", "toolu_p"))
    pinned["isMeta"] = True
    t.result("toolu_p", "denied", denial="permission-rule")
    t.assistant({"type": "tool_use", "id": "toolu_n", "input": {"command": "rm -rf n"}})
    refusal = t.result("toolu_n", "denied", denial="permission-rule")
    refusal["message"]["content"].insert(0, {"type": "text", "text": "a block with no id"})
    refused(t, "rm -rf k", "toolu_k")

    out = drop_denials(t.entries)

    assert [(c.kind, c.tool_use_id, c.detail) for c in out.changes if c.kind == "denial"] == [
        ("denial", "toolu_n", "")
    ]
    assert drop_denials(t.entries, branch=frozenset()).changes == ()


def test_fewer_denials_on_the_branch_than_kept_drop_nothing() -> None:
    t = Transcript()
    prompt = t.prompt("go")
    for name in "ab":  # then rewound: these two are off the branch
        refused(t, f"rm -rf {name}", f"toolu_{name}")
    t._tip = prompt["uuid"]
    for name in "cd":
        refused(t, f"rm -rf {name}", f"toolu_{name}")
    assert drop_denials(t.entries, PrunePolicy(keep_denials=3)).changes == ()


def test_an_entry_that_keeps_no_result_loses_the_refusals_fields_and_one_that_keeps_one_does_not() -> None:
    t = Transcript()
    t.prompt("go")
    texted = refused(t, "rm -rf z", "toolu_z")
    texted["message"]["content"].insert(0, {"type": "text", "text": "a block that stays"})
    t.assistant(t.bash("rm -rf x", "toolu_x"), t.bash("rm -rf y", "toolu_y"), merged=True)
    both = t.result("toolu_x", "no", denial="permission-rule")  # an older CLI: one entry, two refusals
    both["message"]["content"].append({"type": "tool_result", "tool_use_id": "toolu_y", "content": "no"})
    out = drop_denials(t.entries, PrunePolicy(keep_denials=1))
    kept = {e["uuid"]: e for e in out.entries if "uuid" in e}
    assert [b["tool_use_id"] for b in kept[both["uuid"]]["message"]["content"]] == ["toolu_y"]
    assert {"toolUseResult", "toolDenialKind", "permissionDecision"} <= set(kept[both["uuid"]])
    assert [b["type"] for b in kept[texted["uuid"]]["message"]["content"]] == ["text"]
    assert not {"toolUseResult", "toolDenialKind", "permissionDecision", "sourceToolAssistantUUID"} & set(
        kept[texted["uuid"]]
    )


def test_a_refusal_whose_call_is_not_in_the_history_is_dropped_unnamed() -> None:
    """A partial copy of a session (a fork) may hold a refusal without its call."""
    t = Transcript()
    t.prompt("go")
    orphaned = refused(t, "rm -rf a", "toolu_a")
    t.entries.remove(next(e for e in t.entries if e.get("type") == "assistant"))
    orphaned["parentUuid"] = t.entries[0]["uuid"]
    refused(t, "rm -rf b", "toolu_b")
    out = drop_denials(t.entries)
    dropped = [c for c in out.changes if c.kind == "denial"]
    assert [(c.tool_use_id, c.detail) for c in dropped] == [("toolu_a", "")]
    assert [c.kind for c in out.changes] == ["denial"], "nothing to name in the note"


SENTENCE = "Permission to use Bash with command rm -rf x has been denied."


def refusal(text: Any, **extra: Any) -> dict[str, Any]:
    """A user entry holding one error result for the call `toolu_x`, as CLI 2.1.42 wrote a refusal."""
    block = {"type": "tool_result", "tool_use_id": "toolu_x", "content": text, "is_error": True}
    return {"type": "user", "message": {"role": "user", "content": [block]}, **extra}


def test_denial_kind_reads_the_kind_or_the_old_fixed_sentence() -> None:
    bash = {
        "toolu_x": {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "rm -rf x"}}
    }
    assert denial_kind(refusal(SENTENCE), bash) == "permission-rule"
    assert denial_kind(refusal(SENTENCE + "\n[also refused earlier: ...]"), bash) == "permission-rule"
    assert denial_kind(refusal(SENTENCE, toolDenialKind=5), bash) is None
    assert denial_kind(refusal(SENTENCE, permissionDecision={"decision": "reject"}), bash) is None
    assert denial_kind(refusal(SENTENCE), {}) is None, "a sentence naming a call the history lacks"
    assert denial_kind(refusal([{"type": "image", "source": {}}]), bash) is None
    texted = refusal(SENTENCE)
    texted["message"]["content"].insert(0, {"type": "text", "text": "and a text block"})
    assert denial_kind(texted, bash) == "permission-rule", "one result, whatever else the entry holds"
    unnamed = {"toolu_x": {"type": "tool_use", "id": "toolu_x", "input": "not a mapping"}}
    assert denial_kind(refusal("Permission to use  has been denied."), unnamed) == "permission-rule"


def test_tool_calls_are_the_tool_use_blocks_of_assistant_entries() -> None:
    call = {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {}}
    entries: list[Any] = [
        "not an entry",
        {"type": "assistant", "message": {"content": ["a bare string", {"type": "text", "id": "t"}, call]}},
        {"type": "user", "message": {"content": [{**call, "id": "toolu_user"}]}},
    ]
    assert tool_calls(entries) == {"toolu_x": call}


def test_a_denial_dropped_from_a_merged_message_saves_what_the_content_loses() -> None:
    """An older CLI merged parallel calls into one entry: the denied call leaves it with its comma, and
    the change counts that and the whole content of its emptied result entry."""
    t = Transcript()
    t.prompt("clean up")
    for i in range(2):
        t.assistant(t.bash("git status", f"toolu_ok{i}"), t.bash(f"rm -rf b{i}", f"toolu_rm{i}"), merged=True)
        t.result(f"toolu_ok{i}", "clean")
        t.result(f"toolu_rm{i}", "refused", denial="permission-rule")
    out = drop_denials(t.entries, PrunePolicy(keep_denials=1, denial_note=None))
    holder, result = t.entries[1], t.entries[3]
    (kept,) = [e for e in out.entries if e["uuid"] == holder["uuid"]]
    content = [block_size(e["message"]["content"]) for e in (holder, kept, result)]
    assert [(c.tool_use_id, c.chars_saved) for c in out.changes] == [
        ("toolu_rm0", content[0] - content[1] + content[2])
    ]


def test_what_is_protected() -> None:
    assert is_protected({"isCompactSummary": True}) and is_protected({"isMeta": True})
    assert not is_protected({"isCompactSummary": False}) and not is_protected({"isMeta": "yes"})


def test_only_a_list_of_content_is_blocks() -> None:
    """A prompt's plain text, a message without content and a stray value hold no blocks to rewrite."""
    blocks = [{"type": "text", "text": "hi"}]
    assert content_blocks({"message": {"role": "assistant", "content": blocks}}) is blocks
    for content in ("a plain-text prompt", None, {"type": "text", "text": "hi"}, 5):
        assert content_blocks({"message": {"role": "user", "content": content}}) is None
    assert content_blocks({"message": "not a message"}) is None and content_blocks({"type": "user"}) is None
