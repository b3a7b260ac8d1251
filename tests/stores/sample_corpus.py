"""The corpus sample shipped with the tests: synthetic sessions built from the shapes of real ones.

Real transcripts belong to their publishers and stay out of the repository; the corpus tests still need
a corpus wherever they run. These sessions are written here, entry by entry, the way the CLI versions
named in each wrote theirs (one assistant entry per content block sharing `message.id` and usage, a
result's parent the entry holding its call, queue operations, hook entries, the old and new formats of
refusals and interrupts), and hold every structure the corpus tests and layer 4 care about: compactions
and the compaction worker's transcript, a subagent in each layout, two entries on one line, resume
marks (`SessionStart:resume` hooks; `mode` lines, which mark nothing) and startup hooks, an idle day
inside one process, rule refusals and interrupts old and new, API errors, an orphan call, a `/clear`,
a rewind, slash commands and `!` lines, files read again, ephemeral commands, large outputs,
mid-stream output counts and the 1-hour cache. No line is copied from a real transcript.

    python -m tests.stores.sample_corpus [DIR]   # write it (default: tests/stores/data/corpus)

`tests/stores/test_corpus_sample.py` checks that the shipped files are what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .sample_writer import FOR_TOOL_USE, OLD_REJECTION, TAKE_ACTION, Writer

SAMPLE = Path(__file__).resolve().parent / "data" / "corpus"


def _status(i: int) -> str:
    return "On branch main\nChanges not staged for commit:\n" + "".join(
        f"\tmodified:   src/app/module_{i}_{k}.py\n" for k in range(5)
    )


def _log(name: str, lines: int) -> str:
    return "\n".join(
        f"[{name}] step {n:03d}: compiled unit {n} of {lines} in 0.{n % 10}s" for n in range(lines)
    )


T0 = 1_770_000_000.0  # 2026-02-02: the real sessions' era (CLI 2.0.7x to 2.1.4x)


def refusals_old(out: Path) -> None:
    """CLI 2.1.4: rule refusals and an interrupt in the old format (no `toolDenialKind`), mid-stream
    output counts, ephemeral commands, a file read again, large outputs, a Task whose transcript was not
    kept."""
    w = Writer(
        "refusals-old", version="2.1.4", model="claude-sonnet-4-5-20250929", start=T0, final_counts=False
    )
    w.prompt("Tidy the build scripts and tell me what changed.")
    for i in range(4):
        w.bash("git status", _status(i))
    for command in ("rm -rf build", "rm -rf dist"):
        refused = f"Permission to use Bash with command {command} has been denied."
        w.tool("Bash", {"command": command, "description": "Remove output"}, refused, is_error=True)
    quoted = "Permission to use Bash with command rm -rf / has been denied."  # a file's text: an output
    w.tool("Bash", {"command": "cat notes.txt", "description": "Read notes"}, quoted)
    w.read("/home/user/project/Makefile", [f"target{n}: ; @echo {n}" for n in range(30)])
    for i in range(5):
        w.bash(f"make step{i}", _log(f"step{i}", 40))
    w.read("/home/user/project/Makefile", [f"target{n}: ; @echo {n}" for n in range(31)])
    w.tool("Bash", {"command": "sleep 60", "description": "Wait"}, OLD_REJECTION, is_error=True)
    w.prompt(FOR_TOOL_USE, queue=False)
    w.prompt("Don't wait. Ask a helper to list the scripts instead.")
    w.task("List every script.", "5e1f0a2", "build.sh, release.sh")
    said = OLD_REJECTION.split(" STOP")[0] + " To tell you how to proceed, the user said:\nuse the other dir"
    w.tool("Bash", {"command": "ls old/", "description": "List"}, said, is_error=True)
    for i in range(4, 8):
        w.bash("git status -s", _status(i))
    w.say("Removed nothing (the removals were refused); the scripts are build.sh and release.sh.")
    w.write(out / "refusals-old.jsonl")


def compacted(out: Path) -> None:
    """CLI 2.1.5: API errors, a cold resume, a compaction, then a warm resume; a subagent and the
    compaction worker in the CLI's layout; two entries on one line."""
    w = Writer("compacted", version="2.1.5", model="claude-opus-4-5-20251101", start=T0 + 86_400)
    w.prompt("Port the parser and keep the tests green.")
    for i in range(9):
        w.bash("git status", _status(i))
        w.bash(f"pytest tests/test_part{i}.py", _log(f"test{i}", 30))
    w.api_error()
    w.wait(900)
    w.prompt("Try again.")  # a new process, ten minutes later: the cache is cold
    agent = w.subagent("a3c9e21", "claude-haiku-4-5-20251001", "Find every use of parse_header.")
    grep = agent.call("Grep", {"pattern": "parse_header", "path": "src"})
    agent.reply(grep)
    agent.result(grep, "src/app/io.py:12\nsrc/app/net.py:40", record={"numFiles": 2})
    agent.say("Two uses: src/app/io.py:12 and src/app/net.py:40.")
    w.task(
        "Find every use of parse_header.",
        "a3c9e21",
        "Two uses: src/app/io.py:12 and src/app/net.py:40.",
        until=agent.time,
    )
    w.joined.add(len(w.entries) - 1)  # the result written on its predecessor's line
    w.bash("git status", _status(9))
    worker = w.subagent("acompact-4b7e1d", "claude-opus-4-5-20251101", "Summarise the conversation so far.")
    worker.say("The parser was ported; tests for parts 0-8 pass; one API error was retried.")
    w.compact("This session is being continued from a previous conversation. Summary: the parser was ported.")
    w.prompt("Go on with part 9.", queue=False)
    w.bash("git status", _status(10))
    w.say("Part 9 passes too.")
    w.wait(60)
    w.prompt("Anything left?")  # a minute later: warm
    w.say("Nothing is left.")
    w.write(out / "compacted.jsonl")
    agent.write(out / "compacted" / "subagents" / "agent-a3c9e21.jsonl")
    worker.write(out / "compacted" / "subagents" / "agent-acompact-4b7e1d.jsonl")


