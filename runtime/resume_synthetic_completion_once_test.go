package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestSyntheticToolCompletionIsNotAppendedTwice pins the check in
// syntheticToolCompletion that skips a tool wait whose waiting record
// already has a completed record under its key. That is what a store
// without atomic commits leaves when a resume's records were appended and
// the process died before the run's state was written: the run is still
// waiting, and the host answers again. The ledger must then keep one
// completion of the tool step, not two: a replay or an audit reading it
// would otherwise see the same attempt completed twice, possibly with two
// different results.
func TestSyntheticToolCompletionIsNotAppendedTwice(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := errRuntime(t, st, Config{})
	run, eff := toolWaitRun("r-twice")
	waiting := toolWaitingRecord("r-twice", "s1", "key-1", "tool:k")
	// The first answer's completion, appended before a kill cut its state.
	done := &durable.StepRecord{RunID: "r-twice", StepID: "s1", NodeID: "tools", Status: durable.StepCompleted, Attempt: 1,
		IdempotencyKey: "key-1", Effect: eff.Clone(),
		Result: map[string]any{"mode": "executed", "results": []any{"first"}}}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{waiting, done}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Resume(ctx, ResumeParams{RunID: "r-twice", WaitKey: "tool:k", MaxSteps: -1,
		Payload: map[string]any{"mode": "executed", "results": []any{"second"}}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range listLedger(t, st, "r-twice") {
		if r.Status == durable.StepCompleted && r.IdempotencyKey == "key-1" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d completed records under the tool step's key after the second answer; want 1 (the one already there)", n)
	}
}

// toolWaitRun is a run waiting (wait key "tool:k") on a delegated
// TOOL_CALLS step of node "tools", with that step's effect.
func toolWaitRun(runID string) (*durable.RunState, *durable.Effect) {
	eff := &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{"tool_calls": []any{}}}
	run := &durable.RunState{RunID: runID, WorkflowID: "wf-absent", Status: durable.RunWaiting, CurrentNode: "tools",
		Vars: map[string]any{},
		Waiting: &durable.WaitState{Reason: durable.WaitUser, WaitKey: "tool:k", ResultKey: "res", ResumeToNode: "next",
			AllowFreeText: true, Details: map[string]any{"mode": "delegated"}}}
	return run, eff
}

// toolWaitingRecord is the waiting record of such a step under key, its
// wait keyed waitKey.
func toolWaitingRecord(runID, stepID, key, waitKey string) *durable.StepRecord {
	_, eff := toolWaitRun(runID)
	return &durable.StepRecord{RunID: runID, StepID: stepID, NodeID: "tools", Status: durable.StepWaiting, Attempt: 1,
		IdempotencyKey: key, Effect: eff, Result: map[string]any{"wait": map[string]any{"wait_key": waitKey}}}
}
