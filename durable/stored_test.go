package durable

import (
	"math"
	"reflect"
	"strings"
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
		// Within the first microsecond of year 1: written clamped as
		// "0001-01-01T00:00:00+00:00", which reads back with that text kept.
		"first microsecond": {RunID: "r", Status: StepCompleted, StartedAt: Time{time.Date(1, 1, 1, 0, 0, 0, 500, time.UTC)}},
	}
	for name, s := range records {
		storedCopyMatchesRoundTrip(t, name, s.StoredCopy, s.roundTrip)
	}
}

// storedCopyMatchesRoundTrip checks that stored (a StoredCopy) equals
// roundTrip (the value written and read back) and returns it.
func storedCopyMatchesRoundTrip[T any](t *testing.T, name string, stored, roundTrip func() (T, error)) T {
	t.Helper()
	want, err := roundTrip()
	if err != nil {
		t.Fatalf("%s: round trip: %v", name, err)
	}
	got, err := stored()
	if err != nil {
		t.Fatalf("%s: StoredCopy: %v", name, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n StoredCopy = %#v\n round trip = %#v", name, got, want)
	}
	return got
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

// TestRunStoredCopyEqualsRoundTrip: a stored copy of a run is what a
// store gives back after encoding and decoding, member for member, on the
// fast path and on the re-encoding one (invalid UTF-8), Version kept.
func TestRunStoredCopyEqualsRoundTrip(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CET", 3600)
	ns := time.Date(2026, 11, 30, 3, 4, 5, 123456789, paris)
	runs := map[string]*RunState{
		"go types": {RunID: "r1", WorkflowID: "w", Status: RunRunning, CurrentNode: "n",
			Vars:      map[string]any{"i": 3, "f": 0.5, "s": []string{"a"}, "m": map[string]int{"k": 1}},
			CreatedAt: Time{ns}, UpdatedAt: Time{ns.Add(time.Nanosecond)}, Version: 7},
		"nil vars, empty output": {RunID: "r2", Status: RunCompleted, Output: map[string]any{}},
		"waiting": {RunID: "r3", Status: RunWaiting, Vars: map[string]any{},
			Waiting: &WaitState{Reason: WaitUser, WaitKey: "k", Until: Time{ns}, Choices: []string{},
				Details: map[string]any{"n": int64(2)}}, Output: map[string]any{"x": []int{1}}},
		"waiting, null details": {RunID: "r4", Status: RunWaiting, Waiting: &WaitState{Reason: WaitEvent,
			Choices: []string{"y"}}},
		"bad utf-8 field": {RunID: "r5", Status: RunFailed, Error: "bo\xffom", Vars: map[string]any{"v": 1}},
		"bad utf-8 wait":  {RunID: "r6", Status: RunWaiting, Waiting: &WaitState{Reason: WaitUser, Prompt: "\xff?"}},
		"bad utf-8 value": {RunID: "r7", Status: RunRunning, Vars: map[string]any{"v": "a\xffb", "k\xff": 1}},
	}
	for name, r := range runs {
		got := storedCopyMatchesRoundTrip(t, name, r.StoredCopy, r.roundTrip)
		if got.Version != r.Version {
			t.Errorf("%s: Version %d, want %d", name, got.Version, r.Version)
		}
	}
}

func TestRunStoredCopyIsDeepAndRefusesNonJSON(t *testing.T) {
	t.Parallel()
	r := &RunState{RunID: "r", Status: RunWaiting, Vars: map[string]any{"m": map[string]any{"a": "x"}},
		Waiting: &WaitState{Reason: WaitUser, Choices: []string{"y"}, Details: map[string]any{"d": []any{"z"}}}}
	c, err := r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	c.Vars["m"].(map[string]any)["a"] = "changed"
	c.Waiting.Choices[0] = "changed"
	c.Waiting.Details["d"].([]any)[0] = "changed"
	if r.Vars["m"].(map[string]any)["a"] != "x" || r.Waiting.Choices[0] != "y" || r.Waiting.Details["d"].([]any)[0] != "z" {
		t.Fatal("StoredCopy shares containers with the original")
	}
	bad := &RunState{RunID: "r", Vars: map[string]any{"outer": map[string]any{"nan": math.NaN()}}}
	if _, err := bad.StoredCopy(); err == nil || !strings.Contains(err.Error(), "outer") {
		t.Errorf("StoredCopy of a NaN var: error %v, want one naming its path", err)
	}
}

// Values a run keeps as read (an output, a resume_to_node or choices that
// are not what the fields hold) are shared by the stored copy only when
// they are plain scalars in the decoder's types; any other value takes the
// round trip, so the copy is what a store reads back: valid UTF-8 and
// json.Number, not the invalid bytes or Go ints RunFromJSON was given.
// Would break: StoredHead sharing a kept resume_to_node or choices whatever
// it holds, or plainRead taking any string as plain.
func TestRunStoredCopyOfValuesKeptAsReadEqualsRoundTrip(t *testing.T) {
	t.Parallel()
	runs := map[string]*RunState{
		"output not valid utf-8": {RunID: "r1", Status: RunCompleted, outputRead: "a\xffb"},
		"resume_to_node object": {RunID: "r2", Status: RunWaiting,
			Waiting: &WaitState{Reason: WaitUser, resumeToValue: map[string]any{"n": 1}}},
		"choices object": {RunID: "r3", Status: RunWaiting,
			Waiting: &WaitState{Reason: WaitUser, choicesOther: map[string]any{"n": 1}}},
	}
	for name, r := range runs {
		storedCopyMatchesRoundTrip(t, name, r.StoredCopy, r.roundTrip)
	}
}
