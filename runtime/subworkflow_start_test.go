package runtime

// START_SUBWORKFLOW (builtin_subworkflow.go): what a child inherits and
// what its parent receives of its end.

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// spawnedChild has a parent (vars pvars, session sid) start child "c" with
// payload sync and returns the child's state.
func spawnedChild(t *testing.T, pvars map[string]any, sid string, payload map[string]any) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	var childID string
	parent := &Workflow{ID: "w", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: payload, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan {
			r, _ := run.Vars["r"].(map[string]any)
			childID, _ = r["sub_run_id"].(string)
			return Complete(map[string]any{})
		}),
	}}
	child := &Workflow{ID: "c", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, parent, child)
	id := startRun(t, rt, StartParams{Vars: pvars, SessionID: sid})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted || childID == "" {
		t.Fatalf("parent tick: %v %v (child %q)", run, err, childID)
	}
	c, err := rt.GetState(ctx, childID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Spec §3.6: the parent's workspace_* vars are copied into the child
// "unless the child sets them".
func TestSubworkflowChildKeepsTheWorkspaceItSets(t *testing.T) {
	c := spawnedChild(t, map[string]any{"workspace_root": "/parent", "workspace_access_mode": "rw"}, "",
		map[string]any{"workflow_id": "c", "vars": map[string]any{"workspace_root": "/child"}})
	if c.Vars["workspace_root"] != "/child" {
		t.Errorf("child workspace_root %v, want /child (set by the child)", c.Vars["workspace_root"])
	}
	if c.Vars["workspace_access_mode"] != "rw" {
		t.Errorf("child workspace_access_mode %v, want rw (inherited)", c.Vars["workspace_access_mode"])
	}
}

// Spec §3.6: session_id defaults to the parent's session_id.
func TestSubworkflowChildInheritsTheParentsSession(t *testing.T) {
	c := spawnedChild(t, nil, "sess-1", map[string]any{"workflow_id": "c"})
	if c.SessionID != "sess-1" {
		t.Errorf("child session %q, want the parent's sess-1", c.SessionID)
	}
}

// wrappedSyncChildResult has a parent start child "c" (whose node returns
// plan) synchronously, wrapped as a tool result, and returns vars.r.
func wrappedSyncChildResult(t *testing.T, plan func() (StepPlan, error)) map[string]any {
	t.Helper()
	ctx := context.Background()
	parent := callThenDoneWorkflow(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "c", "wrap_as_tool_result": true})
	child := &Workflow{ID: "c", Entry: "a", Nodes: map[string]NodeFunc{
		"a": func(context.Context, *durable.RunState, *RunContext) (StepPlan, error) { return plan() },
	}}
	rt := errRuntime(t, memory.New(), Config{}, parent, child)
	id := startRun(t, rt, StartParams{})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("parent: %v %v", run, err)
	}
	r, _ := run.Vars["r"].(map[string]any)
	res, _ := r["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("vars.r %v, want a tool result with one entry", r)
	}
	return res[0].(map[string]any)
}

// Spec §3.6: a sync child that failed gives, wrapped, an error tool
// result (the parent's effect completes).
func TestWrappedSyncSubworkflowFailureIsAnErrorToolResult(t *testing.T) {
	e := wrappedSyncChildResult(t, func() (StepPlan, error) { return StepPlan{}, errors.New("boom") })
	if e["success"] != false || e["error"] == nil {
		t.Errorf("tool result entry %v, want success false with the child's error", e)
	}
}

// subworkflowToolOutput: the report is kept "when short" (Python:
// len(report) <= 4000 characters, not bytes).
func TestWrappedSubworkflowReportLengthCountsCharacters(t *testing.T) {
	report := ""
	for range 3000 {
		report += "é" // 3000 characters, 6000 bytes
	}
	e := wrappedSyncChildResult(t, func() (StepPlan, error) {
		return Complete(map[string]any{"answer": "ok", "report": report}), nil
	})
	out, _ := e["output"].(map[string]any)
	if out["report"] != report {
		t.Errorf("a 3000-character report was dropped from the tool output %v", out)
	}
}

// With include_traces, a parent resumed by its child's end got
// node_traces = null when the child recorded none,
// where the sync path (and Python's get_node_traces) always gives an
// object. compatibility.md: the payload "also carries the child's
// node_traces, as a sync child's completion does".
func TestAsyncWaitIncludeTracesIsAnObject(t *testing.T) {
	ctx := context.Background()
	spawn := func(id string, p map[string]any) *Workflow {
		return &Workflow{ID: id, Entry: "spawn", Nodes: map[string]NodeFunc{
			"spawn": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: p, ResultKey: "child"}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["child"]}) }),
		}}
	}
	quick := &Workflow{ID: "quick", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, quick,
		spawn("sync", map[string]any{"workflow_id": "quick", "include_traces": true}),
		spawn("async", map[string]any{"workflow_id": "quick", "include_traces": true, "async": true, "wait": true}))
	traces := map[string]any{}
	for _, wf := range []string{"sync", "async"} {
		id, _ := rt.Start(ctx, StartParams{WorkflowID: wf})
		st, err := rt.Tick(ctx, id, TickOptions{})
		if err != nil || st.Status != durable.RunCompleted {
			t.Fatalf("%s: %v %v", wf, st, err)
		}
		traces[wf] = st.Output["child"].(map[string]any)["node_traces"]
	}
	if _, ok := traces["sync"].(map[string]any); !ok {
		t.Fatalf("sync node_traces %#v", traces["sync"])
	}
	if _, ok := traces["async"].(map[string]any); !ok {
		t.Fatalf("async+wait node_traces = %#v, want an object as the sync path gives (%#v)", traces["async"], traces["sync"])
	}
}
