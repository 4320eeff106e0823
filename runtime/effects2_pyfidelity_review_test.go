package runtime_test

// Regression tests from a review of the Python fidelity of ASK_USER,
// WAIT_EVENT, START_SUBWORKFLOW and resume payload handling. Each test
// runs one case through our runtime (memory store) and states what the
// Python kernel (AbstractRuntime 0.4.28, in-memory stores) wrote for the
// same workflow, printed by a side-by-side script; each failed before its
// fix.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

func e2Results(t *testing.T, v any) []map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	list, _ := m["results"].([]any)
	var out []map[string]any
	for _, x := range list {
		e, _ := x.(map[string]any)
		out = append(out, e)
	}
	if len(out) == 0 {
		t.Fatalf("no results in %v", v)
	}
	return out
}

// e2Ask: child workflow that asks the user, then completes.
func e2Ask() *runtime.Workflow {
	return &runtime.Workflow{ID: "cask", Entry: "c0", Nodes: map[string]runtime.NodeFunc{
		"c0": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "q?"}, ResultKey: "ans"}, "c1"), nil
		},
		"c1": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": run.Vars["ans"]}), nil
		},
	}}
}

// e2Out: child workflow that completes at once with out.
func e2Out(out map[string]any) *runtime.Workflow {
	return &runtime.Workflow{ID: "cout", Entry: "c0", Nodes: map[string]runtime.NodeFunc{
		"c0": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(out), nil
		},
	}}
}

// e2HostResumedWrap parks a parent on an async+wait wrapped subworkflow
// and resumes the parent with the host's payload (Python hosts do so via
// runtime.resume / resume_subworkflow_parent). It returns vars.r and the
// child's run id.
func e2HostResumedWrap(t *testing.T, payload map[string]any) (any, string) {
	t.Helper()
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{
		"workflow_id": "cask", "async": true, "wait": true, "wrap_as_tool_result": true,
	}, e2Ask())...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1"})
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		t.Fatalf("parent %s %v, want waiting on the child", st.Status, st.Error)
	}
	child, _ := st.Waiting.Details["sub_run_id"].(string)
	ctx := context.Background()
	if _, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: st.RunID, WaitKey: st.Waiting.WaitKey, Payload: payload}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetState(ctx, st.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return st.Vars["r"], child
}

// ---------------------------------------------------------------------------
// ASK_USER prompt that is not a string: Python stores str(prompt).
//
// Python: ASK_USER {"prompt": ["a"]} waits with "prompt": "['a']";
// {"prompt": {"x": 1}} with "prompt": "{'x': 1}"; {"prompt": true} with
// "prompt": "True". Ours uses fmt.Sprint: "[a]", "map[x:1]", "true".
func TestPyEffectsAskUserNonStringPromptIsPythonStr(t *testing.T) {
	for _, c := range []struct {
		prompt any
		want   string
	}{
		{[]any{"a"}, "['a']"},
		{map[string]any{"x": 1}, "{'x': 1}"},
		{true, "True"},
	} {
		f := newPyFix(t, oneEffectWorkflow("x", durable.EffectAskUser, map[string]any{"prompt": c.prompt})...)
		st := pyStartTick(t, f, "x", runtime.StartParams{})
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			t.Fatalf("prompt %#v: status %s error %q", c.prompt, st.Status, st.Error)
		}
		if st.Waiting.Prompt != c.want {
			t.Errorf("prompt %#v: waiting.prompt %q; Python: %q", c.prompt, st.Waiting.Prompt, c.want)
		}
	}
}

