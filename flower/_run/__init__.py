"""The run machinery behind `Runtime` and `instrument()`: nothing here is public.

- `execute`: one run of a spec, from its lease to its `StepResult` (the body behind `Runtime.run`);
- `step`: one step of a run, generations of sessions linked by handoffs, with its brakes;
- `generation`: one session of a step, run to its end or until it must hand off;
- `course`: that session's decisions about its handoff line (warn, stop the turn, hand off, give up
  waiting), a pure object fed the messages the generation reads;
- `gate`: past the handoff threshold with background workers out, the coordinator asked to end its turn;
- `settle`: when a session's prompt is done: no background worker's report still owed to the coordinator;
- `stream`: the SDK's message stream turned into flower's events and what a `StepResult` needs;
- `reach` and `credentials`: fail fast when the API cannot be reached or no credentials exist;
- `layer_setup`: flower's layers as SDK pieces (the spill, index and report hooks over one workbench, and the
  layer-4 store), built the same way for `Runtime` and `instrument()`;
- `session_holds`: the sessions a run leases, and the workbench files a shared store carries;
- `durable`, `keeper`, `recover`: every transcript line through the workspace's outbox to the store, the
  leases kept (or the run stopped), and what earlier runs in the workspace left delivered first;
- `route`: where a run's entries go (the outbox file, or one in memory when the file cannot be written);
- `outbox_delivery`: what an outbox holds, delivered to a store now (`flower.deliver_outbox`,
  `flower doctor --deliver`);
- `chain`: the check after a run that every stored entry names a parent the store holds;
- `sync`: the blocking forms (`run_sync`), refused clearly inside a running event loop;
- `tether` and `supervise`: the CLI started under a supervisor that ends it, and every process it
  started, when the process that started it dies.
"""
