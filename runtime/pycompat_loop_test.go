package runtime_test

// Tests of the runtime loop against the spec (§2, §1.5–§1.7): each names
// the rule it checks.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// oneEffect is a workflow whose entry node requests eff and then moves to
// "done", which completes with the vars at resultKey.
func oneEffect(id string, eff func() *durable.Effect) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "step", Nodes: map[string]runtime.NodeFunc{
		"step": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(eff(), "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
}

func waitingHandler(w func(req *runtime.EffectRequest) *durable.WaitState) runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Waiting(w(req)), nil
	}}
}

// §2.6 step 5: the synthetic TOOL_CALLS completion is keyed on the wait key
// and the waiting TOOL_CALLS record; it required the wait's details to
// carry tool_calls, and a passthrough wait naming only its mode got none.
func TestSyntheticToolCompletionWithoutDetailsToolCalls(t *testing.T) {
	t.Parallel()
	wf := oneEffect("tc", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "tool_results",
			Payload: map[string]any{"tool_calls": []any{map[string]any{"name": "read_file", "arguments": map[string]any{}, "call_id": "c1"}}}}
	})
	f := setup(t, wf)
	f.rt.SetHandler(durable.EffectToolCalls, waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "tool_calls:" + req.Run.RunID + ":step",
			ResumeToNode: req.DefaultNext, ResultKey: req.Effect.ResultKey, AllowFreeText: true,
			Details: map[string]any{"mode": "passthrough"}}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tc"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", st, err)
	}
	payload := map[string]any{"mode": "executed", "results": []any{map[string]any{"call_id": "c1", "success": true, "output": "x"}}}
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: payload}); err != nil {
		t.Fatal(err)
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	var waitingKey string
	found := false
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectToolCalls && r.Status == durable.StepWaiting {
			waitingKey = r.IdempotencyKey
		}
	}
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectToolCalls && r.Status == durable.StepCompleted && r.IdempotencyKey == waitingKey {
			found = true
		}
	}
	if !found {
		t.Fatalf("no synthetic completed tool_calls record under key %s; ledger: %s", waitingKey, statuses(t, f, id))
	}
}

// §2.6 step 4 (blocked-call merge): the rebuild happens only when
// payload.results is a list whose length differs from original_call_count.
// A payload without results is stored verbatim.
func TestBlockedMergeNeedsResultsList(t *testing.T) {
	t.Parallel()
	wf := oneEffect("bm", func() *durable.Effect {
		return &durable.Effect{Type: "host_wait", ResultKey: "r", Payload: map[string]any{}}
	})
	f := setup(t, wf)
	f.rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "k", ResumeToNode: "", ResultKey: "r", AllowFreeText: true,
			Details: map[string]any{
				"blocked_by_index":    map[string]any{"0": map[string]any{"call_id": "b", "success": false, "error": "blocked"}},
				"original_call_count": int64(2),
			}}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "bm"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "k", Payload: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Vars["r"].(map[string]any)
	if len(got) != 1 || got["text"] != "hi" {
		t.Fatalf("vars.r = %v, want the payload verbatim {\"text\":\"hi\"}", got)
	}
}

// §2.6 step 4 (tool approval): a denial ({"approved": false}) of an
// approval_required wait turns every pending call into an error result
// with the reason (default "Denied by user").
func TestToolApprovalDenial(t *testing.T) {
	t.Parallel()
	wf := oneEffect("ap", func() *durable.Effect {
		return &durable.Effect{Type: "host_wait", ResultKey: "tool_results", Payload: map[string]any{}}
	})
	f := setup(t, wf)
	f.rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitUser, WaitKey: "tool_approval:abc", ResumeToNode: "", ResultKey: "tool_results",
			AllowFreeText: true, Details: map[string]any{
				"mode":       "approval_required",
				"tool_calls": []any{map[string]any{"name": "rm", "call_id": "c1", "arguments": map[string]any{}}},
			}}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ap"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "tool_approval:abc", Payload: map[string]any{"approved": false}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Vars["tool_results"].(map[string]any)
	results, _ := got["results"].([]any)
	if got["mode"] != "executed" || len(results) != 1 {
		t.Fatalf("vars.tool_results = %v, want {mode: executed, results: [denied c1]}", got)
	}
	r0, _ := results[0].(map[string]any)
	if r0["success"] != false || r0["error"] != "Denied by user" || r0["call_id"] != "c1" {
		t.Fatalf("result = %v", r0)
	}
}