// ---------------------------------------------------------------------------
// WAIT_EVENT with a truthy non-string name: Python's
// `name = payload.get("name") or payload.get("event_name")` keeps the 5,
// which is not a string, so the effect fails; ours skips the non-string
// name and waits on event_name.
//
// Python: WAIT_EVENT {"name": 5, "event_name": "ev"} -> run "failed",
// error "Effect failed after 1 attempts: wait_event requires
// payload.wait_key or payload.name".
func TestPyEffectsWaitEventNonStringNameDoesNotFallBackToEventName(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectWaitEvent, map[string]any{"name": 5, "event_name": "ev"})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1"})
	want := "Effect failed after 1 attempts: wait_event requires payload.wait_key or payload.name"
	if st.Status != durable.RunFailed || st.Error != want {
		key := ""
		if st.Waiting != nil {
			key = st.Waiting.WaitKey
		}
		t.Fatalf("status %s error %q wait_key %q; Python: failed with %q", st.Status, st.Error, key, want)
	}
}

// ---------------------------------------------------------------------------
// WAIT_EVENT with a whitespace-only scope: Python's build_event_wait_key
// takes str(scope or "session") = "  ", strips it to "" and refuses it as
// an unknown scope; ours reads a blank scope as "session" and waits.
//
// Python: WAIT_EVENT {"name": "ev", "scope": "  "} -> run "failed", error
// "Effect failed after 1 attempts: wait_event invalid payload: unknown
// event scope: '  '".
func TestPyEffectsWaitEventBlankScopeIsUnknown(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectWaitEvent, map[string]any{"name": "ev", "scope": "  "})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1"})
	want := "Effect failed after 1 attempts: wait_event invalid payload: unknown event scope: '  '"
	if st.Status != durable.RunFailed || st.Error != want {
		key := ""
		if st.Waiting != nil {
			key = st.Waiting.WaitKey
		}
		t.Fatalf("status %s error %q wait_key %q; Python: failed with %q", st.Status, st.Error, key, want)
	}
}

// ---------------------------------------------------------------------------
// The unknown-scope error quotes the scope with Python's repr(): a scope
// holding a single quote is shown in double quotes.
//
// Python: WAIT_EVENT {"name": "ev", "scope": ["session"]} -> error
// "Effect failed after 1 attempts: wait_event invalid payload: unknown
// event scope: \"['session']\"". Ours: '['session']'.
func TestPyEffectsWaitEventUnknownScopeErrorUsesRepr(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectWaitEvent, map[string]any{"name": "ev", "scope": []any{"session"}})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1"})
	want := `Effect failed after 1 attempts: wait_event invalid payload: unknown event scope: "['session']"`
	if st.Error != want {
		t.Fatalf("error %q; Python: %q", st.Error, want)
	}
}

// ---------------------------------------------------------------------------
// START_SUBWORKFLOW wrap_as_tool_result: the child's "report" is kept
// stripped, and only when it is not blank (_tool_output_for_subworkflow
// and the resume path alike: `if isinstance(r, str) and r.strip(): report
// = r.strip()`).
//
// Python (sync child completing with {"answer": "a", "report": X}):
// X = "  r  " -> output {"answer": "a", "rendered": "a", "report": "r",
// "sub_run_id": ...}; X = "   " or "" -> no "report" key.
// Ours keeps "  r  ", "   " and "".
func TestPyEffectsSubworkflowWrapReportIsStrippedAndBlankDropped(t *testing.T) {
	for _, c := range []struct {
		report string
		want   any // nil: absent
	}{{"  r  ", "r"}, {"   ", nil}, {"", nil}} {
		f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{
			"workflow_id": "cout", "wrap_as_tool_result": true,
		}, e2Out(map[string]any{"answer": "a", "report": c.report}))...)
		st := pyStartTick(t, f, "x", runtime.StartParams{})
		out, _ := e2Results(t, st.Vars["r"])[0]["output"].(map[string]any)
		got, has := out["report"]
		if c.want == nil && has {
			t.Errorf("report %q: output.report = %q; Python leaves it out", c.report, got)
		}
		if c.want != nil && got != c.want {
			t.Errorf("report %q: output.report = %#v; Python: %q", c.report, got, c.want)
		}
	}
}

