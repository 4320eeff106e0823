package runtime_test

// Differential tests against the Python AbstractRuntime kernel: each test
// encodes what the Python kernel wrote for the same workflow. The
// values came from scripts run outside the repository against the Python
// source the benchmarks use (bench/peer): the same scenarios on both
// kernels with their JSON-file stores, every run file and ledger dumped
// after each public call and compared field by field, plus probes of
// get_limit_status / check_limits and of WAIT_EVENT / START_SUBWORKFLOW
// payloads.

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// pyFix is a runtime on the in-memory store with a settable clock, for
// side-by-side comparisons with the Python kernel.
type pyFix struct {
	rt  *runtime.Runtime
	now time.Time
}

// newPyFix registers wfs on a fresh pyFix.
func newPyFix(t *testing.T, wfs ...*runtime.Workflow) *pyFix {
	t.Helper()
	f := &pyFix{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	f.rt, err = runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Clock: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// oneEffectWorkflow: node "a" requests the effect into vars.r and moves to
// "done", which completes with {"r": vars.r}.
func oneEffectWorkflow(id string, typ durable.EffectType, payload map[string]any, extra ...*runtime.Workflow) []*runtime.Workflow {
	wf := &runtime.Workflow{ID: id, Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: typ, Payload: payload, ResultKey: "r"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
	return append([]*runtime.Workflow{wf}, extra...)
}

// pyStartTick starts wfID with p, ticks it once and returns its state.
func pyStartTick(t *testing.T, f *pyFix, wfID string, p runtime.StartParams) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	p.WorkflowID = wfID
	id, err := f.rt.Start(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatalf("tick: %v", err)
	}
	st, err := f.rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// mustDecodeJSON decodes a Python-produced JSON literal.
func mustDecodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad literal: %v", err)
	}
	return v
}

// canonJSON renders a value as sorted compact JSON for comparison.
func canonJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

// ---------------------------------------------------------------------------
// 2. cancel_run ensures vars._runtime.control.
//
// Python: cancel_run(rid, reason="user abort") on an ASK_USER wait
// (py_harness.py scen_cancel) writes status "cancelled", error
// "user abort", waiting null and vars._runtime = {"control": {},
// "node_traces": {...}}; on a running run that never had a _runtime.control
// (scen_cancel_running, cancel_run(rid)) vars._runtime = {"control": {}}.
// runtime.py cancel_run: `control = _ensure_control_namespace(run.vars);
// control.pop("paused", None)`.
func TestDiffCancelWritesRuntimeControlNamespace(t *testing.T) {
	f := newPyFix(t, askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Cancel(ctx, id, "user abort"); err != nil {
		t.Fatal(err)
	}
	st, _ := f.rt.GetState(ctx, id)
	if st.Status != durable.RunCancelled || st.Error != "user abort" || st.Waiting != nil {
		t.Fatalf("status %s error %q waiting %v", st.Status, st.Error, st.Waiting)
	}
	rtns, _ := st.Vars["_runtime"].(map[string]any)
	ctl, ok := rtns["control"].(map[string]any)
	if !ok || len(ctl) != 0 {
		t.Fatalf(`vars._runtime.control = %#v (present %v); Python writes {"control": {}} on cancel`, rtns["control"], ok)
	}
}

// ---------------------------------------------------------------------------
// 3. get_limit_status "warning" compares the *rounded* pct.
//
// Python (py_limits.py "rounded_warning"): update_limits(rid,
// {"estimated_tokens_used": 26199, "max_tokens": 32768,
// "warn_tokens_pct": 80, "current_iteration": 0}); get_limit_status(rid)
// gives "tokens": {"estimated_used": 26199, "max": 32768, "pct": 80.0,
// "warning": true, ...} while check_limits gives [] (only check_limits
// uses the unrounded value). Same for iterations ("iter_rounded":
// current 3999 / max 5000 → "pct": 80.0, "warning": true).
func TestDiffGetLimitStatusWarningUsesRoundedPct(t *testing.T) {
	f := newPyFix(t, chain(2))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err := f.rt.UpdateLimits(ctx, id, map[string]any{
		"estimated_tokens_used": int64(26199), "max_tokens": int64(32768), "warn_tokens_pct": int64(80),
		"current_iteration": int64(3999), "max_iterations": int64(5000), "warn_iterations_pct": int64(80),
	}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	tok := st["tokens"].(map[string]any)
	it := st["iterations"].(map[string]any)
	if tok["pct"] != 80.0 || tok["warning"] != true {
		t.Errorf(`tokens = %v; Python get_limit_status: "pct": 80.0, "warning": true`, tok)
	}
	if it["pct"] != 80.0 || it["warning"] != true {
		t.Errorf(`iterations = %v; Python get_limit_status: "pct": 80.0, "warning": true`, it)
	}
}

// ---------------------------------------------------------------------------
// 4. Zero limits fall back to the defaults (Python's `int(x or default)`).
//
// Python (py_limits.py "zero_max"): update_limits(rid, {"max_iterations": 0,
// "max_tokens": 0, "current_iteration": 10, "estimated_tokens_used": 100});
// get_limit_status(rid) gives
//
//	"iterations": {"current": 10, "max": 50, "pct": 20.0, "warning": false}
//	"tokens": {"estimated_used": 100, "max": 32768, "pct": 0.3, "warning": false, ...}
//
// and ("zero_warn") with {"warn_iterations_pct": 0, "warn_tokens_pct": 0,
// "current_iteration": 1, "estimated_tokens_used": 1} check_limits(run)
// returns [] (`int(limits.get("warn_iterations_pct", 80) or 80)`).
func TestDiffLimitsZeroValuesFallBackToDefaults(t *testing.T) {
	f := newPyFix(t, chain(2))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err := f.rt.UpdateLimits(ctx, id, map[string]any{
		"max_iterations": int64(0), "max_tokens": int64(0), "current_iteration": int64(10), "estimated_tokens_used": int64(100),
	}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	it, tok := st["iterations"].(map[string]any), st["tokens"].(map[string]any)
	if canonJSON(t, it["max"]) != "50" || it["pct"] != 20.0 {
		t.Errorf(`iterations = %v; Python: {"current": 10, "max": 50, "pct": 20.0, "warning": false}`, it)
	}
	if canonJSON(t, tok["max"]) != "32768" || tok["pct"] != 0.3 {
		t.Errorf(`tokens = %v; Python: {"estimated_used": 100, "max": 32768, "pct": 0.3, "warning": false}`, tok)
	}

	id2, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err := f.rt.UpdateLimits(ctx, id2, map[string]any{
		"warn_iterations_pct": int64(0), "warn_tokens_pct": int64(0), "current_iteration": int64(1), "estimated_tokens_used": int64(1),
	}); err != nil {
		t.Fatal(err)
	}
	warns, err := f.rt.CheckLimits(ctx, id2)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("check_limits with warn pcts 0 = %+v; Python returns [] (a 0 threshold means the default 80)", warns)
	}
}

// ---------------------------------------------------------------------------
// 5. ANSWER_USER trims the level.
//
// Python (py_harness.py batch2 "e_answer_text"): ANSWER_USER
// {"text": "t", "level": " ERROR "} completes with
// {"level": "error", "message": "t"}
// (`level = str(level_raw).strip().lower()`).
func TestDiffAnswerUserLevelIsTrimmed(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectAnswerUser, map[string]any{"text": "t", "level": " ERROR "})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	want := mustDecodeJSON(t, `{"r": {"level": "error", "message": "t"}}`)
	if got, w := canonJSON(t, st.Output), canonJSON(t, want); got != w {
		t.Fatalf("output %s, want %s", got, w)
	}
}

// ---------------------------------------------------------------------------
// 6. START_SUBWORKFLOW: the session override is trimmed, and blank
// workspace strings are not inherited.
//
// Python (py_harness.py batch2 "e_sub_traces_session_ws"): parent started
// with session_id "s1" and vars {"workspace_root": "/p",
// "workspace_access_mode": "ro", "workspace_allowed_paths": ["a"],
// "workspace_ignored_paths": "  "}; START_SUBWORKFLOW {"workflow_id":
// "achild", "include_traces": true, "sessionId": " s2 ", "vars":
// {"workspace_root": "/own"}}. The child run file has "session_id": "s2"
// and vars (besides _limits/_runtime) {"workspace_access_mode": "ro",
// "workspace_allowed_paths": ["a"], "workspace_root": "/own"}.
func TestDiffSubworkflowSessionTrimmedAndBlankWorkspaceSkipped(t *testing.T) {
	child := &runtime.Workflow{ID: "achild", Entry: "c0", Nodes: map[string]runtime.NodeFunc{
		"c0": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": "42"}), nil
		},
	}}
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{
		"workflow_id": "achild", "include_traces": true, "sessionId": " s2 ", "vars": map[string]any{"workspace_root": "/own"},
	}, child)...)
	st := pyStartTick(t, f, "x", runtime.StartParams{SessionID: "s1", Vars: map[string]any{
		"workspace_root": "/p", "workspace_access_mode": "ro", "workspace_allowed_paths": []any{"a"}, "workspace_ignored_paths": "  ",
	}})
	r, _ := st.Vars["r"].(map[string]any)
	cid, _ := r["sub_run_id"].(string)
	c, err := f.rt.GetState(context.Background(), cid)
	if err != nil {
		t.Fatalf("child %q: %v (parent %s %v)", cid, err, st.Status, st.Error)
	}
	if c.SessionID != "s2" {
		t.Errorf("child session_id %q, want \"s2\" (Python strips the override)", c.SessionID)
	}
	if v, ok := c.Vars["workspace_ignored_paths"]; ok {
		t.Errorf("child vars.workspace_ignored_paths = %q; Python does not inherit a blank string", v)
	}
}

