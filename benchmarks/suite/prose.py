"""The hand-written parts of docs/benchmarks.md; every number around them is generated from a run."""

INTRO = """\
# Benchmarks: flower beside the plain SDK, the CLI, and peers' strategies

Five workloads (peers.md §4.3), each run under the plain SDK with compaction off, the CLI's own
behaviour, observation masking (N = 5 and 10), the API's `clear_tool_uses`, and flower (in full, and
without each of its layers). flower and both baselines are **real runs**: the bundled Claude Code CLI
against flower's scripted model (`flower.testing`), tools, hooks, subagents, transcripts, resume,
compaction and handoff all real. The peers' strategies cannot be installed into the CLI: they are
**approximations**, computed from the recorded `baseline_raw` run (see "Approximations").

```
python benchmarks/run_suite.py                    # everything, then tables on stdout
python benchmarks/run_suite.py --quick            # a smoke run: small workloads, four real strategies
python benchmarks/run_suite.py --write-docs       # this page and docs/img/benchmarks-*.png
python benchmarks/run_suite.py --check            # exit 1 if flower regressed (benchmarks/baseline.json)
python benchmarks/run_suite.py --update-baseline  # store this run's numbers as the baseline
```

This page: the **{scale}** suite, {minutes:.1f} min on a shared 2-core machine. Tokens are estimated as
characters / 4 everywhere (no tokenizer is available offline); "k" is thousands. Every number is a
measurement of a scripted agent, not of a model: the scripted agent is deliberately simple and
consistent (it answers from what its request holds, nothing else), so the differences come from what
each strategy lets into the context, not from model luck.
"""

READING = """\
### Reading the results

- **Cost and the main thread: flower leads wherever it finishes.** Its coordinator has the lowest
  all-agent cost of the strategies that finish in all five workloads, and its main thread peaks 3 to 4
  times lower than the plain SDK's in W1, W3 and W5 (about half in W2). In W3 the CLI's own subagents keep
  the main thread almost as small (both delegate); flower's peaks a fifth lower because the long reports
  stay on disk, and its workers cost half as much through spill. In W4 only the strategies that compact or
  hand off finish: flower's handoff starts the fresh session smaller than the CLI's compaction leaves it,
  and spends a little less.
- **What it pays: facts at once.** The coordinator rarely has a fact in front of it: the output stayed
  with the worker that ran it, one grep away through the pointer the worker reported. So flower answers
  the fewest facts at once in W1 to W3, but loses none; the extra calls are in its cost. The plain SDK
  answers the most at once because it keeps everything, and pays for it.
- **Masking is not cheap under a prompt cache.** `mask_5` and `mask_10` cut the tokens sent by a fifth
  to two fifths, in line with the JetBrains paper, but each request rewrites an older result, so the
  cache breaks at almost every turn and the cache-weighted cost ends 1.5 to 3 times the raw run's. They
  also lose the facts of the read-once tool. `clear_tool_uses` acts only past 100k tokens (only W1 and
  the marathon get there); in W1 it costs a little more than doing nothing, since the cache breaks each
  time the cleared boundary moves.
- **Delegation has a fixed price.** Without the wall (`flower -delegation`) the all-agent cost is 6 to 30%
  lower than flower's in every workload (W2 the most): every worker starts with its own system prompt and
  tools, and its report comes back. The wall buys a smaller main thread, no residue of failed calls in it
  (W5), and a coordinator that cannot be flooded by tool outputs; it does not buy tokens: in these
  workloads the coordinator's own savings do not pay for the workers' fixed start.
- **Layer by layer.** Spill: without it, flower costs 1.1 to 1.9 times more (W1, W2, W3, W5), and in W1
  the coordinator loses the facts of the read-once tool (no pointer to send it back to). Expiry: after
  W2's two idle hours every `cat` of the state is expired, the six newest included (`stale_after`, one
  hour), so flower (with or without the wall) reads the state again and acts on the current one, where
  every other strategy acts on a stale state; the one stale snapshot left is the CLI's own "changed on
  disk" notice inside an Agent result. With the seed's rule alone (`flower -expiry` keeps six, as the CLI
  keeps all) the newest visible snapshot is stale and is trusted. Denial pruning: with the wall, denials
  happen in workers and the coordinator only sees report lines, so there is nothing to prune; without it
  (`flower -delegation`, W5), the refusal kept names the ones dropped, so no refused command is issued
  again after the resume (the first version, which kept the newest refusal alone, saw three issued again).
  Handoff: with the CLI's compaction instead (`flower -handoff`, W4) the run costs about 14 % more and
  peaks at the CLI's compaction line. Workbench: no gain here; its block costs a few hundred tokens per
  request, and no workload needed its index (the recurring script is reused within a session by every
  strategy, since its Write stays visible). Report cap: without it (`flower -report_cap`, W3) the two
  pasted logs reach the coordinator and stay there: its peak is a fifth higher, at the same cost; with it,
  the one fact that sat in a pasted log is one read away instead of in front of the coordinator.
- **Gaps this found in flower:** failing commands are never spilled: the CLI reports them to
  `PostToolUseFailure` and ignores an output rewrite from that event, so no hook can (its own cut to
  10,000 chars is the bound). (The first run of this suite also found worker reports uncapped, the newest
  snapshots kept after a long idle gap, and refused commands issued again once pruning had dropped their
  refusals; `report_guard`, `EphemeralPolicy.stale_after` and `PrunePolicy.denial_note` were added for
  them.)
"""

