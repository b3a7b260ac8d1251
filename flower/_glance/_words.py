"""What a word of the command becomes, under bash and under zsh: `Word`, from a tree-sitter-bash node.

The value is what the program receives after quote removal, or `None` when only known at run time. A
word is refused outright when either shell could run a command while expanding it:

- command, process and arithmetic substitution (`$(…)`, `` `…` ``, `<(…)`, `$((…))`, `$[…]`), and
  `${…}` with anything but a name inside (`${X:=v}` assigns, `${(e)X}` evaluates, `${a[…]}` subscripts);
- `$name[…]`: zsh reads it as a subscript, and evaluates a `$(…)` inside it, even quoted;
- a subscript after any parameter, however zsh spells the expansion (`$#name[…]`, `$+name[…]`,
  `$^name[…]`, `$=name[…]`, `$~name[…]`, `$?[…]`), quoted or not;
- `~[…]`: a zsh dynamic directory name calls a shell function;
- `'a''b'`: with RC_QUOTES zsh reads `''` inside single quotes as a quote, bash as nothing;
- a `$'…'` escape that the two read differently (octal, `\\u`, `\\c`, a NUL).

The value of `$'…'` is decoded, so `cat $'/dev/zero'` is checked as the path it is.

Other zsh readings only change the value: a leading `=` (EQUALS: `=ls` is the path of `ls`) makes it
known only at run time; `^`, `~` and `#` (EXTENDED_GLOB) and `{x}` (BRACE_CCL) make it a `Pattern`.

A word must also stay small once expanded: a brace expansion of more than `MAX_EXPANSION` words
(`x{1..100000000}`, `{a-z}{a-z}{a-z}` under BRACE_CCL), a glob with patterns in more than
`MAX_GLOB_DEPTH` components (`/sys/*/*/*/*`) and zsh's recursive glob `**` anywhere but below the
working directory (`/**/x`, `../**`, `$X/**`; `***` follows links) are refused: the shell builds them in
memory or walks a whole tree before the command starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter

from ._paths import UNKNOWN
from ._source import Source
from ._verb import Arg, Pattern, Refusal

__all__ = ["MAX_EXPANSION", "MAX_GLOB_DEPTH", "Word", "Words", "syntax_refusal"]

MAX_EXPANSION = 1_000
"""Words a brace expansion may become, at most (the product of its groups' sizes)."""
MAX_GLOB_DEPTH = 3
"""Path components of one word that may hold glob characters."""

Node = tree_sitter.Node

_SYNTAX_REFUSALS = {
    "subshell": "a subshell `( … )`",
    "compound_statement": "a `{ … }` group",
    "function_definition": "a function definition",
    "variable_assignment": "a variable assignment",
    "variable_assignments": "a variable assignment",
    "declaration_command": "a declaration (`export`, `declare`, `local` …) changes shell state or, as "
    "`export -p` and `declare -x`, prints the environment, which may hold credentials",
    "unset_command": "`unset` changes shell state",
    "test_command": "a `[[ … ]]` test",
    "heredoc_redirect": "a here-document",
    "herestring_redirect": "a here-string",
    "command_substitution": "command substitution",
    "process_substitution": "process substitution",
    "arithmetic_expansion": "arithmetic expansion (`$((…))` or `$[…]`)",
    "translated_string": 'a `$"…"` string',
    "if_statement": "control flow (`if`)",
    "for_statement": "control flow (`for`)",
    "c_style_for_statement": "control flow (`for`)",
    "while_statement": "control flow (`while`)",
    "case_statement": "control flow (`case`)",
}


def syntax_refusal(node_type: str) -> Refusal:
    """The refusal for a tree-sitter-bash node type that a glance does not accept."""
    reason = _SYNTAX_REFUSALS.get(node_type, f"shell syntax a glance does not accept ({node_type!r})")
    return Refusal(reason, secret=node_type == "declaration_command")  # `export -p` prints the environment


@dataclass(frozen=True)
class Word:
    """One word after expansion, as far as it is known before running the command."""

    value: str | None
    """The argument bash passes after quote removal; `None` when known only at run time."""
    template: str
    """The literal text with `UNKNOWN` for each run-time part, for the path checks."""
    prefix: str | None = None
    """For a glob, a brace expansion or a word a zsh option reads as a pattern: the literal text that
    every expansion starts with. `None` for a plain word or one with a variable in it."""
    text: str = ""
    """The text after quote removal, pattern characters included (what a `Pattern` shows)."""
    walk: str | None = None
    """The template that `reaches_root` checks when it differs from `template`: a glob character there
    stands for a name (a glob yields names, never `/`), except in a component with a `.` (`.*` may be
    `..`). `None`: the same as `template`."""
    recursive: bool = False
    """A zsh recursive glob (`src/**/*.py`): it walks the tree below the working directory."""

    @property
    def root_template(self) -> str:
        """The template to check for a recursive read that may start at `/`."""
        return self.template if self.walk is None else self.walk

    def arg(self, patterns: bool) -> Arg:
        """The value for a rule: a `Pattern` only to a rule that takes them, else `None` for one."""
        if self.prefix is None:
            return self.value
        if patterns:
            return Pattern(self.text, self.prefix)
        if self.prefix.startswith("-") or ("{" in self.text and not self.prefix):
            raise Refusal(f"`{self.text}`: a pattern or brace expansion may become any option (`{{-r,}}`)")
        return None


_LITERAL, _QUOTED, _UNKNOWN = 0, 1, 2
_ESCAPES = re.compile(r"\\([^\n])|\\\n|(.)", re.S)
_PLAIN_WORD = re.compile(r"(?!=)[^\\*?\[\]{}^~#]*")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_BRACES = re.compile(r"\{[^{}]*\}")
_GLOB = frozenset("*?[")
_RUNTIME_CHARS = frozenset("*?[]{},^~#")
"""Unquoted characters that a glob, brace expansion or zsh pattern reads: unknown in a path template."""


class Words:
    """Evaluates the words of one parsed command."""

    def __init__(self, source: Source) -> None:
        self.source = source.parsed
        self.slice = source.slice

    def _text(self, node: Node) -> str:
        return self.slice(node.start_byte, node.end_byte)

    def word(self, node: Node) -> Word:
        if node.type in ("word", "number") and not node.is_missing:
            text = self._text(node)
            if _PLAIN_WORD.fullmatch(text):
                return Word(text, text)  # the common case: nothing to remove or expand
        self._check_subscripts(node)
        pieces: list[tuple[str, int]] = []
        self._ranges: list[int] = []
        self._collect(node, pieces)
        return _evaluate(pieces, self._ranges)

    def _check_subscripts(self, node: Node) -> None:
        """Refuse a `[` right after a parameter, in any of zsh's spellings, outside single quotes.

        zsh evaluates the subscript (and a `$(…)` inside it, even single-quoted) after `$name`, and
        after `$#name`, `$+name`, `$^name`, `$=name`, `$~name` and their combinations, and after special
        parameters (`$?[…]`, `$$[…]`, `$*[…]`): the text is checked rather than the grammar's nodes, which
        read `$#` as a parameter of its own and `HOME[` as a literal.
        """
        text = bytearray(self.source[node.start_byte : node.end_byte])
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("raw_string", "ansi_c_string"):  # no expansion inside single quotes
                start, end = current.start_byte - node.start_byte, current.end_byte - node.start_byte
                text[start:end] = b"'" * (end - start)
            else:
                stack.extend(current.children)
        if _SUBSCRIPT.search(_BACKSLASHED.sub(b"__", bytes(text))):
            raise Refusal("a `[` after a parameter (`$#name[…]`, `$+name[…]`…): zsh evaluates the subscript")

    def _after(self, node: Node) -> bytes:
        return self.source[node.end_byte : node.end_byte + 1]

    def _collect(self, node: Node, pieces: list[tuple[str, int]]) -> None:
        """Append the pieces of `node`: (text, literal / quoted / unknown)."""
        kind = node.type
        if node.is_missing:
            raise Refusal("the shell parser could not understand the command")
        if kind in ("word", "number"):
            for escaped, plain in _ESCAPES.findall(self._text(node)):
                pieces.append((escaped, _QUOTED) if escaped else (plain, _LITERAL))
        elif kind == "raw_string":
            if self._after(node) == b"'":
                raise Refusal("`''` between single quotes, which zsh (RC_QUOTES) reads as a quote")
            pieces.append((self._text(node)[1:-1], _QUOTED))
        elif kind == "string":
            for child in node.children:
                if child.type == "string_content":
                    text = self._text(child)
                    pieces.append((re.sub(r'\\([$`"\\\n])', _unescape, text), _QUOTED))
                elif child.type in ("simple_expansion", "expansion"):
                    self._collect(child, pieces)
                elif child.type == "$":
                    pieces.append(("$", _QUOTED))
                elif child.type != '"':
                    raise syntax_refusal(child.type)
        elif kind == "concatenation":
            for child in node.children:
                self._collect(child, pieces)
        elif kind == "simple_expansion":
            names = [c for c in node.children if c.type != "$"]
            if len(names) != 1 or names[0].type not in ("variable_name", "special_variable_name"):
                raise syntax_refusal(kind)
            if self._after(node) == b"[":
                raise Refusal("`$name[…]`: zsh reads it as a subscript, which can run a command")
            _check_name(self._text(names[0]))
            pieces.append(("", _UNKNOWN))
        elif kind == "expansion":
            if [c.type for c in node.children] != ["${", "variable_name", "}"]:
                raise Refusal("a parameter expansion with an operator")
            _check_name(self._text(node.children[1]))
            pieces.append(("", _UNKNOWN))
        elif kind == "ansi_c_string":
            pieces.append((_ansi_c(self._text(node)[2:-1]), _QUOTED))
        elif kind == "brace_expression":
            self._ranges.append(_range_size(self._text(node)))
            pieces.append(("", _UNKNOWN))
        elif kind == "$":
            pieces.append(("$", _LITERAL))
        else:
            raise syntax_refusal(kind)


_SET_BY_THE_COMMAND = frozenset({"_", "BASH_COMMAND", "ZSH_DEBUG_CMD"})
"""Variables whose value the command itself writes: `$_` is the last argument of the previous command
(`echo /dev/zero; cat $_`), `$BASH_COMMAND` the text of the current one."""


def _check_name(name: str) -> None:
    if name in _SET_BY_THE_COMMAND:
        raise Refusal(f"`${name}` holds text the command itself wrote (`echo /dev/zero; cat $_`)")
    if name == "CLAUDE_CONFIG_DIR":
        raise Refusal(
            "`$CLAUDE_CONFIG_DIR` names the CLI's configuration directory, a credential store (its OAuth "
            "tokens, transcripts), which a glance does not read",
            secret=True,
        )


_SUBSCRIPT = re.compile(rb"\$[#+^=~]*(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[-?$!#*@_])\[")
_BACKSLASHED = re.compile(rb"\\.", re.S)
_RANGE = re.compile(r"\{(-?[0-9]+|[^{}.])\.\.(-?[0-9]+|[^{}.])(?:\.\.(-?[0-9]+))?\}")
_INNERMOST = re.compile(r"\{[^{}]*\}")


def _range_size(text: str) -> int:
    """How many words a brace range (`{1..9}`, `{a..z}`, `{1..9..2}`) becomes; unreadable: too many."""
    match = _RANGE.fullmatch(text)
    if match is None:
        return MAX_EXPANSION + 1
    first, last, step = match.groups()
    if len(first) == 1 and len(last) == 1 and not (first.isdigit() and last.isdigit()):
        span = abs(ord(last) - ord(first))
    elif first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        span = abs(int(last) - int(first))
    else:
        return MAX_EXPANSION + 1
    return span // max(1, abs(int(step or 1))) + 1


def _expansion_size(bare: str, ranges: list[int]) -> int:
    """An upper bound of the words a word's brace expansion becomes, under bash and zsh's BRACE_CCL.

    The innermost groups are sized and replaced until none is left: `{a,b}` is 2, `{a..z}` 26, and a
    group without a comma, `{ab}`, as many characters as zsh's BRACE_CCL may make of it (a range `a-z`
    counts its span).
    """
    size = 1
    for count in ranges:
        size *= count
    while size <= MAX_EXPANSION and (group := _INNERMOST.search(bare)):
        inner = group.group()[1:-1]
        if "," in inner:
            size *= inner.count(",") + 1
        elif ".." in inner:
            size *= _range_size(group.group())
        else:
            size *= min(256, len(inner) + sum(abs(ord(b) - ord(a)) for a, b in _pairs(inner)))
        bare = bare[: group.start()] + "x" + bare[group.end() :]
    return size


def _pairs(text: str) -> list[tuple[str, str]]:
    """The `a-z` ranges of a BRACE_CCL group."""
    return [(text[i - 1], text[i + 1]) for i in range(1, len(text) - 1) if text[i] == "-"]


def _check_glob_depth(bare: str, pieces: list[tuple[str, int]]) -> bool:
    """Refuse a glob that walks too much; return whether it is a recursive glob below the directory."""
    if "**" in bare:
        _check_recursive(pieces)
    deep = sum(bool(_GLOB.intersection(part)) for part in bare.split("/"))
    if deep > MAX_GLOB_DEPTH:
        raise Refusal(
            f"a glob with patterns in more than {MAX_GLOB_DEPTH} path components walks a large tree"
        )
    return "**" in bare


def _marked(piece: str, kind: int) -> str:
    if kind == _UNKNOWN:  # one UNKNOWN in `text`, whatever it holds
        return "\1" * max(1, len(piece))
    return "".join("/" if c == "/" else "\1" for c in piece) or "\1"


def _check_recursive(pieces: list[tuple[str, int]]) -> None:
    """`**` passes only below the working directory: after literal components that do not climb."""
    text = "".join(piece if kind != _UNKNOWN else UNKNOWN for piece, kind in pieces)
    # quoted text marked `\1` (no glob there) but its `/` kept, so that `text` and `marked` have as many
    # components (a quoted `"a/b"` is two; it failed closed as an internal error before)
    marked = "".join(piece if kind == _LITERAL else _marked(piece, kind) for piece, kind in pieces)
    at = marked.find("**")
    if marked.startswith("***", at):
        raise Refusal("zsh's `***` glob follows symbolic links through the whole tree")
    before, shape = text[:at], marked[:at]
    parts = list(zip(before.split("/")[:-1], shape.split("/")[:-1], strict=True))
    if (
        before.startswith(("/", "~"))
        or UNKNOWN in before
        or any(part == ".." or ("." in part and _GLOB.intersection(glob)) for part, glob in parts)
    ):
        raise Refusal(
            "a recursive glob (`**`) that may start outside the working directory walks a whole tree"
        )


def _evaluate(pieces: list[tuple[str, int]], ranges: list[int]) -> Word:
    bare = "".join(text if kind == _LITERAL else "\1" * len(text) for text, kind in pieces)
    if ranges or "{" in bare:
        size = _expansion_size(bare, ranges)
        if size > MAX_EXPANSION:
            raise Refusal(f"a brace expansion of more than {MAX_EXPANSION:,} words (`x{{1..100000000}}`)")
    recursive = bool(_GLOB.intersection(bare)) and _check_glob_depth(bare, pieces)
    literal = "".join(text for text, kind in pieces if kind != _UNKNOWN)
    template = "".join(_template(text, kind) for text, kind in pieces)
    if _GROUPS.search(bare):
        template = _collapsed(pieces)
    unknown = any(kind == _UNKNOWN for _, kind in pieces)
    if bare.startswith("~["):
        raise Refusal("`~[…]`: a zsh dynamic directory name calls a shell function")
    if bare.startswith("~"):
        unknown = unknown or not (bare == "~" or bare.startswith("~/"))
    if unknown or bare.startswith("="):  # zsh (EQUALS) reads `=ls` as the path of the `ls` program
        return Word(None, template)
    if bare == "{}":  # bash and zsh leave an empty pair of braces as it is (`find -exec … {} +`)
        return Word("{}", "{}")
    special = [i for i, c in enumerate(bare) if c in "*?[^#" or (c == "~" and i)]
    braces = _BRACES.search(bare)
    if braces:
        special.append(braces.start())
    if not special:
        return Word(literal, template)
    expands = bool(_GLOB.intersection(bare) or _BRACE_EXPANSION.search(bare))
    walk = None if braces or not _GLOB.intersection(bare) else _glob_walk(pieces)
    return Word(None if expands else literal, template, literal[: min(special)], literal, walk, recursive)


_GROUPS = re.compile(r"\{[^{}]*\}|\[!?\]?[^\]/]*\]")
"""A brace group (`{e,x}`) or a bracket expression (`[!.]`): each stands for other text, as a whole."""


def _collapsed(pieces: list[tuple[str, int]]) -> str:
    """The word's template with each unquoted brace group and bracket expression one `UNKNOWN`, innermost
    first: `~/.n{e,x}trc` may be `~/.netrc`, so its template is `~/.n…trc`, not `~/.n…e…x…trc`."""
    chars: list[tuple[str, str]] = []  # (the character as `bare` has it, its template)
    for text, kind in pieces:
        if kind == _UNKNOWN:
            chars.append(("\1", UNKNOWN))
        elif kind == _QUOTED:
            chars += [("\1", c) for c in text]
        else:
            chars += [(c, UNKNOWN if c in _RUNTIME_CHARS else c) for c in text]
    while match := _GROUPS.search("".join(bare for bare, _ in chars)):
        chars[match.start() : match.end()] = [("\1", UNKNOWN)]
    return "".join(template for _, template in chars)


def _glob_walk(pieces: list[tuple[str, int]]) -> str | None:
    """The template of a glob word where `*`, `?` and `[…]` in a component without a `.` are a name.

    Only for a relative path without `..`: after `/`, `~` or `..` a glob may match `proc` (`/*`, `../*`).
    """
    text = "".join(_template(text, kind) if kind != _LITERAL else _glob_chars(text) for text, kind in pieces)
    if text.startswith(("/", UNKNOWN)) or ".." in text.split("/"):
        return None
    return "/".join(
        part.replace(_NAME_CHAR, UNKNOWN) if "." in part else part.replace(_NAME_CHAR, "x")
        for part in text.split("/")
    )


_NAME_CHAR = "\1"


def _glob_chars(text: str) -> str:
    """Literal text with `*?[]` as `_NAME_CHAR` and the other pattern characters as `UNKNOWN`."""
    return "".join(_NAME_CHAR if c in "*?[]" else UNKNOWN if c in _RUNTIME_CHARS else c for c in text)


def _template(text: str, kind: int) -> str:
    if kind == _UNKNOWN:
        return UNKNOWN
    if kind == _QUOTED:
        return text
    return "".join(UNKNOWN if c in _RUNTIME_CHARS else c for c in text)


_ANSI_C = re.compile(r"\\(x[0-9a-fA-F]{2}|[abeEfnrtv\\'\"]|.?)", re.S)
_ANSI_C_LETTERS = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ANSI_C_LETTERS |= {"v": "\v", "\\": "\\", "'": "'", '"': '"'}


def _ansi_c(body: str) -> str:
    """The value of `$'body'`: its escapes decoded where bash and zsh agree, else a refusal.

    Both read `\\n`, `\\t`, `\\e`, `\\\\`, `\\'`, `\\xHH` … alike; octal, `\\u`, `\\c`, and zsh's `\\M-`
    and `\\C-` differ in their details, and a NUL ends the word in bash only: those are refused.
    """

    def decode(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape in _ANSI_C_LETTERS:
            return _ANSI_C_LETTERS[escape]
        if escape.startswith("x") and len(escape) == 3 and 0 < int(escape[1:], 16) < 0x80:
            return chr(int(escape[1:], 16))
        raise Refusal(f"a `$'…'` escape that bash and zsh read differently (`\\{escape}`)")

    return _ANSI_C.sub(decode, body)


def _unescape(match: re.Match[str]) -> str:
    return "" if match.group(1) == "\n" else match.group(1)
