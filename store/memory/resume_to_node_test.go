package memory_test

import (
	"math"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestResumeToNodeValueCopiedAtCommit: a wait's resume_to_node that is not
// a string (Python's wait handlers store it unchecked, and RunFromJSON
// keeps the caller's own value) is copied at commit like the other values
// kept as read (TestValuesBuiltFromCallerMapsAreCopiedAtCommit): the
// caller's later change to it does not reach what RunGet returns.
func TestResumeToNodeValueCopiedAtCommit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	target := map[string]any{"node": "n2"}
	run, err := durable.RunFromJSON(map[string]any{
		"run_id": "rt", "workflow_id": "wf", "status": "waiting", "current_node": "ask",
		"vars": map[string]any{},
		"waiting": map[string]any{
			"reason": "user", "wait_key": "k", "until": nil, "resume_to_node": target,
			"result_key": "answer", "prompt": "?", "choices": nil, "allow_free_text": true, "details": nil,
		},
		"created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	get := func() string {
		r, err := s.RunGet(ctx, "rt")
		if err != nil {
			t.Fatal(err)
		}
		return wireText(t, wireField(r.JSONValue(), "waiting"))
	}
	want := get()
	target["node"] = "CALLER"
	if got := get(); got != want {
		t.Errorf("the caller's change to the map it built the run from leaks into reads:\n got  %s\n want %s", got, want)
	}
}

// TestRefusesUnencodableResumeToNode: a resume_to_node no durable store
// could write (a NaN inside) is refused at commit with the encoder's
// error, as TestRefusesWhatNoDurableStoreCanWrite does for other values.
func TestRefusesUnencodableResumeToNode(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	run, err := durable.RunFromJSON(map[string]any{
		"run_id": "rn", "workflow_id": "wf", "status": "waiting", "current_node": "ask",
		"vars":    map[string]any{},
		"waiting": map[string]any{"reason": "user", "wait_key": "k", "resume_to_node": []any{math.NaN()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err == nil {
		r, _ := s.RunGet(ctx, "rn")
		_, encErr := durable.MarshalRun(r, pyjson.Line)
		t.Errorf("RunCommit accepted a run the encoder refuses; encoding it as read back: %v", encErr)
	}
}