// §2.6 step 4 (subworkflow as tool result): answer = output.answer, else the
// string output, else the JSON text of the output (json.dumps(None) = "null").
func TestSubworkflowWrapNullOutputAnswer(t *testing.T) {
	t.Parallel()
	wf := oneEffect("sw", func() *durable.Effect {
		return &durable.Effect{Type: "host_wait", ResultKey: "r", Payload: map[string]any{}}
	})
	f := setup(t, wf)
	f.rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitSubworkflow, WaitKey: "subworkflow:c", ResumeToNode: "", ResultKey: "r",
			AllowFreeText: true, Details: map[string]any{"wrap_as_tool_result": true, "sub_run_id": "c"}}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "sw"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "subworkflow:c", Payload: map[string]any{"sub_run_id": "c", "output": nil}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Vars["r"].(map[string]any)
	results, _ := got["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("vars.r = %v", got)
	}
	out, _ := results[0].(map[string]any)["output"].(map[string]any)
	if out["answer"] != "null" || out["rendered"] != "null" {
		t.Fatalf("output = %v, want answer/rendered \"null\" (JSON text of a null output)", out)
	}
}

// §2.3 step 3 / §2.5: only an UNTIL wait is released by tick; "any other
// wait reason also returns" (the documented exception is WAIT_EVENT
// deadlines). A USER wait that carries an until must stay waiting.
func TestTickDoesNotReleaseUserWaitWithUntil(t *testing.T) {
	t.Parallel()
	wf := oneEffect("uw", func() *durable.Effect {
		return &durable.Effect{Type: "host_wait", ResultKey: "answer", Payload: map[string]any{}}
	})
	f := setup(t, wf)
	f.rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:x", Until: durable.NewTime(f.now.Add(time.Second)),
			ResumeToNode: req.DefaultNext, ResultKey: "answer", Prompt: "Reply by tomorrow", AllowFreeText: true}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "uw"})
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", st, err)
	}
	f.now = f.now.Add(time.Hour)
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunWaiting || st.Vars["answer"] != nil {
		t.Fatalf("user wait released by tick: status %s, vars.answer %v", st.Status, st.Vars["answer"])
	}
}

// §2.3 step 5c / §2.9: TOOL_CALLS get runtime call ids before execution:
// runtime_call_id = rtcall_<key>_<i+1>, a missing call_id falls back to it,
// names trimmed; the handler and the STARTED record see them.
func TestToolCallsGetRuntimeCallIDs(t *testing.T) {
	t.Parallel()
	wf := oneEffect("ids", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{
			"tool_calls": []any{map[string]any{"name": " read_file ", "arguments": map[string]any{"p": "a"}}},
		}}
	})
	f := setup(t, wf)
	var seen map[string]any
	var key string
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls, _ := req.Effect.Payload["tool_calls"].([]any)
		seen, _ = calls[0].(map[string]any)
		key = req.IdempotencyKey
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ids"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "rtcall_" + key + "_1"
	if seen["runtime_call_id"] != want || seen["call_id"] != want || seen["name"] != "read_file" {
		t.Fatalf("tool call seen by the handler = %v, want runtime_call_id = call_id = %s, name trimmed", seen, want)
	}
}

// §2.3 step 5a: TOOL_CALLS with a call missing its call id records
// "#WARN: TOOL_CALLS missing call_id at node '<node>' (count=N)" in
// vars._flow_warnings.
func TestToolCallsFlowWarnings(t *testing.T) {
	t.Parallel()
	wf := oneEffect("warn", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
			"tool_calls": []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "call_id": " "}},
		}}
	})
	f := setup(t, wf)
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "warn"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := st.Vars["_flow_warnings"].([]any)
	if len(w) != 1 || w[0] != "#WARN: TOOL_CALLS missing call_id at node 'step' (count=2)" {
		t.Fatalf("_flow_warnings = %v", st.Vars["_flow_warnings"])
	}
}

