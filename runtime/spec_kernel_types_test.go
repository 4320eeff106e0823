package runtime_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// specKeys returns the sorted keys of m.
func specKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// Spec §1.3: complete_output "is evaluated before any effect, so an effect
// in the same plan is ignored": the handler is not called and the run
// completes with the output.
func TestSpecCompleteOutputTakesPrecedenceOverEffect(t *testing.T) {
	called := false
	wf := &runtime.Workflow{ID: "both", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.StepPlan{CompleteOutput: map[string]any{"done": true}, NextNode: "a",
				Effect: &durable.Effect{Type: "probe", ResultKey: "r"}}
		}),
	}}
	f := setup(t, wf)
	f.rt.SetHandler("probe", runtime.Handler{Func: func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		called = true
		return runtime.Completed(map[string]any{}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "both"})
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if called || run.Status != durable.RunCompleted || feJSON(run.Output) != `{"done":true}` {
		t.Fatalf("handler called %v, run %s output %s; want completed with {done: true} and no effect", called, run.Status, feJSON(run.Output))
	}
	if got := statuses(t, f, id); got != "a:plan:completed a:emit_event:completed" {
		t.Errorf("ledger %q; want only the plan completion and the status event", got)
	}
}

// Spec §1.2 result_key write rule (_set_nested): split on ".", create {}
// for every missing or non-object intermediate (overwriting scalars and
// lists: no list indexing), assign the last segment.
func TestSpecSetPathOverwritesNonObjectIntermediates(t *testing.T) {
	vars := map[string]any{"a": "scalar", "l": []any{"x", "y"}, "o": map[string]any{"keep": 1}}
	runtime.SetPath(vars, "a.b.c", 1)
	runtime.SetPath(vars, "l.0", "first")
	runtime.SetPath(vars, "o.new.deep", true)
	runtime.SetPath(vars, "top", "v")
	want := `{"a":{"b":{"c":1}},"l":{"0":"first"},"o":{"keep":1,"new":{"deep":true}},"top":"v"}`
	if got := feJSON(vars); got != want {
		t.Errorf("vars after SetPath = %s; want %s", got, want)
	}
}

