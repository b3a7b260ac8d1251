"""The hand-written parts of docs/benchmarks.md around the tables; every number in a table is generated.

The method, the workloads' notes and the peers' settings are in `method.py`.
"""

from .method import FACTS, LEFT_OUT, METHOD, METRICS, NOTES, PEERS, PREVIEW_WHY

__all__ = [
    "BILLING",
    "BOUNDS",
    "CALIBRATION",
    "CLOCK",
    "FACTS",
    "HEADLINE",
    "INTRO",
    "LEFT_OUT",
    "METHOD",
    "METRICS",
    "MODES",
    "NOTES",
    "PEERS",
    "PREVIEW_WHY",
    "RANKED",
    "READING",
    "SCALING",
    "SMALL",
]

INTRO = """\
# Benchmarks: flower beside the plain SDK, the CLI, and peers' strategies

Five workloads (below), each run under the plain SDK with compaction off, Claude Code as a user
gets it, observation masking (SWE-agent's, with its `polling` option, a sweep of n and polling), the
API's `clear_tool_uses` (its defaults and one tuned setting), and flower (in full, and without each of
its layers). **Every row is a real run**: the bundled Claude Code CLI against flower's scripted model
(`flower.testing`), tools, hooks, subagents, transcripts, resume, compaction and handoff all real. A
peer's strategy is applied by the scripted model to each request before the agent reads it, with the
CLI's own compaction behind it, so every strategy can finish the marathon (see "The peers"). Each
workload is played by two scripted agents: an **ideal** one (one exact grep per retrieval, no prose) and
a **realistic** one calibrated on real Claude Code transcripts (pipes some outputs through `head`/
`tail`/`grep`, takes 1-3 calls per retrieval, sometimes reads a whole file, writes thinking and text,
and its workers report at the length real project agents with a report format do), five seeds each
(fewer where the clock section says so). Every cost is in **dollars**, output included, from one cost
model (`flower._cost`) that the demo and `flower report` use too.

```
python benchmarks/run_suite.py                    # everything, then tables on stdout
python benchmarks/run_suite.py --quick            # a smoke run: small workloads, one realistic seed
python benchmarks/run_suite.py --clock 35         # priced at 35 s a request (default: calibrated)
python benchmarks/run_suite.py --json out.json    # flower ÷ the cheapest fair peer, and its ablations
python benchmarks/run_suite.py --keep DIR         # keep every recording, to price it again:
python benchmarks/run_suite.py --from-recordings DIR --clock 60 --write-docs
python benchmarks/run_suite.py --strategies "flower,flower -keep_warm" --seeds 4,5 --keep DIR  # those runs
python benchmarks/run_suite.py --write-docs       # this page and docs/img/benchmarks-*.png
python benchmarks/run_suite.py --check            # exit 1 if flower regressed (benchmarks/baseline.json)
python benchmarks/run_suite.py --update-baseline  # store this run's numbers as the baseline
python benchmarks/calibrate.py DIR                # the realistic player's figures, from real transcripts
python benchmarks/calibrate_time.py DIR           # the calibrated clock's tables, from real transcripts
python benchmarks/calibrate_workers.py DIR [DIR]  # subagents' reports by tool calls, their replies' prose
python benchmarks/calibrate_rates.py DIR          # tokens per character per model, from real transcripts
python benchmarks/bench_keep_warm.py --probe      # a real ping on each priced model, against the suite's
```

{timing}
Every run is priced twice (see "Tokens and prices"): on **Sonnet 4.6** (`claude-sonnet-4-6`, $3 input,
$15 output, $0.30 cache read, $3.75 cache write per million tokens, what the bundled CLI charges; every
table but the price table) and on **the CLI's default model** (Opus 5: $4, $20, cache reads at 0.05x
input, $5 write), each counting tokens at the rate flower's what-if counts for it (0.5 tokens a
character for both; characters / 4 is the sensitivity row); "k" is thousands. Every number is a measurement
of a scripted agent, not of a model: the differences come from what each strategy lets into the
context and what the agent does with it, not from model luck.
"""

RUN_TIME = """\
This page: the **{scale}** suite, {runs} runs, {minutes:.1f} min of wall time on a 2-core machine (two
runs at a time; load average {load:.1f} over the last 15 minutes when the page was written); the runs took
{cpu:.1f} CPU-minutes as measured there, which bounds the suite at about {idle:.0f} minutes on two idle
cores (contention inflates CPU time: a W1 run measured alone takes 12-13 CPU-seconds, inside a loaded
suite 20)."""
"""The timing sentence of a page written by the run that made its recordings."""

