"""The structural walk of glance: from a tree-sitter-bash tree to the simple commands it runs.

`Walk` accepts only sequences, `&&`/`||` lists, pipelines, `!`, `[ … ]`, simple commands with
harmless redirections, and process substitutions `<(…)` whose commands pass the same way. For each
simple command it works out the words (`_words`), refuses paths that must not be read (`_paths`), then
asks the verb table (`_rules`), knowing whether standard input is a pipe, a file or the terminal.
Anything else raises `Refusal`. Lists are walked without recursion, and other nesting is bounded, so
that no command can exhaust the Python stack.

It follows the directory: `cd DIR` is accepted in a list joined by `&&` only (so that what follows runs
in DIR or not at all), and later paths are read from DIR; after the list, from either directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise

import tree_sitter

from ._metadata import metadata_refusal
from ._paths import UNKNOWN, join, path_refusal, reaches_root, resolve
from ._repo_config import git_refusal
from ._rules import NAMES_ONLY, PATTERN_RULES, TEXT_ONLY, follows_links, reads_recursively, verb_rule
from ._secrets import secret_refusal
from ._source import Source
from ._verb import Arg, Refusal
from ._words import Word, Words, syntax_refusal

Cwd = str | None
"""The directory a command runs in: a path (absolute when the hook knows it), or None when unknown."""

__all__ = ["MAX_NESTING", "Node", "Walk"]

Node = tree_sitter.Node

MAX_NESTING = 100
"""Pipelines, negations and redirections nested deeper than this are refused (lists are flattened)."""

_TEST_BRACKETS = re.compile(r"\[[ \t].*[ \t]\]", re.S)
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*|\[")
_NUMERIC_GLOB = re.compile(r"[0-9]*-[0-9]*")
_STANDARD_FDS = frozenset({"0", "1", "2", "-"})


@dataclass
class _Tail:
    """What the redirections of an enclosing statement do to its last simple command."""

    input: bool = False
    extra: list[Node] = field(default_factory=list)
    """Words after a redirection target: bash passes `ls >/dev/null -l` the `-l`."""


class Walk:
    """Walks the syntax tree of `source`; raises `Refusal` at the first part that is not a glance."""

    def __init__(self, source: Source, cwd: Cwd = None) -> None:
        self.source = source.parsed
        self.text = source.slice
        self.offset = source.at
        self.words = Words(source)
        self.segments: list[str] = []
        self.git_names: list[int] = []
        """Offsets in the command's bytes just after the name of each `git`, where hardening options go."""
        self.cwds: list[Cwd] = [cwd]
        """The directories the next command may run in (more than one after a list with a `cd`)."""
        self.start = cwd
        self.substitutions = 0
        """How many process substitutions `<(…)` enclose the part being checked."""

    def sequence(self, node: Node) -> None:
        """The program: statements separated by `;` or newlines; a trailing `&` is a background job."""
        for child in node.children:
            if child.type in (";", "comment"):
                continue
            if child.type == "&":
                raise Refusal("a background job (`&`)")
            self.statement(child, fed=False, tail=None, depth=0)

    def statement(self, node: Node, fed: bool, tail: _Tail | None, depth: int, cd: bool = False) -> None:
        """Check one statement.

        `fed`: the leftmost command of `node` follows a pipe. `tail`: what redirections do to its
        rightmost command. Both are stated by position because tree-sitter-bash nests `a | b && c`
        as `a | (b && c)`: the grouping is not bash's, but the order of commands and operators is.
        `cd`: `node` may be a `cd` (a part of a list joined by `&&` only).
        """
        if depth > MAX_NESTING:
            raise Refusal(f"the command nests more than {MAX_NESTING} levels deep")
        kind = node.type
        if kind == "command":
            self.command(node, fed, tail, cd)
        elif kind == "list":
            parts, operators = _flat_list(node)
            before = list(self.cwds)
            joined = all(operator == "&&" for operator in operators)
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                self.statement(
                    part,
                    fed=fed and i == 0,
                    tail=tail if last else None,
                    depth=depth + 1,
                    cd=joined and not last,
                )
            self.cwds = list(dict.fromkeys([*before, *self.cwds]))  # `cd` may have failed
        elif kind == "pipeline":
            # `|&` is `2>&1 |`: it only joins stderr to the pipe.
            parts = [c for c in node.children if c.type not in ("|", "|&", "comment")]
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                self.statement(part, fed=fed or i > 0, tail=tail if last else None, depth=depth + 1)
        elif kind == "redirected_statement":
            self.redirected(node, fed, tail, depth)
        elif kind == "test_command" and node.children[0].type == "[":
            self.segments.append(
                self.text(node.start_byte, node.end_byte)
            )  # `[ … ]` is the `test` builtin, read by the grammar
            if not _TEST_BRACKETS.fullmatch(self.segments[-1]):  # `[rm]` is a glob to bash
                raise Refusal("`[` and `]` must be words of their own")
            verb_rule("[")("[", [arg for child in node.children[1:-1] for arg in self._test_args(child)])
        elif kind == "negated_command":
            inner = [c for c in node.children if c.type != "!"]
            if len(inner) != 1:
                raise syntax_refusal(node.type)
            self.statement(inner[0], fed, tail, depth + 1)
        else:
            raise syntax_refusal(node.type)

    def redirected(self, node: Node, fed: bool, tail: _Tail | None, depth: int) -> None:
        """Redirections apply to the last simple command of the body (tree-sitter hangs them higher)."""
        body = node.child_by_field_name("body")
        if body is None:
            raise Refusal("a redirection without a command")
        facts = _Tail() if tail is None else tail
        refusals = []
        for child in node.children:
            try:
                if child.id != body.id:
                    self.redirect(child, facts)
            except Refusal as refusal:
                refusals.append(refusal)
        try:
            self.statement(body, fed, facts, depth + 1)  # first, so that the verdict lists the command
        except Refusal:
            if not refusals:
                raise
        if refusals:  # a refused redirection is the reason, even if the command is refused without it
            raise refusals[0]

    def command(self, node: Node, fed: bool, tail: _Tail | None, cd: bool = False) -> None:
        self.segments.append(self.text(node.start_byte, node.end_byte))
        facts = _Tail() if tail is None else tail
        name_node: Node | None = None
        nodes: list[Node] = []
        for child in node.children:
            if child.type == "command_name":
                name_node = child
            elif child.type == "comment":
                continue
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                self.redirect(child, facts)
            elif child.is_named and child.type != "variable_assignment":
                nodes.append(child)
            else:
                raise syntax_refusal(child.type)
        _check_split(name_node, nodes, self.text)
        name = _command_name(name_node, self.text)
        if name == "cd":
            self.change_directory(nodes, facts, fed, cd)
            return
        rule = verb_rule(name)
        words = [self.argument(word) for word in [*nodes, *facts.extra]]
        args = [word.arg(name in PATTERN_RULES) for word in words]
        self.check_paths(name, words, args)
        if name == "git" and (reason := git_refusal([arg if isinstance(arg, str) else None for arg in args],
                                                    list(self.cwds))):  # fmt: skip
            raise Refusal(f"`git` would print {reason}", secret=True)
        if name == "git" and name_node is not None:
            self.git_names.append(self.offset(name_node.end_byte))
        if rule(name, args) and not (fed or facts.input):
            raise Refusal(f"`{name}` would read the terminal here: nothing is piped or redirected into it")

    def argument(self, node: Node) -> Word:
        """A word of a command; a process substitution `<(…)` is checked as the commands it runs.

        Its value is a `/dev/fd/N` path known only at run time, which can only be read: it goes to a
        rule as a file name (`diff <(sort a) <(sort b)`), never as an option.
        """
        if node.type != "process_substitution":
            return self.words.word(node)
        if node.children[0].type != "<(" or node.children[-1].type != ")":
            raise Refusal("an output process substitution `>(…)` runs a command that receives output")
        self.substitutions += 1
        if self.substitutions > MAX_NESTING:
            raise Refusal(f"the command nests more than {MAX_NESTING} levels deep")
        cwds = list(self.cwds)  # a `cd` inside runs in a subshell
        for child in node.children[1:-1]:
            if child.type not in (";", "comment"):
                self.statement(child, fed=False, tail=None, depth=self.substitutions)
        self.cwds = cwds
        self.substitutions -= 1
        return Word(None, UNKNOWN, "/dev/fd/", "/dev/fd/63")

    def change_directory(self, nodes: list[Node], facts: _Tail, fed: bool, cd: bool) -> None:
        """`cd DIR` in a list joined by `&&`: DIR must be literal, and not a device or /proc directory.

        The jail runs the command in a shell of its own, so the directory never carries over to the
        next call (unlike the Bash tool's own `cd`): alone, or before `;`, a `cd` would mislead.
        """
        if not cd or fed or facts.extra:
            raise Refusal(
                "`cd` only as `cd DIR && command`: the directory does not carry over to the next call"
            )
        words = [self.words.word(node) for node in nodes]
        target = words[0].value if len(words) == 1 else None
        if target is None or target.startswith(("-", "+", "~")) or not target:
            raise Refusal("`cd` needs one directory written out in full (not `-`, `~`, `$VAR` or a glob)")
        for cwd in self.cwds:
            reason = path_refusal(target if "/" in target else target + "/", cwd)
            secret = not reason and secret_refusal(target, cwd)
            if reason or secret:
                raise Refusal(f"`cd` would go to {reason or secret}", secret=bool(secret))
        self.cwds = [_directory(cwd, target) for cwd in self.cwds]

    def path_refusal(self, template: str) -> str:
        """Why `template` must not be read from any directory the command may run in, or ''."""
        for cwd in self.cwds:
            reason = secret_refusal(template, cwd) or path_refusal(template, cwd)
            if reason:
                return reason
        return ""

    def check_paths(self, name: str, words: list[Word], args: list[Arg]) -> None:
        """Refuse devices and the like in any argument, a recursive read that may start at `/`, and a
        credential store (`_secrets`), even named to list it.

        A verb that never opens its arguments may name a device (`ls -l /dev/tty`), not list from `/`.
        """
        if any(word.recursive for word in words) and self.cwds != [self.start]:
            raise Refusal(
                "a recursive glob (`**`) after a `cd`: it may walk a tree outside the working directory"
            )
        for word in [w for w in words if w.recursive or name not in NAMES_ONLY]:  # `**` walks, whatever reads
            reason = next((r for template in _spellings(word) if (r := self.path_refusal(template))), "")
            if reason:
                secret = bool(self.secret_refusal(word.template))
                raise Refusal(f"`{name}` would read {reason}", secret=secret)
        recursive = reads_recursively(name, args)
        opened = words if name not in TEXT_ONLY else []
        # `~` first: the parser may not know it is no `/`, and its credential stores are the better reason
        self.check_secrets(name, [word for word in opened if (word.value or "").startswith("~")], recursive)
        if recursive:
            self.check_walk(name, words, args)
        self.check_secrets(name, opened, recursive)
        if recursive and (reason := self.secret_refusal(".", recursive=True)):  # with no path, it walks `.`
            raise Refusal(f"`{name}` would read {reason}", secret=True)
        paths = [(word.value, _relative_glob(word)) for word in words if not word.template.startswith("-")]
        for cwd in self.cwds:  # sizes and times of what it lists
            if reason := metadata_refusal(name, args, paths, cwd, recursive=recursive):
                raise Refusal(reason, secret=True)

    def check_secrets(self, name: str, words: list[Word], recursive: bool) -> None:
        """Refuse a word that names a credential store, or a tree that holds one when the verb walks it."""
        for word in words:
            walks = recursive or word.recursive
            templates = [word.root_template] if walks else _spellings(word)
            reason = next((r for t in templates if (r := self.secret_refusal(t, recursive=walks))), "")
            if reason:
                raise Refusal(f"`{name}` would read {reason}", secret=True)

    def check_walk(self, name: str, words: list[Word], args: list[Arg]) -> None:
        """A recursive read: not following links, not from `/`."""
        link = follows_links(name, args)
        if link:
            raise Refusal(
                f"`{name} {link}` follows symbolic links while walking: a link in the project may lead to "
                "a device or a named pipe"
            )
        for word in words:
            if not word.template.startswith("-") and any(
                reaches_root(word.root_template, cwd) for cwd in self.cwds
            ):
                raise Refusal(
                    f"`{name}` would walk the whole tree from `/` (through /proc and /dev, for minutes)"
                )

    def secret_refusal(self, template: str, *, recursive: bool = False) -> str:
        """Why `template` names credentials from any directory the command may run in, or ''."""
        return next((r for cwd in self.cwds if (r := secret_refusal(template, cwd, recursive=recursive))), "")

    def redirect(self, node: Node, facts: _Tail) -> None:
        """Only fd duplication onto 0-2, `/dev/null` and reading a file with `<` are allowed.

        A `{name}` right before the operator is refused: bash and zsh then store the new descriptor in
        the variable `name` (bash evaluates a subscript there, which can run a command).
        """
        if node.type != "file_redirect":
            raise syntax_refusal(node.type)
        if self.source[node.start_byte - 1 : node.start_byte] == b"}":
            raise Refusal("a `{name}` redirection assigns a file descriptor to a shell variable")
        operator = next((child.type for child in node.children if not child.is_named), "")
        targets = [child for child in node.children if child.is_named and child.type != "file_descriptor"]
        descriptor = next((c for c in node.children if c.type == "file_descriptor"), None)
        if (
            operator == "<"
            and descriptor is not None
            and self.text(descriptor.start_byte, descriptor.end_byte) != "0"
        ):
            raise Refusal(
                "input redirected to a descriptor other than 0 (`3<file`): the command never reads it"
            )
        if not targets:
            if operator in (">&-", "<&-"):
                return
            raise Refusal("a redirection without a target")
        _check_split(None, targets, self.text)
        word = self.words.word(targets[0])
        target = word.value
        facts.extra.extend(targets[1:])
        after = self.source[targets[0].end_byte : targets[0].end_byte + 1]
        if (
            operator == "<"
            and after == b">"
            and _NUMERIC_GLOB.fullmatch(self.text(targets[0].start_byte, targets[0].end_byte))
        ):
            raise Refusal("`<1-2>` is a numeric glob to zsh, a redirection to bash")
        if target == "/dev/null" and operator in (">", ">>", ">|", "&>", "&>>", ">&", "<"):
            facts.input |= operator == "<"
        elif operator in (">&", "<&") and target in _STANDARD_FDS:
            pass
        elif operator == "<" and target is not None and not (why := self.path_refusal(word.template)):
            facts.input = True  # reading a file is read-only
        elif operator == "<" and target is not None:
            raise Refusal(f"input from {why}")
        elif operator in (">&", "<&") and target is not None and target.isdigit():
            raise Refusal("a redirection to or from a descriptor other than 0, 1 and 2 (the shell's own)")
        else:
            raise Refusal(
                "output redirection to a file" if ">" in operator else "input from a device or unknown file"
            )

    def _test_args(self, node: Node) -> list[Arg]:
        """The arguments of `[ … ]`, flattened from the grammar's expressions, for the `test` rule.

        Inside `[ … ]`, `<` and `>` are redirections to bash, whatever the grammar calls them.
        """
        args: list[Arg] = []
        stack = [node]
        while stack:
            current = stack.pop()
            kind = current.type
            if kind in ("unary_expression", "binary_expression", "parenthesized_expression"):
                stack.extend(reversed(current.children))
            elif kind in ("<", ">", "<<", ">>"):
                raise Refusal("output redirection to a file")
            elif kind == "test_operator" or kind in ("!", "=", "==", "!=", "(", ")"):
                args.append(self.text(current.start_byte, current.end_byte))
            elif not current.is_named:
                raise syntax_refusal(kind)
            else:
                args.append(self.words.word(current).arg(patterns=False))
        return args


