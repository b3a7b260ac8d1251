"""The side-by-side benchmark suite behind `python benchmarks/run_suite.py` (docs/benchmarks.md).

- `actions`, `workloads`, `gen`: the five workloads as data, and the fake tool that prints their outputs;
- `player`, `delegate`, `summary`: the scripted agent that plays a workload through the real CLI;
- `runs`, `runner`: the strategies that run for real (baselines, flower, ablations);
- `transforms`: the peers' strategies, computed from the recorded raw run (approximations);
- `probes`, `trace`, `cache`, `metrics`: what a request shows, and the numbers of a run;
- `report`, `prose`, `plots`, `baseline`: docs/benchmarks.md, its pictures, and the regression check.
"""
