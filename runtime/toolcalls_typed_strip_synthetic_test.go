package runtime_test

// Edge cases of the kernel's TOOL_CALLS plumbing (runtime/toolcalls.go,
// the tool parts of runtime/resume.go): typed values, stripped strings and
// synthetic records.

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A host embedding the runtime resumes a passthrough TOOL_CALLS wait with
// the results it built in Go: {"mode": "executed", "results":
// []map[string]any{…}} (a value the encoder and every store accept, and the
// shape ResumeParams.Payload invites). The wait exposed one call of two, the
// other was blocked by the allowlist (details.blocked_by_index,
// original_call_count 2). mergeBlockedResults only recognises results held
// as []any, so the blocked entry is not merged back: vars.tool_results has
// one result for two calls, and the host's result for call 1 sits at
// index 0, where the blocked call 0 is (spec §2.6 step 4, "rebuild results
// positionally"). The same payload written as []any is merged.
func TestToolCallsTypedResumeResultsMergedWithBlocked(t *testing.T) {
	for _, typed := range []bool{false, true} {
		wf := oneEffect("tcm", func() *durable.Effect {
			return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "tool_results", Payload: map[string]any{
				"tool_calls": []any{
					map[string]any{"name": "rm", "call_id": "c0", "arguments": map[string]any{}},
					map[string]any{"name": "ls", "call_id": "c1", "arguments": map[string]any{}},
				},
				"allowed_tools": []any{"ls"},
			}}
		})
		f := setup(t, wf)
		f.rt.SetHandler(durable.EffectToolCalls, waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
			calls := req.Effect.Payload["tool_calls"].([]any)
			return &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "tool_calls:" + req.Run.RunID + ":step",
				ResumeToNode: req.DefaultNext, ResultKey: req.Effect.ResultKey, AllowFreeText: true,
				Details: map[string]any{
					"mode":                "passthrough",
					"tool_calls":          []any{calls[1]},
					"original_call_count": 2,
					"blocked_by_index": map[string]any{"0": map[string]any{
						"call_id": "c0", "runtime_call_id": nil, "name": "rm", "success": false, "output": nil,
						"error": "Tool 'rm' is not allowed for this node"}},
				}}
		}))
		ctx := context.Background()
		id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tcm"})
		st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil || st.Status != durable.RunWaiting {
			t.Fatalf("tick: %v %v", st, err)
		}
		result := map[string]any{"call_id": "c1", "name": "ls", "success": true, "output": "a.txt", "error": nil}
		var results any = []any{result}
		if typed {
			results = []map[string]any{result}
		}
		if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey,
			Payload: map[string]any{"mode": "executed", "results": results}}); err != nil {
			t.Fatal(err)
		}
		st, err = f.rt.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := st.Vars["tool_results"].(map[string]any)
		list, _ := got["results"].([]any)
		b, _ := json.Marshal(got)
		if len(list) != 2 {
			t.Fatalf("typed=%v: vars.tool_results = %s; want 2 results (blocked c0 merged back at index 0, then c1)", typed, b)
		}
		first, _ := list[0].(map[string]any)
		if first["call_id"] != "c0" {
			t.Fatalf("typed=%v: result 0 is %v, want the blocked call c0: %s", typed, first["call_id"], b)
		}
	}
}

