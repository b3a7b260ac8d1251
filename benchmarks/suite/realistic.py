"""How the scripted agent plays: the ideal player, or a realistic one calibrated on real transcripts.

The **ideal** player answers a probe from a pointer with one exact grep, runs commands
as given, and writes nothing but its tool calls. The **realistic** player differs where real agents were
measured to differ (`benchmarks/calibrate.py` over 18 real Claude Code transcripts, 717 model replies,
245 Bash calls, 199 Reads, 100 look-up runs; docs/benchmarks.md states the figures):
- it pipes a command's output through `tail`, `head` or `grep` 16.7 % of the time (56 % tail, 27 %
  head, 17 % grep among piped ones); a fact cut off that way must be looked for again;
- a retrieval takes 1 call 48 % of the time, 2 calls 18 %, 3 calls 34 %: the calls before the last are
  looks that miss (a Read of the file's first 100 lines as often as look-ups are Reads, 57 %, else a
  loose `grep | head`), and the last call is a whole-file Read 32 % of the time (look-ups that are Reads,
  57 %, times Reads of a whole file, 57 %), else the exact grep; a whole Read of a file over the CLI's
  Read cap fails, and the agent then greps;
- every reply of the main thread (or coordinator) carries prose: a thinking block in 58 % of replies
  (median 180 chars, 90th percentile 1,400) and a text block in 58 % (median 100, p90 750), which the
  model pays as output and the next requests carry as input. A worker's replies carry what real
  subagents write (`benchmarks/calibrate_workers.py`, `WORKER_THINKING`, `WORKER_TEXT`): no thinking
  block, and a short text in 87 % of replies (median 77 chars, p90 119); `worker_prose="main"` keeps
  the main thread's figures for workers (the sensitivity row `main prose`).
- a worker's final report runs to a size drawn from the reports of real agents **defined in a project
  with a set report format that points to files** (`flower.report._measured.REPORT_CHARS_DECILES`: median
  1,946 chars, 91 % under flower's 4,000-char report limit), the closest real match to flower's
  `WORKER_RULES`: a uniform draw placed linearly between the deciles (min, nine deciles, max), so every
  length between two deciles can come out, not only the eleven measured ones. The report is the
  structured lines, then prose. The `unbriefed` reports (the *pessimistic* row: workers that ignore the
  rule) draw from the 11 subagent reports of the calibration transcripts instead (median 9,002 chars, 10
  of 11 over the limit; `timing.json`, agents never asked to be brief). flower's report cap saves a long
  report to a file and the coordinator gets its head; elsewhere the report reaches the main thread whole.
- an output saved to a file and shown as a preview and a path (flower's spill, the CLI's own save of
  a very long output) is Read back to be looked at, by the next reply, with probability `reads_look`
  (default `PREVIEW_READ_BACK_SHARE`: real agents read 5 of 29 such previews back, each by the next
  reply or the one after, the ones under the CLI's Read cap whole, the one over it in two windows;
  `flower.report._measured`), once per output, drawn by the run that printed it;
- with probability `reads_cut` (default `READS_CUT`, 0.2: a caller opened a document such a report
  pointed to in 5 of 23 real cases, `flower.report._measured.READ_BACK_SHARE`), the coordinator Reads a
  cut report's saved file before its next move, once per report.
Every draw is seeded by (seed, what it is about), never by a request's position, so two strategies
played with one seed draw alike wherever they do alike (common random numbers): they pipe the same
commands, take the same number of calls for the same fact, and a reply that does the same thing (runs
`out-007`, looks for fact `K`, reports task `c2`) draws its prose from the same seed, whether a worker or
the main thread writes it (a worker's shaped by the subagent figures, so it writes less). What has no
counterpart in the other strategy (a coordinator's mandate, a handoff, a compaction, a Read of a cut
report, a retry after a refusal it could not see) draws on its own.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from flower.report._measured import (
    PREVIEW_READ_BACK_SHARE,
    REPORT_CHARS_DECILES,
    SUBAGENT_TEXT,
    SUBAGENT_THINKING,
)

from .timing import at_quantile

PIPE_SHARE = 0.167
PIPES = (("tail", 0.561), ("head", 0.268), ("grep", 0.171))
RETRIEVAL_CALLS = ((1, 0.48), (2, 0.18), (3, 0.34))
LOOKUP_READ_SHARE = 0.572
"""Look-up calls that are Reads (the rest: Grep, Glob, a Bash grep/cat/head/tail...)."""
WHOLE_READ_SHARE = 0.568
"""Reads of a whole file (no offset/limit)."""
READ_WHOLE_SHARE = round(LOOKUP_READ_SHARE * WHOLE_READ_SHARE, 3)
"""A retrieval's last call is a whole-file Read this often (0.325)."""
THINKING = (0.583, 179, 1_399)
TEXT = (0.58, 104, 747)
"""(share of replies with the block, median chars, 90th percentile chars)."""
WORKER_THINKING = SUBAGENT_THINKING
WORKER_TEXT = SUBAGENT_TEXT
"""The same for a subagent's replies before its report: what real subagents write
(`flower.report._measured.SUBAGENT_TEXT`, `SUBAGENT_THINKING`, measured by
`benchmarks/calibrate_workers.py`): no thinking block, a text in 87 % of replies (median 77, p90 119)."""
WorkerProse = Literal["subagent", "main"]
"""Whose prose figures the realistic workers' replies draw from: real subagents' (`subagent`) or the
main thread's (`main`, the player before the subagent figures were measured)."""
REPORTS: tuple[int, ...] = tuple(
    json.loads(Path(__file__).with_name("timing.json").read_text())["report_chars"]
)
"""Characters of the real subagent reports of the calibration transcripts, agents never asked to be
brief (`benchmarks/calibrate_time.py`): the `unbriefed` (pessimistic) reports."""
READS_CUT = 0.2
"""How often the realistic coordinator Reads a cut report's saved whole by default: a real caller opened
a document such a report pointed to in 5 of 23 cases (`flower.report._measured.READ_BACK_SHARE`)."""
Reports = Literal["project", "unbriefed"]
"""How long the realistic workers' reports run: as project agents with a report format do (`project`), or
as agents never asked to be brief (`unbriefed`, the pessimistic row)."""
LOOK_WINDOW_LINES = 20
"""Lines of each of the two windows a look at a saved output over the Read cap takes (the real one:
two Reads, 1,583 characters, `PARTIAL_READ_BACK`)."""
READ_CAP_CHARS = 100_000
"""A Read of a file over about 25,000 tokens fails with the CLI's "exceeds maximum allowed tokens"."""