// ---------------------------------------------------------------------------
// 7. START_SUBWORKFLOW wrap_as_tool_result trims tool_name and call_id.
//
// Python (py_probe3.py "sub_wrap_trim"): START_SUBWORKFLOW {"workflow_id":
// "achild", "wrap_as_tool_result": true, "tool_name": " agent ",
// "call_id": " k1 "} completes with {"mode": "executed", "results":
// [{"call_id": "k1", "error": null, "name": "agent", "output": {"answer":
// "42", "rendered": "42", "sub_run_id": ...}, "success": true}]}.
func TestDiffSubworkflowWrapTrimsToolNameAndCallID(t *testing.T) {
	child := &runtime.Workflow{ID: "achild", Entry: "c0", Nodes: map[string]runtime.NodeFunc{
		"c0": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": "42"}), nil
		},
	}}
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{
		"workflow_id": "achild", "wrap_as_tool_result": true, "tool_name": " agent ", "call_id": " k1 ",
	}, child)...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	r, _ := st.Vars["r"].(map[string]any)
	res, _ := r["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("result %v", r)
	}
	e := res[0].(map[string]any)
	if e["name"] != "agent" || e["call_id"] != "k1" {
		t.Fatalf(`results[0] name %q call_id %q; Python: "name": "agent", "call_id": "k1"`, e["name"], e["call_id"])
	}
}