// Spec §1.14: to_limits_dict() produces vars._limits "with exactly these
// keys", defaults max_iterations 50, current_iteration 0, max_tokens 32768,
// max_output_tokens null, max_input_tokens null, estimated_tokens_used 0,
// max_history_messages -1, warn_iterations_pct 80, warn_tokens_pct 80.
func TestSpecDefaultLimitsHaveExactlyTheNineKeys(t *testing.T) {
	rt := specStartRuntime(t, runtime.LimitsConfig{})
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"current_iteration":0,"estimated_tokens_used":0,"max_history_messages":-1,"max_input_tokens":null,` +
		`"max_iterations":50,"max_output_tokens":null,"max_tokens":32768,"warn_iterations_pct":80,"warn_tokens_pct":80}`
	if got := feJSON(mustGet(t, rt, id).Vars["_limits"]); got != want {
		t.Errorf("_limits = %s; want %s", got, want)
	}
}

// Spec §1.14: max_tokens is config → capabilities max_tokens → 32768;
// max_output_tokens config → capabilities → null; max_input_tokens is the
// config value clamped to [0, max_tokens - max_output_tokens - 256] when all
// three are known, otherwise as given.
func TestSpecLimitsFallbacksAndInputClamp(t *testing.T) {
	n := func(v int) *int { return &v }
	limits := func(cfg runtime.LimitsConfig) map[string]any {
		t.Helper()
		rt := specStartRuntime(t, cfg)
		id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "chain"})
		if err != nil {
			t.Fatal(err)
		}
		return mustGet(t, rt, id).Vars["_limits"].(map[string]any)
	}
	for name, c := range map[string]struct {
		cfg           runtime.LimitsConfig
		tok, out, inp string
	}{
		"capabilities":          {runtime.LimitsConfig{ModelMaxTokens: n(8000), ModelMaxOutputTokens: n(1000)}, "8000", "1000", "null"},
		"config over caps":      {runtime.LimitsConfig{MaxTokens: n(4000), ModelMaxTokens: n(8000), MaxOutputTokens: n(500), ModelMaxOutputTokens: n(1000)}, "4000", "500", "null"},
		"input clamped down":    {runtime.LimitsConfig{MaxTokens: n(8000), MaxOutputTokens: n(1000), MaxInputTokens: n(9000)}, "8000", "1000", "6744"},
		"input within budget":   {runtime.LimitsConfig{MaxTokens: n(8000), MaxOutputTokens: n(1000), MaxInputTokens: n(5000)}, "8000", "1000", "5000"},
		"input clamped to zero": {runtime.LimitsConfig{MaxTokens: n(8000), MaxOutputTokens: n(1000), MaxInputTokens: n(-5)}, "8000", "1000", "0"},
		"no output: as given":   {runtime.LimitsConfig{MaxTokens: n(8000), MaxInputTokens: n(9000)}, "8000", "null", "9000"},
		"output zero: clamped":  {runtime.LimitsConfig{MaxTokens: n(8000), MaxOutputTokens: n(0), MaxInputTokens: n(9000)}, "8000", "0", "7744"},
		"output -1: as given":   {runtime.LimitsConfig{MaxTokens: n(8000), MaxOutputTokens: n(-1), MaxInputTokens: n(9000)}, "8000", "-1", "9000"},
	} {
		l := limits(c.cfg)
		if got := feJSON(l["max_tokens"]) + " " + feJSON(l["max_output_tokens"]) + " " + feJSON(l["max_input_tokens"]); got != c.tok+" "+c.out+" "+c.inp {
			t.Errorf("%s: max_tokens, max_output_tokens, max_input_tokens = %s; want %s %s %s", name, got, c.tok, c.out, c.inp)
		}
	}
}

// Spec §1.8: a LimitWarning is {limit_type, status, current, maximum, pct}
// with pct = round(current/maximum*100, 1); check_limits gives "exceeded"
// at current >= max and "warning" at pct >= warn_*_pct.
func TestSpecLimitWarningShape(t *testing.T) {
	run := &durable.RunState{RunID: "r", Vars: map[string]any{"_limits": map[string]any{
		"current_iteration": int64(2), "max_iterations": int64(3), "warn_iterations_pct": int64(50),
		"estimated_tokens_used": int64(40), "max_tokens": int64(30),
	}}}
	warns := runtime.CheckLimitsOf(run)
	b, err := json.Marshal(warns)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"limit_type":"iterations","status":"warning","current":2,"maximum":3,"pct":66.7},` +
		`{"limit_type":"tokens","status":"exceeded","current":40,"maximum":30,"pct":133.3}]`
	if string(b) != want {
		t.Errorf("check_limits = %s; want %s", b, want)
	}
}

// Spec §1.14 get_limit_status: {iterations:{current,max,pct,warning},
// tokens:{estimated_used,max,max_input_tokens,max_output_tokens,pct,
// warning}, history:{max_messages}}.
func TestSpecLimitStatusShape(t *testing.T) {
	st := runtime.LimitStatusOf(&durable.RunState{RunID: "r", Vars: map[string]any{}})
	if got := strings.Join(specKeys(st), " "); got != "history iterations tokens" {
		t.Fatalf("status keys %q", got)
	}
	for part, want := range map[string]string{
		"iterations": "current max pct warning",
		"tokens":     "estimated_used max max_input_tokens max_output_tokens pct warning",
		"history":    "max_messages",
	} {
		m, _ := st[part].(map[string]any)
		if got := strings.Join(specKeys(m), " "); got != want {
			t.Errorf("%s keys %q; want %q", part, got, want)
		}
	}
}