def _flat_list(node: Node) -> tuple[list[Node], list[str]]:
    """The parts of a `&&`/`||` list and the operators between them, in order; the grammar nests long
    lists one level per operator."""
    parts: list[Node] = []
    operators: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type != "list":
            parts.append(current)
            continue
        if any(not c.is_named and c.type not in ("&&", "||") for c in current.children):
            raise Refusal("a list joined by something other than `&&` or `||`")
        operators += [c.type for c in current.children if c.type in ("&&", "||")]
        stack.extend(reversed([c for c in current.children if c.is_named and c.type != "comment"]))
    return parts, operators


def _directory(cwd: Cwd, target: str) -> str:
    """The directory `cd target` goes to from `cwd`: resolved by the file system when absolute."""
    path = join(cwd, target)
    return resolve(path) or path


def _command_name(node: Node | None, text: Callable[[int, int], str]) -> str:
    words = [] if node is None else node.children
    name = (
        text(node.start_byte, node.end_byte) if node and len(words) == 1 and words[0].type == "word" else ""
    )
    if "/" in name:
        raise Refusal(f"`{name}` names a program by path; only bare names of the whitelist are glances")
    if not _NAME.fullmatch(name):
        raise Refusal("the command name must be a plain word, not quoted, escaped or expanded")
    return name