def idle_in_one_process(out: Path) -> None:
    """CLI 2.1.39 on the 1-hour cache: startup hooks, a prompt after 41,680 s of idle in the same
    process, then the first real resume, marked and warm (668 s after the last message)."""
    w = Writer("idle-day", version="2.1.39", model="claude-opus-4-6", start=T0 + 2 * 86_400, cache="1h")
    w.hook("startup")
    w.hook("startup")
    w.prompt("Review the branch.")
    for i in range(6):
        w.bash("git status", _status(i))
    w.say("The branch is clean.")
    w.wait(41_680)
    w.prompt("Now fix the failing test.")
    for i in range(6, 10):
        w.bash("git diff --stat", _status(i))
    w.say("Fixed.")
    w.wait(668)
    w.hook("resume")
    w.prompt("Check it once more.")
    w.bash("git status", _status(11))
    w.say("Still clean.")
    w.write(out / "idle-day.jsonl")


def resumed_with_hooks(out: Path) -> None:
    """CLI 2.1.17: the shorter interrupt sentence, then resumes marked by their hook: one cold after two
    hours, one warm a minute later."""
    w = Writer("hooks-2117", version="2.1.17", model="claude-opus-4-5-20251101", start=T0 + 3 * 86_400)
    w.hook("startup")
    w.prompt("Deploy the preview.")
    for i in range(8):
        w.bash("ls -la deploy/", _status(i))
    deploy = {"command": "./deploy.sh preview", "description": "Deploy"}
    w.tool("Bash", deploy, TAKE_ACTION, is_error=True, record=TAKE_ACTION)
    w.prompt(FOR_TOOL_USE, queue=False)
    w.wait(7_200)
    w.hook("resume")
    w.prompt("Deploy it now.")
    w.bash("./deploy.sh preview", _log("deploy", 12))
    w.say("Deployed.")
    w.wait(60)
    w.hook("resume")
    w.prompt("And the status?")
    w.bash("ls -la deploy/", _status(9))
    w.say("Green.")
    w.write(out / "hooks-2117.jsonl")


