package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A Python runtime executed a session-scoped MEMORY_NOTE (its handler saved
// the session memory owner with the note's span, then the COMPLETED record
// was appended) and was killed before it saved the run. Our replay finds
// the completed record under Python's key and reuses its result; it then
// re-runs the handler (RerunOnReplay) to redo the note's changes to this
// run. The handler is only idempotent under *our* key: under the Python
// record it would derive a new note id, write a second artifact and append
// a second span to the session owner (the note twice, one copy named by no
// result): it takes the note id and creation time from the reused result.
const pyNoteRunID = "7d1f3c0e-1111-4a2b-9c3d-0123456789ab"

const pyNoteRun = `{
  "run_id": "7d1f3c0e-1111-4a2b-9c3d-0123456789ab",
  "workflow_id": "wf_pynote",
  "status": "running",
  "current_node": "a",
  "vars": {
    "_limits": {"max_iterations": 25, "current_iteration": 0, "max_tokens": 32768, "max_output_tokens": null,
      "max_input_tokens": null, "estimated_tokens_used": 0, "max_history_messages": -1,
      "warn_iterations_pct": 80, "warn_tokens_pct": 80},
    "context": {}, "scratchpad": {}, "_runtime": {}, "_temp": {}
  },
  "waiting": null,
  "output": null,
  "error": null,
  "created_at": "2026-12-01T06:57:24.386132+00:00",
  "updated_at": "2026-12-01T06:57:24.386154+00:00",
  "actor_id": null,
  "session_id": "s1",
  "parent_run_id": null
}`

const pyNoteOwner = `{
  "run_id": "session_memory_s1",
  "workflow_id": "__session_memory__",
  "status": "completed",
  "current_node": "done",
  "vars": {
    "context": {"task": "", "messages": []},
    "scratchpad": {},
    "_runtime": {"memory_spans": [{"kind": "memory_note", "artifact_id": "pynote0000000000000000000000000a",
      "created_at": "2026-12-01T06:57:24.390000+00:00", "from_timestamp": "2026-12-01T06:57:24.390000+00:00",
      "to_timestamp": "2026-12-01T06:57:24.390000+00:00", "message_count": 0, "note_preview": "remember this"}]},
    "_temp": {},
    "_limits": {}
  },
  "waiting": null,
  "output": {"messages": []},
  "error": null,
  "created_at": "2026-12-01T06:57:24.389000+00:00",
  "updated_at": "2026-12-01T06:57:24.391000+00:00",
  "actor_id": null,
  "session_id": "s1",
  "parent_run_id": null
}`

func pyNoteWorkflow() *runtime.Workflow {
	return &runtime.Workflow{ID: "wf_pynote", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote,
				Payload: map[string]any{"note": "remember this", "scope": "session"}, ResultKey: "r1"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

func TestReplayOfPythonMemoryNoteDoesNotStoreTheNoteTwice(t *testing.T) {
	key := runtime.PythonIdempotencyKey(pyNoteRunID, "a", &durable.Effect{Type: durable.EffectMemoryNote,
		Payload: map[string]any{"note": "remember this", "scope": "session"}, ResultKey: "r1"})
	const pyID = "pynote0000000000000000000000000a"
	eff := `{"type": "memory_note", "payload": {"note": "remember this", "scope": "session"}, "result_key": "r1"}`
	result := `{"mode": "executed", "results": [{"call_id": "memory", "name": "remember_note", "success": true, ` +
		`"output": "Stored memory_note span_id=` + pyID + ` tags={}", "error": null, ` +
		`"meta": {"span_id": "` + pyID + `", "created_at": "2026-12-01T06:57:24.390000+00:00", "note_preview": "remember this"}}]}`
	ledger := `{"run_id": "` + pyNoteRunID + `", "step_id": "s-1", "node_id": "a", "status": "started", "effect": ` + eff +
		`, "result": null, "error": null, "started_at": "2026-12-01T06:57:24.387000+00:00", "ended_at": null, "actor_id": null, "session_id": "s1", "attempt": 1, "idempotency_key": "` + key + `", "prev_hash": null, "record_hash": null, "signature": null}` + "\n" +
		`{"run_id": "` + pyNoteRunID + `", "step_id": "s-1", "node_id": "a", "status": "completed", "effect": ` + eff +
		`, "result": ` + result + `, "error": null, "started_at": "2026-12-01T06:57:24.387000+00:00", "ended_at": "2026-12-01T06:57:24.392000+00:00", "actor_id": null, "session_id": "s1", "attempt": 1, "idempotency_key": "` + key + `", "prev_hash": null, "record_hash": null, "signature": null}` + "\n"

	st := pythonDataDir(t, map[string]string{
		"run_" + pyNoteRunID + ".json":     pyNoteRun,
		"ledger_" + pyNoteRunID + ".jsonl": ledger,
		"run_session_memory_s1.json":       pyNoteOwner,
	})
	arts := artifact.NewMemory()
	if _, err := artifact.PutJSON(t.Context(), arts, map[string]any{
		"note": "remember this", "created_at": "2026-12-01T06:57:24.390000+00:00", "session_id": "s1",
		"sources": map[string]any{"run_id": pyNoteRunID, "span_ids": []any{}, "message_ids": []any{}},
	}, artifact.PutParams{RunID: "session_memory_s1", ArtifactID: pyID, Tags: map[string]string{"kind": "memory_note"}}); err != nil {
		t.Fatal(err)
	}
	reg, err := runtime.NewRegistry(pyNoteWorkflow())
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(t.Context(), pyNoteRunID, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s); want completed", run.Status, run.Error)
	}
	owner, err := rt.GetState(t.Context(), "session_memory_s1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range spansOf(owner) {
		m, _ := s.(map[string]any)
		id, _ := m["artifact_id"].(string)
		ids = append(ids, id)
	}
	if len(ids) != 1 || ids[0] != pyID {
		t.Fatalf("session memory spans after the replay: %v; want only [%s], the note the reused result names "+
			"(the replay stored the same note again under another id)", ids, pyID)
	}
}
