package frozen

import (
	"math"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// TestStoredRunOwnsResumeToNode: the frozen run a store keeps (the memory
// store, the JSON store's run cache) owns a non-string resume_to_node, so
// a caller's change after the commit does not make a hot read differ from
// the committed value.
func TestStoredRunOwnsResumeToNode(t *testing.T) {
	target := map[string]any{"node": "n2"}
	run, err := durable.RunFromJSON(map[string]any{
		"run_id": "rt", "workflow_id": "wf", "status": "waiting", "current_node": "ask",
		"vars": map[string]any{},
		"waiting": map[string]any{
			"reason": "user", "wait_key": "k", "resume_to_node": target, "allow_free_text": true,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewStoredRun(run)
	if err != nil {
		t.Fatal(err)
	}
	text := func() string {
		b, err := durable.MarshalRun(f.Thaw(), pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := text()
	target["node"] = "CALLER"
	if got := text(); got != want {
		t.Errorf("the frozen run shares the caller's resume_to_node:\n got  %s\n want %s", got, want)
	}
}

// TestStoredRunRefusesUnencodableResumeToNode: NewStoredRun names what
// cannot be encoded, in a resume_to_node too (a NaN inside a list).
func TestStoredRunRefusesUnencodableResumeToNode(t *testing.T) {
	run, err := durable.RunFromJSON(map[string]any{
		"run_id": "rt", "workflow_id": "wf", "status": "waiting", "current_node": "ask",
		"vars": map[string]any{},
		"waiting": map[string]any{
			"reason": "user", "wait_key": "k", "resume_to_node": []any{math.NaN()}, "allow_free_text": true,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, encErr := durable.MarshalRun(run, pyjson.Line); encErr == nil {
		t.Fatal("precondition: the encoder accepts the run")
	}
	if _, err := NewStoredRun(run); err == nil {
		t.Error("NewStoredRun accepted a run the encoder refuses (resume_to_node holds a NaN); want the encoder's error")
	}
}
