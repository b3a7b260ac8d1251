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
from dataclasses import dataclass, field

import tree_sitter
import tree_sitter_bash

from flower._glance_rules import Arg, Refusal, is_device, syntax_refusal, verb_rule

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


def is_ephemeral(command: str) -> bool:
    """Whether `command` is read-only, quick, terminating, and has a result that can go stale."""
    return glance_verdict(command).ephemeral


def glance_verdict(command: str) -> GlanceVerdict:
    """Parse `command` once and check every part of it; anything not understood is refused.

    Raises `TypeError` when `command` is not a `str`.
    """
    if not isinstance(command, str):
        raise TypeError(f"glance expects the command as a str, got {type(command).__name__}")
    walk = _Walk()
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


Node = tree_sitter.Node


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


_ESCAPES = re.compile(r"\\([^\n])|\\\n|(.)", re.S)
_TEST_BRACKETS = re.compile(r"\[[ \t].*[ \t]\]", re.S)
_WORD_SPECIAL = re.compile(r"[\\*?\[{]")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*|\[")


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


class _Walk:
    """Walks the syntax tree; raises `Refusal` at the first part that is not a glance."""

    def __init__(self) -> None:
        self.segments: list[str] = []

    def sequence(self, node: Node) -> None:
        """The program: statements separated by `;` or newlines; a trailing `&` is a background job."""
        for child in node.children:
            if child.type in (";", "comment"):
                continue
            if child.type == "&":
                raise Refusal("a background job (`&`)")
            self.statement(child, fed=False, tail=None)

    def statement(self, node: Node, fed: bool, tail: _Tail | None) -> None:
        """Check one statement.

        `fed`: the leftmost command of `node` follows a pipe. `tail`: what redirections do to its
        rightmost command. Both are stated by position because tree-sitter-bash nests `a | b && c`
        as `a | (b && c)`: the grouping is not bash's, but the order of commands and operators is.
        """
        kind = node.type
        if kind == "command":
            self.command(node, fed, tail)
        elif kind == "list":
            if any(not c.is_named and c.type not in ("&&", "||") for c in node.children):
                raise Refusal("a list joined by something other than `&&` or `||`")
            parts = [c for c in node.children if c.is_named and c.type != "comment"]
            for i, part in enumerate(parts):
                self.statement(part, fed=fed and i == 0, tail=tail if i == len(parts) - 1 else None)
        elif kind == "pipeline":
            # `|&` is `2>&1 |`: it only joins stderr to the pipe.
            parts = [c for c in node.children if c.type not in ("|", "|&", "comment")]
            for i, part in enumerate(parts):
                self.statement(part, fed=fed or i > 0, tail=tail if i == len(parts) - 1 else None)
        elif kind == "redirected_statement":
            self.redirected(node, fed, tail)
        elif kind == "test_command" and node.children[0].type == "[":
            self.segments.append(_text(node))  # `[ … ]` is the `test` builtin, read by the grammar
            if not _TEST_BRACKETS.fullmatch(self.segments[-1]):  # `[rm]` is a glob to bash
                raise Refusal("`[` and `]` must be words of their own")
            verb_rule("[")("[", [arg for child in node.children[1:-1] for arg in _test_args(child)])
        elif kind == "negated_command":
            inner = [c for c in node.children if c.type != "!"]
            if len(inner) != 1:
                raise syntax_refusal(node.type)
            self.statement(inner[0], fed, tail)
        else:
            raise syntax_refusal(node.type)

    def redirected(self, node: Node, fed: bool, tail: _Tail | None) -> None:
        """Redirections apply to the last simple command of the body (tree-sitter hangs them higher)."""
        body = node.child_by_field_name("body")
        if body is None:
            raise Refusal("a redirection without a command")
        facts = _Tail() if tail is None else tail
        refusals = []
        for child in node.children:
            try:
                if child.id != body.id:
                    _redirect(child, facts)
            except Refusal as refusal:
                refusals.append(refusal)
        self.statement(body, fed, facts)  # first, so that the verdict lists the command
        if refusals:
            raise refusals[0]

    def command(self, node: Node, fed: bool, tail: _Tail | None) -> None:
        self.segments.append(_text(node))
        facts = _Tail() if tail is None else tail
        name_node: Node | None = None
        words: list[Node] = []
        for child in node.children:
            if child.type == "command_name":
                name_node = child
            elif child.type == "comment":
                continue
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                _redirect(child, facts)
            elif child.is_named and child.type != "variable_assignment":
                words.append(child)
            else:
                raise syntax_refusal(child.type)
        name = _command_name(name_node)
        rule = verb_rule(name)
        args: list[Arg] = [_value(word) for word in words]
        args.extend(_value(word) for word in facts.extra)
        if any(is_device(arg) for arg in args):
            raise Refusal("a device file other than /dev/null (`/dev/zero` never ends, `/dev/tty` waits)")
        if rule(name, args) and not (fed or facts.input):
            raise Refusal(f"`{name}` would read the terminal here: nothing is piped or redirected into it")


@dataclass
class _Tail:
    """What the redirections of an enclosing statement do to its last simple command."""

    input: bool = False
    extra: list[Node] = field(default_factory=list)
    """Words after a redirection target: bash passes `ls >/dev/null -l` the `-l`."""


def _test_args(node: Node) -> list[Arg]:
    """The arguments of `[ … ]`, flattened from the grammar's expressions, for the `test` rule.

    Inside `[ … ]`, `<` and `>` are redirections to bash, whatever the grammar calls them.
    """
    if node.type in ("unary_expression", "binary_expression", "parenthesized_expression"):
        return [arg for child in node.children for arg in _test_args(child)]
    if node.type in ("<", ">", "<<", ">>"):
        raise Refusal("output redirection to a file")
    if node.type == "test_operator" or node.type in ("!", "=", "==", "!=", "(", ")"):
        return [_text(node)]
    if not node.is_named:
        raise syntax_refusal(node.type)
    return [_value(node)]


def _command_name(node: Node | None) -> str:
    words = [] if node is None else node.children
    name = _text(words[0]) if len(words) == 1 and words[0].type == "word" else ""
    if "/" in name:
        raise Refusal(f"`{name}` names a program by path; only bare names of the whitelist are glances")
    if not _NAME.fullmatch(name):
        raise Refusal("the command name must be a plain word, not quoted, escaped or expanded")
    return name


def _redirect(node: Node, facts: _Tail) -> None:
    """Only fd duplication, `/dev/null` and reading a file with `<` are allowed."""
    if node.type != "file_redirect":
        raise syntax_refusal(node.type)
    operator = next((child.type for child in node.children if not child.is_named), "")
    targets = [child for child in node.children if child.is_named and child.type != "file_descriptor"]
    if not targets:
        if operator in (">&-", "<&-"):
            return
        raise Refusal("a redirection without a target")
    target = _value(targets[0])
    facts.extra.extend(targets[1:])
    if target == "/dev/null" and operator in (">", ">>", ">|", "&>", "&>>", ">&", "<"):
        facts.input |= operator == "<"
    elif operator in (">&", "<&") and target is not None and (target.isdigit() or target == "-"):
        pass
    elif operator == "<" and target is not None and not is_device(target):
        facts.input = True  # reading a file is read-only
    else:
        raise Refusal(
            "output redirection to a file" if ">" in operator else "input from a device or unknown file"
        )


def _value(node: Node) -> Arg:
    """The argument bash would pass, after quote removal; `None` when only known at run time."""
    if node.type in ("word", "number") and not node.is_missing:
        text = _text(node)
        if not _WORD_SPECIAL.search(text):
            return text  # the common case: a plain word needs no quote removal
    pieces: list[tuple[str, bool]] = []  # (text, quoted)
    if not _collect(node, pieces):
        return None
    bare = "".join(ch if not quoted else "\0" * len(ch) for ch, quoted in pieces)
    if any(c in bare for c in "*?[") or _brace_expands(bare):
        return None  # a glob or a brace expansion: the words are only known at run time
    return "".join(text for text, _ in pieces)


def _brace_expands(bare: str) -> bool:
    """Whether an unquoted `{…}` holds a `,` or `..` (so that bash expands it)."""
    for start in (i for i, c in enumerate(bare) if c == "{"):
        end = bare.find("}", start)
        if end > 0 and ("," in bare[start:end] or ".." in bare[start:end]):
            return True
    return False


def _collect(node: Node, pieces: list[tuple[str, bool]]) -> bool:
    """Append the literal pieces of `node`; False when part of it is an expansion."""
    kind = node.type
    if node.is_missing:
        raise Refusal("the shell parser could not understand the command")
    if kind in ("word", "number"):
        for escaped, plain in _ESCAPES.findall(_text(node)):  # `\x` is a quoted x; `\<newline>` is nothing
            pieces.append((escaped, True) if escaped else (plain, False))
        return True
    if kind == "raw_string":
        pieces.append((_text(node)[1:-1], True))
        return True
    if kind == "string":
        literal = True
        for child in node.children:
            if child.type == "string_content":
                pieces.append((re.sub(r'\\([$`"\\\n])', _unescape, _text(child)), True))
            elif child.type in ("simple_expansion", "expansion"):
                literal = _collect(child, pieces) and literal
            elif child.type == "$":
                pieces.append(("$", True))
            elif child.type != '"':
                raise syntax_refusal(child.type)
        return literal
    if kind == "concatenation":
        results = [_collect(child, pieces) for child in node.children]
        return all(results)
    if kind == "simple_expansion":
        names = [c for c in node.children if c.type != "$"]
        if len(names) != 1 or names[0].type not in ("variable_name", "special_variable_name"):
            raise syntax_refusal(node.type)
        return False
    if kind == "expansion":
        # Only `${NAME}`: operators can assign (`${X:=v}`) or nest a substitution.
        inner = [c.type for c in node.children]
        if inner != ["${", "variable_name", "}"]:
            raise Refusal("a parameter expansion with an operator")
        return False
    if kind in ("brace_expression", "ansi_c_string"):
        return False  # `$'…'` escapes are not decoded here: its value counts as unknown
    raise syntax_refusal(node.type)


def _unescape(match: re.Match[str]) -> str:
    return "" if match.group(1) == "\n" else match.group(1)