KEPT_TIME = """\
This page: the **{scale}** suite, {runs} runs, priced from recordings kept by `--keep` and made by
several runs of this harness (the peers' runs do not depend on flower's code; flower's runs recorded
before it kept its coordinator's cache warm are named in the clock section), so no one wall or CPU time
covers them: the runs' own wall times add up to {minutes:.1f} min."""
"""The timing sentence of a page priced from kept recordings (`--from-recordings`)."""

READS_CUT = """ In some runs flower's realistic coordinator Read the saved whole of each report its cap
cut, with probability {shares} a report (`--reads-cut`; 0, never, in the others): {reads} reports read
whole."""
"""Added to the timing sentence when recordings made with `--reads-cut` above 0 are priced."""

HEADLINE = """\
**flower ÷ each peer at its best: all-agent cost in dollars, output priced.** Below 1, flower is
cheaper. *Realistic*: the median of the per-seed ratios (min-max over the seeds); *ideal*: the one run.
A peer's best is its cheapest setting in that workload on a held-out realistic seed (masking: n and
polling; `clear_tool_uses`: its defaults, the tuned setting and the sweep of "The peers"; where a single
setting ran, that one), named in the last row. The inline strategies (`baseline_raw`, the peers,
`flower -delegation`) are offered no `Agent`
tool: they never delegate. - = not run. † = that strategy did not finish (it stopped early, so it spent
less).
"""

READING = """\
### Reading the results

The standings above say, workload by workload, which strategies cost less than flower and by how much;
the ranking tables below list every strategy, flower's ablations included. What the numbers show:
"""

RANKED = """\
Every strategy of each workload, ranked by the ideal player's all-agent cost (the strategies that
finish first). The realistic player ran the baselines, flower and each peer at its best: its column
gives the median and the range over its seeds. The ideal player's cost is split
into uncached input, cache reads, cache writes and output.
"""

BILLING = """\
The CLI sends a per-conversation billing block as `system[0]` (`x-anthropic-billing-header:
cc_version=…; cc_entrypoint=…;`), whose three hex digits follow the conversation's first prompt. It sits
before the CLI's system cache breakpoint, so *if* the API keys its cache on it, workers with differently
worded mandates never share the tools+system prefix, and each delegation writes that prefix again.
Whether it does is not documented. flower starts every mandate with the same line (`mandate_line`), so
its workers send one block and the two pricings differ little (`flower -shared_prefix` is the run
without it). Every cost above prices it **as sent**; this table prices flower's
runs both ways (ideal player) and compares each with the cheapest of the CLI's default and the peers at
their best, priced the same way.
"""

SCALING = """\
W1 at 24, 48 (the suite's) and 72 outputs, W3 at 3, 6 (the suite's) and 9 investigations, the ideal
player: the CLI's default, flower, and each peer at its best there. *Peak main* is the largest
main-thread request; *cost growth* is the all-agent cost at the largest size over the smallest; *peak
growth per size step* the main thread's peak from one size to the next; *at the largest size* says
whether the window refused the prompt, the CLI compacted or flower handed off, or neither; the last
column extrapolates the peak (least squares over the three sizes) to the size at which it would reach
the CLI's compaction line, where the CLI compacts and flower hands off.
"""

CALIBRATION_TEXT = """\
## The realistic player's calibration

`python benchmarks/calibrate.py DIR` measures these from a directory of real Claude Code transcripts;
the player (`benchmarks/suite/realistic.py`) uses them. Over 18 real transcripts (CLI 2.0.74-2.1.42,
Opus 4.5/4.6, Sonnet 4.5, Haiku 4.5; 717 model replies):

{table}

A realistic run draws every choice from its seed and what the choice is about (the output, the fact),
so two strategies played with one seed pipe the same outputs and take as many calls for the same fact.
"""


