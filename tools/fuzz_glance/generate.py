"""Random shell text for the glance fuzzer: whitelisted verbs mixed with mutating ones, in tricky syntax.

Besides quoting, continuations, comments, redirections and substitutions, it generates the classes an
audit found: `{name}` descriptor redirections on every operator, subscripts in every expansion
position (for bash and for zsh), spellings of devices and /proc paths, endless options, and zsh-isms
(`=(…)`, glob qualifiers, `$=X`, `~[…]`, EXTENDED_GLOB and BRACE_CCL words, RC_QUOTES). Paths stay
inside the case directory (`~` is the working directory) but for the device and /proc spellings.
"""

from __future__ import annotations

import random
import re

from flower._glance._rules import RULES

__all__ = ["MUTATING", "READ_ONLY", "SEEDS", "SHELL_STATE", "Generator"]


def _words(text: str) -> list[str]:
    return text.split()


READ_ONLY = sorted(RULES)
MUTATING = _words("rm touch mv cp tee mkdir chmod ln dd truncate sh bash zsh xargs sleep nohup timeout")
SHELL_STATE = _words("cd pushd export eval exec source . read alias set unset shopt setopt trap kill")
ARGS = [
    *_words("f a.txt out src/ . .. ~ ~/x ../x /dev/null /dev/zero - -- * *.txt ?.txt [ab] {a,b} {1..2}"),
    *_words("a#b ] $HOME ${HOME} $X ${X:-y} $IFS a${IFS}b $? -l -n -o -i -f -e -c -v -s -d -C -r -5f -uo"),
    *_words("-delete -exec -fprint -name --output=out --out=o --in-place --follow --get --list -I +%s"),
    *_words(".[] p 1,2p s/a/b/ status log diff branch tag config stash remote list user.name add commit"),
    "'s/a/b/w out'", "'1e rm x'", "'{print}'", """'{print > "out"}'""", """'BEGIN{system("x")}'""",
    "\u00e9", "\uff4c\uff53", "\u217cs", "a\u00a0b",  # lookalikes of `ls`, a no-break space
]  # fmt: skip
DEVICES = [
    *_words("//dev/zero /./dev/zero /dev//zero /tmp/../dev/zero ../../../../../../../../dev/zero"),
    *_words("~/../../../../../../dev/zero $HOME/../../../../../../dev/zero /d?v/zero /*/zero /dev/stdin"),
    *_words("/proc/self/root/dev/zero /proc/self/fd/0 /proc/self/cwd/../../../../../dev/zero /proc/kmsg"),
    *_words("/proc/cpuinfo /proc/self/status /proc/1/root/dev/zero /dev/fd/0 /{dev,x}/zero"),
    *_words("--file=/dev/zero -f/dev/zero x=/dev/zero /inet/tcp/0/127.0.0.1/9 //inet/tcp/0/127.0.0.1/9"),
]
ZSH_WORDS = [
    "=(touch x)", *_words("=ls =touch *(e:touch:) a(N) *(+touch) ~[touch] $=X $~X $^X $+X $#HOME"),
    *_words("HEAD^ HEAD~1 a~b x#y {ab} @{u} 'a''b' $HOME[1] \"$HOME[1]\" $path[1] ${(e)X} ${X:s/a/b/}"),
    "<1-2>", "&|", ">!", "$HOME['$(touch x)']", "\"$path['$(touch x)']\"", "${(e):-'$(touch x)'}",
]  # fmt: skip
SUBSCRIPTS = [
    "'a[$(touch x)]'", "'path[$(touch x)]'", "'HOME[`touch x`]'", "a[0]", "'x[1]'",
    "$a['$(touch x)']", "${a[$(touch x)]}", "${#a[$(touch x)]}", "${x:$(touch x):1}",
    "$((a[$(touch x)]))", "$[x]", "$[a[1]]",
]  # fmt: skip
ENDLESS = _words("+f +cf +lf +5f -5cf --fo --follow=name -F -s1 -c9")
ROOTS = _words("/ // /. ../../../../../../../.. -r -R")
"""Searches from `/` meet /proc/kmsg; only recursive searches get them: `du /` is only slow."""
RECURSIVE = _words("grep rg diff")
FIRST_ARGS = {  # a likely first argument, so that verbs with strict rules get accepted often enough
    "git": _words("status log diff show branch tag config stash remote reflog -C --no-pager describe -c"),
    "sed": _words("-n p s/a/b/ 1,2p -i -e"),
    "awk": ["'{print}'", "'BEGIN{print 1}'", "-F:"],
    "find": _words(". src -name"),
    "printf": ["%s\\n", "x", "%d", "'%.*s'", "%x"],
    "jq": _words(". .a -n"),
    "tail": _words("-n1 +f -f +cf"),
    "test": _words("-v -eq -n -f"),
    "free": _words("-m -s"),
    "hostname": _words("-s -f -I"),
    "command": _words("-v -V -p"),
    "ulimit": _words("-a -n -Hn"),
    "env": _words("-0 -i -u"),
    "date": _words("-f +%s -d"),
}
SEPARATORS = [
    ";", "; ", " && ", "&&", " || ", " | ", "|", " |& ", " & ", "&", "\n", "\n", "\n", " \n", "\n\t",
    "\n\n", " \\\n", " && \\\n", " |\n", "\r\n", " ;; ", " #c\n", ";#c\n", " &| ",
]  # fmt: skip
REDIRECTS = [
    *_words(">out >>out 2>out <f <a.txt &>out >|out 2>&1 >&2 1>&- >/dev/null 2>/dev/null &>/dev/null"),
    *_words("</dev/null <>f 3>out >&out >~/x >../x <<<x <<<$(x) >(x) <(x) >&9 <&9 3>&1 </dev/zero"),
    *_words("<//dev/zero </proc/self/fd/0 >!out"),
]
FD_VARIABLES = [*_words("{a} {PATH} {HOME} {IFS} {a[1]}"), "{a[$(touch x)]}", "{a['$(touch x)']}"]
FD_OPERATORS = _words("> >> < <> >& <& >&- <&- >| &> <<<")
HEREDOCS = ("<<EOF", "<<'EOF'", '<<"EOF"', "<<-EOF", "<<\\EOF")
NOISE = list("\r\t\v\x1b\u00a0\u200b#\\'\"`$(){};&|<>\n!*?[]=~^")
SEEDS = ("a.txt", "f", "-o", "src/x.py")


