package durable_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// nestedOnce returns a scalar inside n arrays.
func nestedOnce(n int) any {
	var v any = int64(1)
	for range n {
		v = []any{v}
	}
	return v
}

// StoredCopy normalised vars (and output, details) as documents of their
// own, from depth 0, while the run's JSON holds them one level down (two
// for waiting.details): a run whose vars nest exactly one level past the
// limit was refused by MarshalRun (so by every disk store) and copied by
// StoredCopy. Each value now counts from the level the run's JSON holds
// it at, as frozen.NewStoredRun does.
func TestRunStoredCopyRefusesVarsMarshalRunRefuses(t *testing.T) {
	// The scalar lands at depth MaxDepth+1 in the run's JSON.
	deep := nestedOnce(pyjson.MaxDepth - 1)
	runs := map[string]*durable.RunState{
		"vars":   {RunID: "r", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{"deep": deep}},
		"output": {RunID: "r", WorkflowID: "w", Status: durable.RunCompleted, Output: map[string]any{"deep": deep}},
		"details": {RunID: "r", WorkflowID: "w", Status: durable.RunWaiting,
			Waiting: &durable.WaitState{Reason: durable.WaitUser, Details: map[string]any{"deep": nestedOnce(pyjson.MaxDepth - 2)}}},
	}
	for name, r := range runs {
		if _, err := durable.MarshalRun(r, pyjson.Line); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
			t.Fatalf("%s: MarshalRun = %.80v; want nesting too deep", name, err)
		}
		if _, err := r.StoredCopy(); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
			t.Errorf("%s: StoredCopy = %.80v; want the encoder's nesting too deep, as MarshalRun", name, err)
		}
	}
}

// The same for a ledger record: its result is one level down in the
// record's JSON, its effect's payload two.
func TestRecordStoredCopyRefusesWhatMarshalRecordRefuses(t *testing.T) {
	recs := map[string]*durable.StepRecord{
		"result": {RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Result: nestedOnce(pyjson.MaxDepth)},
		"payload": {RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepWaiting,
			Effect: &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"deep": nestedOnce(pyjson.MaxDepth - 2)}}},
	}
	for name, rec := range recs {
		if _, err := durable.MarshalRecord(rec, pyjson.Line); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
			t.Fatalf("%s: MarshalRecord = %.80v; want nesting too deep", name, err)
		}
		if _, err := rec.StoredCopy(); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
			t.Errorf("%s: StoredCopy = %.80v; want nesting too deep, as MarshalRecord", name, err)
		}
	}
}
