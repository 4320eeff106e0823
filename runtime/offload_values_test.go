package runtime_test

// Values a run hands on while a store offloads its state.

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// Spec §2.6 / Python runtime.py:1846: the resume record's payload is
// offloaded with run_id=run.run_id, so the artifacts belong to the run:
// their id is sha256(run_id 0x00 content)[:32], ListByRun finds them and
// DeleteByRun (run deletion) removes them. Ours stored them without a run.
func TestResumeOffloadBelongsToRun(t *testing.T) {
	ctx, arts, id, big, p := resumedWithLargePayload(t)
	ref, ok := artifact.RefID(p["text"])
	if !ok {
		t.Fatalf("payload.text not offloaded: %v", p["text"])
	}
	if want := artifact.ComputeID(id, []byte(big)); ref != want {
		t.Errorf("resume artifact id %s, want %s (Python: computed with the run id)", ref, want)
	}
	meta, err := arts.Metadata(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if meta.RunID != id {
		t.Errorf("resume artifact run_id %q, want %q", meta.RunID, id)
	}
	listed, _ := arts.ListByRun(ctx, id)
	if len(listed) == 0 {
		t.Errorf("ListByRun(%s) does not list the resume payload artifact", id)
	}
}

// A parent waiting on an async child (async+wait) is resumed by the
// kernel with the child's output read back from the store (driver.go
// resumeParent: RunGet). With the offloading decorator (store/offload)
// the stored copy of a terminal child's output holds artifact refs in
// place of its large values ("the in-memory run is untouched; only the
// persisted copy changes", spec §4.7), so the parent received
// {"$artifact": id} where the sync path gives the value; the kernel now
// restores the child's own offloaded values.
func TestAsyncChildOutputRestoredFromOffload(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("y", 500)
	child := &runtime.Workflow{ID: "child", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"big": big}), nil
		},
	}}
	reg := childParentsRegistry(t, child)
	rt, _, _ := offloadingRuntime(t, reg, 100)
	for _, wf := range []string{"sync", "async"} {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: wf})
		if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		ps, err := rt.GetState(ctx, id)
		if err != nil || ps.Status != durable.RunCompleted {
			t.Fatalf("%s: parent %v %v", wf, ps, err)
		}
		// vars.child is a public var: never offloaded in the parent.
		res, _ := ps.Vars["child"].(map[string]any)
		out, _ := res["output"].(map[string]any)
		if got, _ := out["big"].(string); got != big {
			t.Errorf("%s: parent's vars.child.output.big = %#v, want the child's %d-byte string", wf, out["big"], len(big))
		}
	}
}

// A session's memory owner run (session_memory_<sid>) is stored with
// status "completed" (spec §1.13) and keeps receiving spans. Through the
// offloading decorator its vars._runtime.memory_spans list is replaced by
// an artifact ref once it outgrows the threshold (terminal runs are
// offloaded, §4.7); the next MEMORY_NOTE reads the ref as "no spans"
// (builtin_memory.go appendSpan) and wrote a list holding only the new
// span: every earlier note was lost from the index. The decorator now
// keeps the span index inline.
func TestSessionMemorySpansSurviveOffload(t *testing.T) {
	ctx := context.Background()
	notes := 6
	wf := &runtime.Workflow{ID: "notes", Entry: "n0", Nodes: map[string]runtime.NodeFunc{}}
	for i := 0; i < notes; i++ {
		i := i
		next := "n" + string(rune('1'+i))
		if i == notes-1 {
			next = "done"
		}
		wf.Nodes["n"+string(rune('0'+i))] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote,
				Payload:   map[string]any{"note": "note number " + string(rune('0'+i)) + " " + strings.Repeat("n", 40), "scope": "session"},
				ResultKey: "r"}, next), nil
		}
	}
	wf.Nodes["done"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(map[string]any{"ok": true}), nil
	}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, arts, st := offloadingRuntime(t, reg, 1000)
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "notes", SessionID: "s1"})
	if s, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || s.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", s, err)
	}
	owner, err := st.Inner().RunGet(ctx, "session_memory_s1")
	if err != nil {
		t.Fatal(err)
	}
	rtNS, _ := owner.Vars["_runtime"].(map[string]any)
	spans := rtNS["memory_spans"]
	if id, ok := artifact.RefID(spans); ok {
		v, err := artifact.LoadJSON(ctx, arts, id)
		if err != nil {
			t.Fatal(err)
		}
		spans = v
	}
	list, _ := spans.([]any)
	if len(list) != notes {
		t.Fatalf("session owner holds %d memory spans after %d notes, want %d", len(list), notes, notes)
	}
}

// TestSyncChildReadBackGivesItsValues: a sync START_SUBWORKFLOW naming a
// child that already ended (payload.run_id, here the same child called a
// second time) reads the child back from the store, whose offloading moved
// its large output values out; the parent gets the values, as from a
// child its own tick just ended.
func TestSyncChildReadBackGivesItsValues(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("z", 500)
	child := &runtime.Workflow{ID: "child", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"big": big}), nil
		},
	}}
	call := func(resultKey, next string) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: resultKey,
				Payload: map[string]any{"workflow_id": "child", "run_id": "the-child"}}, next), nil
		}
	}
	parent := &runtime.Workflow{ID: "parent", Entry: "first", Nodes: map[string]runtime.NodeFunc{
		"first":  call("r1", "second"),
		"second": call("r2", "done"),
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(parent, child)
	rt, _, st := offloadingRuntime(t, reg, 100)
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	p, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || p.Status != durable.RunCompleted {
		t.Fatalf("parent: %v %v", p, err)
	}
	stored, err := st.Inner().RunGet(ctx, "the-child")
	if err != nil || !artifact.IsRef(stored.Output) && !artifact.IsRef(stored.Output["big"]) {
		t.Fatalf("setup: the child's stored output %v (%v) holds no ref", stored, err)
	}
	for _, key := range []string{"r1", "r2"} {
		res, _ := p.Vars[key].(map[string]any)
		out, _ := res["output"].(map[string]any)
		if got, _ := out["big"].(string); got != big {
			t.Errorf("vars.%s.output.big = %#v, want the child's %d-byte string", key, out["big"], len(big))
		}
	}
}

// offloadingRuntime is a runtime over a memory store whose values past
// maxInline bytes are offloaded to the artifact store it returns, with
// that offloading store.
func offloadingRuntime(t *testing.T, reg *runtime.Registry, maxInline int) (*runtime.Runtime, artifact.Store, *offload.Store) {
	t.Helper()
	arts := artifact.NewMemory()
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: maxInline})
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts})
	if err != nil {
		t.Fatal(err)
	}
	return rt, arts, st
}

// childParentsRegistry registers child and two parents that start it at
// their first node, "sync" (a sync START_SUBWORKFLOW) and "async" (async
// + wait), and complete with {"ok": true} once it ends.
func childParentsRegistry(t *testing.T, child *runtime.Workflow) *runtime.Registry {
	t.Helper()
	spawn := func(id string, p map[string]any) *runtime.Workflow {
		return &runtime.Workflow{ID: id, Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: p, ResultKey: "child"}, "done"), nil
			},
			"done": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}}
	}
	reg, err := runtime.NewRegistry(child,
		spawn("sync", map[string]any{"workflow_id": "child"}),
		spawn("async", map[string]any{"workflow_id": "child", "async": true, "wait": true}))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