class Generator:
    """Random shell text, deterministic for a given `random.Random`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.heredocs: list[str] = []

    def command(self) -> str:
        self.heredocs = []
        text = self.sequence(depth=0)
        if self.heredocs:
            text += "\n" + "".join(self.heredocs)
        for _ in range(self.rng.choice((0, 0, 0, 0, 0, 1, 2))):  # a stray character anywhere
            at = self.rng.randrange(len(text) + 1)
            text = text[:at] + self.rng.choice(NOISE) + text[at:]
        return text

    def sequence(self, depth: int) -> str:
        parts = [self.pipeline(depth)]
        for _ in range(self.rng.choice((0, 0, 1, 1, 2, 3))):
            parts += [self.rng.choice(SEPARATORS), self.pipeline(depth)]
        if self.rng.random() < 0.1:
            parts.append(self.rng.choice(("#", " # ", " #")) + self.rng.choice(("x", " rm x", "\nrm x")))
        return "".join(parts)

    def pipeline(self, depth: int) -> str:
        text = self.statement(depth)
        for _ in range(self.rng.choice((0, 0, 0, 1, 1, 2))):
            text += self.rng.choice((" | ", "|", " |& ", " |\n")) + self.statement(depth)
        return text

    def statement(self, depth: int) -> str:
        r, simple = self.rng.random(), self.simple(depth)
        if r < 0.88 or depth > 1:
            return simple
        inner, verb = self.sequence(depth + 1), self.rng.choice(MUTATING)
        return self.rng.choice(
            (f"( {inner} )", f"{{ {inner}; }}", f"! {simple}", f"if {simple}; then {inner}; fi",
             f"[ -f {self.word()} ]", f"[[ -f f ]] && {simple}", f"for v in a; do {inner}; done",
             f"f() {{ {inner}; }}; f", f"time {simple}", f"{simple} &", f"[{verb}]", f"\\{verb}",
             f"[ {self.word()} -eq 1 ]", f"[ -v {self.word()} ]", f"cd src && {simple}")
        )  # fmt: skip

    def simple(self, depth: int) -> str:
        rng = self.rng
        verb = rng.choice(READ_ONLY if rng.random() < 0.85 else MUTATING + SHELL_STATE)
        words = [self.quoted(verb, 0.05 if verb in RULES else 0.3)]  # a quoted verb may slip through
        if verb in FIRST_ARGS and rng.random() < 0.7:
            words.append(self.quoted(rng.choice(FIRST_ARGS[verb]), 0.1))
        words += [self.word(depth) for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4)))]
        if verb in RECURSIVE and rng.random() < 0.3:
            words += [rng.choice(ROOTS) for _ in range(rng.choice((1, 2)))]
        if rng.random() < 0.05:
            words.insert(0, rng.choice(("X=1", "IFS=/", "PATH=.", "a[$(x)]=1", "GIT_DIR=sub")))
        for _ in range(rng.choice((0, 0, 0, 0, 1, 2))):
            words.insert(rng.randrange(len(words) + 1), self.redirect())
        return rng.choice((" ",) * 40 + ("\t", "  ", " \\\n", " \\\n", "\\\n")).join(words)

    def word(self, depth: int = 2) -> str:
        rng = self.rng
        r = rng.random()
        if depth < 2 and r < 0.04:
            inner = self.sequence(depth + 1)
            return rng.choice((f"$({inner})", f"`{inner}`", f'"$({inner})"', f"<({inner})", f">({inner})"))
        if r < 0.15:
            return rng.choice(READ_ONLY + MUTATING)  # a verb as an argument (`xargs rm`, `git log | tee`)
        if r < 0.22:
            return rng.choice(DEVICES)
        if r < 0.27:
            return rng.choice(ZSH_WORDS)
        if r < 0.31:
            return rng.choice(SUBSCRIPTS)
        if r < 0.34:
            return rng.choice(ENDLESS)
        return self.quoted(rng.choice(ARGS), 0.2)

    def quoted(self, word: str, rate: float) -> str:
        """`word`, sometimes quoted, escaped or bracketed in one of the ways bash reads differently."""
        rng = self.rng
        if rng.random() >= rate:
            return word
        cut = rng.randrange(len(word) + 1)
        head, tail = word[:cut], word[cut:]
        single = "'" + word.replace("'", "'\\''") + "'"
        double = '"' + re.sub(r'([\\"$`])', r"\\\1", word) + '"'
        ansi = "$'" + word.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return rng.choice(
            (single, double, ansi, "".join("\\" + c for c in word), f"{head}''{tail}", f'{head}""{tail}',
             f"{head}\\{tail}", f"[{word}]", f"{{{word},}}", f"{word}#", f"{head}^{tail}", f"{{{word}}}")
        )  # fmt: skip

    def redirect(self) -> str:
        r = self.rng.random()
        if r < 0.08:
            self.heredocs.append(self.rng.choice(("x", "$(x)", "`x`", "$X", "EOF x", "\tEOF")) + "\nEOF\n")
            return self.rng.choice(HEREDOCS)
        if r < 0.2:  # a descriptor variable, glued to any operator
            operator = self.rng.choice(FD_OPERATORS)
            target = "" if operator.endswith("-") else self.rng.choice(("/dev/null", "f", "2", "0", "x"))
            return self.rng.choice(FD_VARIABLES) + operator + target
        return self.rng.choice(REDIRECTS)
