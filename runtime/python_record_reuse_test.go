package runtime_test

// Whether a completed record the Python runtime wrote under its own
// idempotency key (no step count) is this effect's completion a kill left
// unsaved, to reuse, or an earlier turn of a loop the state accounts for:
// it is judged against the time of the state's last Python save (same
// clock as the record), which our own saves keep in vars._runtime, never
// against a time our clock wrote.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// loopFxWorkflow repeats node "a"'s LLM_CALL "one" (handoffFxRun's effect)
// until vars.turns reaches 2; "inc" counts the turns.
func loopFxWorkflow() *runtime.Workflow {
	return &runtime.Workflow{ID: "wf_fx", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if n, _ := runtime.AsInt(run.Vars["turns"]); n >= 2 {
				return runtime.Complete(map[string]any{"turns": n}), nil
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall,
				Payload: map[string]any{"prompt": "one"}, ResultKey: "r1"}, "inc"), nil
		},
		"inc": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := runtime.AsInt(run.Vars["turns"])
			run.Vars["turns"] = n + 1
			return runtime.Next("a"), nil
		},
	}}
}

// skewedLoopRuntime runs loopFxWorkflow over a Python data dir holding
// runJSON and handoffFxLedger, with a clock starting at now (ticking 1 ms
// a reading); it returns the runtime and the LLM call counter.
func skewedLoopRuntime(t *testing.T, runJSON string, now time.Time) (*runtime.Runtime, *int) {
	t.Helper()
	st := pythonDataDir(t, map[string]string{"run_" + handoffFxRunID + ".json": runJSON, "ledger_" + handoffFxRunID + ".jsonl": handoffFxLedger})
	reg, err := runtime.NewRegistry(loopFxWorkflow())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := new(int)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
		Clock: func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Millisecond); return now },
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			*calls++
			return runtime.Completed(map[string]any{"content": "go"}), nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt, calls
}

