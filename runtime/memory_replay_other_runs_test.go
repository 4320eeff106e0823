package runtime_test

// A replay that reuses a completed MEMORY_TAG / MEMORY_REHYDRATE record
// calls the handler again (RerunOnReplay) to redo the requesting run's
// changes lost with the state a kill cut off. Writes to other runs were
// committed by their own commits before the record: the replay must not
// make them again. Kill window: the JSON-file store appends the COMPLETED
// record and dies before the state write (jsonKillStore).

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// The replay of a global-scope MEMORY_TAG does not tag the global owner
// again: a later replacement of the span's tags by another run stands, as
// in Python, which reuses the record and runs nothing again.
func TestMemoryTagReplayDoesNotUndoALaterEditOfAnotherOwner(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "note", Nodes: map[string]runtime.NodeFunc{
		"note": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, ResultKey: "r0",
				Payload: map[string]any{"note": "deploys are blue/green", "scope": "global"}}, "tag"), nil
		},
		"tag": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			r0 := run.Vars["r0"].(map[string]any)["results"].([]any)[0].(map[string]any)
			id := r0["meta"].(map[string]any)["span_id"].(string)
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryTag, ResultKey: "r1",
				Payload: map[string]any{"span_id": id, "scope": "global", "tags": map[string]any{"topic": "x"}}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	wfs := append([]*runtime.Workflow{wf}, memWorkflows()...)
	dir := t.TempDir()
	js, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	rt := memfxRuntime(t, &jsonKillStore{Store: js, at: completedOf(durable.EffectMemoryTag)}, arts, wfs...)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	rt2 := memfxRuntime(t, killTickAndReopen(t, rt, id, js, dir), arts, wfs...)

	global, err := rt2.GetState(ctx, runtime.GlobalMemoryOwnerID())
	if err != nil {
		t.Fatal(err)
	}
	spans := spansOf(global)
	if len(spans) != 1 {
		t.Fatalf("global owner spans %v, want the note's span", spans)
	}
	span := spans[0].(map[string]any)
	noteID := span["artifact_id"].(string)
	if tags, _ := span["tags"].(map[string]any); tags["topic"] != "x" {
		t.Fatalf("global span tags before the edit = %v, want the killed run's tag topic=x (its owner write was durable)", tags)
	}

	// Another run replaces the span's tags after the kill.
	b, err := rt2.Start(ctx, runtime.StartParams{WorkflowID: "mem", Vars: map[string]any{"steps": []any{
		step(durable.EffectMemoryTag, map[string]any{"span_id": noteID, "scope": "global", "merge": false,
			"tags": map[string]any{"topic": "y"}}),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := rt2.Tick(ctx, b, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	} else {
		mustComplete(t, run)
	}

	// The killed run is replayed.
	run, err := rt2.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustComplete(t, run)
	global, err = rt2.GetState(ctx, runtime.GlobalMemoryOwnerID())
	if err != nil {
		t.Fatal(err)
	}
	tags, _ := spansOf(global)[0].(map[string]any)["tags"].(map[string]any)
	if tags["topic"] != "y" {
		t.Errorf("global span tags after the replay = %v, want topic=y: the replay re-applied a tag write that "+
			"was already durable and undid the later edit (Python reuses the record and runs nothing again)", tags)
	}
}

// The replay of a MEMORY_REHYDRATE with target_run_id does not insert the
// span's messages into the target again (messages without
// metadata.message_id are not deduplicated and would appear twice).
func TestMemoryRehydrateReplayDoesNotInsertIntoAnotherRunTwice(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "rh", Nodes: map[string]runtime.NodeFunc{
		"rh": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryRehydrate, ResultKey: "r0",
				Payload: map[string]any{"span_ids": []any{run.Vars["span"]}, "target_run_id": run.Vars["target"],
					"placement": "end"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	wfs := append([]*runtime.Workflow{wf}, memWorkflows()...)
	dir := t.TempDir()
	js, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	meta, err := artifact.PutJSON(ctx, arts, map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "the archived question"},
	}}, artifact.PutParams{Tags: map[string]string{"kind": "conversation_span"}})
	if err != nil {
		t.Fatal(err)
	}
	rt := memfxRuntime(t, &jsonKillStore{Store: js, at: completedOf(durable.EffectMemoryRehydrate)}, arts, wfs...)
	// The target: a finished run with an empty conversation.
	target, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "mem", Vars: map[string]any{"steps": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := rt.Tick(ctx, target, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	} else {
		mustComplete(t, run)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w", Vars: map[string]any{"span": meta.ArtifactID, "target": target}})
	if err != nil {
		t.Fatal(err)
	}
	rt2 := memfxRuntime(t, killTickAndReopen(t, rt, id, js, dir), arts, wfs...)
	run, err := rt2.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustComplete(t, run)
	tr, err := rt2.GetState(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	cx, _ := tr.Vars["context"].(map[string]any)
	msgs, _ := cx["messages"].([]any)
	if len(msgs) != 1 {
		t.Errorf("target context.messages after the replay has %d messages, want 1 (the insertion was durable "+
			"before the kill; the replay inserted it again): %v", len(msgs), msgs)
	}
}