WORDS = "so the next step is to check what this run printed and then go on with the plan".split(" ")  # noqa: SIM905


@dataclass(frozen=True)
class Behaviour:
    """`ideal` or `realistic` (with its seed): how the scripted agent plays a workload."""

    name: str = "ideal"
    seed: int = 0
    reads_cut: float = READS_CUT
    """How often the coordinator Reads the saved whole of a report flower's cap cut (0: never)."""
    reports: Reports = "project"
    """Whose report lengths the workers draw from (`Reports`)."""
    reads_look: float = PREVIEW_READ_BACK_SHARE
    """How often an agent Reads back an output it was shown only as a preview and a path, to look at it."""
    worker_prose: WorkerProse = "subagent"
    """Whose prose figures the workers' replies draw from (`WorkerProse`)."""

    @property
    def realistic(self) -> bool:
        """The seeded, calibrated player."""
        return self.name == "realistic"

    @property
    def variant(self) -> str:
        """What this realistic player does unlike the default one (`""`: nothing): `reads 0.5`,
        `looks 0.3`, `unbriefed`, `main prose`, or several, comma-separated."""
        if not self.realistic:
            return ""
        said = [f"reads {self.reads_cut:g}"] if self.reads_cut != READS_CUT else []
        if self.reads_look != PREVIEW_READ_BACK_SHARE:
            said.append(f"looks {self.reads_look:g}")
        said += ["unbriefed"] if self.reports == "unbriefed" else []
        return ", ".join([*said, *(["main prose"] if self.worker_prose == "main" else [])])

    @property
    def label(self) -> str:
        """`ideal`, `realistic #2`, `realistic #2 [unbriefed]` (a variant's rows are kept apart)."""
        if not self.realistic:
            return self.name
        return f"realistic #{self.seed}" + (f" [{self.variant}]" if self.variant else "")

    def rng(self, *about: object) -> random.Random:
        """A generator seeded by this player's seed and what the draw is about."""
        return random.Random("|".join(str(a) for a in (self.seed, *about)))

    def pipe(self, label: str) -> str | None:
        """`tail`, `head` or `grep` when this run of output `label` is piped, else None."""
        if not self.realistic:
            return None
        rng = self.rng("pipe", label)
        if rng.random() >= PIPE_SHARE:
            return None
        return _pick(rng, PIPES)

    def retrieval(self, key: str, attempt: int) -> list[str]:
        """The calls the `attempt`-th retrieval of fact `key` (0 for its first pointer) takes: `miss-read`,
        `miss-grep`, then `read` (the whole file) or `grep` (the exact one). The ideal player: `["grep"]`.

        Seeded by the attempt, not the pointer's path: a path holds the run's temporary directory and
        the CLI's session id, which would make every run draw differently."""
        if not self.realistic:
            return ["grep"]
        rng = self.rng("retrieval", key, attempt)
        calls = _pick(rng, RETRIEVAL_CALLS)
        misses = ["miss-read" if rng.random() < LOOKUP_READ_SHARE else "miss-grep" for _ in range(calls - 1)]
        return [*misses, "read" if rng.random() < READ_WHOLE_SHARE else "grep"]

    def report_chars(self, task: str) -> int:
        """The size the final report of worker `task` runs to (0: as short as its lines; the ideal
        player), drawn from the real reports (`reports`)."""
        if not self.realistic:
            return 0
        rng = self.rng("report", task)
        if self.reports == "unbriefed":
            return rng.choice(REPORTS)
        return round(at_quantile(REPORT_CHARS_DECILES, rng.random()))

    def reads_cut_report(self, task: str) -> bool:
        """Whether the coordinator Reads the saved whole of worker `task`'s cut report (one draw per
        report; never when `reads_cut` is 0, nor by the ideal player)."""
        return self.realistic and self.reads_cut > 0 and self.rng("read cut", task).random() < self.reads_cut

    def reads_to_look(self, run: str) -> bool:
        """Whether the agent Reads back the saved whole of the output run `run` printed (its mark, e.g.
        `run out-007#0`) when it was shown only a preview and a path (never the ideal player)."""
        if not self.realistic or self.reads_look <= 0:
            return False
        return self.rng("read to look", run).random() < self.reads_look

    def prose(self, about: str, *, worker: bool = False) -> tuple[str, str]:
        """(thinking, text) a reply carries ("" for none), drawn by what the reply does (`about`, e.g.
        `run out-007#0`), so every strategy's reply that does it draws alike; a worker's reply is shaped
        by the subagent figures (`worker_prose`), a main thread's by the main thread's. The ideal player
        writes none."""
        if not self.realistic:
            return "", ""
        rng = self.rng("prose", about)
        if worker and self.worker_prose == "subagent":
            return _words(rng, WORKER_THINKING), _words(rng, WORKER_TEXT)
        return _words(rng, THINKING), _words(rng, TEXT)


def _pick(rng: random.Random, table: tuple[tuple[object, float], ...]) -> object:
    roll, upto = rng.random(), 0.0
    for value, share in table:
        upto += share
        if roll < upto:
            return value
    return table[-1][0]


def filler(rng: random.Random, size: int) -> str:
    """About `size` chars of prose (a report's narration)."""
    out: list[str] = []
    while sum(len(w) + 1 for w in out) < size:
        out.append(rng.choice(WORDS))
    return " ".join(out)[: max(0, size)]


def _words(rng: random.Random, shape: tuple[float, int, int]) -> str:
    """Filler prose of a lognormal length (median, p90) with probability `share`, else ""."""
    share, median, p90 = shape
    if rng.random() >= share:
        return ""
    sigma = math.log(p90 / median) / 1.2816
    return filler(rng, max(1, int(rng.lognormvariate(math.log(median), sigma))))


def piped(command: str, pipe: str) -> str:
    """`command` with its output piped the way `pipe` says."""
    if pipe == "tail":
        return f"{command} | tail -n 40"
    if pipe == "head":
        return f"{command} | head -n 40"
    return f"{command} | grep -n -E 'WARN|result'"