PREVIEW_WHY = """\
Why this is the deciding workload: W1's outputs are what spill acts on (a third of its needles sit at the
tail, and its test runs end with their verdict), and the sweep runs the same script under each preview
in both places a preview is read: by a worker that ran the command (delegated) and by a main thread
that runs everything itself. A failing test run is never spilled (see "Facts measured"): the CLI keeps
its last 5,000 characters, so only passing runs depend on the preview. The 2,000-char head (the CLI's
own preview size) costs more characters in every spilled result and still misses every tail.
"""

METHOD = """\
## Method

**Harness.** `flower.testing.ScriptedModel` serves the Messages API on 127.0.0.1; the CLI
(claude-agent-sdk 0.2.184, CLI 2.1.327) talks to it as to the API. Model name `claude-sonnet-4-6`, for
which the CLI reports a 200,000-token window: it compacts at 167k and, with compaction off, refuses a
prompt locally at about 177k. Every request is logged, and a request *is* the context: all sizes below
are measured on requests. The usage each reply reports is the request's characters / 4 (plus the
marathon's residue, below), so the CLI's own thresholds apply to real sizes.

**The scripted agent** (`benchmarks/suite/player.py`) plays a workload's action list, one reply per
request, deciding from that request alone:
- a tool run is a real call: `python3 gen.py <label>` prints a seeded output (`gen.py`, from
  `bench.json` in the workspace), `cat`/`ls` look at real files, Read and Write are the CLI's tools;
- a **probe** (the agent needs fact `K=v` now) follows peers.md §4.1: answered at once if `K=v` is in
  the request; else, if a pointer to the output that held it is visible (a spill pointer, the CLI's
  saved-output path, a `label -> path` line in a report or a handoff document, the CLI's transcript path
  after a compaction), one `grep -n -F 'K=' <path>`; else, if the tool is idempotent, it runs it again;
  else the fact is lost. A grep replaces the brief's "Read of the spill file": reading the whole file
  would put back what spill removed, and the CLI refuses Reads over 25k tokens;
- a **verdict probe** follows every test run: the agent that ran it reads the verdict (the last line);
- a denied command is issued unless a refusal naming it is visible; a recurring script is run if its
  name is visible, else written again; after a resume the agent trusts the newest `STATE v N` it sees,
  unless a later expiry note says a read of the state expired: then it reads the state again.

**flower's runs** use `Runtime(workspace, configure=model.attach)` with its defaults (delegation wall with
glance, spill at 4,000 chars with a 300 + 100-char preview, reports capped at 4,000 chars, workbench,
`PruningSessionStore` with expiry keeping 6 (none after an idle hour) and one denial, handoff) and a
coordinator with one worker. The scripted coordinator does itself what flower lets it (looks such as
`cat`/`ls`, Reads, greps of pointers) and delegates every other run of actions to a worker, in chunks of
up to 8 (W5: 6; W4: one per work item); each subtask of W3 is one chunk. A worker reports the way flower's
worker rules ask: the conclusion, the facts it was asked for, one `label -> path` line for each output it
saw a pointer for, denials, scripts written, and (some W3 subtasks) a pasted log; sent back by the report
cap, it answers without the log and with the saved report's path. The ablations remove one layer each:
`-delegation` (the main thread is a `worker()` spec and does everything itself), `-spill`
(`spill_threshold=None`), `-expiry` (`ephemeral=False`), `-denial_prune` (`keep_denials` very large),
`-handoff` (`handoff=False`: the CLI compacts), `-workbench` (`workbench=False`), `-report_cap`
(`report_limit=None`). An ablation whose layer has nothing to act on in a workload (no resume, no wall, no
large output) would replay flower's run request for request; it is not run there, and its table says why.

**Baselines** are plain `ClaudeAgentOptions`: the same `claude_code` system preset, tool list, model and
`setting_sources=[]` as flower's sessions, `bypassPermissions`, no flower hook, rule or store.
`baseline_raw` sets `DISABLE_AUTO_COMPACT=1`; `baseline_cc_default` keeps the CLI's defaults. Both keep
the CLI's own spill: a Bash output over 30,000 chars is saved to a file and the model sees a 2 KB head.
In W3 `baseline_cc_default` delegates like flower, to the CLI's own subagents (a plain
`AgentDefinition`), and gets the same reports.

**Summaries.** The CLI's compaction request and flower's handoff prompt are answered by one
deterministic summariser (`summary.py`): every user constraint visible is kept; every other visible fact
is kept with probability 0.7, seeded by fact and event number, so a fact is kept or lost alike in both;
the frontier (where the work stands) is always kept; a fixed 6,000-char body stands for the narrative.
flower's template adds "Where things are": the pointers visible in the request. The CLI adds its own
pointer after a compaction (the transcript path), which the probe policy uses.

**Workloads, as run** (peers.md §4.3, scaled to the time budget; `workloads.py`):
"""

