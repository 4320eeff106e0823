package durable

import (
	"reflect"
	"testing"
	"time"
)

// TestStoredCopyEqualsRoundTrip: a stored copy of a record is what a store
// gives back after encoding and decoding, member for member.
func TestStoredCopyEqualsRoundTrip(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CET", 3600)
	ns := time.Date(2026, 11, 30, 3, 4, 5, 123456789, paris)
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
	r := &StepRecord{RunID: "r", Status: StepCompleted, Result: map[string]any{"m": map[string]any{"a": "x"}},
		Effect: &Effect{Type: EffectAskUser, Payload: map[string]any{"choices": []any{"y"}}}}
	c, err := r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	c.Result.(map[string]any)["m"].(map[string]any)["a"] = "changed"
	c.Effect.Payload["choices"].([]any)[0] = "changed"
	if r.Result.(map[string]any)["m"].(map[string]any)["a"] != "x" || r.Effect.Payload["choices"].([]any)[0] != "y" {
		t.Fatal("StoredCopy shares containers with the original")
	}
}