// Spec runtime-model §2.11 (after COMPLETED appended, before save: reuse,
// never re-run). A host write between the kill and our first tick (an
// operator's pause and resume-run) moved updated_at past the record's
// ended_at, and the LLM call "one" was made a second time.
func TestPythonCompletionAheadOfStateReusedAfterHostWrite(t *testing.T) {
	rt, recorded := pythonDirRuntime(t, handoffFxRunID, handoffFxRun, handoffFxLedger, handoffFxWorkflow(),
		func(prompt string) string { return "go:" + prompt })
	ctx := t.Context()
	if _, err := rt.Pause(ctx, handoffFxRunID, "operator"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ResumeRun(ctx, handoffFxRunID); err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(ctx, handoffFxRunID, runtime.TickOptions{})
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	if run.Status != durable.RunCompleted {
		t.Fatalf("status %s; want completed", run.Status)
	}
	if prompts := *recorded; len(prompts) != 1 || prompts[0] != "two" {
		t.Fatalf("LLM calls made by Go: %v; want only [two] (Python's completed call \"one\" "+
			"must be reused after a pause/resume)", prompts)
	}
}

// Python saved its state after its "one" record (an earlier turn). We
// continue the loop with a clock 4 s behind the Python host's: after our
// first turn's commit, updated_at (our clock) was before the record's
// ended_at, and the second turn reused the record instead of calling.
func TestPythonRecordNotReusedByLaterLoopTurnUnderClockSkew(t *testing.T) {
	saved := strings.Replace(handoffFxRun, `"updated_at": "2026-12-01T06:57:24.386154+00:00"`,
		`"updated_at": "2026-12-01T06:57:24.388000+00:00"`, 1)
	rt, calls := skewedLoopRuntime(t, saved, time.Date(2026, 12, 1, 6, 57, 20, 0, time.UTC))
	run, err := rt.Tick(t.Context(), handoffFxRunID, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("Tick: %v %v", run, err)
	}
	if *calls != 2 {
		t.Fatalf("LLM calls made by Go: %d; want 2 (two loop turns after the Python state)", *calls)
	}
}

// The kill case in a loop: the record ahead of the state is reused for the
// first turn only; the next turn (pure nodes in between, nothing saved)
// makes the call, whatever the clock.
func TestReusedPythonRecordNotReusedAgainByLaterLoopTurn(t *testing.T) {
	for name, now := range map[string]time.Time{
		"clock behind": time.Date(2026, 12, 1, 6, 57, 20, 0, time.UTC),
		"clock ahead":  time.Date(2026, 12, 1, 6, 58, 0, 0, time.UTC),
	} {
		t.Run(name, func(t *testing.T) {
			rt, calls := skewedLoopRuntime(t, handoffFxRun, now)
			run, err := rt.Tick(t.Context(), handoffFxRunID, runtime.TickOptions{})
			if err != nil || run.Status != durable.RunCompleted {
				t.Fatalf("Tick: %v %v", run, err)
			}
			if *calls != 1 {
				t.Fatalf("LLM calls made by Go: %d; want 1 (turn 0 reuses Python's record, turn 1 calls)", *calls)
			}
		})
	}
}

// A run Python left waiting on a TOOL_CALLS wait (no effect_seq, its
// waiting record under Python's key) is answered through our runtime:
// Resume commits the synthetic completed record under that key (spec §2.6
// step 5), ending after Python's save. The run then loops back to the same
// tool call before any other effect. The record was taken for a Python
// completion a kill left unsaved and reused: the host's first answer
// became the second turn's result and the handler was never called. It
// happened only when the resume and the next tick were separate commits
// (a gateway commits the answer, a runner ticks); the resume now raises the
// kept Python save time to the record's end. The same for a denied
// approval_required wait.
func TestPythonToolWaitAnswerNotReusedByLaterLoopTurn(t *testing.T) {
	for name, tc := range map[string]struct {
		mode   string
		answer map[string]any
	}{
		"passthrough answer": {"passthrough", map[string]any{"mode": "executed", "results": []any{map[string]any{
			"call_id": "c1", "name": "ls", "success": false, "output": nil, "error": "turn 1 failed"}}}},
		"denied approval": {"approval_required", map[string]any{"approved": false}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			eff := func() *durable.Effect {
				return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "tool_results", Payload: map[string]any{
					"tool_calls": []any{map[string]any{"name": "ls", "call_id": "c1", "arguments": map[string]any{}}},
				}}
			}
			// "tools" calls the tool; "check" loops back to it once.
			wf := &runtime.Workflow{ID: "pyloop", Entry: "tools", Nodes: map[string]runtime.NodeFunc{
				"tools": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
					return runtime.Request(eff(), "check")
				}),
				"check": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
					if run.Vars["turned"] == nil {
						run.Vars["turned"] = true
						return runtime.Next("tools")
					}
					return runtime.Complete(map[string]any{"done": true})
				}),
			}}
			f := setup(t, wf)
			const runID = "py-run-1"
			waitFor := func(resumeTo string) *durable.WaitState {
				return &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "tool_calls:" + runID + ":tools",
					ResumeToNode: resumeTo, ResultKey: "tool_results", AllowFreeText: true,
					Details: map[string]any{"mode": tc.mode, "tool_calls": eff().Payload["tool_calls"]}}
			}
			calls := 0
			f.rt.SetHandler(durable.EffectToolCalls, waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
				calls++
				return waitFor(req.DefaultNext)
			}))

			// The run as Python saved it, a minute before our clock.
			pySave := durable.NewTime(f.now.Add(-time.Minute))
			wait := waitFor("check")
			run := &durable.RunState{RunID: runID, WorkflowID: "pyloop", Status: durable.RunWaiting, CurrentNode: "tools",
				Vars: map[string]any{"context": map[string]any{"task": "", "messages": []any{}}, "scratchpad": map[string]any{},
					"_runtime": map[string]any{}, "_temp": map[string]any{}, "_limits": map[string]any{}},
				Waiting: wait, CreatedAt: pySave, UpdatedAt: pySave}
			started := &durable.StepRecord{RunID: runID, StepID: "s1", NodeID: "tools", Status: durable.StepStarted,
				Effect: eff(), StartedAt: pySave, Attempt: 1, IdempotencyKey: runtime.PythonIdempotencyKey(runID, "tools", eff())}
			waiting := *started
			waiting.Status, waiting.EndedAt, waiting.Result = durable.StepWaiting, pySave, map[string]any{"wait": wait.Map()}
			if err := f.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{started, &waiting}}); err != nil {
				t.Fatal(err)
			}

			// The answer committed alone, then a tick.
			if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: runID, MaxSteps: -1,
				WaitKey: wait.WaitKey, Payload: tc.answer}); err != nil {
				t.Fatal(err)
			}
			st, err := f.rt.Tick(ctx, runID, runtime.TickOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if calls != 1 || st.Status != durable.RunWaiting {
				t.Fatalf("second turn: handler called %d times, run %s; want 1 call and the run waiting again "+
					"(the first turn's answer must not be reused)", calls, st.Status)
			}
		})
	}
}