METRICS = """
**Metrics** (`metrics.py`, peers.md §4.2). *Peak main* is the largest main-thread request (tokens);
*Σ main* adds every main-thread request (input without caching), *Σ all agents* every request of every
agent, compaction requests included. *Cost* is the cache model's: each request is cut into blocks
(system blocks, the tool list, each content block); its cached prefix is the longest run of leading
blocks an earlier request still in the cache started with (shared across agents, 5-minute TTL refreshed
on use, at least 1,024 tokens); the rest is written (the CLI marks the end of every request for caching);
units = uncached x 1 + written x 1.25 + read x 0.1. The simulated clock moves 20 s per request, plus
the workloads' idle gaps (W2: 2 hours, W5: 30 minutes). *Cached* is the mean share of a main-thread
request read from the cache; *breaks* counts main-thread requests that did not reuse the whole previous
request although it was still cached (a history rewrite). Facts: answered at once / with one extra call
/ with two or more / lost. A strategy that stops early (the CLI's local limit) loses the facts it never
reached. The 1-hour-TTL variant (write x 2) is in `benchmarks/baseline.json` (`cost_all_1h`).
"""

NOTES = {
    "w1": """\
Mixed outputs (lognormal sizes, p50 3k, p90 40k chars); 20 needle facts in 12 large outputs, a third each
at the head (first 400 chars), middle and tail (last 100 chars), a quarter of them from a tool that can
be read only once; probes at 50, 75 and 100 % of the run; every seventh run is a test ending with its
verdict (half fail: exit 1). What to look at: flower's coordinator keeps its context flat and its cost
lowest, but it answers needles through pointers (+1 call each) since the outputs stayed with the
workers; masking loses the facts of the read-once tool, which only a pointer can bring back.""",
    "w2": """\
Nine cycles of look at the state (`cat`), Read a source file (3-15k), edit (changes the state), test
(2-60k, verdict last), look again; after the sixth cycle, 2 hours idle, the state changes meanwhile
(a teammate's commit), and the session is resumed; the agent checks the state, then needs three facts
from the files it read before. *Stale* counts the state snapshots still shown as they were after the
resume; "acted on a stale state" is whether the newest one it could see was out of date.""",
    "w3": """\
Six investigations of 5-8 large outputs each (p50 6k, p90 30k); each has a finding (in its largest
output) and a detail (elsewhere); two of the six reports paste a 10,000-char log. Then the coordinator
needs every finding and every detail. Inline (`baseline_raw`, the peers) does it all in the main thread;
`baseline_cc_default` and flower delegate each investigation, one at a time or six at once. The pasted
logs reach the CLI's coordinator whole; flower's `report_guard` saves each to `artifacts/reports/` and
has the worker answer again in short, so its coordinator gets the conclusion and the path.""",
    "w4": """\
Eighty pages to look at (`cat`, 0.8-3.8k chars, every tenth with a decision), a work item delegated
after every fifth, five user constraints in the task; decisions are needed again 30 pages later and at
the end, the constraints at the end. On top of the real requests, each main-thread turn adds 2,600
tokens of residue that no layer removes (the model's own prose, thinking and small results; the seed
measured 2,200 per turn with flower's layers on, a little more here so that two events happen within
the run), reported to the CLI through usage. The strategies that never
compact stop at the CLI's local limit; the peers' run is computed from a raw recording on
`claude-sonnet-4-5`, which the CLI neither compacts nor blocks (its window is also 200k).""",
    "w5": """\
Jobs (p50 2k), five commands the session's rules deny (three of them needed again after the resume),
four network failures (a 5-20k traceback, exit 1) each retried once, three 30,000-char writes that fail
(the target's parent is a file), and a recurring 3,000-char analysis needed five times; 30 minutes idle
and a resume after 60 % of the work. *Residue* is what failed calls leave resident in the main thread
(their inputs and results); *retries* re-issue a denied command because no refusal naming it was
visible.""",
}