// ---------------------------------------------------------------------------
// 8. ASK_USER and WAIT_EVENT take any truthy wait_key, as str().
//
// Python (py_harness.py batch2 "e_ask_odd"): ASK_USER {"prompt": 5,
// "choices": "a,b", "wait_key": 123, "allow_free_text": 0} waits with
// {"allow_free_text": false, "choices": null, "details": null,
// "prompt": "5", "reason": "user", "result_key": "r", "resume_to_node":
// "done", "until": null, "wait_key": "123"}.
// Python (py_probe3.py "wait_event_key_int" / "wait_event_key_blank"):
// WAIT_EVENT {"wait_key": 7} waits with "wait_key": "7"; WAIT_EVENT
// {"wait_key": "  "} waits with "wait_key": "  ".
func TestDiffNonStringWaitKeyIsStringified(t *testing.T) {
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectAskUser, map[string]any{
		"prompt": 5, "choices": "a,b", "wait_key": 123, "allow_free_text": 0,
	})...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	if st.Status != durable.RunWaiting || st.Waiting.WaitKey != "123" {
		t.Errorf("ASK_USER wait_key 123: status %s wait %+v; Python waits with \"wait_key\": \"123\"", st.Status, st.Waiting)
	}
	for _, c := range []struct {
		key  any
		want string
	}{{7, "7"}, {"  ", "  "}} {
		f := newPyFix(t, oneEffectWorkflow("x", durable.EffectWaitEvent, map[string]any{"wait_key": c.key})...)
		st := pyStartTick(t, f, "x", runtime.StartParams{})
		if st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.WaitKey != c.want {
			t.Errorf("WAIT_EVENT wait_key %#v: status %s error %q; Python waits with \"wait_key\": %q", c.key, st.Status, st.Error, c.want)
		}
	}
}