// §2.3 step 5i / §1.14: after a completed LLM_CALL,
// _limits.estimated_tokens_used = usage.input_tokens (→ prompt_tokens →
// total_tokens).
func TestLLMCallUpdatesEstimatedTokens(t *testing.T) {
	t.Parallel()
	usage := map[string]any{"input_tokens": int64(12), "output_tokens": int64(3), "total_tokens": int64(15)}
	got := estimatedTokensAfterLLMCall(t, usage)
	if n, _ := runtime.AsInt(got); n != 12 {
		t.Fatalf("_limits.estimated_tokens_used = %v, want 12", got)
	}
}

// estimatedTokensAfterLLMCall runs one LLM_CALL whose handler reports
// usage and returns _limits.estimated_tokens_used after it.
func estimatedTokensAfterLLMCall(t *testing.T, usage map[string]any) any {
	t.Helper()
	wf := oneEffect("llm", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectLLMCall, ResultKey: "_temp.llm", Payload: map[string]any{"prompt": "hi"}}
	})
	f := setup(t, wf)
	f.rt.SetHandler(durable.EffectLLMCall, runtime.Handler{Func: func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"content": "Hi!", "usage": usage}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "llm"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lim, _ := st.Vars["_limits"].(map[string]any)
	return lim["estimated_tokens_used"]
}

// §2.2 step 3: tool_support and supports_native_tools are each setdefault'ed
// from the model capabilities; a run that brings its own tool_support still
// gets supports_native_tools.
func TestStartSetdefaultsSupportsNativeTools(t *testing.T) {
	t.Parallel()
	reg, _ := runtime.NewRegistry(chain(1))
	f := setup(t)
	rt, err := runtime.New(runtime.Config{Store: f.st, Registry: reg, Limits: runtime.LimitsConfig{ToolSupport: "native"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain", Vars: map[string]any{"_runtime": map[string]any{"tool_support": "prompted"}}})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := rt.GetState(ctx, id)
	ns, _ := st.Vars["_runtime"].(map[string]any)
	if ns["tool_support"] != "prompted" || ns["supports_native_tools"] != true {
		t.Fatalf("_runtime = %v, want tool_support kept and supports_native_tools=true (setdefault)", ns)
	}
}

// §2.7 pause_run: pause_reason is the reason trimmed, and only when it is
// not blank (Python: `if isinstance(reason, str) and reason.strip()`).
func TestPauseReasonTrimmed(t *testing.T) {
	t.Parallel()
	f := setup(t, askWorkflow(), chain(2))
	ctx := context.Background()
	id1, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	st, err := f.rt.Pause(ctx, id1, "  maintenance  ")
	if err != nil {
		t.Fatal(err)
	}
	ctl := st.Vars["_runtime"].(map[string]any)["control"].(map[string]any)
	if ctl["pause_reason"] != "maintenance" {
		t.Fatalf("pause_reason = %q, want %q", ctl["pause_reason"], "maintenance")
	}
	id2, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	st, err = f.rt.Pause(ctx, id2, "   ")
	if err != nil {
		t.Fatal(err)
	}
	ctl = st.Vars["_runtime"].(map[string]any)["control"].(map[string]any)
	if _, ok := ctl["pause_reason"]; ok {
		t.Fatalf("blank reason stored as pause_reason %q", ctl["pause_reason"])
	}
}

// §2.6 step 7: with an artifact store configured, the resume record's
// payload.payload is passed through offload_large_values (tags
// {"source":"resume","kind":"resume_payload"}, root resume.payload); vars
// keep the full payload.
func TestResumeRecordPayloadOffloaded(t *testing.T) {
	_, _, _, big, p := resumedWithLargePayload(t)
	if _, isRef := p["text"].(map[string]any); !isRef {
		t.Fatalf("resume record payload.payload.text is inline (%d chars), want an artifact ref", len(big))
	}
}

// resumedWithLargePayload answers an ask of a runtime with an artifact
// store (offload threshold 64 bytes) with a 500-byte text, and returns the
// artifact store, the run, the text and the resume record's
// effect.payload.payload.
func resumedWithLargePayload(t *testing.T) (context.Context, artifact.Store, string, string, map[string]any) {
	t.Helper()
	t.Setenv(artifact.EnvMaxInlineBytes, "64")
	st := memory.New()
	reg, _ := runtime.NewRegistry(askWorkflow())
	arts := artifact.NewMemory()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	w, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || w.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", w, err)
	}
	big := strings.Repeat("x", 500)
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: w.Waiting.WaitKey, Payload: map[string]any{"text": big}}); err != nil {
		t.Fatal(err)
	}
	recs, _ := rt.GetLedger(ctx, id)
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			p, _ := r.Effect.Payload["payload"].(map[string]any)
			return ctx, arts, id, big, p
		}
	}
	t.Fatal("no resume record")
	return nil, nil, "", "", nil
}

