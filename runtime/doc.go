// Package runtime is the durable workflow kernel.
//
// A Workflow is a graph of nodes. Each NodeFunc reads the run and returns a
// StepPlan: move to the next node (Next), request an effect and move on
// when it completes (Request), or finish (Complete). A run is a persisted
// state machine over a store.Store:
//
//	rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg})
//	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "order"})
//	state, _ := rt.Tick(ctx, id, runtime.TickOptions{})  // runs until it waits or ends
//	state, _ = rt.Resume(ctx, runtime.ResumeParams{RunID: id,
//		WaitKey: state.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
//
// # Effects
//
// Side effects are requested as durable.Effect values and executed by
// handlers registered per effect type (Config.Handlers, SetHandler). The
// kernel records each attempt in the ledger (STARTED, then COMPLETED,
// WAITING, FAILED or CANCELLED with the same step id), retries failed
// attempts per the EffectPolicy, and writes a completed result at the
// effect's ResultKey. Built in: ask_user, answer_user, wait_event (with an
// optional deadline), wait_until, emit_event, start_subworkflow,
// vars_query, memory_note, memory_query, memory_tag, memory_rehydrate and
// memory_compact (which summarises through the llm_call handler); the
// other effect types (llm_call, tool_calls, memory_kg_* …) need a handler
// in Config.Handlers. The payload keys each handler reads and the result
// it writes, or the wait it enters and what its resume writes, are
// documented on the durable.Effect* constants (durable.EffectAskUser …).
//
// An effect whose plan has no NextNode completes the run with
// {"success": true, "result": <result>}. A wait with no resume target
// (no payload resume_to_node, no NextNode) completes the run when it is
// resumed, with {"success": true, "result": <what the resume wrote at the
// result key, or the payload when there is none>}; a released wait_until
// is the exception: its node runs again. When a run ends (completed,
// failed or cancelled) the kernel appends, in the commit that ends it, a
// last ledger record: an emit_event record with payload {"name":
// "abstract.status", "scope": "session", "payload": {"text": <status>}},
// result {"emitted": true, "name": "abstract.status", "payload": {"text":
// <status>}} and idempotency key system:terminal_status:<status>
// (StatusEventName, TerminalStatusKey, IsTerminalStatusRecord). It is a
// record only: no waiting run is resumed by it.
//
// # Durability
//
// Every durable write is one RunCommit (store.RunStore) carrying the new
// ledger records and the state, made at durable boundaries: start, before and
// after a non-local effect, waits, terminal states, the end of a tick.
// Pure transitions are replayed from the last checkpoint after a crash;
// node functions must therefore be deterministic given the run state.
// Effects are keyed by an idempotency key that includes the run's effect
// sequence, so a replay reuses a completed result while a loop repeating
// an identical effect runs it again. See docs/architecture.md.
//
// # Waits
//
// A run waits for a person (ask_user), an event (wait_event, resumed by
// emit_event or EmitEvent), a time (wait_until, released by a Tick at or
// after it — the scheduler package does this), or a child run
// (start_subworkflow async+wait, resumed automatically when the child
// ends). Resume answers a wait at most once; a run no longer waiting on
// the key gives a *StaleResumeError.
//
// # Control
//
// Pause and ResumeRun are a durable host pause; Cancel cancels a run and
// its descendants and interrupts the effect in flight; UpdateLimits,
// GetLimitStatus and CheckLimits manage vars._limits; UpdateVars and
// SetWaitDeadline change a run's vars or wait deadline under its lock.
// A host that leaves driving runs to its runner (a gateway's command
// loop) resumes them without ticking: Resume with a negative MaxSteps,
// ResumeRunWith likewise, EmitEvent with NoDrive.
package runtime