// Spec §1.12: vars._runtime.node_traces[node_id] is {node_id, steps,
// updated_at}; an entry has ts, node_id, status, idempotency_key,
// reused_prior_result, effect {type, payload, result_key}, duration_ms and
// exactly one of result / error / wait (wait = the nine WaitState fields).
func TestSpecNodeTraceEntryShapes(t *testing.T) {
	fail := false
	wf := &runtime.Workflow{ID: "tr", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "probe", Payload: map[string]any{"x": "y"}, ResultKey: "r"}, "ask")
		}),
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(nil)
		}),
	}}
	f := setup(t, wf)
	f.rt.SetHandler("probe", runtime.Handler{Func: func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		if fail {
			return runtime.Failed("boom"), nil
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}})
	ctx := context.Background()
	traceOf := func() map[string]any {
		t.Helper()
		id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tr"})
		if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		traces, err := f.rt.GetNodeTraces(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return traces
	}
	traces := traceOf()
	common := "duration_ms effect idempotency_key node_id reused_prior_result status ts"
	entries := func(nodeID string) []map[string]any {
		t.Helper()
		tr, _ := traces[nodeID].(map[string]any)
		if got := strings.Join(specKeys(tr), " "); got != "node_id steps updated_at" {
			t.Fatalf("trace of %s has keys %q; want node_id steps updated_at", nodeID, got)
		}
		if tr["node_id"] != nodeID {
			t.Errorf("trace node_id %v; want %s", tr["node_id"], nodeID)
		}
		var out []map[string]any
		for _, s := range tr["steps"].([]any) {
			out = append(out, s.(map[string]any))
		}
		return out
	}
	check := func(e map[string]any, status, last string) {
		t.Helper()
		keys := strings.Fields(common + " " + last)
		sort.Strings(keys)
		if got := specKeys(e); !slices.Equal(got, keys) {
			t.Errorf("%s entry keys %v; want %v", status, got, keys)
		}
		if e["status"] != status {
			t.Errorf("entry status %v; want %s", e["status"], status)
		}
		eff, _ := e["effect"].(map[string]any)
		if got := strings.Join(specKeys(eff), " "); got != "payload result_key type" {
			t.Errorf("%s entry effect %v; want {type, payload, result_key}", status, eff)
		}
		if _, ok := e["reused_prior_result"].(bool); !ok {
			t.Errorf("reused_prior_result = %#v; want a bool", e["reused_prior_result"])
		}
		if ts, _ := e["ts"].(string); !strings.HasSuffix(ts, "+00:00") {
			t.Errorf("ts %q; want an isoformat time in +00:00", ts)
		}
	}
	calls := entries("call")
	if len(calls) != 1 {
		t.Fatalf("call trace has %d entries; want 1", len(calls))
	}
	check(calls[0], "completed", "result")
	if feJSON(calls[0]["result"]) != `{"ok":true}` || feJSON(calls[0]["effect"]) != `{"payload":{"x":"y"},"result_key":"r","type":"probe"}` {
		t.Errorf("completed entry result %s effect %s", feJSON(calls[0]["result"]), feJSON(calls[0]["effect"]))
	}
	asks := entries("ask")
	if len(asks) != 1 {
		t.Fatalf("ask trace has %d entries; want 1", len(asks))
	}
	check(asks[0], "waiting", "wait")
	wait, _ := asks[0]["wait"].(map[string]any)
	if got := strings.Join(specKeys(wait), " "); got != "allow_free_text choices details prompt reason result_key resume_to_node until wait_key" {
		t.Errorf("waiting entry's wait has keys %q; want the nine WaitState fields", got)
	}

	fail = true // a second run, whose effect fails
	traces = traceOf()
	calls = entries("call")
	if len(calls) != 1 {
		t.Fatalf("failed call trace has %d entries; want 1", len(calls))
	}
	check(calls[0], "failed", "error")
	if e, _ := calls[0]["error"].(string); !strings.Contains(e, "boom") {
		t.Errorf("failed entry error %v; want the failure's message", calls[0]["error"])
	}
}

