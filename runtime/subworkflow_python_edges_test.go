package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func subwfInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case float64:
		return int64(x)
	case json.Number:
		n, _ := x.Int64()
		return n
	}
	return 0
}

// subwfWorkflows: "p" requests START_SUBWORKFLOW with vars.payload, result at
// "sub", then completes with {"sub": vars.sub}; "spin" makes vars.n steps
// and completes.
func subwfWorkflows() []*runtime.Workflow {
	p := &runtime.Workflow{ID: "p", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			pl, _ := run.Vars["payload"].(map[string]any)
			cp := map[string]any{}
			for k, v := range pl {
				cp[k] = v
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: cp, ResultKey: "sub"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]}), nil
		},
	}}
	spin := &runtime.Workflow{ID: "spin", Entry: "s", Nodes: map[string]runtime.NodeFunc{
		"s": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			i := subwfInt(run.Vars["i"]) + 1
			run.Vars["i"] = i
			if i >= subwfInt(run.Vars["n"]) {
				return runtime.Complete(map[string]any{"steps": i}), nil
			}
			return runtime.Next("s"), nil
		},
	}}
	return []*runtime.Workflow{p, spin}
}

// A sync START_SUBWORKFLOW ticks its child with Python's fixed budget:
// _handle_start_subworkflow (core/runtime.py) calls tick with its default
// max_steps=100, whatever budget the host ticks its runs with, so a child
// still running after 100 steps fails the effect ("Unexpected subworkflow
// status: running") and one needing fewer completes, under a host budget
// of 10 or of 1000 alike.
func TestSyncSubworkflowChildHasPythonsStepBudget(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		hostSteps, childSteps int
		want                  durable.RunStatus
	}{
		{10, 50, durable.RunCompleted}, // Python: 50 < 100, the child completes inline
		{1000, 150, durable.RunFailed}, // Python: still running after 100 steps
	} {
		reg, err := runtime.NewRegistry(subwfWorkflows()...)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: tc.hostSteps})
		if err != nil {
			t.Fatal(err)
		}
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p", Vars: map[string]any{
			"payload": map[string]any{"workflow_id": "spin", "vars": map[string]any{"n": int64(tc.childSteps)}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != tc.want {
			t.Errorf("Config.MaxSteps %d, sync child of %d steps: parent %s (error %q); Python's sync child gets 100 steps whatever the host's budget: parent %s",
				tc.hostSteps, tc.childSteps, st.Status, st.Error, tc.want)
		} else if tc.want == durable.RunFailed && st.Error != "Effect failed after 1 attempts: Unexpected subworkflow status: running" {
			t.Errorf("error %q", st.Error)
		}
	}
}

// A workflow_id that is not a string names no workflow: Python's registry
// is a dict keyed by string ids, so the number 5 is not found even when a
// workflow "5" is registered, and the effect fails with "Workflow '5' not
// found in registry".
func TestSubworkflowNumericWorkflowIDIsNotFound(t *testing.T) {
	ctx := context.Background()
	five := &runtime.Workflow{ID: "5", Entry: "n", Nodes: map[string]runtime.NodeFunc{
		"n": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ran": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(append(subwfWorkflows(), five)...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p", Vars: map[string]any{
		"payload": map[string]any{"workflow_id": int64(5)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Effect failed after 1 attempts: Workflow '5' not found in registry"
	if st.Status != durable.RunFailed || st.Error != want {
		t.Errorf("workflow_id 5 (a number) with a workflow \"5\" registered: parent %s, error %q, sub %v; Python: failed with %q",
			st.Status, st.Error, st.Vars["sub"], want)
	}
}

// The sync nesting limit (docs/compatibility.md, "sync subworkflow
// nesting") stands for Python's RecursionError, which
// _handle_start_subworkflow catches around the child's tick and returns as
// a failed effect, never wrapped as a tool result (wrap_as_tool_result
// only wraps a child that ended failed): the innermost run fails.
func TestSyncSubworkflowDepthLimitFailsEvenWhenWrapped(t *testing.T) {
	ctx := context.Background()
	rec := &runtime.Workflow{ID: "rec", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: map[string]any{
				"workflow_id": "rec", "wrap_as_tool_result": true,
			}, ResultKey: "sub"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(rec)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "rec"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	// Walk down to the innermost run: the one whose effect hit the limit.
	cur := id
	depth := 0
	for {
		kids, err := st.RunListChildren(ctx, cur, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) == 0 {
			break
		}
		cur = kids[0].RunID
		depth++
	}
	inner, err := rt.GetState(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if inner.Status != durable.RunFailed {
		t.Errorf("innermost run (depth %d): %s, sub %v; the documented limit (and Python's RecursionError, caught unwrapped) fails its effect, so it fails",
			depth, inner.Status, inner.Vars["sub"])
	}
}

// toolResults is the "results" entries of a wrapped tool result v; it
// fails the test when there are none.
func toolResults(t *testing.T, v any) []map[string]any {
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

// askingChild: child workflow that asks the user, then completes.
func askingChild() *runtime.Workflow {
	return &runtime.Workflow{ID: "cask", Entry: "c0", Nodes: map[string]runtime.NodeFunc{
		"c0": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "q?"}, ResultKey: "ans"}, "c1"), nil
		},
		"c1": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": run.Vars["ans"]}), nil
		},
	}}
}

// completingChild: child workflow that completes at once with out.
func completingChild(out map[string]any) *runtime.Workflow {
	return &runtime.Workflow{ID: "cout", Entry: "c0", Nodes: map[string]runtime.NodeFunc{
		"c0": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(out), nil
		},
	}}
}

// hostResumedWrappedChild parks a parent on an async+wait wrapped subworkflow
// and resumes the parent with the host's payload (Python hosts do so via
// runtime.resume / resume_subworkflow_parent). It returns vars.r and the
// child's run id.
func hostResumedWrappedChild(t *testing.T, payload map[string]any) (any, string) {
	t.Helper()
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{
		"workflow_id": "cask", "async": true, "wait": true, "wrap_as_tool_result": true,
	}, askingChild())...)
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
		}, completingChild(map[string]any{"answer": "a", "report": c.report}))...)
		st := pyStartTick(t, f, "x", runtime.StartParams{})
		out, _ := toolResults(t, st.Vars["r"])[0]["output"].(map[string]any)
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
	}, completingChild(map[string]any{"answer": "a"}))...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	e := toolResults(t, st.Vars["r"])[0]
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
	}, completingChild(map[string]any{"success": false}))...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	e := toolResults(t, st.Vars["r"])[0]
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
		r, _ := hostResumedWrappedChild(t, map[string]any{"sub_run_id": "S", "output": c.out})
		out, _ := toolResults(t, r)[0]["output"].(map[string]any)
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
		r, child := hostResumedWrappedChild(t, p)
		want := c.want
		if want == "<child>" {
			want = child
		}
		out, _ := toolResults(t, r)[0]["output"].(map[string]any)
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
	r, _ := hostResumedWrappedChild(t, map[string]any{"sub_run_id": "S", "output": map[string]any{"success": false, "error": 7}})
	e := toolResults(t, r)[0]
	if e["success"] != false || e["error"] != "7" {
		t.Fatalf(`results[0] = %v; Python: "success": false, "error": "7"`, e)
	}
}