def new_format(out: Path) -> None:
    """CLI 2.1.332: `toolDenialKind` and `permissionDecision`, a resume marked by its hook with the
    `mode` line the CLI re-appends after it, the 5-minute cache asked for, and an orphan call: the
    process died while it ran."""
    w = Writer("marks-21332", version="2.1.332", model="claude-opus-4-6", start=T0 + 4 * 86_400)
    w.prompt("Clean the workspace.")
    for command in ("rm -rf build", "rm -rf dist", "git push --force"):
        w.tool(
            "Bash",
            {"command": command, "description": "Clean"},
            "PreToolUse:Bash hook error: not allowed here",
            is_error=True,
            toolDenialKind="permission-rule",
            permissionDecision={"decision": "deny", "source": "hook", "reasonType": "hook"},
        )
    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    prompted = {"decision": "reject", "source": "user", "reasonType": "prompt"}  # a refused permission prompt
    clean = {"command": "make clean", "description": "Clean"}
    w.tool(
        "Bash", clean, rejected, is_error=True, toolDenialKind="user-rejected", permissionDecision=prompted
    )
    stopped = "[Request interrupted by user: this call was stopped while it ran.]"
    wait = {"command": "sleep 30", "description": "Wait"}
    w.tool("Bash", wait, stopped, is_error=True, toolDenialKind="user-rejected")
    w.prompt(FOR_TOOL_USE, queue=False)
    for i in range(8):
        w.bash("git status --short", _status(i))
    w.say("Clean enough.")
    w.wait(1_200)
    w.hook("resume", shape="attachment")  # a SessionStart hook is set: the resume is marked
    w.prompt("Build it.")
    w.say("Building.")
    w.mode()  # a metadata line the CLI re-appends: it marks nothing
    first, second = (
        w.call("Bash", {"command": "make all", "description": "Build"}),
        w.call("Bash", {"command": "make docs", "description": "Docs"}),
    )
    w.reply(first, second)
    w.result(first, _log("all", 20), record={"stdout": _log("all", 20), "stderr": ""})
    w.write(out / "marks-21332.jsonl")  # the process died while `make docs` ran


def attachments(out: Path) -> None:
    """A later CLI's hook attachments, a slash command and a `!` line, a rewind, a `/clear`; its subagent
    beside it as `<session>--agent-<id>.jsonl`."""
    w = Writer("attachments", version="2.1.281", model="claude-sonnet-4-5-20250929", start=T0 + 5 * 86_400)
    w.hook("startup", shape="attachment")
    w.prompt("Summarise the open issues.")
    agent = w.subagent("b81f0c4", "claude-haiku-4-5-20251001", "Read ISSUES.md and summarise it.")
    agent.read("/home/user/project/ISSUES.md", [f"- issue {n}: fix the widget" for n in range(20)])
    agent.say("Twenty issues, all about the widget.")
    w.task(
        "Read ISSUES.md and summarise it.",
        "b81f0c4",
        "Twenty issues, all about the widget.",
        kind="general-purpose",
        until=agent.time,
    )
    asked = w.say("Twenty issues about the widget.")[-1]["uuid"]
    w.prompt(
        "<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args></command-args>"
    )
    w.say("Reviewed: nothing to add.")
    w.prompt("<bash-input>ls</bash-input>")
    w.prompt("<bash-stdout>ISSUES.md\nsrc\n</bash-stdout><bash-stderr></bash-stderr>", queue=False)
    w.prompt("Group them by area instead.", parent=asked)  # a rewind: a sibling of the command's branch
    w.say("One area: the widget.")
    w.wait(30)
    clear = w._base("attachment", None)  # `/clear`: a new root, and the hook that runs for it
    clear["attachment"] = {
        "type": "hook_success",
        "hookEvent": "SessionStart",
        "hookName": "SessionStart:clear",
    }
    w._add(clear)
    w.prompt("Start over: list the widget's files.")
    w.bash("ls src/widget", "a.py\nb.py\nc.py")
    w.say("Three files.")
    w.write(out / "attachments.jsonl")
    agent.write(out / "attachments--agent-b81f0c4.jsonl")


BUILDERS = (refusals_old, compacted, idle_in_one_process, resumed_with_hooks, new_format, attachments)


def write(directory: Path = SAMPLE) -> list[Path]:
    """Write every session of the sample under `directory`; the files written."""
    for build in BUILDERS:
        build(directory)
    return sorted(directory.rglob("*.jsonl"))


if __name__ == "__main__":
    for path in write(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE):
        print(path)
