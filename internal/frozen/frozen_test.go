package frozen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// sampleValue holds every shape freezing must keep apart: nil and empty
// objects and arrays, nesting both ways, and scalars of several types.
func sampleValue() map[string]any {
	return map[string]any{
		"s": "x", "f": 1.5, "i": int64(7), "b": true, "null": nil,
		"nil_obj": map[string]any(nil), "empty_obj": map[string]any{},
		"nil_arr": []any(nil), "empty_arr": []any{},
		"nested": map[string]any{"a": []any{map[string]any{"deep": []any{1.0, "two", nil}}, []any{}}},
		"strs":   []string{"shared", "as Clone shares it"},
	}
}

func TestFreezeThawRoundTrip(t *testing.T) {
	v := sampleValue()
	f := FreezeObject(v)
	if got := f.Thaw(); !reflect.DeepEqual(got, v) {
		t.Fatalf("thaw(freeze(v)) = %#v\nwant %#v", got, v)
	}
	if f := FreezeObject(nil); f.Thaw() != nil {
		t.Errorf("a nil object must stay nil")
	}
	if got := Freeze([]any{}).Thaw(); got == nil || len(got.([]any)) != 0 {
		t.Errorf("an empty array thawed to %#v, want []any{}", got)
	}
}

func TestFreezeIsolates(t *testing.T) {
	v := sampleValue()
	f := FreezeObject(v)
	// The caller changes what it handed over…
	v["s"] = "changed"
	v["nested"].(map[string]any)["a"].([]any)[0].(map[string]any)["deep"].([]any)[0] = "changed"
	v["empty_obj"].(map[string]any)["new"] = 1
	// …and a reader changes what it got.
	got := f.Thaw()
	got["nested"].(map[string]any)["a"] = "changed"

	again := f.Thaw()
	if !reflect.DeepEqual(again, sampleValue()) {
		t.Errorf("the frozen copy changed: %#v", again)
	}
}

func TestObjectGet(t *testing.T) {
	f := FreezeObject(map[string]any{"a": map[string]any{"b": 1.0}, "c": 2.0})
	v, ok := f.Get("a")
	if !ok || !reflect.DeepEqual(v, map[string]any{"b": 1.0}) {
		t.Errorf("Get(a) = %#v, %v", v, ok)
	}
	v.(map[string]any)["b"] = "changed"
	if v, _ := f.Get("a"); !reflect.DeepEqual(v, map[string]any{"b": 1.0}) {
		t.Errorf("Get returned the frozen value itself: %#v", v)
	}
	if _, ok := f.Get("missing"); ok {
		t.Errorf("get(missing) found a value")
	}
}

func TestRunRoundTrip(t *testing.T) {
	now := durable.NewTime(time.Date(2026, 11, 30, 7, 0, 0, 123456000, time.UTC))
	runs := []*durable.RunState{
		{
			RunID: "r1", WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "ask",
			Vars: sampleValue(),
			Waiting: &durable.WaitState{
				Reason: durable.WaitUser, WaitKey: "user:r1:ask", Until: now, ResumeToNode: "done",
				ResultKey: "answer", Prompt: "Continue?", Choices: []string{}, AllowFreeText: true,
				Details: map[string]any{"k": []any{"v"}},
			},
			CreatedAt: now, UpdatedAt: now, ActorID: "a", SessionID: "s", ParentRunID: "p", Version: 3,
		},
		{
			RunID: "r2", WorkflowID: "wf", Status: durable.RunCompleted, Vars: map[string]any{},
			Output: map[string]any{"ok": true}, Error: "", CreatedAt: now, UpdatedAt: now,
		},
		{RunID: "r3", Status: durable.RunFailed, Vars: map[string]any{}, Error: "boom",
			Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: now}},
	}
	for _, r := range runs {
		f := NewRun(r)
		if got := f.Thaw(); !reflect.DeepEqual(got, r) {
			t.Errorf("run %s: thawed %#v\nwant %#v", r.RunID, got, r)
		}
		if r.Waiting != nil && r.Waiting.Choices != nil {
			r.Waiting.Choices = append(r.Waiting.Choices[:0], "changed")
			if got := f.Thaw(); len(got.Waiting.Choices) != 0 {
				t.Errorf("run %s: choices changed with the caller's: %v", r.RunID, got.Waiting.Choices)
			}
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	now := durable.NewTime(time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC))
	recs := []*durable.StepRecord{
		{RunID: "r", StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
			Result:    map[string]any{"completed": true, "output": map[string]any{"ok": true}},
			StartedAt: now, EndedAt: now, Attempt: 1, Extra: map[string]any{}, Seq: 1},
		{RunID: "r", StepID: "s2", NodeID: "n", Status: durable.StepCompleted,
			Effect: &durable.Effect{Type: durable.EffectEmitEvent, Payload: sampleValue(), ResultKey: "k"},
			Result: []any{"a", 1.0}, IdempotencyKey: "key", PrevHash: "p", RecordHash: "h", Seq: 2},
		{RunID: "r", StepID: "s3", Status: durable.StepFailed, Error: "e", Result: "text",
			Effect: &durable.Effect{Type: durable.EffectAskUser}},
	}
	for _, r := range recs {
		if got := NewRecord(r).Thaw(); !reflect.DeepEqual(got, r) {
			t.Errorf("record %s: thawed %#v\nwant %#v", r.StepID, got, r)
		}
	}
}

