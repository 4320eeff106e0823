package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestResumeRecordKeepsResumedPayload: the resume record is
// the ledger's evidence of what the host resumed with (spec: Python appends
// it at once, serialised). Here it stays pending until the checkpoint that
// ends the steps after the resume, and it holds the very map written at
// the wait's result key: a node that then writes into vars.answer (as
// NodeFunc may, SetPath("answer.checked", …) included) changes the
// durable resume record too.
func TestResumeRecordKeepsResumedPayload(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Continue?"}, ResultKey: "answer"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			runtime.SetPath(run.Vars, "answer.checked", true)
			runtime.SetPath(run.Vars, "answer.text", "rewritten by a node")
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick = %v, %v", st, err)
	}
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey,
		Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatal(err)
	}
	recs, err := f.rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var resumed map[string]any
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			resumed, _ = r.Effect.Payload["payload"].(map[string]any)
		}
	}
	if resumed == nil {
		t.Fatal("no resume record")
	}
	if resumed["text"] != "yes" || len(resumed) != 1 {
		t.Fatalf("resume record payload = %v, want the host's {text: yes}: a node's later write into vars.answer changed the ledger", resumed)
	}
}

// TestLocalEffectRecordKeepsResult: a local effect's
// COMPLETED record waits in the session for the checkpoint that ends the
// tick. Its result is pyjson.Clone(out.Result), which copies maps and
// []any only: a typed container in the result ([]string, which a handler
// may return and the stores encode as a list) is the very slice the
// result key writes into vars. A later node of the same tick that updates
// that slice in place changes the ledger record as well.
func TestLocalEffectRecordKeepsResult(t *testing.T) {
	t.Parallel()
	const custom durable.EffectType = "local_tags"
	wf := &runtime.Workflow{ID: "tags", Entry: "get", Nodes: map[string]runtime.NodeFunc{
		"get": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: custom, Payload: map[string]any{}, ResultKey: "res"}, "edit"), nil
		},
		"edit": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if tags, ok := run.Vars["res"].(map[string]any)["tags"].([]string); ok {
				tags[0] = "edited by a later node"
			}
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	f := setup(t, wf)
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: f.st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
		custom: {Local: true, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"tags": []string{"from the handler"}}), nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "tags"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick = %v, %v", st, err)
	}
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == custom && r.Status == durable.StepCompleted {
			found = true
			res, _ := r.Result.(map[string]any)
			tags, _ := res["tags"].([]any)
			if len(tags) != 1 || tags[0] != "from the handler" {
				t.Fatalf("completed record result = %v, want tags [from the handler]: a later node's in-place write reached the ledger", r.Result)
			}
		}
	}
	if !found {
		t.Fatal("no completed record of the effect")
	}
}