// ---------------------------------------------------------------------------
// START_SUBWORKFLOW tool_name / call_id given as numbers: Python takes
// str(tool_name_raw or "").strip(), so 5 is the name "5".
//
// Python: {"workflow_id": "cout", "wrap_as_tool_result": true,
// "tool_name": 5, "call_id": 7} completes with results[0] "name": "5",
// "call_id": "7" (and a waiting parent's details "tool_name": "5",
// "call_id": "7"). Ours: "start_subworkflow" and "subworkflow".
func TestPyEffectsSubworkflowNumericToolNameAndCallID(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{
		"workflow_id": "cout", "wrap_as_tool_result": true, "tool_name": 5, "call_id": 7,
	}, e2Out(map[string]any{"answer": "a"}))...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	e := e2Results(t, st.Vars["r"])[0]
	if e["name"] != "5" || e["call_id"] != "7" {
		t.Fatalf(`results[0] name %q call_id %q; Python: "name": "5", "call_id": "7"`, e["name"], e["call_id"])
	}
}

// ---------------------------------------------------------------------------
// A sync child that COMPLETES with an output holding "success": false:
// Python's handler renders it as a successful tool result (only its resume
// path reads the failure envelope); ours reports a failed call.
//
// Python: child completes with {"success": false}; parent vars.r =
// {"mode": "executed", "results": [{"call_id": "subworkflow", "error":
// null, "name": "start_subworkflow", "output": {"answer": "{\"success\":
// false}", "rendered": "{\"success\": false}", "sub_run_id": ...},
// "success": true}]}. Ours: "success": false, "error": "Subworkflow
// failed", "output": null.
func TestPyEffectsSubworkflowSyncWrapCompletedChildIsSuccess(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{
		"workflow_id": "cout", "wrap_as_tool_result": true,
	}, e2Out(map[string]any{"success": false}))...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	e := e2Results(t, st.Vars["r"])[0]
	out, _ := e["output"].(map[string]any)
	if e["success"] != true || e["error"] != nil || out["answer"] != `{"success": false}` {
		t.Fatalf(`results[0] = %v; Python: success true, error null, output.answer "{\"success\": false}"`, e)
	}
}

// ---------------------------------------------------------------------------
// START_SUBWORKFLOW with a workflow_id that is not a string: Python looks
// it up and reports it missing.
//
// Python: {"workflow_id": 5} -> run failed, error "Effect failed after 1
// attempts: Workflow '5' not found in registry"; with wrap_as_tool_result
// the result's error is "Workflow '5' not found in registry". Ours says
// "start_subworkflow requires payload.workflow_id".
func TestPyEffectsSubworkflowNonStringWorkflowIDNotFound(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{"workflow_id": 5})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	want := "Effect failed after 1 attempts: Workflow '5' not found in registry"
	if st.Error != want {
		t.Fatalf("error %q; Python: %q", st.Error, want)
	}
}

// ---------------------------------------------------------------------------
// Resume of a wrapped subworkflow wait with a string output: Python strips
// it, and a blank one is rendered as its JSON text.
//
// Python (parent waiting on async+wait+wrap; resume payload {"sub_run_id":
// "S", "output": X}): X = " yo " -> output.answer "yo"; X = "   " ->
// "\"   \""; X = "" -> "\"\"". Ours: " yo ", "   ", "".
func TestPyEffectsSubworkflowResumeWrapStringOutput(t *testing.T) {
	for _, c := range []struct{ out, want string }{{" yo ", "yo"}, {"   ", `"   "`}, {"", `""`}} {
		r, _ := e2HostResumedWrap(t, map[string]any{"sub_run_id": "S", "output": c.out})
		out, _ := e2Results(t, r)[0]["output"].(map[string]any)
		if out["answer"] != c.want || out["rendered"] != c.want {
			t.Errorf("output %q: answer %q rendered %q; Python: %q", c.out, out["answer"], out["rendered"], c.want)
		}
	}
}

