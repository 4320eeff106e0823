package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Spec runtime-model §2.11 (after COMPLETED appended, before save: the
// prior result is reused, no new records). A run the Python runtime left
// (no _runtime.effect_seq) on an atomic store whose process died after the
// completed record of a local effect: the record is found under Python's
// key and reused, as for an external effect. Were a run told Python's from
// ours the wrong way round (effect_seq present), the local handler would be
// called again and the ledger get a second attempt.
func TestPythonRunReusesLocalEffectRecordOnAtomicStore(t *testing.T) {
	ctx := t.Context()
	const id = "py-local-1"
	eff := &durable.Effect{Type: "py_local", Payload: map[string]any{"q": "x"}, ResultKey: "r"}
	wf := &runtime.Workflow{ID: "wf_pylocal", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: eff.Type, Payload: map[string]any{"q": "x"}, ResultKey: "r"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
	st := memory.New()
	t.Cleanup(func() { _ = st.Close() })
	saved := durable.NewTime(time.Now().Add(-time.Minute))
	if err := st.RunCommit(ctx, &store.CommitParams{Create: true, Run: &durable.RunState{
		RunID: id, WorkflowID: wf.ID, Status: durable.RunRunning, CurrentNode: "a",
		Vars:      map[string]any{"context": map[string]any{}, "scratchpad": map[string]any{}, "_runtime": map[string]any{}, "_temp": map[string]any{}},
		CreatedAt: saved, UpdatedAt: saved,
	}}); err != nil {
		t.Fatal(err)
	}
	key := runtime.PythonIdempotencyKey(id, "a", eff)
	began, ended := durable.NewTime(saved.Add(time.Millisecond)), durable.NewTime(saved.Add(2*time.Millisecond))
	if err := st.LedgerAppend(ctx, id, []*durable.StepRecord{
		{RunID: id, StepID: "s-1", NodeID: "a", Status: durable.StepStarted, Effect: eff, StartedAt: began, Attempt: 1, IdempotencyKey: key},
		{RunID: id, StepID: "s-1", NodeID: "a", Status: durable.StepCompleted, Effect: eff, Result: map[string]any{"from": "python"},
			StartedAt: began, EndedAt: ended, Attempt: 1, IdempotencyKey: key},
	}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	rt := applyRuntime(t, runtime.Config{Store: st, Handlers: map[durable.EffectType]runtime.Handler{eff.Type: {Local: true,
		Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			calls++
			return runtime.Completed(map[string]any{"from": "go"}), nil
		}}}}, wf)
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s); want completed", run.Status, run.Error)
	}
	r, _ := run.Vars["r"].(map[string]any)
	if calls != 0 || r["from"] != "python" {
		t.Fatalf("handler calls %d, r = %v; want the Python record's result reused, the handler not called", calls, run.Vars["r"])
	}
	n := 0
	for _, r := range ledgerOf(t, rt, id) {
		if r.Effect != nil && r.Effect.Type == eff.Type {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("ledger holds %d records of the effect; want the 2 Python ones (no new attempt)", n)
	}
}
