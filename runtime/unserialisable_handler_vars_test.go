package runtime_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// An external effect's handler may change req.Run.Vars (the change is
// persisted with the step, runtime/handler.go). When it writes a value
// that is not JSON (a NaN), the commit after the effect fails its JSON
// check and the run is failed from the checkpoint taken before the effect
// (failUnserialisable). The effect did run, so its attempt must not stay
// open (spec runtime-model §1.4: two entries per attempt with the same
// step_id): it ends failed with the error naming the path, as a NaN in
// the handler's result ends it (checkOutcomeJSON). The failure is recorded
// against node a, where the stored run stands, not node b, which the
// dropped working copy had moved to and which never ran; and the failed
// state no longer holds the plan in flight the checkpoint recorded.
// jsonfile is a non-atomic store (terminal records looked up before they
// are appended).
func TestHandlerNonJSONVarsWriteClosesAttemptAndFailsAtItsNode(t *testing.T) {
	for _, backend := range []string{"memory", "jsonfile"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			var st store.Store = memory.New()
			if backend == "jsonfile" {
				js, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { js.Close() })
				st = js
			}
			const custom = durable.EffectType("custom_external")
			wf := &runtime.Workflow{ID: "p", Entry: "a", Nodes: map[string]runtime.NodeFunc{
				"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
					return runtime.Request(&durable.Effect{Type: custom, Payload: map[string]any{"q": int64(1)}, ResultKey: "res"}, "b")
				}),
				"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
					return runtime.Complete(map[string]any{"ok": true})
				}),
			}}
			reg, err := runtime.NewRegistry(wf)
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
				custom: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
					calls++
					req.Run.Vars["side"] = math.NaN()
					return runtime.Completed(map[string]any{"answer": int64(42)}), nil
				}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
			if err != nil {
				t.Fatal(err)
			}
			run, err := rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if calls != 1 || run.Status != durable.RunFailed || !strings.Contains(run.Error, "vars.side") {
				t.Fatalf("handler calls %d, run %s (%q); want one call and the run failed naming vars.side", calls, run.Status, run.Error)
			}

			recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
			if err != nil {
				t.Fatal(err)
			}
			open := map[string]string{} // step id → node of a STARTED record without an end
			var attemptEnd, nodeFailure *durable.StepRecord
			for _, r := range recs {
				switch {
				case r.Status == durable.StepStarted:
					open[r.StepID] = r.NodeID
				case open[r.StepID] != "":
					delete(open, r.StepID)
					attemptEnd = r
				case r.Status == durable.StepFailed:
					nodeFailure = r
				}
			}
			for step, nodeID := range open {
				t.Errorf("STARTED record %s of node %q has no end, though its effect ran", step, nodeID)
			}
			if attemptEnd == nil || attemptEnd.Status != durable.StepFailed || attemptEnd.NodeID != "a" ||
				!strings.Contains(attemptEnd.Error, "vars.side") || attemptEnd.Result != nil {
				t.Errorf("attempt end %+v; want node a's attempt failed naming vars.side, without a result", attemptEnd)
			}
			if nodeFailure == nil || nodeFailure.NodeID != "a" {
				t.Errorf("run failure record %+v; want it against node a (the run never reached b)", nodeFailure)
			}

			stored, err := st.RunGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != durable.RunFailed || stored.CurrentNode != "a" {
				t.Errorf("stored run %s at %q; want failed at a", stored.Status, stored.CurrentNode)
			}
			if rtv, _ := stored.Vars["_runtime"].(map[string]any); rtv["effect_in_flight"] != nil {
				t.Errorf("failed run keeps vars._runtime.effect_in_flight = %v", rtv["effect_in_flight"])
			}
			if _, ok := stored.Vars["side"]; ok {
				t.Errorf("failed run keeps the handler's non-JSON write: vars %v", stored.Vars)
			}
		})
	}
}

// NodeFunc's doc (workflow.go) promises that "a returned error fails the
// run with the error recorded in its ledger". When the failing node had
// also written a value that is not JSON (a handle it was building), fail
// -> finish -> flush -> failUnserialisable (session.go) reloads the run,
// drops the pending failure record and fails the run with the JSON error
// alone: the node's own error (the cause) is recorded nowhere, neither in
// run.error nor in the ledger. The same happens to a panicking node.
func TestCoreNodeErrorKeptWhenItsWritesAreNotJSON(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "e", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars["conn"] = make(chan int) // half-built state
			return runtime.StepPlan{}, errors.New("database unreachable")
		},
	}}
	f := setup(t, wf)
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "e"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := f.rt.GetState(ctx, id)
	recs, _ := f.rt.GetLedger(ctx, id)
	inLedger := false
	for _, r := range recs {
		if strings.Contains(r.Error, "database unreachable") {
			inLedger = true
		}
	}
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "database unreachable") || !inLedger {
		t.Errorf("run %s with error %q (node error in ledger: %v); want it failed with the node's error %q recorded",
			run.Status, run.Error, inLedger, "database unreachable")
	}
}