// Spec §1.12: steps are "capped at the last 100 entries per node".
func TestSpecNodeTraceKeepsTheLast100Steps(t *testing.T) {
	wf := &runtime.Workflow{ID: "loop", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			n := counter(run, "n")
			if n >= 105 {
				return runtime.Complete(nil)
			}
			run.Vars["n"] = n + 1
			return runtime.Request(&durable.Effect{Type: "probe", Payload: map[string]any{"i": n + 1}}, "a")
		}),
	}}
	f := setup(t, wf)
	f.rt.SetHandler("probe", runtime.Handler{Func: func(_ context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"i": req.Effect.Payload["i"]}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "loop"})
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1000})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", run, err)
	}
	tr, err := f.rt.GetNodeTrace(ctx, id, "a")
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := tr["steps"].([]any)
	if len(steps) != 100 {
		t.Fatalf("trace holds %d steps; want the last 100", len(steps))
	}
	first := steps[0].(map[string]any)["result"]
	last := steps[99].(map[string]any)["result"]
	if feJSON(first) != `{"i":6}` || feJSON(last) != `{"i":105}` {
		t.Errorf("trace steps run from %s to %s; want the last 100 ({i: 6} … {i: 105})", feJSON(first), feJSON(last))
	}
}

// Spec §1.7 record kinds, on the spec's ASK_USER example: the resume record
// (effect {"type": "resume", "payload": {wait_reason, wait_key,
// resume_to_node, result_key, payload}, "result_key": null}, result
// {"resumed": true}, key null), the plan completion record (effect null,
// result {"completed": true, "output": …}, key null) and the terminal
// status event (emit_event abstract.status, scope session, result
// {"emitted": true, …}, key system:terminal_status:completed); and §1.5:
// "vars.answer == {"text": "yes"}" after the resume.
func TestSpecLedgerRecordKindsAfterResume(t *testing.T) {
	f := setup(t, askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := run.Waiting.WaitKey
	before, _ := f.rt.GetLedger(ctx, id)
	run, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"text": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if feJSON(run.Vars["answer"]) != `{"text":"yes"}` || run.Waiting != nil || run.CurrentNode != "done" {
		t.Errorf("after resume: vars.answer %s, waiting %v, node %q", feJSON(run.Vars["answer"]), run.Waiting, run.CurrentNode)
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	tail := recs[len(before):]
	if len(tail) != 3 {
		t.Fatalf("resume appended %d records; want resume, completion, status event", len(tail))
	}
	res := tail[0]
	wantPayload := `{"payload":{"text":"yes"},"result_key":"answer","resume_to_node":"done","wait_key":"` + key + `","wait_reason":"user"}`
	if res.Effect == nil || res.Effect.Type != durable.EffectResume || feJSON(res.Effect.Payload) != wantPayload ||
		res.Effect.ResultKey != "" || feJSON(res.Result) != `{"resumed":true}` || res.IdempotencyKey != "" ||
		res.Status != durable.StepCompleted || res.NodeID != "ask" {
		t.Errorf("resume record: node %q status %s effect %+v result %s key %q; want payload %s, result {resumed: true}",
			res.NodeID, res.Status, res.Effect, feJSON(res.Result), res.IdempotencyKey, wantPayload)
	}
	done := tail[1]
	if done.Effect != nil || done.NodeID != "done" || done.IdempotencyKey != "" ||
		feJSON(done.Result) != `{"completed":true,"output":{"answer":"yes"}}` {
		t.Errorf("completion record: node %q effect %+v result %s key %q", done.NodeID, done.Effect, feJSON(done.Result), done.IdempotencyKey)
	}
	ev := tail[2]
	if ev.Effect == nil || ev.Effect.Type != durable.EffectEmitEvent ||
		feJSON(ev.Effect.Payload) != `{"name":"abstract.status","payload":{"text":"completed"},"scope":"session"}` ||
		feJSON(ev.Result) != `{"emitted":true,"name":"abstract.status","payload":{"text":"completed"}}` ||
		ev.IdempotencyKey != "system:terminal_status:completed" || ev.Status != durable.StepCompleted {
		t.Errorf("status event: effect %+v result %s key %q", ev.Effect, feJSON(ev.Result), ev.IdempotencyKey)
	}
}

// Spec §1.13: a session id that is not [A-Za-z0-9_-]+ owns run
// session_memory_sha_<first 32 hex of sha256(session_id)>.
func TestSpecSessionMemoryRunIDHashForm(t *testing.T) {
	sum := sha256.Sum256([]byte("a b/c"))
	if got, want := runtime.SessionMemoryRunID("a b/c"), "session_memory_sha_"+hex.EncodeToString(sum[:])[:32]; got != want {
		t.Errorf("SessionMemoryRunID(%q) = %q; want %q", "a b/c", got, want)
	}
	if got := runtime.SessionMemoryRunID("s-1_A"); got != "session_memory_s-1_A" {
		t.Errorf("SessionMemoryRunID(s-1_A) = %q; want session_memory_s-1_A", got)
	}
}

// Spec §1.5: a run starts with run_id a hyphenated UUID4, status running,
// current_node the entry node, created_at == updated_at.
func TestSpecStartedRunIdentity(t *testing.T) {
	reg, err := runtime.NewRegistry(chain(2))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	run := mustGet(t, rt, id)
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[14] != '4' || id[18] != '-' || !strings.ContainsRune("89ab", rune(id[19])) || id[23] != '-' {
		t.Errorf("run_id %q; want a hyphenated UUID4", id)
	}
	if run.Status != durable.RunRunning || run.CurrentNode != "n0" || run.CreatedAt.IsZero() || !run.CreatedAt.Equal(run.UpdatedAt.Time) {
		t.Errorf("new run: status %s node %q created %v updated %v", run.Status, run.CurrentNode, run.CreatedAt, run.UpdatedAt)
	}
}

// Spec §1.6: ensure_namespaces "creates context, scratchpad, _runtime,
// _temp as {} when missing or not objects"; an existing object is kept.
func TestSpecEnsureNamespacesReplacesNonObjects(t *testing.T) {
	vars := map[string]any{"context": "text", "scratchpad": []any{1}, "_runtime": map[string]any{"keep": true}, "other": 1}
	runtime.EnsureNamespaces(vars)
	want := `{"_runtime":{"keep":true},"_temp":{},"context":{},"other":1,"scratchpad":{}}`
	if got := feJSON(vars); got != want {
		t.Errorf("vars after EnsureNamespaces = %s; want %s", got, want)
	}
}

// Spec §1.7 record kinds: the terminal resume completion record has effect
// null, key null and result {"completed": true, "via": "resume",
// "wait_reason", "wait_key", "output"}.
func TestSpecTerminalResumeCompletionRecord(t *testing.T) {
	wf := &runtime.Workflow{ID: "ask", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "x"}, "")
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || run.Waiting == nil {
		t.Fatalf("tick: %v %v", run, err)
	}
	key := run.Waiting.WaitKey
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	if len(recs) < 2 {
		t.Fatalf("ledger has %d records", len(recs))
	}
	r := recs[len(recs)-2]
	want := `{"completed":true,"output":{"result":{"a":"b"},"success":true},"via":"resume","wait_key":"` + key + `","wait_reason":"user"}`
	if r.Effect != nil || r.IdempotencyKey != "" || r.Status != durable.StepCompleted || feJSON(r.Result) != want {
		t.Errorf("terminal resume completion record: effect %+v key %q status %s result %s; want result %s",
			r.Effect, r.IdempotencyKey, r.Status, feJSON(r.Result), want)
	}
}

// Spec §1.6: _flow_warnings is a "list of unique strings", e.g. "#WARN:
// TOOL_CALLS duplicate call_id at node 'x' (c1, c2)"; an identical warning
// is not added twice.
func TestSpecFlowWarningsDuplicateCallIDsOnce(t *testing.T) {
	wf := &runtime.Workflow{ID: "dup", Entry: "step", Nodes: map[string]runtime.NodeFunc{
		"step": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			n := counter(run, "n")
			run.Vars["n"] = n + 1
			next := "step"
			if n >= 1 {
				next = "done"
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
				"tool_calls": []any{
					map[string]any{"name": "a", "call_id": "c1"}, map[string]any{"name": "b", "call_id": "c1"},
					map[string]any{"name": "c", "call_id": "c2"}, map[string]any{"name": "d", "call_id": "c2"},
				}}}, next)
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan { return runtime.Complete(nil) }),
	}}
	f := setup(t, wf)
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "dup"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", st, err)
	}
	if got, want := feJSON(st.Vars["_flow_warnings"]), `["#WARN: TOOL_CALLS duplicate call_id at node 'step' (c1, c2)"]`; got != want {
		t.Errorf("_flow_warnings = %s; want %s (once, after two identical steps)", got, want)
	}
}