def _check_split(name_node: Node | None, nodes: list[Node], text: Callable[[int, int], str]) -> None:
    """Refuse two words with nothing between them: the shell reads them as one, the parser did not.

    tree-sitter-bash splits some words the shells keep whole (`/{\\dev,x}/zero` becomes `/{` and
    `\\dev,x}/zero`, while bash expands the whole word to `/dev/zero`), so each part would be checked
    as something it is not.
    """
    words = [name_node, *nodes] if name_node is not None else nodes
    for before, after in pairwise(words):
        if before.end_byte == after.start_byte:
            whole = text(before.start_byte, after.end_byte)
            raise Refusal(f"`{whole}` is one word to the shell but two to the parser")


def _relative_glob(word: Word) -> str:
    """The word's template, `./` first for a glob that starts the path (`*`: below the directory)."""
    glob = word.prefix == "" and word.text[:1] in ("*", "?", "[")
    return "./" + word.template if glob else word.template


def _spellings(word: Word) -> list[str]:
    """The word's template, and for `~/…` the path in this process's home too, so that the file system
    resolves it (`~/proj/link` is checked where the link leads, as `link` is from `~/proj`)."""
    value = word.value or ""
    if value.startswith("~/") and os.path.isabs(home := os.path.expanduser("~")) and home != "/":
        return [word.template, home.rstrip("/") + value[1:]]
    return [word.template]
