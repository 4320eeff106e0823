package frozen

// Regression test from a review: the one-pass freeze had no depth limit
// (and recursed without end on a cycle); it now refuses what the encoder
// refuses.

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// TestNewStoredRunRefusesTooDeep: NewStoredRun promises
// "An r that cannot be encoded is an error naming the offending value's
// path", and NewStoredRecord mirrors StoredCopy of an encodable record.
// A value nested past the encoder's limit cannot be encoded
// (durable.MarshalRun fails with "nesting too deep"), yet the one-pass
// freeze (normalized/normalizedObject) has no depth limit and succeeds.
func TestNewStoredRunRefusesTooDeep(t *testing.T) {
	deep := any("leaf")
	for range 10050 {
		deep = []any{deep}
	}
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
		Vars: map[string]any{"deep": deep}}
	if _, err := durable.MarshalRun(r, pyjson.Line); err == nil {
		t.Fatal("precondition: the encoder accepts the run")
	}
	if _, err := NewStoredRun(r); err == nil {
		t.Error("NewStoredRun of a run the encoder refuses succeeded; want the encoder's error")
	}
	rec := &durable.StepRecord{RunID: "r1", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Result: deep}
	if _, err := durable.MarshalRecord(rec, pyjson.Line); err == nil {
		t.Fatal("precondition: the encoder accepts the record")
	}
	if _, err := NewStoredRecord(rec, 1); err == nil {
		t.Error("NewStoredRecord of a record the encoder refuses succeeded; want the encoder's error")
	}
}