// §2.9 step 1: a tool call's arguments that are not an object (absent
// included: Python's out.get("arguments") is None) normalise to {}; a call
// without arguments hashes like one with "arguments": {}.
func TestKeyNormalisesAbsentArguments(t *testing.T) {
	t.Parallel()
	a := runtime.PythonIdempotencyKey("run-1", "tools", &durable.Effect{Type: durable.EffectToolCalls,
		Payload: map[string]any{"tool_calls": []any{map[string]any{"name": "list_files"}}}})
	b := runtime.PythonIdempotencyKey("run-1", "tools", &durable.Effect{Type: durable.EffectToolCalls,
		Payload: map[string]any{"tool_calls": []any{map[string]any{"name": "list_files", "arguments": map[string]any{}}}}})
	if a != b {
		t.Fatalf("key without arguments %s != key with arguments {} %s", a, b)
	}
}

// §2.12: get_node_traces(run_id) / get_node_trace(run_id, node_id) read
// vars._runtime.node_traces; a node without a trace gives {node_id,
// steps: []}. They were missing.
func TestNodeTraceReadingAPI(t *testing.T) {
	t.Parallel()
	wf := oneEffect("tr", func() *durable.Effect {
		return &durable.Effect{Type: "traced", ResultKey: "r", Payload: map[string]any{"x": "y"}}
	})
	f := setup(t, wf)
	f.rt.SetHandler("traced", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"ok": true}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tr"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	traces, err := f.rt.GetNodeTraces(ctx, id)
	if err != nil || len(traces) != 1 {
		t.Fatalf("GetNodeTraces = %v, %v; want the one node's trace", traces, err)
	}
	for nodeID := range traces {
		tr, err := f.rt.GetNodeTrace(ctx, id, nodeID)
		if err != nil || tr["node_id"] != nodeID {
			t.Fatalf("GetNodeTrace(%s) = %v, %v", nodeID, tr, err)
		}
		steps, _ := tr["steps"].([]any)
		if len(steps) != 1 {
			t.Fatalf("trace steps = %v, want one", tr["steps"])
		}
		// A copy: changing it changes nothing stored.
		tr["node_id"] = "MUTATED"
		if again, _ := f.rt.GetNodeTrace(ctx, id, nodeID); again["node_id"] != nodeID {
			t.Fatal("GetNodeTrace returned the stored object")
		}
	}
	empty, err := f.rt.GetNodeTrace(ctx, id, "nowhere")
	if steps, ok := empty["steps"].([]any); err != nil || empty["node_id"] != "nowhere" || !ok || len(steps) != 0 {
		t.Fatalf("GetNodeTrace of a node without a trace = %v, %v", empty, err)
	}
	if _, err := f.rt.GetNodeTraces(ctx, "no-such-run"); err == nil {
		t.Fatal("GetNodeTraces of an unknown run gave no error")
	}
}

// §2.2 step 3: supports_native_tools is true only for a model whose
// tool_support is "native": a prompted model must not be handed native
// tool calls.
func TestStartPromptedToolSupportIsNotNative(t *testing.T) {
	t.Parallel()
	reg, _ := runtime.NewRegistry(chain(1))
	f := setup(t)
	rt, err := runtime.New(runtime.Config{Store: f.st, Registry: reg, Limits: runtime.LimitsConfig{ToolSupport: "prompted"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := rt.GetState(ctx, id)
	ns, _ := st.Vars["_runtime"].(map[string]any)
	if ns["tool_support"] != "prompted" || ns["supports_native_tools"] != false {
		t.Fatalf("_runtime = %v, want tool_support \"prompted\" and supports_native_tools=false", ns)
	}
}
