package durable

import (
	"reflect"
	"testing"
	"time"
)

// TestStoredCopyEqualsRoundTrip: a stored copy is what a store gives back
// after encoding and decoding, member for member.
func TestStoredCopyEqualsRoundTrip(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CET", 3600)
	ns := time.Date(2026, 11, 30, 3, 4, 5, 123456789, paris)
	runs := map[string]*RunState{
		"minimal": {RunID: "r", Status: RunRunning, Version: 3},
		"full": {
			RunID: "r1", WorkflowID: "wf", Status: RunWaiting, CurrentNode: "ask",
			Vars: map[string]any{
				"n": 3, "f": 2.0, "s": []string{"a"}, "m": map[string]any{"x": nil},
				"_limits": map[string]any{"max_steps": int64(100)}, "empty": map[string]any{},
			},
			Waiting: &WaitState{Reason: WaitUser, WaitKey: "user:r1:ask", Until: NewTime(ns),
				ResultKey: "answer", Prompt: "Continue?", Choices: []string{}, AllowFreeText: true,
				Details: map[string]any{"k": []any{1, "two"}}},
			CreatedAt: Time{ns}, UpdatedAt: Time{ns.Add(time.Second)},
			ActorID: "a", SessionID: "s", ParentRunID: "p", Version: 7,
		},
		"completed": {RunID: "r2", Status: RunCompleted, Vars: nil,
			Output: map[string]any{"ok": true, "nodes": 10}, Error: ""},
		"bad utf8": {RunID: "r3", Status: RunFailed, Error: "bad \xff byte", Vars: map[string]any{}},
		"nil choices": {RunID: "r4", Status: RunWaiting, Vars: map[string]any{},
			Waiting: &WaitState{Reason: WaitEvent, WaitKey: "evt:x", Choices: nil, Details: map[string]any{}}},
	}
	for name, r := range runs {
		want, err := r.roundTrip()
		if err != nil {
			t.Fatalf("%s: round trip: %v", name, err)
		}
		got, err := r.StoredCopy()
		if err != nil {
			t.Fatalf("%s: StoredCopy: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n StoredCopy = %#v\n round trip = %#v", name, got, want)
		}
	}

	records := map[string]*StepRecord{
		"completion": {RunID: "r", StepID: "s1", NodeID: "n9", Status: StepCompleted,
			Result: map[string]any{"ok": true, "n": 10}, StartedAt: Time{ns}, EndedAt: NewTime(ns), Seq: 4},
		"effect": {RunID: "r", StepID: "s2", NodeID: "ask", Status: StepWaiting, Attempt: 0,
			Effect: &Effect{Type: EffectAskUser, Payload: nil, ResultKey: "answer"},
			Result: map[string]any{"wait": map[string]any{"reason": "user"}}, IdempotencyKey: "k"},
		"extra": {RunID: "r", Status: StepStarted, Attempt: 2, Extra: map[string]any{"z": 1.5, "a": []string{"x"}},
			Effect: &Effect{Type: "custom", Payload: map[string]any{"p": int8(1)}}},
		"empty extra":     {RunID: "r", Status: StepFailed, Error: "boom", Extra: map[string]any{}},
		"shadowing extra": {RunID: "r", Status: StepCompleted, Extra: map[string]any{"status": "x"}},
		"scalar result":   {RunID: "r", Status: StepCompleted, Result: uint32(5)},
	}
	for name, s := range records {
		want, err := s.roundTrip()
		if err != nil {
			t.Fatalf("%s: round trip: %v", name, err)
		}
		got, err := s.StoredCopy()
		if err != nil {
			t.Fatalf("%s: StoredCopy: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n StoredCopy = %#v\n round trip = %#v", name, got, want)
		}
	}
}

func TestStoredCopyIsDeep(t *testing.T) {
	t.Parallel()
	r := &RunState{RunID: "r", Status: RunWaiting, Vars: map[string]any{"m": map[string]any{"a": "x"}},
		Waiting: &WaitState{Reason: WaitUser, Choices: []string{"y"}, Details: map[string]any{"d": "z"}}}
	c, err := r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	c.Vars["m"].(map[string]any)["a"] = "changed"
	c.Waiting.Choices[0] = "changed"
	c.Waiting.Details["d"] = "changed"
	if r.Vars["m"].(map[string]any)["a"] != "x" || r.Waiting.Choices[0] != "y" || r.Waiting.Details["d"] != "z" {
		t.Fatal("StoredCopy shares containers with the original")
	}
}
