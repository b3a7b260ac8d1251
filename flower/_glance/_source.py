"""From command text to the syntax tree bash would act on, with tree-sitter-bash; or a `Refusal`.

tree-sitter-bash is MIT licensed, a maintained C grammar, and never raises on bad input: it marks ERROR
and MISSING nodes, which makes "anything not understood is refused" easy to enforce. Where the grammar
and bash disagree (some newlines, a `#` inside a word), the text is fixed up to what bash reads, or
refused. Every step is linear in the length of the command, and the length is capped, so a verdict
comes in bounded time.

tree-sitter-bash 0.25's scanner calls the C library's `isdigit`/`isalpha` on the character it reads;
given a code point above U+00FF (`{` followed by U+D05FD) those read outside their table and crash the
process. Such characters are never shell syntax, so the grammar is given a stand-in for each (a
letter or a symbol in U+00A0-U+00FF, as the character is one or not) and every text is read back from
the command itself.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import tree_sitter
import tree_sitter_bash

from ._verb import Refusal

__all__ = ["MAX_LENGTH", "Source", "parse"]

Node = tree_sitter.Node

MAX_LENGTH = 10_000
"""Longer commands are refused unread: a glance is a short look, and the check stays fast."""
_MAX_FIXES = 16
"""Misread newlines fixed before giving up (each fix parses the command again)."""

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


@dataclass
class Source:
    """The bytes the grammar parsed, and the command's own bytes with the same fix-ups."""

    parsed: bytes
    """What tree-sitter-bash parsed: stand-ins for characters above U+00FF, comments blanked, misread
    newlines replaced. Node offsets are offsets in these bytes; its ASCII bytes are the command's."""
    text: bytes
    """The command with the same comments blanked and newlines replaced, characters as they are."""
    offsets: list[int] | None = None
    """For each offset in `parsed`, the offset in `text`; `None` when there was no stand-in."""

    def at(self, offset: int) -> int:
        """The offset in the command's bytes of an offset in `parsed`."""
        return offset if self.offsets is None else self.offsets[offset]

    def slice(self, start: int, end: int) -> str:
        """The command's text between two offsets in `parsed`."""
        return self.text[self.at(start) : self.at(end)].decode("utf-8")

    def blank(self, start: int, end: int) -> None:
        """Replace a range (offsets in `parsed`) with blanks, in both byte strings."""
        self.parsed = self.parsed[:start] + b" " * (end - start) + self.parsed[end:]
        first, last = self.at(start), self.at(end)
        self.text = self.text[:first] + b" " * (last - first) + self.text[last:]

    def put(self, offset: int, byte: bytes) -> None:
        """Replace the ASCII byte at `offset` (in `parsed`) with another one, in both byte strings."""
        self.parsed = self.parsed[:offset] + byte + self.parsed[offset + 1 :]
        self.text = self.text[: self.at(offset)] + byte + self.text[self.at(offset) + 1 :]


def parse(command: str) -> tuple[Node, Source]:
    """The syntax tree of `command` as bash reads it, and its `Source`."""
    if len(command) > MAX_LENGTH:
        raise Refusal(f"the command is longer than {MAX_LENGTH:,} characters")
    if not command.strip():
        raise Refusal("the command is empty")
    if _CONTROL.search(command):
        raise Refusal("the command holds control characters")
    if _GLUED_CONTINUATION.search(command):
        raise Refusal("a line continuation inside a word")
    try:
        source = _stand_ins(command)
    except UnicodeEncodeError:
        raise Refusal("the command is not valid text (a lone surrogate)") from None
    root = _parser().parse(source.parsed).root_node
    if b"#" in source.parsed:  # bash ignores comments; blanking them keeps the newline fix-ups simple
        comments = _comments(root, source.parsed)
        for start, end in comments:
            source.blank(start, end)
        root = _parser().parse(source.parsed).root_node if comments else root
    for _ in range(_MAX_FIXES):
        if root.has_error:
            raise Refusal("the shell parser could not understand the command")
        covered, newline, meaning = _coverage(root, source.parsed)
        if newline < 0:
            if not covered:
                raise Refusal("part of the command is not in the parse tree")
            return root, source
        source.put(newline, meaning)  # what bash reads it as
        root = _parser().parse(source.parsed).root_node
    raise Refusal("the command has too many lines the parser misreads")


def _stand_ins(command: str) -> Source:
    text = command.encode("utf-8")
    if len(text) == len(command) or max(command) <= "\u00ff":
        return Source(text, text)
    parsed = bytearray()
    offsets: list[int] = []
    position = 0
    for char in command:
        size = len(char.encode("utf-8"))
        stand_in = char if char <= "\u00ff" else "\u00aa" if char.isalnum() else "\u00a6"
        encoded = stand_in.encode("utf-8")
        offsets.extend(position + min(i, size) for i in range(len(encoded)))
        parsed += encoded
        position += size
    offsets.append(position)
    return Source(bytes(parsed), text, offsets)


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
    insides are checked by the walk.
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


def _comments(root: Node, source: bytes) -> list[tuple[int, int]]:
    """The byte ranges of the comments, which bash ignores.

    A `#` starts a comment only at the start of a word; tree-sitter-bash 0.25 also takes `ls#;rm x`
    for `ls` and a comment, where bash runs `ls#` and then `rm x`.
    """
    found = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            if node.start_byte and source[node.start_byte - 1 : node.start_byte] not in _WORD_BREAKS:
                raise Refusal("a `#` inside a word, which bash does not read as a comment")
            found.append((node.start_byte, node.end_byte))
        stack.extend(node.children)
    return found


def _bare_newline(text: bytes) -> int:
    """Offset of the first newline that is not part of a `\\<newline>` continuation, or -1."""
    match = _NO_BARE_NEWLINE.match(text)  # always matches, if only the empty string
    end = match.end() if match else 0
    return end if text[end : end + 1] == b"\n" else -1
