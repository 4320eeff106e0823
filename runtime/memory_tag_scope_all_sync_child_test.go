package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// MEMORY_TAG scope="all" tags the span wherever it is found among the run,
// its session owner and the global owner. For a sync child without a
// session id the session owner is the root of its parent chain: its parent,
// whose tick is running the child. The span is in the child; Python loads
// the parent, finds nothing to tag there and does not save it, and the tag
// succeeds. Only owners that hold the span are written (under their lock):
// the parent, which holds nothing to tag, must not make the effect fail as
// "busy" after the lock wait.
func TestMemoryTagScopeAllInSyncChildTagsItsOwnSpan(t *testing.T) {
	span := map[string]any{"kind": "memory_note", "artifact_id": "span_a", "created_at": "2026-01-01T00:00:00+00:00",
		"from_timestamp": "2026-01-01T00:00:00+00:00", "to_timestamp": "2026-01-01T00:00:00+00:00",
		"message_count": int64(0), "note_preview": "n"}
	child := &runtime.Workflow{ID: "tag_child", Entry: "tag", Nodes: map[string]runtime.NodeFunc{
		"tag": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryTag, Payload: map[string]any{
				"span_id": "span_a", "scope": "all", "tags": map[string]any{"topic": "x"}}, ResultKey: "t"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"t": run.Vars["t"]}), nil
		},
	}}
	parent := &runtime.Workflow{ID: "tag_parent", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: map[string]any{
				"workflow_id": "tag_child",
				"vars":        map[string]any{"_runtime": map[string]any{"memory_spans": []any{span}}},
			}, ResultKey: "sub"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]}), nil
		},
	}}
	reg, err := runtime.NewRegistry(child, parent)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Artifacts: artifact.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "tag_parent"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCompleted {
		t.Fatalf("parent: status %s, error %q; want completed (the span to tag is the child's own)", run.Status, run.Error)
	}
}
