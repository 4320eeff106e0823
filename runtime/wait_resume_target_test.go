package runtime_test

// The resume target of a wait is "payload.resume_to_node if truthy, else
// the plan's next_node" (spec §3.1; runtime.py _handle_ask_user,
// _handle_wait_event, _handle_wait_until, _handle_start_subworkflow).
// Python stores a truthy
// non-string target (7, true) as given, in the run's wait, the WAITING
// record and the resume record. Ours stores it the same way and, as for
// such a target read from a store (docs/compatibility.md), a resume
// treats it as no target: the run completes with the resume payload.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// resumeTargetFixture runs a workflow whose node "wait" asks for effect
// (plan next node "done") up to its wait.
func resumeTargetFixture(t *testing.T, eff *durable.Effect) (*fixture, string, *durable.RunState) {
	t.Helper()
	wf := &runtime.Workflow{ID: "w", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(eff, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"at": "done"})
		}),
	}}
	child := &runtime.Workflow{ID: "child", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "child"}}, "")
		}),
	}}
	f := setup(t, wf, child)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", st, err)
	}
	return f, id, st
}

func wireText(t *testing.T, v any) string {
	t.Helper()
	b, err := pyjson.Marshal(v, pyjson.Style{})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNonStringResumeToNodeKeptAsGiven: the wait and the WAITING record
// hold the payload's value (7, true), not the plan's next node; a falsy
// one (0) falls back to next_node as Python's `or` does.
func TestNonStringResumeToNodeKeptAsGiven(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		eff  *durable.Effect
		want string
	}{
		{"ask_user 7", &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "Q", "resume_to_node": int64(7)}}, "7"},
		{"wait_event true", &durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"wait_key": "e", "resume_to_node": true}}, "true"},
		{"wait_until list", &durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": "2099-01-01T00:00:00+00:00", "resume_to_node": []any{"x"}}}, `["x"]`},
		{"ask_user 0", &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "Q", "resume_to_node": int64(0)}}, `"done"`},
		{"start_subworkflow async+wait 7", &durable.Effect{Type: durable.EffectStartSubworkflow, Payload: map[string]any{
			"workflow_id": "child", "async": true, "wait": true, "resume_to_node": int64(7)}}, "7"},
	} {
		f, id, st := resumeTargetFixture(t, c.eff)
		if got := wireText(t, st.Waiting.ResumeToNodeValue()); got != c.want {
			t.Errorf("%s: waiting.resume_to_node = %s, want %s", c.name, got, c.want)
		}
		recs, err := f.rt.GetLedger(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		last := recs[len(recs)-1]
		wait, _ := last.Result.(map[string]any)["wait"].(map[string]any)
		if last.Status != durable.StepWaiting || wireText(t, wait["resume_to_node"]) != c.want {
			t.Errorf("%s: WAITING record %v, want resume_to_node %s", c.name, last.Result, c.want)
		}
	}
}

// TestNonStringResumeToNodeResumeCompletesRun: resuming a wait whose
// target is not a string completes the run with the resume payload (a
// non-string names no node; Python's run would fail at its next tick),
// and the resume record keeps the target as stored.
func TestNonStringResumeToNodeResumeCompletesRun(t *testing.T) {
	ctx := context.Background()
	f, id, st := resumeTargetFixture(t, &durable.Effect{Type: durable.EffectAskUser, ResultKey: "answer",
		Payload: map[string]any{"prompt": "Q", "resume_to_node": int64(7)}})
	got, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey,
		Payload: map[string]any{"text": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCompleted || wireText(t, got.Output) != `{"result": {"text": "yes"}, "success": true}` {
		t.Fatalf("after resume: %s output %s; want completed with the resume payload", got.Status, wireText(t, got.Output))
	}
	recs, err := f.rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var resumeTo any = "none"
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			resumeTo = r.Effect.Payload["resume_to_node"]
		}
	}
	if wireText(t, resumeTo) != "7" {
		t.Errorf("resume record resume_to_node = %v, want 7 as stored", resumeTo)
	}
}
