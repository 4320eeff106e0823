package jsonfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// wireOutput returns the "output" member of the run's wire object.
func wireOutput(r *durable.RunState) any {
	for _, kv := range r.JSONValue() {
		if kv.Key == "output" {
			return kv.Value
		}
	}
	return nil
}

// TestNonObjectOutputIsPrivate: Python stores a node's
// complete_output as given, so a run file may hold a list as its output;
// RunState keeps it aside (outputRead) and JSONValue returns it. RunGet
// promises a private copy the caller may mutate, but the run cache's
// frozen copy (frozen.NewRun copies the head, outputRead included) keeps
// the very list the first reader got: a reader that changes the list in
// its run's wire object changes what every later RunGet returns.
func TestNonObjectOutputIsPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const doc = `{"run_id": "py1", "workflow_id": "wf", "status": "completed", "current_node": "end",
 "vars": {}, "waiting": null, "output": ["first", {"k": "v"}], "error": null,
 "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00",
 "actor_id": null, "session_id": null, "parent_run_id": null}`
	if err := os.WriteFile(filepath.Join(dir, "run_py1.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	first, err := s.RunGet(ctx, "py1")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := pyjson.Marshal(wireOutput(first), pyjson.Line)
	list, ok := wireOutput(first).([]any)
	if !ok {
		t.Fatalf("output = %#v, want the list", wireOutput(first))
	}
	list[0] = "MUTATED"
	list[1].(map[string]any)["k"] = "MUTATED"
	second, err := s.RunGet(ctx, "py1")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := pyjson.Marshal(wireOutput(second), pyjson.Line)
	if string(got) != string(want) {
		t.Fatalf("a reader's change to its own run changed the next read's output:\n got %s\nwant %s", got, want)
	}
}
