package durable

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// WaitState.Clone is a deep copy, and an empty choices list ([]) stays
// distinct from null (its own comment): a clone of an ask with no choices
// is not written as choices null.
func TestWaitCloneKeepsEmptyChoices(t *testing.T) {
	t.Parallel()
	w := &WaitState{Reason: WaitUser, WaitKey: "k", Choices: []string{}}
	c := w.Clone()
	if c.Choices == nil {
		t.Fatal("Clone turned an empty choices list into nil")
	}
	run := &RunState{RunID: "r", Status: RunWaiting, Vars: map[string]any{}, Waiting: c}
	if b, _ := MarshalRun(run, pyjson.Line); !strings.Contains(string(b), `"choices": []`) {
		t.Errorf("a cloned wait with no choices is written as %s; want \"choices\": []", b)
	}
	if b, _ := MarshalRun(run.Clone(), pyjson.Canonical); !strings.Contains(string(b), `"choices":[]`) {
		t.Errorf("a cloned run's wait with no choices is written as %s; want \"choices\":[]", b)
	}
}

// StepRecord.Clone is a deep copy: members a newer writer added (Extra)
// are not shared with the original.
func TestRecordCloneCopiesExtra(t *testing.T) {
	t.Parallel()
	rec := &StepRecord{RunID: "r", Extra: map[string]any{"k": map[string]any{"n": json.Number("1")}}}
	c := rec.Clone()
	c.Extra["added"] = true
	c.Extra["k"].(map[string]any)["n"] = json.Number("2")
	if _, ok := rec.Extra["added"]; ok || rec.Extra["k"].(map[string]any)["n"] != json.Number("1") {
		t.Errorf("changing a clone's Extra changed the original: %#v", rec.Extra)
	}
}
