"""The method sections of docs/benchmarks.md: harness, players, strategies, cost, workloads, peers."""

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
(claude-agent-sdk 0.2.189, CLI 2.1.332) talks to it as to the API. Model name `claude-sonnet-4-6`, for
which the CLI reports a 200,000-token window: it compacts at 167k and, with compaction off, refuses a
prompt locally at about 177k. Every request is logged, and a request *is* the context: all sizes below
are measured on requests. The usage each reply reports is the request's characters / 4 (plus the
marathon's residue, below), so the CLI's own thresholds apply to real sizes, and its output tokens are
the reply's own size (characters / 4 of what the scripted agent wrote). The tables then price every
request at each model's measured tokens per character ("Tokens and prices").

**The ideal player** (`benchmarks/suite/player.py`) plays a workload's action list, one reply per
request, deciding from that request alone:
- a tool run is a real call: `python3 gen.py <label>` prints a seeded output (`gen.py`, from
  `bench.json` in the workspace), `cat`/`ls` look at real files, Read and Write are the CLI's tools;
- a **probe** (the agent needs fact `K=v` now) follows one rule: answered at once if `K=v` is in
  the request; else, if a pointer to the output that held it is visible (a spill pointer, the CLI's
  saved-output path, a `label -> path` line in a report or a handoff document, the CLI's transcript path
  after a compaction), one `grep -n -F 'K=' <path>`; else, if the tool is idempotent, it runs it again;
  else the fact is lost;
- a **verdict probe** follows every test run: the agent that ran it reads the verdict (the last line);
- a denied command is issued unless a refusal naming it is visible; a recurring script is run if its
  name is visible, else written again; after a resume the agent trusts the newest `STATE v N` it sees,
  unless a later expiry note says a read of the state expired: then it reads the state again.

**The realistic player** (`benchmarks/suite/realistic.py`, figures in "The realistic player's
calibration") plays the same way, except that it pipes some outputs, takes 1-3 calls per retrieval (the
last sometimes a whole-file Read), writes thinking and text in its replies (its workers, as real
subagents do, no thinking and less text), which it pays as output and the next requests carry as input,
has its workers report at the length real project agents with a
set report format do, Reads the saved whole of a report flower's cap cut one time in five, and Reads
back an output it was shown only as a preview and a path (flower's spill, the CLI's own save of a very
long output) to look at it 5 times in 29, by its next reply, as real agents did with the CLI's previews.

**Paired draws.** Every draw, of the player and of the calibrated clock, is seeded by the run's seed
number and by what it is about, never by a request's place in the run, so every strategy of a seed draws
alike wherever it does alike (common random numbers): the same commands piped, the same calls for the
same fact, the same prose draw in a reply that does the same thing (runs `out-007`, looks for a fact,
reports task `c2`) whether a worker or the main thread writes it (a worker's shaped by the subagent
figures), the same duration for its request (from the
table its context size picks), the same run time for the same command or file, the same look back at an
output both were shown as a preview. Where a strategy does what the other does not, there is nothing to
pair, and those draws are its own: a coordinator's mandates and the replies after a report, a handoff or
a compaction (their requests, their summaries), a Read of a cut report, a retry of a refused call it
could not see, and the stress clock's worker durations (drawn per task, which only delegating strategies
have).

**flower's runs** use `Runtime(workspace, configure=model.attach)` with its defaults (delegation wall with
glance, spill at 4,000 chars with a 300 + 100-char preview, reports capped at 4,000 chars, workbench,
`PruningSessionStore` with expiry keeping 6 (none after an idle hour) and one denial, handoff) and a
coordinator with one worker. The scripted coordinator does itself what flower lets it (looks such as
`cat`/`ls`, Reads, greps of pointers) and delegates every other run of actions to a worker, in chunks of
up to 8 (W5: 6; W4: one per work item); each subtask of W3 is one chunk. A worker reports the way flower's
worker rules ask: the conclusion, the facts it was asked for, one `label -> path` line for each output it
saw a pointer for, denials, scripts written, and (some W3 subtasks) a pasted log; a report over the cap
is saved whole and the coordinator reads its first 2,000 chars and the saved report's path. The
ablations remove one layer each: `-delegation` (the main thread is a `worker()` spec and does everything
itself), `-spill`
(`spill_threshold=None`), `-expiry` (`ephemeral=False`), `-denial_prune` (`keep_denials` very large),
`-handoff` (`handoff=False`: the CLI compacts), `-workbench` (`workbench=False`), `-report_cap`
(`report_limit=None`). An ablation whose layer has nothing to act on in a workload (no resume, no wall, no
large output) would replay flower's run request for request; it is not run there, and its table says why.