// ---------------------------------------------------------------------------
// Resume of a wrapped subworkflow wait: Python's sub_run_id is
// str(payload.sub_run_id or details.sub_run_id or "").strip().
//
// Python: payload {"output": {"answer": "a"}} (no sub_run_id, as a host
// may send) -> output.sub_run_id = the child's id from the wait details;
// {"sub_run_id": "", ...} -> the child's id; {"sub_run_id": 5, ...} ->
// "5"; {"sub_run_id": " S ", ...} -> "S". Ours: "", "", "", " S ".
func TestPyEffectsSubworkflowResumeWrapSubRunID(t *testing.T) {
	for _, c := range []struct {
		name string
		sub  any // absent when "absent"
		want string
	}{
		{"absent", "absent", "<child>"},
		{"empty", "", "<child>"},
		{"number", 5, "5"},
		{"padded", " S ", "S"},
	} {
		p := map[string]any{"output": map[string]any{"answer": "a"}}
		if c.sub != "absent" {
			p["sub_run_id"] = c.sub
		}
		r, child := e2HostResumedWrap(t, p)
		want := c.want
		if want == "<child>" {
			want = child
		}
		out, _ := e2Results(t, r)[0]["output"].(map[string]any)
		if out["sub_run_id"] != want {
			t.Errorf("%s: output.sub_run_id %q; Python: %q", c.name, out["sub_run_id"], want)
		}
	}
}

// ---------------------------------------------------------------------------
// Resume of a wrapped subworkflow wait with a failure envelope whose
// error is not a string: Python takes str(error or "Subworkflow failed").
//
// Python: payload {"sub_run_id": "S", "output": {"success": false,
// "error": 7}} -> results[0] "success": false, "error": "7". Ours:
// "Subworkflow failed".
func TestPyEffectsSubworkflowResumeWrapNonStringError(t *testing.T) {
	r, _ := e2HostResumedWrap(t, map[string]any{"sub_run_id": "S", "output": map[string]any{"success": false, "error": 7}})
	e := e2Results(t, r)[0]
	if e["success"] != false || e["error"] != "7" {
		t.Fatalf(`results[0] = %v; Python: "success": false, "error": "7"`, e)
	}
}

// e2WaitDetailsResume waits on a WAIT_EVENT carrying details and resumes
// it with payload, returning vars.r.
func e2WaitDetailsResume(t *testing.T, details, payload map[string]any) any {
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
		r := e2WaitDetailsResume(t, map[string]any{"blocked_by_index": map[string]any{}, "original_call_count": 3}, payload())
		if got, want := canonJSON(t, r), `{"results":[{"a":1}]}`; got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
	t.Run("non-object entry", func(t *testing.T) {
		r := e2WaitDetailsResume(t, map[string]any{"blocked_by_index": map[string]any{"0": "x"}, "original_call_count": 2}, payload())
		want := `{"mode":"executed","results":[{"a":1},{"call_id":"","error":"Missing tool result","name":"","output":null,"runtime_call_id":null,"success":false}]}`
		if got := canonJSON(t, r); got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
	t.Run("pre-executed wins", func(t *testing.T) {
		r := e2WaitDetailsResume(t, map[string]any{
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
		r := e2WaitDetailsResume(t, map[string]any{"mode": "approval_required", "tool_calls": []any{
			map[string]any{"call_id": "7", "name": "t", "runtime_call_id": 7},
		}}, map[string]any{"approved": false, "reason": "no"})
		want := `{"mode":"executed","results":[{"call_id":"7","error":"no","name":"t","output":null,"runtime_call_id":7,"success":false}]}`
		if got := canonJSON(t, r); got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
	t.Run("odd calls", func(t *testing.T) {
		r := e2WaitDetailsResume(t, map[string]any{"mode": "approval_required", "tool_calls": []any{
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
		r := e2WaitDetailsResume(t, map[string]any{"mode": " Approval_Required ", "tool_calls": []any{
			map[string]any{"call_id": "c1", "name": "t"},
		}}, map[string]any{"approved": 0})
		want := `{"mode":"executed","results":[{"call_id":"c1","error":"Denied by user","name":"t","output":null,"runtime_call_id":null,"success":false}]}`
		if got := canonJSON(t, r); got != want {
			t.Errorf("vars.r = %s; Python: %s", got, want)
		}
	})
}