// A TOOL_CALLS handler registered by the host (the handler registry is how
// TOOL_CALLS plugs in) may park the run on a wait whose details carry
// neither "mode" nor "tool_calls" (a job wait with only the executor's
// details, or none). Spec §2.6 step 5 (and Python's resume) appends the
// synthetic completed record for any wait with a wait key whose latest
// waiting TOOL_CALLS record has that key; syntheticToolCompletion skips the
// ledger search unless details has tool_calls or mode, so the tool step's
// waiting record never gets its completion (a ledger-only UI shows the step
// waiting for ever, and a Python process sharing the store would re-run it).
func TestToolCallsSyntheticCompletionForHostWaitWithoutModeDetails(t *testing.T) {
	wf := oneEffect("tcj", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "tool_results", Payload: map[string]any{
			"tool_calls": []any{map[string]any{"name": "search", "call_id": "c1", "arguments": map[string]any{}}}}}
	})
	f := setup(t, wf)
	f.rt.SetHandler(durable.EffectToolCalls, waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitJob, WaitKey: "mcp_job:abc",
			ResumeToNode: req.DefaultNext, ResultKey: req.Effect.ResultKey,
			Details: map[string]any{"executor": map[string]any{"protocol": "mcp"}}}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tcj"})
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", st, err)
	}
	payload := map[string]any{"mode": "executed", "results": []any{map[string]any{"call_id": "c1", "success": true, "output": "x"}}}
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "mcp_job:abc", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	var waitingKey string
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectToolCalls && r.Status == durable.StepWaiting {
			waitingKey = r.IdempotencyKey
		}
	}
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectToolCalls && r.Status == durable.StepCompleted && r.IdempotencyKey == waitingKey {
			return
		}
	}
	t.Fatalf("no synthetic completed tool_calls record under key %s; ledger: %s", waitingKey, statuses(t, f, id))
}

// Python trims tool names, call ids and the allowlist with str.strip(),
// which removes U+001C..U+001F (str.isspace is true for them);
// strings.TrimSpace does not (internal/pyval.Strip exists for this, and
// the stores were moved to it). So PythonIdempotencyKey of a payload whose
// name or allowlist entry carries such a character is not Python's key:
// Python 0.4.28 gives 95329c8d98dce007319d3a81b1fa6b5e for both payloads
// below (checked with abstractruntime.core.policy.compute_idempotency_key).
// A Go runtime continuing a run Python left then misses Python's completed
// record and executes the tool calls a second time.
func TestToolCallsPythonKeyStripsLikePython(t *testing.T) {
	padded := &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
		"tool_calls":    []any{map[string]any{"name": "\x1fread_file", "arguments": map[string]any{}}},
		"allowed_tools": []any{"read_file\x1e", "write_file"},
	}}
	plain := &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
		"tool_calls":    []any{map[string]any{"name": "read_file", "arguments": map[string]any{}}},
		"allowed_tools": []any{"read_file", "write_file"},
	}}
	const want = "95329c8d98dce007319d3a81b1fa6b5e"
	if got := runtime.PythonIdempotencyKey("run-1", "tools", plain); got != want {
		t.Fatalf("control: key of the plain payload = %s, want Python's %s", got, want)
	}
	if got := runtime.PythonIdempotencyKey("run-1", "tools", padded); got != want {
		t.Fatalf("key of a payload whose name/allowlist carry U+001F/U+001E = %s, want Python's %s (str.strip removes them)", got, want)
	}
}

// The runtime call ids step (spec §2.9) trims call_id and name as Python's
// str.strip() does: a call_id "\x1fc1" is "c1" to Python; the handler gets
// it untrimmed here (and the duplicate-id warning misses "c1" vs "\x1fc1").
func TestToolCallsRuntimeCallIDsStripLikePython(t *testing.T) {
	wf := oneEffect("tcs", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{
			"tool_calls": []any{
				map[string]any{"name": "ls\x1f", "call_id": "\x1fc1", "arguments": map[string]any{}},
				map[string]any{"name": "ls", "call_id": "c1", "arguments": map[string]any{}},
			}}}
	})
	f := setup(t, wf)
	var seen []any
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		seen = req.Effect.Payload["tool_calls"].([]any)
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tcs"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := seen[0].(map[string]any)
	if first["call_id"] != "c1" || first["name"] != "ls" {
		t.Errorf("call 0 handed over with call_id %q name %q; Python's strip gives \"c1\" \"ls\"", first["call_id"], first["name"])
	}
	w, _ := json.Marshal(st.Vars["_flow_warnings"])
	if want := "#WARN: TOOL_CALLS duplicate call_id at node 'step' (c1)"; !containsWarn(st.Vars["_flow_warnings"], want) {
		t.Errorf("_flow_warnings = %s; want %q as Python gives", w, want)
	}
}

func containsWarn(v any, w string) bool {
	list, _ := v.([]any)
	for _, e := range list {
		if e == w {
			return true
		}
	}
	return false
}