_ROWS = (
    ("figure", "measured", "the player"),
    ("---", "---:", "---"),
    (
        "Bash calls piped through `head`, `tail` or `grep`",
        "16.7 % of 245 (tail 56 %, head 27 %, grep 17 %)",
        "pipes a run's output that often: `\\| tail -n 40`, `\\| head -n 40`, "
        "`\\| grep -n -E 'WARN\\|result'`",
    ),
    (
        "look-up calls that are Reads / Reads of a whole file (no offset/limit)",
        "57.2 % of 348 / 56.8 % of 199",
        "the last call of a retrieval is a whole-file Read 32.5 % of the time (the product; the corpus "
        "has no Read of a spilled output to measure directly), and greps after the CLI refuses a file "
        "over its Read cap; a missed look is a partial Read 57.2 % of the time",
    ),
    (
        "calls per retrieval (runs of consecutive look-up calls)",
        "1: 48 %, 2: 18 %, 3+: 34 % (median 2, of 100)",
        "1, 2 or 3 calls; the ones before the last miss "
        "(a Read of the first 100 lines, or a loose `grep \\| head`)",
    ),
    (
        "refused calls issued again with the same input",
        "0 of 17",
        "retries a refused call only when no refusal naming it is visible (as the ideal player)",
    ),
    (
        "replies with thinking / its size",
        "58 %; median 179 chars, p90 1,399",
        "a thinking block that often, lognormal of that median and p90",
    ),
    ("replies with text / its size", "58 %; median 104 chars, p90 747", "a text block the same way"),
    (
        "a subagent's replies before its report (`benchmarks/calibrate_workers.py`, 70 replies of 14 "
        "public subagent transcripts; main threads of that corpus: 15,357 replies)",
        "thinking 0 % (main threads 39 %); text 87 %, median 77 chars, p90 119 (main threads 50 %, "
        "median 104, p90 859)",
        "a worker's reply carries no thinking and a text block that often, of that median and p90 "
        '(`Behaviour(worker_prose="main")` keeps the main thread\'s figures)',
    ),
    (
        "a subagent's report by its tool calls (`benchmarks/calibrate_workers.py`, 425 completed calls "
        "in 13 public repositories)",
        "1 call: median 2,344 chars (n 6); 2-3: 4,044 (n 10); 4-9: 5,098 (n 49); 10+: 5,349 (n 356); "
        "rank correlation -0.02 (project agents with a set format: 54, none under 4 calls)",
        "none: a worker's report length is drawn whatever it did (too few short runs to say otherwise)",
    ),
    (
        "final report of project agents with a set report format (public transcripts; "
        "`flower.report._measured`)",
        "deciles 230, 1,027, 1,268, 1,542, 1,765, 1,946, 2,056, 2,277, 2,678, 3,480, 15,129 chars "
        "(median 1,946, 91 % under 4,000)",
        "a worker's report runs to a length drawn uniformly between the deciles (linear within each "
        "tenth); the pessimistic row draws from the 11 reports of agents never asked to be brief "
        "(median 9,002 chars)",
    ),
    (
        "a caller opened a document the report pointed to",
        "5 of 23 (22 %, 95 % interval 10-42 %)",
        "flower's coordinator Reads the saved whole of a report its cap cut with probability 0.2, once "
        "per report (`--reads-cut`; 0.5 is a sensitivity row)",
    ),
    (
        "output tokens per reply (the API's usage)",
        "median 27, mean 226",
        "what the player writes is what it is billed (the scripted model reports a reply's own size)",
    ),
)
CALIBRATION = CALIBRATION_TEXT.format(table="\n".join("| " + " | ".join(row) + " |" for row in _ROWS))


