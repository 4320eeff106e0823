package benchwork

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestVerifyCatchesMoreWrongW1Results: Verify fails, naming the run, when
// a W1 run lacks the last node's var k9, belongs to another workflow, has
// an empty ledger, or ends with a record that carries the terminal status
// key but is not the abstract.status event: each is a wrong run that must
// never become a number.
func TestVerifyCatchesMoreWrongW1Results(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		run        func(*durable.RunState)
		ledger     func([]*durable.StepRecord) []*durable.StepRecord
	}{
		{name: "k9 missing", want: `"k9"`, run: func(st *durable.RunState) { delete(st.Vars, "k9") }},
		{name: "other workflow", want: "workflow", run: func(st *durable.RunState) { st.WorkflowID = "other" }},
		{name: "empty ledger", want: "ledger",
			ledger: func([]*durable.StepRecord) []*durable.StepRecord { return nil }},
		{name: "terminal key on a record without the event", want: "terminal status",
			ledger: func(r []*durable.StepRecord) []*durable.StepRecord { r[len(r)-1].Effect = nil; return r }},
	} {
		t.Run(tc.name, func(t *testing.T) { wantTamperedRefused(t, W1Chain, tc.run, tc.ledger, tc.want) })
	}
}

// TestVerifyFellBackW3DueRunNeedsTheWokeResult: a W3b run counted in
// immediate_fallbacks passes only with the kernel's past-deadline result
// in vars.woke ({ready: true, until}); without it, it is a wrong run.
// Runs of W3 (whose deadline is past) stand in for fell-back W3b runs.
func TestVerifyFellBackW3DueRunNeedsTheWokeResult(t *testing.T) {
	ctx := context.Background()
	env := memoryEnv(t)
	w3, err := RunW3Past(ctx, env, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := w3.RunIDs[0]
	out := &Outcome{Workload: W3Due, RunIDs: w3.RunIDs, Steps: w3.Steps, ImmediateFallbacks: 1, fellBack: map[string]bool{id: true}}
	if _, err := Verify(ctx, env, out); err != nil {
		t.Fatalf("a fell-back run with its woke result: %v", err)
	}
	env.Store.inner = &tamperStore{Store: env.Store.inner, run: func(st *durable.RunState) { delete(st.Vars, "woke") }}
	if _, err := Verify(ctx, env, out); err == nil || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "woke") {
		t.Fatalf("a fell-back run without vars.woke: err = %v, want an error naming run %s and woke", err, id)
	}
}
