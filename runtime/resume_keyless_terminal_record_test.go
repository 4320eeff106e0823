package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestTerminalResumeOfAKeylessWaitRecordsANullWaitKey pins the terminal
// resume completion record (spec §1.7) of a wait that has no key: a
// WAIT_UNTIL whose node names no next node, answered early by a host
// resume. Its result carries "wait_key": null, as Python's record has
// wait.wait_key = None, not an empty string: readers of the ledger tell a
// keyless wait by that null, and the record must match the one a Python
// runtime writes for the same run.
func TestTerminalResumeOfAKeylessWaitRecordsANullWaitKey(t *testing.T) {
	t.Parallel()
	f := setup(t, &runtime.Workflow{ID: "until", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": "2099-01-01T00:00:00+00:00"}, ResultKey: "woke"}, "")
		}),
	}})
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "until"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || run.Waiting == nil || run.Waiting.WaitKey != "" || run.Waiting.ResumeToNode != "" {
		t.Fatalf("tick: %+v %v; want a keyless wait without resume node", run, err)
	}
	got, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, Payload: map[string]any{"early": true}})
	if err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("resume: %+v %v; want the run completed", got, err)
	}
	recs, err := f.rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var rec *durable.StepRecord
	for _, r := range recs {
		if res, ok := r.Result.(map[string]any); ok && res["via"] == "resume" {
			rec = r
		}
	}
	if rec == nil {
		t.Fatalf("no terminal resume completion record in the ledger: %s", statuses(t, f, id))
	}
	want := `{"completed":true,"output":{"result":{"early":true},"success":true},"via":"resume","wait_key":null,"wait_reason":"until"}`
	if got := feJSON(rec.Result); got != want {
		t.Errorf("terminal resume completion record result %s; want %s", got, want)
	}
}