APPROXIMATIONS = """\
## Approximations

The peers' rows are computed, not run: each main-thread request recorded in `baseline_raw` is rewritten
into the request the strategy would have sent, then measured like the others (`transforms.py`).
- `mask_5` / `mask_10` (SWE-agent's LastNObservations, n=5; JetBrains' observation masking, M=10):
  every tool result but the N most recent becomes `Old environment output: (k lines omitted)`; calls and
  their inputs stay. No `polling` variant.
- `clear_tool_uses` (the API's context editing, `clear_tool_uses_20250919`, trigger 100,000 input tokens,
  keep 3, `clear_at_least` 0, inputs kept): once the request reaches the trigger, every tool result but
  the three most recent becomes `[cleared]`.
- A probe is asked again of each rewritten request. A fact that is gone without a pointer is re-run if
  its tool is idempotent: the call and the output the raw run saw are inserted into this request and
  every later one (one more request, 20 s on the clock); otherwise the fact is lost. What the raw run did
  next is kept as it was (its note of the fact, its greps): the strategies do not otherwise diverge.
- A denied command whose refusal was masked counts as a retry (its request is not added). Whether a
  recurring script is rewritten is taken from the raw run.
- None of them compacts: a rewritten request over the CLI's local limit (window - 23k) ends the run.
"""

LEFT_OUT = """\
## Left out, and why

- Peers' strategies the issue did not ask for (peers.md §4.1): OpenCode's prune, deepagents, Codex,
  OpenHands' rolling summary, DCP. The transforms module is where they would go.
- Sizes: every workload is smaller than peers.md §4.3 (W1 48 runs, not 80; W2 9 cycles, not 150 turns;
  W3 6 investigations of 5-8 calls, not 12 of 10-40; W4 80 pages with a residue per turn, not 500
  turns; W5 46 actions, not 120) to keep the full suite near 15 minutes on a shared 2-core machine; the
  marathon reaches the wall through its residue per turn instead.
- Ablations whose layer cannot act in a workload are not run (their tables say why).
- Real BPE token counts: no tokenizer for Claude is available offline; chars / 4 throughout.
- Task success: a scripted agent does not solve tasks; facts answerable stand in for it, and a run that
  stops at the window is counted as not finished.
- `clear_tool_uses` with `clear_at_least` 20k or `exclude_tools`, masking with `polling`, and the
  1-hour cache in the tables (it is stored in the baseline).
- Retrying a failed call's input (DCP's purge) and deduplicating repeated reads: no strategy here does
  either, so W2's repeated reads are simply counted.
"""

FACTS = """\
## Facts measured along the way (CLI 2.1.327)

- A Bash call that exits non-zero fires `PostToolUseFailure`, not `PostToolUse`, so flower's spill never
  sees it: failing test runs and error traces stay in the context. The CLI cuts such a result to about
  10,000 chars (the first and last 5,000, with `... [N characters truncated] ...`) and saves no file; over
  30,000 chars the cut applies to the first 30,000, so the real end of the output (a verdict) is lost.
- A Write over an existing file that was never read succeeds (`The file ... has been updated
  successfully`); W5's failing writes target a path whose parent is a file (`ENOTDIR`).
- Every tool result the CLI sends carries a `<system-reminder><total_tokens>N tokens left</total_tokens>`
  tail (about 100 chars).
- A plain resume after an API error that exhausted its retries does not replay the synthetic
  `API Error` message; the new prompt is merged into the last user message.
- The first Agent result of a session starts with an indented
  `<tools-used-before-summary>Bash</tools-used-before-summary>` line before the hand-back frame (the
  tag the CLI uses after a compaction); later Agent results do not.
"""