// FuzzFreezeThaw: for any JSON document, thawing its frozen copy gives a
// value deep-equal to it (nil and empty kept apart), as a clone does, the
// frozen copy does not change when the thawed one is changed, and the
// normalizing freeze gives the same document back.
func FuzzFreezeThaw(f *testing.F) {
	for _, seed := range []string{`{}`, `[]`, `null`, `{"a": [1, {"b": null}, [], {}], "c": "x"}`,
		`[[[[{"deep": [true, false, 1.5e300]}]]]]`, `"text"`, `{"": {"": {"": []}}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := pyjson.Decode(data)
		if err != nil {
			t.Skip()
		}
		frozen := Freeze(v)
		got := frozen.Thaw()
		if !reflect.DeepEqual(got, v) || !reflect.DeepEqual(got, pyjson.Clone(v)) {
			t.Fatalf("Thaw(Freeze(v)) = %#v\nwant %#v", got, v)
		}
		scramble(got)
		if again := frozen.Thaw(); !reflect.DeepEqual(again, v) {
			t.Fatalf("changing a thawed copy changed the frozen one: %#v", again)
		}
		// A decoded document is already normalized: the normalizing
		// freeze keeps it as it is.
		n, err := FreezeNormalized(v)
		if err != nil {
			t.Fatalf("FreezeNormalized: %v", err)
		}
		if got := n.Thaw(); !reflect.DeepEqual(got, v) {
			t.Fatalf("Thaw(FreezeNormalized(v)) = %#v\nwant %#v", got, v)
		}
	})
}

// scramble overwrites every member and element of v in place.
func scramble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scramble(e)
			x[k] = "scrambled"
		}
		x["added"] = true
	case []any:
		for i, e := range x {
			scramble(e)
			x[i] = "scrambled"
		}
	}
}

// Get finds every key whatever its place in the packing, so it skips over
// every shape of value that can precede one (each key but the last packed
// is skipped by some lookup).
func TestObjectGetSkipsEveryShape(t *testing.T) {
	v := sampleValue()
	f := FreezeObject(v)
	for k, want := range v {
		got, ok := f.Get(k)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Get(%q) = %#v, %v; want %#v", k, got, ok, want)
		}
	}
	if _, ok := (Object{}).Get("s"); ok {
		t.Error("Get on a nil object found a value")
	}
}

// A JSON document freezes into one allocation that keeps nothing aside,
// which is what keeps a store's frozen runs out of the collector's scan.
func TestFreezeOfJSONIsOneAllocation(t *testing.T) {
	v, err := pyjson.Decode([]byte(`{"a": [1, {"b": null}, [], {}], "c": "x", "d": {"e": true, "f": 2.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if f := FreezeObject(m); len(f.v.other) != 0 {
		t.Fatalf("decoded JSON kept %d values aside", len(f.v.other))
	}
	if raceEnabled {
		t.Skip("allocation counts need the packer pool, which the race detector thins out")
	}
	if n := testing.AllocsPerRun(100, func() { FreezeObject(m) }); n != 1 {
		t.Errorf("FreezeObject allocated %v times, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := FreezeNormalizedObject(m); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("FreezeNormalizedObject allocated %v times, want 1", n)
	}
}

// Lengths and counts past one varint byte (128) and two (16,384), and a
// packing larger than the pooled buffers keep, round-trip and are found
// by Get.
func TestFreezeLargeValues(t *testing.T) {
	members := map[string]any{}
	for i := range 300 {
		members[strings.Repeat("k", i+1)] = strings.Repeat("v", 200+i)
	}
	long := make([]any, 200)
	for i := range long {
		long[i] = json.Number(strings.Repeat("9", i+1))
	}
	v := map[string]any{
		"members": members,
		"long":    long,
		"huge":    strings.Repeat("h", 70000),
	}
	for _, f := range []Object{FreezeObject(v), mustNormalized(t, v)} {
		if got := f.Thaw(); !reflect.DeepEqual(got, v) {
			t.Fatal("a large value did not round-trip")
		}
		if got, ok := f.Get("huge"); !ok || got != v["huge"] {
			t.Errorf("Get(huge) = %d bytes, %v", len(fmt.Sprint(got)), ok)
		}
	}
	// The pool still hands out a working packer after the large one.
	if got := FreezeObject(map[string]any{"a": "b"}).Thaw(); !reflect.DeepEqual(got, map[string]any{"a": "b"}) {
		t.Errorf("small value after a large one: %#v", got)
	}
}

func mustNormalized(t *testing.T, v map[string]any) Object {
	t.Helper()
	f, err := FreezeNormalizedObject(v)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