**Baselines.** `baseline_raw` is plain `ClaudeAgentOptions` with the same `claude_code` system preset,
tool list (flower's session tools) and model as flower's sessions, `bypassPermissions`, no flower hook,
rule or store, and `DISABLE_AUTO_COMPACT=1`. `baseline_cc_default` is **Claude Code as a user gets it**:
the preset, no tool list (the CLI's own: Agent, Bash, Edit, Read, Write, Skill, ToolSearch, Workflow and
the rest, with its deferred tools), its built-in agents (Explore, general-purpose, Plan...), its
compaction and its idle handling; in W3 it delegates each investigation to the built-in
`general-purpose` agent. Both keep the CLI's own spill: a Bash output over 30,000 chars is saved to a
file and the model sees a 2 KB head.

**The CLI's clock.** A workload's idle gap (W2: 2 hours, W5: 30 minutes) is seen by every clock: the cost
model's (the simulated times), flower's store clock (expiry after an idle hour), and the CLI's own. The
CLI reads a gap from the timestamps of the session's transcript entries: its idle handling (2.1.332:
*tool-result clearing after idle*, which after 3,900 s between entries asks the API to clear old tool
results with a `clear_tool_uses` edit and adds a "This chat has resumed after a long pause" note) looks
there. So before a plain session (the baselines, the peers) is resumed, its transcript is dated back by
the idle time (`benchmarks/suite/clock.py`), and the resumed CLI sees a gap of that size between the
entries before and after (checked on every run); flower's sessions resume from flower's store, whose
clock moves forward by the idle time instead. The handling itself is gated by a feature flag the CLI
fetches from Anthropic's servers; with nonessential traffic off (as in every run here, where the CLI also
reads no cached flag) it is off, so it does not fire and the CLI's requests after the gap carry no edit.
Had it fired, the scripted model would have applied the edit, as the API does. (Running the CLI under
`faketime` shifts its clock too, but the commands it runs inherit libfaketime and lose their output to
its shared-memory errors, so the suite does not.)

**Summaries.** The CLI's compaction request and flower's handoff prompt are answered by one
deterministic summariser (`summary.py`): every user constraint visible is kept; every other visible fact
is kept with probability 0.7, seeded by fact and event number, so a fact is kept or lost alike in both;
the frontier (where the work stands) is always kept; a fixed 6,000-char body stands for the narrative.
flower's template adds "Where things are": the pointers visible in the request. The CLI adds its own
pointer after a compaction (the transcript path), which the probe policy uses.

