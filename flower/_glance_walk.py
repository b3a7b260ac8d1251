"""The structural walk of `flower.glance`: from a tree-sitter-bash tree to the simple commands it runs.

`Walk` accepts only sequences, `&&`/`||` lists, pipelines, `!`, `[ … ]` and simple commands with
harmless redirections; it works out each argument's value after quote removal (`None` when only known
at run time) and whether standard input is a pipe, a file or the terminal, then asks the verb table in
`flower._glance_rules`. Anything else raises `Refusal`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter

from flower._glance_rules import Arg, Refusal, is_device, syntax_refusal, verb_rule

__all__ = ["Node", "Walk"]

Node = tree_sitter.Node

_ESCAPES = re.compile(r"\\([^\n])|\\\n|(.)", re.S)
_TEST_BRACKETS = re.compile(r"\[[ \t].*[ \t]\]", re.S)
_WORD_SPECIAL = re.compile(r"[\\*?\[{]")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*|\[")


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


class Walk:
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
