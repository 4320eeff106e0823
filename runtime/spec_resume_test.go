package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Spec §2.6 steps 2, 7 and 8: a resume passing no wait key skips the check;
// a wait without resume node completes the run with output {"success":
// true, "result": <stored payload>} without ticking, after the resume record
// (node = the waiting node, payload.payload = the stored payload), the
// terminal resume completion record and the terminal status event.
func TestSpecResumeOfWaitWithoutResumeNodeCompletesTheRun(t *testing.T) {
	var ticked bool
	wf := &runtime.Workflow{ID: "ask", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			if run.Vars["x"] != nil {
				ticked = true
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "x"}, "")
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if run, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	before, _ := f.rt.GetLedger(ctx, id)
	run, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, Payload: map[string]any{"a": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"result":{"a":"b"},"success":true}`
	if run.Status != durable.RunCompleted || feJSON(run.Output) != want || run.Waiting != nil || ticked {
		t.Fatalf("run %s output %s waiting %v ticked %v; want completed with %s, no tick", run.Status, feJSON(run.Output), run.Waiting, ticked, want)
	}
	if feJSON(run.Vars["x"]) != `{"a":"b"}` {
		t.Errorf("vars.x = %v; want the payload at result_key", run.Vars["x"])
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	tail := recs[len(before):]
	if len(tail) != 3 {
		t.Fatalf("resume appended %s; want the resume record, the completion record and the status event", feSummary(tail))
	}
	if r := tail[0]; r.Effect == nil || r.Effect.Type != durable.EffectResume || r.NodeID != "a" || feJSON(r.Effect.Payload["payload"]) != `{"a":"b"}` {
		t.Errorf("first record %+v; want the resume record of node a with payload.payload {a: b}", r)
	}
	if r := tail[1]; r.Effect != nil || r.Status != durable.StepCompleted {
		t.Errorf("second record %+v; want the terminal resume completion record (effect null)", r)
	} else if res, _ := r.Result.(map[string]any); res["completed"] != true || feJSON(res["output"]) != want {
		t.Errorf("completion record result %v; want completed true and the run's output", r.Result)
	}
	if r := tail[2]; !runtime.IsTerminalStatusRecord(r) || r.IdempotencyKey != runtime.TerminalStatusKey(durable.RunCompleted) {
		t.Errorf("last record %+v; want the terminal status event", r)
	}
}

// Spec §2.6 step 2: the wait_key check applies "only when the caller passes
// a non-null wait_key and the stored one is non-null": a WAIT_UNTIL wait
// (wait_key null, §3.4) accepts a resume naming any key.
func TestSpecResumeOfKeylessWaitSkipsTheKeyCheck(t *testing.T) {
	f := setup(t, waitUntilWorkflow("later", func(*runtime.RunContext) string { return "2099-01-01T00:00:00+00:00" }))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "later"})
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunWaiting || run.Waiting.WaitKey != "" {
		t.Fatalf("tick: %v %v; want waiting without a wait key", run, err)
	}
	run, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "anything", Payload: map[string]any{"k": "v"}})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("resume of a keyless wait with a key: %v %v; want accepted", run, err)
	}
}

// Spec §2.6 step 4: a wrapped subworkflow wait converts the resume payload
// into a tool result only when "the payload is not already {mode,
// results}"; such a payload is stored verbatim.
func TestSpecWrappedSubworkflowResumeKeepsAToolEnvelope(t *testing.T) {
	parent := &runtime.Workflow{ID: "p", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "ask", "async": true, "wait": true, "wrap_as_tool_result": true}}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
	f := setup(t, parent, askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	waiting := mustGet(t, f.rt, id)
	if waiting.Status != durable.RunWaiting || waiting.Waiting == nil {
		t.Fatalf("parent %s; want waiting on its child", waiting.Status)
	}
	envelope := map[string]any{"mode": "executed", "results": []any{map[string]any{"call_id": "mine", "success": true}}}
	run, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: waiting.Waiting.WaitKey, Payload: envelope})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("resume: %v %v", run, err)
	}
	if got := feJSON(run.Vars["sub"]); got != feJSON(envelope) {
		t.Errorf("vars.sub = %s; want the {mode, results} payload verbatim", got)
	}
}

// Spec §2.6 step 7: the resume record's payload.payload goes through
// offload_large_values with base tags {"source":"resume","kind":
// "resume_payload"} and root `resume.payload`; per §4.7 each artifact's tags
// are `base_tags + {"path", "kind"}`, so the value's kind (text) wins.
func TestSpecResumeRecordOffloadTags(t *testing.T) {
	ctx, arts, id, _, p := resumedWithLargePayload(t)
	ref, _ := p["text"].(map[string]any)
	artID, _ := ref["$artifact"].(string)
	if artID == "" {
		t.Fatalf("payload.payload.text = %v; want an artifact ref", p["text"])
	}
	metas, err := arts.ListByRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metas {
		if m.ArtifactID == artID {
			if m.Tags["source"] != "resume" || m.Tags["path"] != "resume.payload.text" || m.Tags["kind"] != "text" {
				t.Errorf("artifact tags %v; want source resume, path resume.payload.text, kind text", m.Tags)
			}
			return
		}
	}
	t.Fatalf("artifact %s not listed under run %s", artID, id)
}

// Spec §2.6 step 4 (subworkflow as tool result): `success=false` iff
// `output.success === false`, error = `output.error` or "Subworkflow failed".
func TestSpecWrappedSubworkflowFailureDefaultError(t *testing.T) {
	parent := &runtime.Workflow{ID: "p", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "ask", "async": true, "wait": true, "wrap_as_tool_result": true}}, "")
		}),
	}}
	f := setup(t, parent, askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	w := mustGet(t, f.rt, id).Waiting
	if w == nil {
		t.Fatal("parent is not waiting")
	}
	run, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: w.WaitKey,
		Payload: map[string]any{"sub_run_id": w.Details["sub_run_id"], "output": map[string]any{"success": false}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mode":"executed","results":[{"call_id":"subworkflow","error":"Subworkflow failed","name":"start_subworkflow","output":null,"success":false}]}`
	if got := feJSON(run.Vars["sub"]); got != want {
		t.Errorf("vars.sub = %s; want %s", got, want)
	}
}

