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

// The one-pass freeze normalised a value outside the generic tree (a
// typed slice) as a document of its own, from depth 0: a typed slice at
// the nesting limit, whose elements are one level past it, was frozen
// although the encoder refuses the run. It now counts from the value's
// depth in the run's JSON.
func TestNewStoredRunRefusesTypedValuePastTheLimit(t *testing.T) {
	// vars at depth 1, vars.deep at 2: the []float64 at MaxDepth, its
	// element at MaxDepth+1.
	var deep any = []float64{1.5}
	for range pyjson.MaxDepth - 2 {
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
	if _, err := r.StoredCopy(); err == nil {
		t.Error("StoredCopy of a run the encoder refuses succeeded; want the encoder's error")
	}
}