CLOCK = """\
## Under a realistic clock

A prompt-cache entry lives 5 minutes (1 hour for a `"ttl": "1h"` mark) after its last use, so what a run
costs depends on how long its requests, tools and workers take. Every run is recorded once and its
requests, exactly as sent, are priced under each clock (`benchmarks/suite/timing.py`):

- **10 s, 20 s, 35 s, 60 s**: every request moves the clock that many seconds, whoever sends it;
- **calibrated** (the default, and every other table on this page): each request takes a duration drawn
  for its context size from the real main-thread requests ({requests}), plus the time to write its output
  beyond the real mean; the tools its reply called take a run time drawn per tool ({tools}; a Bash
  command by its text, so every strategy that runs it waits as long) from the **real calls no person
  approved**: the main-thread calls of sessions run in `bypassPermissions` (the suite's own mode) or
  headless, and every subagent's ({unattended}). In the other sessions a call's "run time" includes a
  person's approval (all sessions' tables: {attended}), which this clock leaves out. A worker lasts
  what its own requests and tools take, and its coordinator waits that long. Medians of the worker
  waits it gives flower here: {waits}. The real subagent runs of the same transcripts lasted
  {subagents};
- **stress**: calibrated, but every worker lasts a duration drawn from the distribution measured over
  56 real sessions (median 56 s, p75 116 s, p90 404 s, 18 % over 5 minutes), whatever its size;
- every clock adds the workloads' idle gaps.

`python benchmarks/calibrate_time.py DIR` measures the tables (`benchmarks/suite/timing.json`) from a
directory of real transcripts. flower's coordinator asks for 5-minute marks and, while it waits on a
worker, its `Runtime` keeps them warm: every 270 s a ping sends the coordinator's last request again for
one output token (`flower._warm`). No recording holds a ping (the scripted workers answer in seconds of
wall-clock time), so each of flower's runs is priced with the pings `flower._warm.schedule.ping_times`
sends on that clock and seed (`benchmarks/suite/warm.py`: none across the workloads' idle time, at most
as many a wait as cost one rewrite of the prefix), each one the coordinator's last request sent again as
the CLI sends it on the model priced (`warm.ping`, checked against a real ping on each model: on Opus 5
the whole prefix read, then 27 tokens written at characters / 4; on Sonnet 4.6 the CLI's two reminders
go inside the last tool_result block, so the ping reads one cache entry short and writes from there, 143
tokens where the coordinator's request wrote 90 in the probe) and one output token; a run of flower
recorded before its `Runtime` kept warm (1-hour
marks) is priced the same way, its coordinator's marks at 5 minutes (its requests differ in nothing
else). `flower -keep_warm` is the run with 1-hour marks and no ping (`Runtime(keep_warm=False)`). The
peers, which never wait on a worker, keep the CLI's 5 minutes, and are also priced with 1 hour. The
cheapest fair peer is the non-flower strategy (the CLI's default, `baseline_raw`, each peer at its best)
that finished on every seed and cost least under that clock; ratios are per seed (the same seed draws the
same choices and durations for both sides), median (largest).
**Bold**: above 0.9, or a seed above 1.0. Below the clocks: the same ratio against the peers as they
ran before their variants (the `claude_code` preset and the CLI's 5 minutes), under the player
variants that ran (workers that ignore the report rule; a coordinator that Reads half the reports its
cap cut), and flower ÷ the lower bound (`floor.py`: the cheapest run of each seed replayed with every
block paid once at the input price, read from the cache ever after, every tool output dropped right after its
last use and every report without its narration; no strategy of the suite can cost less).
"""

WHY_LOSSES = """\
Why, where it loses (each measured on this page's recordings):

- **Against a peer with the SDK's own prompt, on short work (W2).** The cheapest peer there works inline
  with the SDK's empty system prompt, not the CLI's 7k-token `claude_code` preset (against the same peer
  with the preset, flower's median is 0.81). flower's workers cost their own prompt, output, mandates
  and hand-back frames on every loop, which the inline peer does not pay; and the peer's cost moves from
  one seed to another (its cheapest seeds are far below its dearest) where flower's stays flat, so flower
  costs more on some seeds (up to 1.06x; 1.18x on Opus 5's prices, whose cheap cache reads make the
  peer's long context cheap to carry) and, at 60 s a request, on the median (1.07).
- **Workers that ignore the report rule** (the pessimistic row, reports as long as unbriefed subagents'):
  in W2, nine short loops each end in such a report, and flower costs 1.38x the cheapest peer. The
  report rule, not the cap, is what makes delegating short work pay: the cap keeps a long report out of
  the coordinator's context, but its output is paid.
- **Keeping the coordinator's cache.** flower's default (5-minute marks, kept warm by pings while the
  coordinator waits on a worker) against 1-hour marks (`flower -keep_warm`): the 1-hour cache pays 2x on
  every write where 5 minutes pay 1.25x, but bridges a user's idle pause, which no ping crosses: in W5
  (a 30-minute pause) the 1-hour run costs a little less.
- **Reports.** The realistic workers report at the length real project agents with a set report format
  do (median 1,946 chars; in 425 real subagent calls a report's length did not depend on the work done,
  rank correlation -0.02), and the coordinator Reads one cut report in five.
- **Delegation has a fixed price per mandate** (a worker's prompt and first turn written to the cache,
  its output and report, the mandate, a hand-back frame). A loop repays it; a one-off step does not:
  under the strict wall (the default, `own_steps=0`) W4's sixteen single-command items are each
  delegated, and cost more than done inline (`flower -delegation`, 1.08x on Sonnet 4.6's prices and
  1.12x on Opus 5's; `flower +own_steps` and `flower +inline`, both opt-in, take some of them
  themselves and give up part of what the wall guarantees)."""
"""The causes of the losses the list above shows, as the recordings decompose them."""