// Spec §1.14: estimated_tokens_used is overwritten after each completed
// LLM_CALL with usage.input_tokens → usage.prompt_tokens →
// usage.total_tokens (the first present).
func TestSpecEstimatedTokensFallBackToPromptThenTotal(t *testing.T) {
	for usage, want := range map[string]int64{
		`{"input_tokens": 5, "prompt_tokens": 7}`: 5, // input_tokens first when both are given
		`{"prompt_tokens": 7, "total_tokens": 9}`: 7,
		`{"total_tokens": 9, "output_tokens": 2}`: 9,
	} {
		var u map[string]any
		if err := json.Unmarshal([]byte(usage), &u); err != nil {
			t.Fatal(err)
		}
		got := estimatedTokensAfterLLMCall(t, u)
		if n, _ := runtime.AsInt(got); n != want {
			t.Errorf("usage %s: estimated_tokens_used = %v; want %d", usage, got, want)
		}
	}
}

// specIsUUID4 reports whether s is a hyphenated UUID4.
func specIsUUID4(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[14] != '4' || s[18] != '-' || s[23] != '-' || !strings.ContainsRune("89ab", rune(s[19])) {
		return false
	}
	_, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	return err == nil
}

// Spec §0/§1.7: step_ids are UUID4 strings with hyphens; a record's
// actor_id and session_id come from the run; attempt is 1 for a first
// attempt; started_at/ended_at are isoformat times. §1.14:
// "current_iteration is never incremented by the kernel".
func TestSpecRecordIdentityFieldsAndUntouchedIteration(t *testing.T) {
	f := setup(t, askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", ActorID: "actor_1", SessionID: "sess_1"})
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatal(err)
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	if len(recs) == 0 {
		t.Fatal("empty ledger")
	}
	for i, r := range recs {
		if !specIsUUID4(r.StepID) || r.RunID != id || r.ActorID != "actor_1" || r.SessionID != "sess_1" || r.Attempt != 1 {
			t.Errorf("record %d: step_id %q run %q actor %q session %q attempt %d; want a UUID4 step id, the run's ids, attempt 1",
				i, r.StepID, r.RunID, r.ActorID, r.SessionID, r.Attempt)
		}
		if !strings.HasSuffix(r.StartedAt.String(), "+00:00") || (r.Status != durable.StepStarted && !strings.HasSuffix(r.EndedAt.String(), "+00:00")) {
			t.Errorf("record %d (%s): started_at %q ended_at %q; want isoformat times", i, r.Status, r.StartedAt.String(), r.EndedAt.String())
		}
	}
	if n, _ := runtime.AsInt(run.Vars["_limits"].(map[string]any)["current_iteration"]); n != 0 {
		t.Errorf("current_iteration = %d after a run; want 0 (the kernel never increments it)", n)
	}
}

// Spec §1.12: a trace entry's effect is "the effect after runtime call ids
// (§2.9) … were added": a TOOL_CALLS entry carries runtime_call_id and
// the call_id that falls back to it.
func TestSpecNodeTraceEffectCarriesRuntimeCallIDs(t *testing.T) {
	wf := oneEffect("ids", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{
			"tool_calls": []any{map[string]any{"name": "read_file", "arguments": map[string]any{}}},
		}}
	})
	f := setup(t, wf)
	var key string
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(_ context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		key = req.IdempotencyKey
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ids"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := f.rt.GetNodeTrace(ctx, id, "step")
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := tr["steps"].([]any)
	if len(steps) != 1 {
		t.Fatalf("trace = %v; want one entry", tr)
	}
	eff, _ := steps[0].(map[string]any)["effect"].(map[string]any)
	payload, _ := eff["payload"].(map[string]any)
	calls, _ := payload["tool_calls"].([]any)
	call, _ := calls[0].(map[string]any)
	want := "rtcall_" + key + "_1"
	if key == "" || call["runtime_call_id"] != want || call["call_id"] != want {
		t.Errorf("traced tool call = %v; want runtime_call_id = call_id = %s", call, want)
	}
}

