"""The side-by-side benchmark suite behind `python benchmarks/run_suite.py` (docs/benchmarks.md).

- `actions`, `workloads`, `gen`: the five workloads as data, and the fake tool that prints their outputs;
- `player`, `realistic`, `delegate`, `summary`: the scripted agent (ideal or realistic) that plays a
  workload through the real CLI;
- `runs`, `peers`, `record`, `runner`: the strategies (baselines, peers as scripted-model edits, flower
  and its ablations), one real run each, in a process pool;
- `probes`, `trace`, `metrics`: what a request shows, and the numbers of a run (dollars from
  `flower._cost`);
- `report`, `ranking`, `prose`, `method`, `plots`, `baseline`: docs/benchmarks.md, its pictures, and the
  regression check.
"""
