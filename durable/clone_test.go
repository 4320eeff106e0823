package durable_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Effect.Clone, WaitState.Clone and RunState.Clone promise deep copies:
// writing into the copy's payload, details or wait leaves the original as
// it was.
func TestClonesAreDeep(t *testing.T) {
	t.Parallel()
	e := &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "hi", "opts": map[string]any{"t": 1}}}
	ec := e.Clone()
	ec.Payload["prompt"] = "changed"
	ec.Payload["opts"].(map[string]any)["t"] = 2
	if e.Payload["prompt"] != "hi" || e.Payload["opts"].(map[string]any)["t"] != 1 {
		t.Errorf("Effect.Clone shares its payload: original now %v", e.Payload)
	}

	rec := &durable.StepRecord{RunID: "r", StepID: "s", Effect: e}
	rc := rec.Clone()
	rc.Effect.Payload["prompt"] = "changed"
	if e.Payload["prompt"] != "hi" {
		t.Errorf("StepRecord.Clone shares the effect payload: original now %v", e.Payload)
	}

	w := &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", Choices: []string{"a"}, Details: map[string]any{"d": "x"}}
	wc := w.Clone()
	wc.Details["d"] = "changed"
	wc.Choices[0] = "changed"
	if w.Details["d"] != "x" || w.Choices[0] != "a" {
		t.Errorf("WaitState.Clone shares details or choices: original now %+v", w)
	}

	run := &durable.RunState{RunID: "r", Status: durable.RunWaiting, Vars: map[string]any{}, Waiting: w}
	c := run.Clone()
	if c.Waiting == run.Waiting {
		t.Fatalf("RunState.Clone shares the wait")
	}
	c.Waiting.WaitKey = "other"
	c.Waiting.Details["d"] = "changed"
	if w.WaitKey != "k" || w.Details["d"] != "x" {
		t.Errorf("RunState.Clone shares the wait: original now %+v", w)
	}
}