BOUNDS = """\
What the coordinator's cache lifetime and the workers' brevity would change: the runs of
`flower -keep_warm` (1-hour coordinator marks, no ping) replayed (nothing recorded again; the same
requests, only their cache marks or their output changed; each seed under its own clock; ÷ the cheapest
fair peer as above). **Every coordinator write at 5 minutes**: flower's default marks without its
pings, on the same requests. **5 minutes, kept warm while the coordinator waits**: every
coordinator write at 5 minutes and, during a wait longer than that, its last request sent again every
270 s for one token, which reads the prefix and keeps it alive. **Cut reports written only as long as
their head**: the workers write no more than the coordinator reads of each report the cap cut. The
stress rows show the same choices when workers last as long as real ones do."""
"""The replays' table caption (`bounds_table`)."""

PRICES = """\
Every recording is priced on two models' prices, as the API would bill the same requests on each
(`benchmarks/suite/pricing.py`): Sonnet 4.6 (the model the runs are recorded under; every other table of
this page) and the CLI's default model (`flower._cost.DEFAULT_MODEL`, its `claude-opus-5` row: cache reads
at 0.05x input, a 512-token smallest cacheable prefix). Each counts tokens at the one rate the product
and the benchmarks share, the what-if's (`flower.report._what_if.replay.model_rate`): 0.5 tokens a
character for both, the rate of the newest models (Sonnet 4.6 and Opus 4.7 and later measure 0.45-0.55
on real sessions). The real-transcript corpus (CLI 2.0.74-2.1.42) holds no Sonnet 4.6 and no Opus 5
session; on its older families the same measure (`python benchmarks/calibrate_rates.py DIR`,
`flower.report._what_if.replay.family_rates`: over every request that added at least 2,000 characters of
tool output after a reply at most 5 % thinking, the tokens its `usage` says the context grew by, over the
characters it added, in the transcripts nine in ten of whose requests are one model's) gives Sonnet 4.5
0.330 (15 requests, 2 sessions), Opus 4.6 0.349 (56, 5), Opus 4.5 0.360 (50, 4) and Haiku 4.5 0.420 (14,
2). The suite cuts every block at
characters / 4 and scales blocks, outputs and context sizes to the row's rate; characters / 4 on Sonnet
4.6 is the sensitivity row. A ratio barely moves with the rate (every token of both sides scales alike;
only the smallest cacheable prefix, the pings' own blocks and the calibrated clock's durations by context
size do not): the model's prices move it more.

A keep-warm ping is priced as the CLI sends it on each model (`benchmarks/suite/warm.py`, from a ping
recorded through the CLI under each model name, `python benchmarks/bench_keep_warm.py --probe`): on Opus 5
it repeats every block up to the coordinator's last mark and writes only its own text; on Sonnet 4.6 the
CLI puts two reminders inside the last tool result, so that block differs and the ping writes it again. A
ping stopped in flight after its request went out, and a run whose CLI crashed, count what was billed.
"""
"""The price table's preface."""

SMALL = """\
A small task (`--quick`: the small workloads, one realistic seed) is where a delegation's fixed price
shows: each worker's prefix (its tools and prompt, written at its first start), its mandate, its report and
the hand-back frame, against a plain agent that pays none of them (see [delegation](delegation.md), "What
a delegation costs"). Below, flower (strict: every hands-on step delegated) and the opt-in inline start
(`flower +inline`: `coordinator(inline_until=30_000)`, which starts in an inline session, without the
Agent tool and the coordinator's prompt, that works hands-on itself and hands off to the coordinator once
its context reaches 30k tokens), each ÷ the cheapest peer of the quick pool (`baseline_raw`,
masking and `clear_tool_uses`, each with the `claude_code` preset and with the SDK's own prompt), on both
price rows. `python benchmarks/cost_parts.py RECORDING` splits a run's dollars by part. Recorded with

```
python benchmarks/run_suite.py --quick --keep DIR
python benchmarks/run_suite.py --quick --strategies "flower +inline" --seeds 1 --keep DIR --resume
python benchmarks/run_suite.py --from-recordings FULL --small DIR --write-docs
```
"""
"""The small tasks' caption (`modes.small_section`)."""

MODES = """\
Two other ways to run the same work, by the realistic player on the same seeds: `flower +inline`, the
opt-in inline start (an inline session, without the Agent tool and the coordinator's prompt, does every
step itself until the context it reports reaches 30k tokens, then hands off to the coordinator, which
delegates the rest; when the coordinator's own session hands off, its successor works hands-on again
while under 30k), and `flower
-delegation`, every step done by the main thread under flower's other layers (spill, workbench,
handoff, keep-warm). flower ÷ `flower -delegation` is what delegating costs or saves on a workload,
against doing each item inline.
"""
"""The caption of flower's other modes at full scale (`modes.modes_section`)."""
