package frozen

// What this file checks: the one-pass freeze refuses what the encoder
// refuses, nesting past the depth limit and cycles included. The bug this
// guards against: it had no depth limit and recursed without end on a
// cycle.

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

// The one-pass freezes refuse exactly what the encoders refuse
// (errTooDeep: "the encoders refuse it, so no durable store could keep
// it"), no more and no less, at every depth a value sits in its document.

func nestArrays(n int) any {
	v := any("leaf")
	for range n {
		v = []any{v}
	}
	return v
}

// deepestEncodable returns the largest nesting n for which encode(n)
// succeeds, searched around pyjson.MaxDepth.
func deepestEncodable(t *testing.T, encode func(n int) error) int {
	t.Helper()
	for n := pyjson.MaxDepth - 10; n <= pyjson.MaxDepth+10; n++ {
		if encode(n) != nil {
			if n == pyjson.MaxDepth-10 {
				t.Fatal("the encoder refuses every nesting tried")
			}
			return n - 1
		}
	}
	t.Fatal("the encoder accepts every nesting tried")
	return 0
}

// TestNewStoredRunDepthLimitMatchesEncoder: vars nested to the deepest the
// run encoder accepts freeze; one level deeper is an error.
func TestNewStoredRunDepthLimitMatchesEncoder(t *testing.T) {
	run := func(n int) *durable.RunState {
		return &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
			Vars: map[string]any{"deep": nestArrays(n)}}
	}
	n := deepestEncodable(t, func(n int) error { _, err := durable.MarshalRun(run(n), pyjson.Line); return err })
	if _, err := NewStoredRun(run(n)); err != nil {
		t.Errorf("NewStoredRun at the encoder's deepest nesting (%d): %v, want success", n, err)
	}
	if _, err := NewStoredRun(run(n + 1)); err == nil {
		t.Errorf("NewStoredRun one level past the encoder's limit (%d) succeeded, want an error", n+1)
	}
}

// TestNewStoredRecordPayloadDepthLimitMatchesEncoder: an effect payload
// nested to the deepest the record encoder accepts freezes; one level
// deeper is an error.
func TestNewStoredRecordPayloadDepthLimitMatchesEncoder(t *testing.T) {
	rec := func(n int) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r1", StepID: "s", NodeID: "n", Status: durable.StepStarted,
			Effect: &durable.Effect{Type: "llm_call", Payload: map[string]any{"deep": nestArrays(n)}}}
	}
	n := deepestEncodable(t, func(n int) error { _, err := durable.MarshalRecord(rec(n), pyjson.Line); return err })
	if _, err := NewStoredRecord(rec(n), 1); err != nil {
		t.Errorf("NewStoredRecord at the encoder's deepest payload nesting (%d): %v, want success", n, err)
	}
	if _, err := NewStoredRecord(rec(n+1), 1); err == nil {
		t.Errorf("NewStoredRecord one level past the encoder's limit (%d) succeeded, want an error", n+1)
	}
}

// TestNewStoredRecordResultDepthLimitMatchesEncoder: the same for a
// record's result.
func TestNewStoredRecordResultDepthLimitMatchesEncoder(t *testing.T) {
	rec := func(n int) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r1", StepID: "s", NodeID: "n", Status: durable.StepCompleted,
			Result: map[string]any{"deep": nestArrays(n)}}
	}
	n := deepestEncodable(t, func(n int) error { _, err := durable.MarshalRecord(rec(n), pyjson.Line); return err })
	if _, err := NewStoredRecord(rec(n), 1); err != nil {
		t.Errorf("NewStoredRecord at the encoder's deepest result nesting (%d): %v, want success", n, err)
	}
	if _, err := NewStoredRecord(rec(n+1), 1); err == nil {
		t.Errorf("NewStoredRecord one level past the encoder's limit (%d) succeeded, want an error", n+1)
	}
}
