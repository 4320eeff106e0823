package runtime_test

// Tool results a resume writes (blocked and pre-executed results merged
// back, approval denials) as the Python kernel (AbstractRuntime 0.4.28,
// in-memory stores) wrote them for the same workflow; "ours" in a comment
// is what this runtime wrote before it was made to match.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// resumeEventWaitWithDetails waits on a WAIT_EVENT carrying details and resumes
// it with payload, returning vars.r.
func resumeEventWaitWithDetails(t *testing.T, details, payload map[string]any) any {
	t.Helper()
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectWaitEvent, map[string]any{"wait_key": "k", "details": details})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1"})
	if st.Status != durable.RunWaiting {
		t.Fatalf("status %s %q", st.Status, st.Error)
	}
	ctx := context.Background()
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: st.RunID, WaitKey: "k", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetState(ctx, st.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return st.Vars["r"]
}

// ---------------------------------------------------------------------------
// Blocked/pre-executed tool results merged back at resume: Python merges
// only when there is at least one fixed entry, takes only object entries,
// and lets pre_results_by_index override blocked_by_index at the same
// index.
//
// Python (resume payload {"results": [{"a": 1}]}):
//   - details {"blocked_by_index": {}, "original_call_count": 3} ->
//     vars.r = {"results": [{"a": 1}]} (unchanged; ours pads two
//     "Missing tool result" entries and adds "mode").
//   - {"blocked_by_index": {"0": "x"}, "original_call_count": 2} ->
//     {"mode": "executed", "results": [{"a": 1}, {"call_id": "", "error":
//     "Missing tool result", ...}]} (ours: ["x", {"a": 1}]).
//   - {"blocked_by_index": {"0": {"b": 1}}, "pre_results_by_index": {"0":
//     {"p": 1}}, "original_call_count": 2} -> results [{"p": 1}, {"a": 1}]
//     (ours: [{"b": 1}, {"a": 1}]).
func TestPyEffectsResumeMergeOfFixedToolResults(t *testing.T) {
	payload := func() map[string]any { return map[string]any{"results": []any{map[string]any{"a": 1}}} }
	t.Run("empty fixed maps", func(t *testing.T) {
		r := resumeEventWaitWithDetails(t, map[string]any{"blocked_by_index": map[string]any{}, "original_call_count": 3}, payload())
		if got, want := canonJSON(t, r), `{"results":[{"a":1}]}`; got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
	t.Run("non-object entry", func(t *testing.T) {
		r := resumeEventWaitWithDetails(t, map[string]any{"blocked_by_index": map[string]any{"0": "x"}, "original_call_count": 2}, payload())
		want := `{"mode":"executed","results":[{"a":1},{"call_id":"","error":"Missing tool result","name":"","output":null,"runtime_call_id":null,"success":false}]}`
		if got := canonJSON(t, r); got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
	t.Run("pre-executed wins", func(t *testing.T) {
		r := resumeEventWaitWithDetails(t, map[string]any{
			"blocked_by_index":     map[string]any{"0": map[string]any{"b": 1}},
			"pre_results_by_index": map[string]any{"0": map[string]any{"p": 1}},
			"original_call_count":  2,
		}, payload())
		if got, want := canonJSON(t, r), `{"mode":"executed","results":[{"p":1},{"a":1}]}`; got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
}

// ---------------------------------------------------------------------------
// Denied approval: Python builds each entry from the call as
// {"call_id": str(call_id or ""), "runtime_call_id": tc.get(...) as is,
// "name": str(name or "")}, over the calls that are objects only.
//
// Python: details {"mode": "approval_required", "tool_calls": [{"call_id":
// "7", "name": "t", "runtime_call_id": 7}]}, resume {"approved": false,
// "reason": "no"} -> results [{"call_id": "7", "error": "no", "name": "t",
// "output": null, "runtime_call_id": 7, "success": false}] (ours: null,
// although the TOOL_CALLS handler keeps a numeric runtime_call_id as
// given). With tool_calls [{"call_id": 0, "name": 7, "runtime_call_id":
// 9}, "junk"] -> one entry {"call_id": "", "name": "7", "runtime_call_id":
// 9, ...} (ours: two entries, the first {"call_id": "0", "name": "",
// "runtime_call_id": null}).
func TestPyEffectsApprovalDenialEntriesAsPython(t *testing.T) {
	t.Run("numeric runtime_call_id", func(t *testing.T) {
		r := resumeEventWaitWithDetails(t, map[string]any{"mode": "approval_required", "tool_calls": []any{
			map[string]any{"call_id": "7", "name": "t", "runtime_call_id": 7},
		}}, map[string]any{"approved": false, "reason": "no"})
		want := `{"mode":"executed","results":[{"call_id":"7","error":"no","name":"t","output":null,"runtime_call_id":7,"success":false}]}`
		if got := canonJSON(t, r); got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
	t.Run("odd calls", func(t *testing.T) {
		r := resumeEventWaitWithDetails(t, map[string]any{"mode": "approval_required", "tool_calls": []any{
			map[string]any{"call_id": 0, "name": 7, "runtime_call_id": 9}, "junk",
		}}, map[string]any{"approved": false})
		want := `{"mode":"executed","results":[{"call_id":"","error":"Denied by user","name":"7","output":null,"runtime_call_id":9,"success":false}]}`
		if got := canonJSON(t, r); got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	}) // Python: mode = str(details.get("mode") or "").strip().lower(), so
	// details {"mode": " Approval_Required ", "tool_calls": [{"call_id":
	// "c1", "name": "t"}]} resumed with {"approved": 0} -> {"mode":
	// "executed", "results": [{"call_id": "c1", "error": "Denied by user",
	// "name": "t", "output": null, "runtime_call_id": null, "success":
	// false}]}; ours stores the payload {"approved": 0} as is.
	t.Run("mode spelling", func(t *testing.T) {
		r := resumeEventWaitWithDetails(t, map[string]any{"mode": " Approval_Required ", "tool_calls": []any{
			map[string]any{"call_id": "c1", "name": "t"},
		}}, map[string]any{"approved": 0})
		want := `{"mode":"executed","results":[{"call_id":"c1","error":"Denied by user","name":"t","output":null,"runtime_call_id":null,"success":false}]}`
		if got := canonJSON(t, r); got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
}

// §2.6 step 4 / §3.12: a denial's error is the payload's reason, Python
// str(payload.get("reason") or "Denied by user").strip(); approvalResults
// read only a string reason, so a non-string one (a number, an object a
// UI sends) was replaced by "Denied by user".
func TestHandlersApprovalDenialNonStringReason(t *testing.T) {
	wf := oneEffect("ap", func() *durable.Effect {
		return &durable.Effect{Type: "host_wait", ResultKey: "tool_results", Payload: map[string]any{}}
	})
	f := setup(t, wf)
	f.rt.SetHandler("host_wait", waitingHandler(func(req *runtime.EffectRequest) *durable.WaitState {
		return &durable.WaitState{Reason: durable.WaitUser, WaitKey: "tool_approval:abc", ResultKey: "tool_results",
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
	st, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "tool_approval:abc",
		Payload: map[string]any{"approved": false, "reason": 42}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Vars["tool_results"].(map[string]any)
	results, _ := got["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("tool_results = %v", got)
	}
	if e := results[0].(map[string]any)["error"]; e != "42" {
		t.Fatalf("error = %v, want \"42\" (Python: str(reason))", e)
	}
}
