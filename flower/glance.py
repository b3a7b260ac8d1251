"""Glance: may the coordinator run this shell command itself, and does its result go stale?

Starting a subagent costs about 4.3k tokens of context that never pays back; paying that for an `ls` is
a loss. So the coordinator may run a Bash command itself when it is *ephemeral*: read-only, quick,
terminating, and with a result that can go stale. The same predicate decides which command results
expire from the history on resume: one table, one answer.

Models write compounds (`git status -s && echo "--- LOG ---" && git log --oneline -3`), so the command
is parsed with tree-sitter-bash, a real shell grammar, and every simple command in it must pass the verb
table in `flower._glance_rules`. tree-sitter-bash is MIT licensed, a maintained C grammar, and never
raises on bad input: it marks ERROR and MISSING nodes, which makes "anything not understood is not
ephemeral" easy to enforce. (bashlex is GPLv3 and raises on many constructs; `shlex` only tokenizes.)
Where the grammar and bash disagree (some newlines, a `#` inside a word, `[rm]`), the command is read
the way bash reads it, or refused; docs/glance.md lists the cases.

Example::

    >>> is_ephemeral('git status -s && echo "--- LOG ---" && git log --oneline -3')
    True
    >>> glance_verdict("git status && rm -rf x").reason
    '`rm` is not a read-only command'
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import tree_sitter
import tree_sitter_bash

from flower._check import checked
from flower._glance_rules import Refusal
from flower._glance_walk import Node, Walk

__all__ = ["GlanceVerdict", "glance_verdict", "is_ephemeral"]


@dataclass(frozen=True)
class GlanceVerdict:
    """The answer for one command, with the reason in one English sentence (usable in a deny message)."""

    ephemeral: bool
    """Whether the command is a glance: the coordinator may run it, and its result expires on resume."""
    reason: str
    """Why not (the first refusal met), or a short confirmation when it is ephemeral."""
    segments: tuple[str, ...]
    """The simple commands checked, in order; after a refusal, those met up to the refused part."""


@checked
def is_ephemeral(command: str) -> bool:
    """Whether `command` is read-only, quick, terminating, and has a result that can go stale."""
    return glance_verdict(command).ephemeral


@checked
def glance_verdict(command: str) -> GlanceVerdict:
    """Parse `command` once and check every part of it; anything not understood is refused.

    Raises `TypeError` when `command` is not a `str`.
    """
    if not isinstance(command, str):
        raise TypeError(f"glance expects the command as a str, got {type(command).__name__}")
    walk = Walk()
    try:
        if not command.strip():
            raise Refusal("the command is empty")
        if _CONTROL.search(command):
            raise Refusal("the command holds control characters")
        if _GLUED_CONTINUATION.search(command):
            raise Refusal("a line continuation inside a word")
        source = command.encode("utf-8")
        root = _parser().parse(source).root_node
        if b"#" in source:  # bash ignores comments; blanking them keeps the newline fix-ups simple
            source, original = _blank_comments(root, source), source
            root = root if source == original else _parser().parse(source).root_node
        while True:
            if root.has_error:
                raise Refusal("the shell parser could not understand the command")
            covered, newline, meaning = _coverage(root, source)
            if newline < 0:
                break
            source = source[:newline] + meaning + source[newline + 1 :]  # what bash reads it as
            root = _parser().parse(source).root_node
        walk.sequence(root)
        if not walk.segments:
            raise Refusal("the command holds no command, only comments")
        if not covered:
            raise Refusal("part of the command is not in the parse tree")
    except Refusal as refusal:
        return GlanceVerdict(False, refusal.reason, tuple(walk.segments))
    except UnicodeEncodeError:
        return GlanceVerdict(False, "the command is not valid text", ())
    return GlanceVerdict(True, "every part is a read-only command", tuple(walk.segments))


# Bash reads only newline and tab among control characters as blanks; others (CR, NUL, ESC ...) are
# words to bash but may be treated otherwise by the grammar, so they are refused outright.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Bash joins `-\<newline>o` into `-o` before splitting words; tree-sitter-bash reads two words there.
_GLUED_CONTINUATION = re.compile(r"[^\s]\\\n[^\s]")

_GAP = re.compile(rb"(?:[ \t\n]|\\\n)*")  # what may lie between the leaves of the tree
_WORD_BREAKS = frozenset(bytes([c]) for c in b" \t\n;&|()")
_NO_BARE_NEWLINE = re.compile(rb"(?:\\[\s\S]|[^\\\n])*")
_QUOTED_LEAVES = frozenset(
    {"string", "raw_string", "ansi_c_string", "comment", "heredoc_body", "heredoc_content"}
)
_NEWLINE_AFTER = frozenset({"&&", "||", "|", "|&", ";", "&"})
_local = threading.local()
_language: tree_sitter.Language | None = None


def _parser() -> tree_sitter.Parser:
    """One parser per thread: a `Parser` is not safe to share, and reusing one is ~1.7x faster."""
    global _language
    parser: tree_sitter.Parser | None = getattr(_local, "parser", None)
    if parser is None:
        if _language is None:
            _language = tree_sitter.Language(tree_sitter_bash.language())
        parser = _local.parser = tree_sitter.Parser(_language)
    return parser


def _coverage(root: Node, source: bytes) -> tuple[bool, int, bytes]:
    """Whether the leaves cover every byte but blanks and continuations; and a misread newline.

    Whatever the grammar skipped would be text that bash runs and the walk never saw. A newline outside
    quotes ends a command for bash unless it follows an operator (`&&`, `||`, `|`, `;`), but
    tree-sitter-bash 0.25 sometimes reads it as a blank (`a | b | c<newline>d` as `c d`) or as part
    of a word (`ls<newline>\\rm x` as `ls` with an argument). The first such newline is returned with
    what bash reads it as (`;`, or a blank after an operator), or -1. Strings count as leaves: their
    insides are checked by `_collect`.
    """
    starts = {child.start_byte for child in root.children if child.is_named}
    lines = b"\n" in source
    position, previous = 0, ";"
    stack = [root]
    covered = True
    while stack:
        node = stack.pop()
        kind, start = node.type, node.start_byte
        if node.child_count and kind != "string":
            stack.extend(reversed(node.children))
            continue
        gap = source[position:start]
        covered = covered and _GAP.fullmatch(gap) is not None
        if lines:
            after_operator = previous in _NEWLINE_AFTER
            newline = _bare_newline(gap)
            if covered and newline >= 0 and not after_operator and start not in starts:
                return covered, position + newline, b";"
            newline = -1 if kind in _QUOTED_LEAVES else _bare_newline(source[start : node.end_byte])
            if newline >= 0:
                return covered, start + newline, b" " if after_operator else b";"
        position, previous = max(position, node.end_byte), kind
    return covered and _GAP.fullmatch(source, position) is not None, -1, b""


def _blank_comments(root: Node, source: bytes) -> bytes:
    """`source` with every comment replaced by blanks of the same length.

    A `#` starts a comment only at the start of a word; tree-sitter-bash 0.25 also takes `ls#;rm x`
    for `ls` and a comment, where bash runs `ls#` and then `rm x`.
    """
    blanked = bytearray(source)
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            if node.start_byte and source[node.start_byte - 1 : node.start_byte] not in _WORD_BREAKS:
                raise Refusal("a `#` inside a word, which bash does not read as a comment")
            blanked[node.start_byte : node.end_byte] = b" " * (node.end_byte - node.start_byte)
        stack.extend(node.children)
    return bytes(blanked)


def _bare_newline(text: bytes) -> int:
    """Offset of the first newline that is not part of a `\\<newline>` continuation, or -1."""
    match = _NO_BARE_NEWLINE.match(text)  # always matches, if only the empty string
    end = match.end() if match else 0
    return end if text[end : end + 1] == b"\n" else -1