**Workloads, as run** (scaled to the time budget; `workloads.py`):
"""

METRICS = """
**Metrics** (`metrics.py`). *Peak main* is the largest main-thread request (tokens);
*Σ main* adds every main-thread request (input without caching), *Σ all agents* every request of every
agent, compaction requests included. **Cost** is `flower._cost`'s, in dollars: every request of every
agent goes, in the order sent, through one simulated prompt cache with the API's rules: blocks in the
order the API reads them (tools, system, messages); entries written only at the CLI's own cache
breakpoints (its last system block, a subagent's prompt block, and the last block of each request),
for a prefix of at least the model's minimum (1,024 tokens for Sonnet 4.6); a breakpoint reads the
longest prefix still alive within 20 blocks before it; entries live 5 minutes after their last write or
read (1 hour for a mark that asks for it: `flower -keep_warm`'s coordinator). A request pays its cache reads
($0.30/M), its cache writes, each segment at its own mark's lifetime ($3.75/M for 5 minutes, 1.25x input;
$6/M for 1 hour, 2x), its uncached input ($3/M) and its **output** ($15/M). The clock is the calibrated
one (see "Under a realistic clock"), plus the workloads' idle gaps. *Cached* is the mean share of a
main-thread request read from the cache; *breaks* counts main-thread requests that did not read the
whole previous request although it was still cached (a history rewrite). Facts: answered at once / with
one extra call / with two or more / lost. A strategy that stops early (the CLI's local limit) loses the
facts it never reached. The billing block ignored is stored in `benchmarks/baseline.json`
(`cost_all_ignored`), and the dollars under every clock (`costs`).
The same model prices `flower demo` and `flower report`; a test checks that it gives, over a run's
request log, exactly the dollars the CLI itself reports for that run.
"""

NOTES = {
    "w1": """\
Mixed outputs (lognormal sizes, p50 3k, p90 40k chars); 20 needle facts in 12 large outputs, a third each
at the head (first 400 chars), middle and tail (last 100 chars), a quarter of them from a tool that can
be read only once; probes at 50, 75 and 100 % of the run; every seventh run is a test ending with its
verdict (half fail: exit 1). flower's coordinator answers needles through pointers (+1 call each), since
the outputs stayed with the workers; masking and clearing lose the facts of the read-once tool, which
only a pointer can bring back.""",
    "w2": """\
Nine cycles of look at the state (`cat`), Read a source file (3-15k), edit (changes the state), test
(2-60k, verdict last), look again; after the sixth cycle, 2 hours idle, the state changes meanwhile
(a teammate's commit), and the session is resumed; the agent checks the state, then needs three facts
from the files it read before. *Stale* counts the state snapshots still shown as they were after the
resume; "acted on a stale state" is whether the newest one it could see was out of date.""",
    "w3": """\
Six investigations of 5-8 large outputs each (p50 6k, p90 30k); each has a finding (in its largest
output) and a detail (elsewhere); two of the six reports paste a 10,000-char log. Then the coordinator
needs every finding and every detail. `baseline_raw` and the peers do it all in the main thread;
`baseline_cc_default` delegates each investigation to the CLI's `general-purpose` agent and flower to its
worker, one at a time or six at once. The pasted logs reach the CLI's coordinator whole; flower's
`report_cut` saves each to `artifacts/reports/` and hands the coordinator its first 2,000 chars.""",
    "w4": """\
Eighty pages to look at (`cat`, 0.8-3.8k chars, every tenth with a decision), a work item delegated
after every fifth, five user constraints in the task; decisions are needed again 30 pages later and at
the end, the constraints at the end. On top of the real requests, each main-thread turn adds 2,600
tokens of residue that no layer removes (the model's own prose, thinking and small results), reported to
the CLI through usage. `baseline_raw` stops at the CLI's local limit; every other strategy compacts (the
CLI's compaction, behind the peers too) or hands off (flower).""",
    "w5": """\
Jobs (p50 2k), five commands the session's rules deny (three of them needed again after the resume),
four network failures (a 5-20k traceback, exit 1) each retried once, three 30,000-char writes that fail
(the target's parent is a file), and a recurring 3,000-char analysis needed five times; 30 minutes idle
and a resume after 60 % of the work. *Residue* is what failed calls leave resident in the main thread
(their inputs and results); *retries* re-issue a denied command because no refusal naming it was
visible.""",
}

PEERS = """\
## The peers

Each peer runs as `baseline_raw` does (flower's tool list, `bypassPermissions`) but with the CLI's
compaction on, and the scripted model rewrites every request (`ScriptedModel(edit=...)`) before the agent
reads it: the agent decides from the request the strategy would have sent, the CLI is told that
request's size (so it compacts when the *edited* context reaches its line), and the cost is that
request's (`peers.py`).
- **Masking** (SWE-agent's `LastNObservations`): observations are the task prompt (never
  masked, as SWE-agent's instance template) and every tool result; with `polling` P, `floor(count / P) *
  P - n` of them are masked (`Old environment output: (k lines omitted)`), so between n and n + P stay and
  the masked boundary moves once every P results. Swept: n = 5 (SWE-agent's paper) and 10 (JetBrains'
  M = 10), polling 1, 5 and 10 (n5 p1, n5 p5, n10 p10). SWE-agent places its own cache marks (the last
  two user messages); here the CLI's marks apply.
- **`clear_tool_uses`** (the API's `clear_tool_uses_20250919`;
  `flower.testing.ClearToolUses`): once the prompt exceeds `trigger` tokens the oldest tool results
  become `[cleared]`, the `keep` most recent stay, and a clear that would reclaim less than
  `clear_at_least` is skipped. The client keeps sending the whole history; the API's documentation says
  that after a clear "subsequent requests can reuse the newly cached prefix", so a clear is modelled as
  an event: replayed over the history request by request, a result cleared stays cleared, and the next
  clear comes when the edited prompt crosses the trigger again (the reading most favourable to the peer;
  re-clearing on every request would break the cache every turn). Settings: the defaults (trigger 100k,
  keep 3, clear_at_least 0) and a tuned one (trigger 50k, keep 3, clear_at_least 20k).
- `clear_tool_uses` is also **swept** on the held-out seed: each of trigger (30k, 50k, 80k), keep (1, 3,
  6) and clear_at_least (0, 20k, 40k) moved from the tuned setting one at a time, and the most eager
  corner (30k, 1, 0).
- A peer's **best** setting in a workload is its cheapest (finishing) on a held-out realistic seed there;
  the five seeds and the scaling table run that one. Each best setting, and `baseline_raw`, also runs
  with **the SDK's own system prompt** instead of the `claude_code` preset, and every run of a peer, of
  `baseline_raw` and of the CLI's default is also priced with **a 1-hour cache** on its main thread
  (`CLAUDE_CODE_PROMPT_CACHE_TTL=1h`; a replay of the run with its main-thread marks at one hour, which
  is what the CLI sends: measured, its compaction requests and subagents keep 5 minutes and nothing
  else that prices changes; a replay and a real 1-hour run priced within 0.2 % of each other). The
  cheapest fair peer of a workload is the cheapest of all of these.
"""

LEFT_OUT = """\
## Left out, and why

- Peers' strategies the issue did not ask for: OpenCode's prune, deepagents, Codex,
  OpenHands' rolling summary, DCP. `peers.py` is where they would go (an edit of the request).
- Sizes: every workload is smaller than planned (W1 48 runs, not 80; W2 9 cycles, not 150 turns;
  W3 6 investigations of 5-8 calls, not 12 of 10-40; W4 80 pages with a residue per turn, not 500
  turns; W5 46 actions, not 120) to keep the full suite within 20 minutes on a 2-core machine; the
  scaling table runs W1 and W3 at half and one and a half times that size and extrapolates to the
  window; the marathon reaches the wall through its residue per turn.
- The realistic player runs `baseline_raw`, the CLI's default, flower and each peer at its best; the
  ablations and the peers' other settings run with the ideal player only (the peers' settings also on
  the held-out seed), masking with n=10 and
  polling 1 is left out of the sweep (it rewrites the history at every request, like n=5 polling 1),
  `clear_tool_uses` at its defaults runs only where the context reaches its trigger (W1, W4), and W1's
  spill preview sweep runs with `--previews` (time budget).
- Ablations whose layer cannot act in a workload are not run (their tables say why).
- Real BPE token counts: no tokenizer for Claude is available offline; blocks are cut at chars / 4 and
  priced at each model's measured tokens per character ("Tokens and prices").
- Task success: a scripted agent does not solve tasks; facts answerable stand in for it, and a run that
  stops at the window is counted as not finished.
- `exclude_tools` and `clear_tool_inputs` of `clear_tool_uses`; masking with SWE-agent's own cache marks.
- Retrying a failed call's input (DCP's purge) and deduplicating repeated reads: no strategy here does
  either, so W2's repeated reads are simply counted.
"""

FACTS = """\
## Facts measured along the way (CLI 2.1.327-2.1.332)

- A Bash call that exits non-zero fires `PostToolUseFailure`, not `PostToolUse`, so flower's spill never
  sees it: failing test runs and error traces stay in the context. The CLI cuts such a result to about
  10,000 chars (the first and last 5,000, with `... [N characters truncated] ...`) and saves no file; over
  30,000 chars the cut applies to the first 30,000, so the real end of the output (a verdict) is lost.
- The CLI marks two cache breakpoints on a main-thread request (its last system block and the last block
  of the last message; none on the tools) and three on a subagent's (the identity block, the agent's
  prompt block, the last block); all `{"type": "ephemeral"}` (5 minutes). The billing block `system[0]`
  carries none and sits before them.
- The CLI's idle handling (*tool-result clearing after idle*, 3,900 s) reads the gap from the
  transcript's timestamps and is off without its server-delivered feature flag (nonessential traffic
  off: no flag is fetched, no cached one is read). Under `faketime` (`LD_PRELOAD` of libfaketime) the CLI
  stamps its entries with the shifted clock, but the commands it runs inherit the library and fail in its
  shared-memory setup (`sem_open failed`), losing their output.
- The CLI takes no `CLAUDE_CODE_AUTO_COMPACT_WINDOW` under 100,000 tokens ("treats it as the 100k
  minimum"); `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` then lowers the threshold within that window.
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
