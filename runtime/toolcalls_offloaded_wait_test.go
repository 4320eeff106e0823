package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// Spec §2.6 step 5: a TOOL_CALLS wait answered by the host gets a
// synthetic completed record, found by the waiting record's
// result.wait.wait_key, so that a re-run of the tool step reuses the
// host's results. Behind the offloading decorator (the spec §4.10 stack,
// and Python's OffloadingLedgerStore) the waiting record's result.wait
// object is replaced by {"$artifact": id} when its members are each under
// the threshold but together over it (here a 400-byte prompt and 400-byte
// details under a 600-byte threshold). The wait is read back from the
// run's ledger-offload artifacts; read as stored, it had no wait key and
// no completion was appended.
func TestSyntheticToolCompletionFoundWhenTheWaitWasOffloaded(t *testing.T) {
	ctx := context.Background()
	handler := func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Waiting(&durable.WaitState{
			Reason: durable.WaitEvent, WaitKey: "tools:1", ResumeToNode: "done", ResultKey: "r",
			Prompt: strings.Repeat("p", 400),
			Details: map[string]any{"mode": "delegated", "tool_calls": []any{
				map[string]any{"call_id": "c1", "name": "write", "arguments": map[string]any{"content": strings.Repeat("c", 400)}},
			}},
		}), nil
	}
	wf := &runtime.Workflow{ID: "w", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r",
				Payload: map[string]any{"tool_calls": []any{map[string]any{"call_id": "c1", "name": "write"}}}}, "done"), nil
		},
		"done": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 600})
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts,
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectToolCalls: {Func: handler}}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "tools:1",
		Payload: map[string]any{"mode": "executed", "results": []any{}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	var waiting any
	for _, r := range recs {
		if r.Effect == nil || r.Effect.Type != durable.EffectToolCalls {
			continue
		}
		switch r.Status {
		case durable.StepWaiting:
			waiting = r.Result
		case durable.StepCompleted:
			return
		}
	}
	t.Fatalf("no synthetic completion of the tool step after the host's resume; the waiting record's result as stored: %v", waiting)
}
