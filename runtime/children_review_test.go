package runtime

// Regression tests from a review of child runs, pause and cancellation:
// each failed before the fix its comment describes.

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Cancel cancels the context of an effect in flight through
// cancelInflight, which exists only while a handler runs. A cancel
// requested while the step's node function ran (or while the STARTED
// checkpoint was committed) found none, so the effect started after the
// cancel and ran to its end uncancelled (an LLM call of minutes held
// Cancel that long), its attempt recorded "completed". A cancel request
// now makes the attempt end cancelled before its handler starts.
func TestCancelRequestedBeforeTheHandlerCancelsIt(t *testing.T) {
	ctx := context.Background()
	var rt *Runtime
	cancelDone := make(chan error, 1)
	var once sync.Once
	var called, sawCancel atomic.Bool
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan {
			id := run.RunID
			// A host cancels the run while this node function runs.
			hostStopsOnce(&once, rt, id, cancelDone, func() error {
				_, err := rt.Cancel(context.Background(), id, "stop")
				return err
			})
			return Request(&durable.Effect{Type: "slow"}, "b")
		}),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt = errRuntime(t, memory.New(), Config{}, wf)
	rt.SetHandler("slow", Handler{Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		called.Store(true)
		select {
		case <-ctx.Done():
			sawCancel.Store(true)
			return Outcome{}, ctx.Err()
		case <-time.After(2 * time.Second): // the external call finishes
			return Completed(map[string]any{"done": true}), nil
		}
	}})
	id, _ := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if _, err := rt.Tick(ctx, id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-cancelDone; err != nil {
		t.Fatal(err)
	}
	st, _ := rt.GetState(ctx, id)
	if st.Status != durable.RunCancelled {
		t.Fatalf("status %s, want cancelled", st.Status)
	}
	recs, _ := rt.GetLedger(ctx, id)
	var end durable.StepStatus
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == "slow" && r.Status != durable.StepStarted {
			end = r.Status
		}
	}
	if end != durable.StepCancelled || called.Load() && !sawCancel.Load() {
		t.Fatalf("an effect started after Cancel was requested ran uncancelled to its end (handler saw ctx cancelled: %v, "+
			"attempt recorded %q); want its context cancelled and the attempt recorded cancelled (or never started)",
			sawCancel.Load(), end)
	}
}

// A sync child cancelled while its effect runs returns from its tick
// still "running" (the cancel commits after): the parent failed with
// "Unexpected subworkflow status: running" although the child was
// cancelled (Python, whose inline tick returns the persisted cancelled
// child, says "cancelled").
func TestSyncChildCancelledMidEffectIsNotReportedRunning(t *testing.T) {
	ctx := context.Background()
	started := make(chan string, 1)
	child := &Workflow{ID: "child", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Request(&durable.Effect{Type: "slow"}, "b") }),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, syncParentOf(), child)
	rt.SetHandler("slow", Handler{Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		started <- req.Run.RunID
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	}})
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	done := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, pid, TickOptions{}); done <- err }()
	cid := <-started
	if cs, err := rt.Cancel(ctx, cid, "stop child"); err != nil || cs.Status != durable.RunCancelled {
		t.Fatalf("cancel child: %v %v", cs, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ps, _ := rt.GetState(ctx, pid)
	if strings.Contains(ps.Error, "status: running") {
		t.Fatalf("parent %s with %q, but its child %s is cancelled (not running)", ps.Status, ps.Error, cid)
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

// A host pausing a sync child while its step ran stopped the child's tick
// and the parent's, which was left "running" at its START_SUBWORKFLOW
// node (not waiting on the child, as Python's parent would be). When the
// host then lifted the pause and the child completed, resumeParent found
// the parent not waiting and did nothing: nothing in a live process drove
// it again. The parent now waits on a paused child as on a waiting one.
func TestPausedSyncChildEndResumesItsParent(t *testing.T) {
	ctx := context.Background()
	var rt *Runtime
	paused := make(chan error, 1)
	child := selfPausingChild(&rt, paused)
	parent := &Workflow{ID: "parent", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "go?"}, ResultKey: "a"}, "spawn")
		}),
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child"}, ResultKey: "child"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["child"]}) }),
	}}
	rt = errRuntime(t, memory.New(), Config{}, parent, child)
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	ps, err := rt.Tick(ctx, pid, TickOptions{})
	if err != nil || ps.Status != durable.RunWaiting {
		t.Fatalf("parent: %v %v", ps, err)
	}
	// The host answers; the parent goes on into its sync child, which
	// another host pauses mid-step.
	if _, err := rt.Resume(ctx, ResumeParams{RunID: pid, WaitKey: ps.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatal(err)
	}
	if err := <-paused; err != nil {
		t.Fatal(err)
	}
	kids, err := rt.store.RunListChildren(ctx, pid, "")
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %v %v", kids, err)
	}
	cs, err := rt.ResumeRun(ctx, kids[0].RunID)
	if err != nil || cs.Status != durable.RunCompleted {
		t.Fatalf("child after ResumeRun: %v %v", cs, err)
	}
	ps, _ = rt.GetState(ctx, pid)
	if ps.Status != durable.RunCompleted {
		t.Fatalf("parent is %s at node %q although its sync child %s has completed; want it resumed with the child's end",
			ps.Status, ps.CurrentNode, cs.RunID)
	}
}
