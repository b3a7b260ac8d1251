"""The parser's rules command by command, each row through `glance_verdict` as the wall calls it.

Rows that pin a rule's branches one at a time (an option that takes a value, an operand that is a file
or standard input), where the table of `tests/glance_table.py` holds one or two rows per command.
A command that would read standard input from the terminal is refused: that is how a rule's answer
(does it read stdin?) shows in a verdict.
"""

from __future__ import annotations

import pytest

from flower.glance import glance_verdict

JQ = [
    ("jq . f.json", True),
    ("jq .", False),
    ("jq . -", False),
    ("echo 1 | jq .", True),
    ("jq --arg a b . f.json", True),
    ("jq --arg a b .", False),
    ("jq --argjson a 1 . f.json", True),
    ("jq --slurpfile a f.json .", False),
    ("jq --rawfile a f . f.json", True),
    ("jq --slurpfile a - . f.json", False),
    ("jq -f prog f.json", True),
    ("jq -f prog", False),
    ("jq --from-file prog f.json", True),
    ("jq --from-file prog", False),
    ("jq -L lib . f.json", True),
    ("jq -L lib .", False),
    ("jq --indent 2 . f.json", True),
    ("jq --indent 2 .", False),
    ("jq --args . a b", False),
    ("jq --jsonargs . 1 2", False),
    ("jq . f.json --args a", True),
    ("jq -n 1", True),
    ("jq --null-input 1", True),
    ("jq -rn 1", True),
    ("jq -r 1", False),
    ("jq --raw-output 1", False),
    ("jq -n input", False),
    ("jq -n inputs", False),
    ("jq -nr input", False),
    ('jq -n "first(inputs)"', False),
    ("jq -n input f.json", True),
    ("jq -n -f prog", True),
    ("jq -- . f.json", True),
    ("jq . -- f.json", True),
    ("jq --", False),
]


@pytest.mark.parametrize(("command", "glance"), JQ, ids=[c for c, _ in JQ])
def test_jq_reads_the_terminal_only_without_a_file(command: str, glance: bool) -> None:
    verdict = glance_verdict(command)
    assert verdict.ephemeral is glance, verdict.reason
    if not glance:
        assert verdict.reason == "`jq` would read the terminal here: nothing is piped or redirected into it"