// Spec §2.6 step 4 (tool approval) with compatibility.md "approving tool
// calls": an approval without a tool executor for resumes turns every call
// into an error "ToolExecutor is not configured for approval resumes".
func TestSpecApprovedToolCallsWithoutExecutor(t *testing.T) {
	wf := oneEffect("ap", func() *durable.Effect {
		return &durable.Effect{Type: "host_wait", ResultKey: "tool_results", Payload: map[string]any{}}
	})
	f := setup(t, wf)
	f.rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitUser, WaitKey: "tool_approval:abc", ResultKey: "tool_results",
			AllowFreeText: true, Details: map[string]any{
				"mode": "approval_required",
				"tool_calls": []any{
					map[string]any{"name": "rm", "call_id": "c1", "arguments": map[string]any{}},
					map[string]any{"name": "ls", "call_id": "c2", "arguments": map[string]any{}},
				},
			}}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ap"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "tool_approval:abc", Payload: map[string]any{"approved": true}, MaxSteps: -1})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Vars["tool_results"].(map[string]any)
	results, _ := got["results"].([]any)
	if got["mode"] != "executed" || len(results) != 2 {
		t.Fatalf("vars.tool_results = %v; want {mode: executed, results: [2 errors]}", got)
	}
	for i, x := range results {
		r, _ := x.(map[string]any)
		errText, _ := r["error"].(string)
		if r["success"] != false || !strings.Contains(errText, "ToolExecutor is not configured for approval resumes") {
			t.Errorf("result %d = %v; want an error naming the missing executor", i, r)
		}
	}
}
