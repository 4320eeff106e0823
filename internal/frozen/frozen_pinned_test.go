package frozen

import (
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// TestNewStoredRunDetailsDepthLimitMatchesEncoder: a wait's details nested
// to the deepest the run encoder accepts freeze; one level deeper is an
// error (details sit two levels down in the run's JSON).
func TestNewStoredRunDetailsDepthLimitMatchesEncoder(t *testing.T) {
	run := func(n int) *durable.RunState {
		return &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
			Vars: map[string]any{}, Waiting: &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k",
				Details: map[string]any{"deep": nestArrays(n)}}}
	}
	n := deepestEncodable(t, func(n int) error { _, err := durable.MarshalRun(run(n), pyjson.Line); return err })
	if _, err := NewStoredRun(run(n)); err != nil {
		t.Errorf("NewStoredRun at the encoder's deepest details nesting (%d): %v, want success", n, err)
	}
	if _, err := NewStoredRun(run(n + 1)); err == nil {
		t.Errorf("NewStoredRun one level past the encoder's limit (%d) succeeded, want an error", n+1)
	}
}

// TestNewStoredRecordErrorNamesThePath: a record the encoder refuses is
// refused with the encoder's error, which names the offending value's
// path, as NewStoredRun's is.
func TestNewStoredRecordErrorNamesThePath(t *testing.T) {
	rec := &durable.StepRecord{RunID: "r1", StepID: "s", NodeID: "n", Status: durable.StepCompleted,
		Result: map[string]any{"bad": math.NaN()}}
	_, encErr := durable.MarshalRecord(rec, pyjson.Line)
	if encErr == nil {
		t.Fatal("precondition: the encoder accepts NaN")
	}
	_, err := NewStoredRecord(rec, 1)
	if err == nil || err.Error() != encErr.Error() || !strings.Contains(err.Error(), "bad") {
		t.Errorf("NewStoredRecord error = %v, want the encoder's %q", err, encErr)
	}
}

// TestFrozenRunChoicesAreIsolated: a frozen run owns its wait's choices:
// changing the run frozen, or a thawed copy, leaves the frozen value and
// later thaws unchanged.
func TestFrozenRunChoicesAreIsolated(t *testing.T) {
	r := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
		Vars: map[string]any{}, Waiting: &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k",
			Choices: []string{"yes", "no"}}}
	f := NewRun(r)
	r.Waiting.Choices[0] = "changed by the caller"
	th := f.Thaw()
	if got := th.Waiting.Choices[0]; got != "yes" {
		t.Fatalf("thawed choice = %q after the caller changed its run, want yes", got)
	}
	th.Waiting.Choices[1] = "changed by a reader"
	if got := f.Thaw().Waiting.Choices[1]; got != "no" {
		t.Errorf("thawed choice = %q after a reader changed its copy, want no", got)
	}
}

// TestFrozenRecordHeadHasNoEffect: Head returns the record's fields
// without its effect, so a filter cannot reach (or change) the caller's
// effect through it.
func TestFrozenRecordHeadHasNoEffect(t *testing.T) {
	r := &durable.StepRecord{RunID: "r1", StepID: "s", NodeID: "n", Status: durable.StepStarted,
		Effect: &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "p"}}}
	f := NewRecord(r)
	if f.Head().Effect != nil {
		t.Error("Head().Effect is set, want nil (the effect is frozen apart)")
	}
	if e := f.Thaw().Effect; e == nil || e.Payload["prompt"] != "p" {
		t.Errorf("thawed effect = %+v, want the effect frozen", e)
	}
}