// Spec §1.2: on the resume path the result_key write "happens whenever the
// wait has a result_key (even for an empty payload)", through the same
// dotted-path rule (here over a scalar intermediate).
func TestSpecResumeWritesEmptyPayloadAtResultKey(t *testing.T) {
	wf := &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			run.Vars["answers"] = "scalar"
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "answers.first"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"answers": run.Vars["answers"]})
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	run, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := feJSON(run.Output); got != `{"answers":{"first":{}}}` {
		t.Errorf("output %s; want the empty payload written at answers.first", got)
	}
}

// Spec §1.3: RunContext exposes now_iso(), the runtime clock in Python's
// isoformat (…ffffff+00:00, the fraction omitted when zero).
func TestSpecRunContextNowISO(t *testing.T) {
	var got string
	wf := &runtime.Workflow{ID: "now", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			got = rc.NowISO()
			return runtime.Complete(nil)
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "now"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "2026-11-30T12:00:00+00:00"; got != want { // the fixture's clock
		t.Errorf("NowISO() = %q; want %q", got, want)
	}
	f.now = f.now.Add(1500 * time.Microsecond)
	id, _ = f.rt.Start(ctx, runtime.StartParams{WorkflowID: "now"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "2026-11-30T12:00:00.001500+00:00"; got != want {
		t.Errorf("NowISO() = %q; want %q", got, want)
	}
}

// Spec §1.14: estimated_tokens_used is overwritten after a completed
// LLM_CALL "also when the result was reused from the ledger" (here a
// non-atomic store whose commit of the completion appended the record but
// failed to save the state; the replay reuses the record).
func TestSpecEstimatedTokensSetFromAReusedResult(t *testing.T) {
	calls := 0
	wf := oneEffect("llm", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectLLMCall, ResultKey: "_temp.llm", Payload: map[string]any{"prompt": "q"}}
	})
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	st := &storetest.HalfCommit{Store: memory.New(), FailAt: 2} // commit 1: STARTED checkpoint; 2: the completion
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
		durable.EffectLLMCall: {Func: func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
			calls++
			return runtime.Completed(map[string]any{"content": "ok", "usage": map[string]any{"input_tokens": int64(21)}}), nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("first tick: no error from the half commit")
	}
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted || calls != 1 {
		t.Fatalf("second tick: %v %v, handler calls %d; want completed with the record reused", run, err, calls)
	}
	if n, _ := runtime.AsInt(run.Vars["_limits"].(map[string]any)["estimated_tokens_used"]); n != 21 {
		t.Errorf("estimated_tokens_used = %v after a reused result; want 21", run.Vars["_limits"].(map[string]any)["estimated_tokens_used"])
	}
}
