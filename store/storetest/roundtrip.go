package storetest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

var roundTripTests = []subtest{
	{"RunState", testRoundTripRun},
	{"NullVersusEmpty", testRoundTripNullVersusEmpty},
	{"ChoicesOtherThanStrings", testRoundTripChoiceValues},
	{"EmptyStringsNotNull", testRoundTripEmptyStrings},
	{"StepRecords", testRoundTripRecords},
	{"GoValues", testRoundTripGoValues},
}

// richVars exercises what a decoded Python run holds: number literals
// (1 versus 1.0, big integers, exponents), non-ASCII text, escapes, nested
// objects and arrays, nulls and empty containers.
func richVars() map[string]any {
	return map[string]any{
		"context": map[string]any{
			"task": "résumé — 日本語 😀",
			"messages": []any{
				map[string]any{"role": "user", "content": "line1\nline2\t\"quoted\" </script> \u2028"},
				map[string]any{"role": "assistant", "content": "ok", "metadata": map[string]any{}},
			},
		},
		"numbers": map[string]any{
			"int": json.Number("1"), "float": json.Number("1.0"), "neg": json.Number("-2.5"),
			"big": json.Number("12345678901234567890123"), "exp": json.Number("1e-05"),
			"zero": json.Number("0"),
		},
		"flags":       []any{true, false, nil},
		"empty_obj":   map[string]any{},
		"empty_list":  []any{},
		"null":        nil,
		"deep":        map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{json.Number("3"), "x"}}}},
		"_limits":     map[string]any{"max_iterations": json.Number("50"), "max_tokens": nil},
		"ünïcode_key": "v",
	}
}

func testRoundTripRun(t *testing.T, s store.Store) {
	r := newRun("run-ü-1", runOpts{Session: "sess_1", Actor: "actor_1", Parent: "parent-1",
		Vars: richVars(), Created: time.Second, Updated: 2 * time.Second})
	r.Status = durable.RunWaiting
	r.CurrentNode = "ask"
	r.Waiting = &durable.WaitState{
		Reason:        durable.WaitEvent,
		WaitKey:       "evt:session:sess_1:go",
		Until:         durable.NewTime(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)),
		ResumeToNode:  "done",
		ResultKey:     "answer",
		Prompt:        "Continue? ✓",
		Choices:       []string{"yes", "no", "peut-être"},
		AllowFreeText: false,
		Details:       map[string]any{"mode": "passthrough", "tool_calls": []any{map[string]any{"name": "x", "arguments": map[string]any{}}}},
	}
	r.Output = map[string]any{"answer": map[string]any{"text": "oui"}, "n": json.Number("2.50")}
	r.Error = "boom ✗"
	create(t, s, r)
	want := runJSON(t, r)
	got := get(t, s, r.RunID)
	if g := runJSON(t, got); g != want {
		t.Fatalf("run JSON round trip:\n got %s\nwant %s", g, want)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("run round trip is not deep-equal:\n got %#v\nwant %#v", got, r)
	}
}

func testRoundTripNullVersusEmpty(t *testing.T, s store.Store) {
	nulls := newRun("nulls", runOpts{Vars: map[string]any{}})
	nulls.Status = durable.RunWaiting
	nulls.Waiting = &durable.WaitState{Reason: durable.WaitUser, AllowFreeText: true}
	empties := newRun("empties", runOpts{Vars: map[string]any{}})
	empties.Status = durable.RunWaiting
	empties.Waiting = &durable.WaitState{Reason: durable.WaitUser, Choices: []string{}, Details: map[string]any{}}
	empties.Output = map[string]any{}
	create(t, s, nulls)
	create(t, s, empties)
	for _, r := range []*durable.RunState{nulls, empties} {
		got := get(t, s, r.RunID)
		if g, w := runJSON(t, got), runJSON(t, r); g != w {
			t.Errorf("%s round trip:\n got %s\nwant %s", r.RunID, g, w)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s round trip is not deep-equal:\n got %#v\nwant %#v", r.RunID, got, r)
		}
	}
	if got := get(t, s, "nulls"); got.Output != nil || got.Waiting.Choices != nil || got.Waiting.Details != nil {
		t.Errorf("null fields came back non-null: %#v", got)
	}
	if got := get(t, s, "empties"); got.Output == nil || got.Waiting.Choices == nil || got.Waiting.Details == nil {
		t.Errorf("empty fields came back null: %#v", got)
	}
}

// Python copies ASK_USER's choices as given, so a data dir can hold a wait
// whose choices are numbers or objects; a save must write them back as is.
func testRoundTripChoiceValues(t *testing.T, s store.Store) {
	r := newRun("mixed-choices", runOpts{Vars: map[string]any{}})
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:mixed-choices:ask", AllowFreeText: true}
	choices := []any{"yes", json.Number("2"), map[string]any{"label": "maybe", "id": json.Number("3")}, true, nil}
	r.Waiting.SetChoiceValues(choices)
	create(t, s, r)
	want := runJSON(t, r)
	if !strings.Contains(want, `"choices": ["yes", 2, {"id": 3, "label": "maybe"}, true, null]`) {
		t.Fatalf("choices not written as given: %s", want)
	}
	got := get(t, s, r.RunID)
	if g := runJSON(t, got); g != want {
		t.Fatalf("run JSON round trip:\n got %s\nwant %s", g, want)
	}
	if !reflect.DeepEqual(got.Waiting.ChoiceValues(), choices) {
		t.Errorf("ChoiceValues = %#v, want %#v", got.Waiting.ChoiceValues(), choices)
	}
	got.Waiting.ChoiceValues()[2].(map[string]any)["label"] = "MUTATED"
	if g := runJSON(t, get(t, s, r.RunID)); g != want {
		t.Errorf("a change to a read copy reached the store:\n got %s\nwant %s", g, want)
	}
}

// A run Python wrote with actor_id="" (and the like) keeps "" on a save.
func testRoundTripEmptyStrings(t *testing.T, s store.Store) {
	r := newRun("empty-strings", runOpts{Vars: map[string]any{}})
	b := strings.NewReplacer(`"error": null`, `"error": ""`, `"actor_id": null`, `"actor_id": ""`,
		`"session_id": null`, `"session_id": ""`, `"parent_run_id": null`, `"parent_run_id": ""`).Replace(runJSON(t, r))
	r, err := durable.UnmarshalRun([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, r)
	if got := runJSON(t, get(t, s, r.RunID)); got != b {
		t.Fatalf("run JSON round trip:\n got %s\nwant %s", got, b)
	}
}

func testRoundTripRecords(t *testing.T, s store.Store) {
	r := newRun("run-1", runOpts{})
	started := newRecord("run-1", "llm", durable.StepStarted)
	started.ActorID, started.SessionID = "actor_1", "sess_1"
	started.IdempotencyKey = "0979d939ffcc1a46fdb37e8b3491a8b5"
	started.RecordHash = "a43c56baaf03476933e390332b2e11740c096a98c0b075d91c90be49a311d414"
	started.Effect.Payload = map[string]any{"prompt": "héllo ☃", "params": map[string]any{
		"trace_metadata": map[string]any{"attempt": json.Number("1"), "temperature": json.Number("0.0")}}}
	done := started.Clone()
	done.Status = durable.StepCompleted
	done.Result = map[string]any{"content": "Hi! 👋", "tool_calls": nil,
		"usage":    map[string]any{"input_tokens": json.Number("12"), "total_tokens": json.Number("15")},
		"metadata": map[string]any{}}
	done.EndedAt = at(2 * time.Second)
	done.PrevHash = started.RecordHash
	done.RecordHash = "189ead057ad68581c8061830587269382a9609e7641ab1f1cc3d3138b90809f9"
	done.Extra = map[string]any{"future_field": map[string]any{"k": json.Number("1.5")}}
	failed := newRecord("run-1", "call", durable.StepFailed)
	failed.Effect = nil
	failed.Error = "provider timeout"
	failed.Attempt = 3
	failed.Result = []any{json.Number("1"), "two"}
	odd := newRecord("run-1", "x", durable.StepStatus("cancelled"))
	odd.Effect = &durable.Effect{Type: durable.EffectResume, Payload: map[string]any{}}
	odd.Result = "plain string"

	create(t, s, r, started, done)
	if err := s.LedgerAppend(t.Context(), "run-1", []*durable.StepRecord{failed, odd}); err != nil {
		t.Fatal(err)
	}
	want := []*durable.StepRecord{started, done, failed, odd}
	got := ledger(t, s, "run-1")
	if len(got) != len(want) {
		t.Fatalf("ledger has %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if g, w := recordJSON(t, got[i]), recordJSON(t, want[i]); g != w {
			t.Errorf("record %d:\n got %s\nwant %s", i+1, g, w)
		}
		if got[i].Seq != int64(i+1) {
			t.Errorf("record %d Seq = %d", i+1, got[i].Seq)
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d is not deep-equal:\n got %#v\nwant %#v", i+1, got[i], want[i])
		}
	}
}

// testRoundTripGoValues commits values in Go's own types (ints, floats,
// typed slices, times with nanoseconds in another zone), as node code
// writes them, and requires every read to return them as a read from disk
// does: exactly what decoding their encoding gives (json.Number, []any,
// UTC to the microsecond). A store that served its memory copy in the
// committed types would let a workflow see int before a restart and
// json.Number after it.
func testRoundTripGoValues(t *testing.T, s store.Store) {
	zone := time.FixedZone("UTC+2", 2*3600)
	r := newRun("run-go-values", runOpts{Session: "sess_go", Vars: map[string]any{
		"count": 3, "big": int64(1) << 40, "ratio": 0.25, "whole": 2.0,
		"names": []string{"a", "b"}, "mixed": []any{1, "x", 1.5, nil, true},
		"nested": map[string]any{"n": 7, "list": []int{1, 2}},
		"labels": map[string]string{"k": "v"},
	}})
	r.CreatedAt = durable.Time{Time: base.In(zone).Add(123456789 * time.Nanosecond)}
	r.UpdatedAt = durable.Time{Time: base.In(zone).Add(2*time.Second + 987654321*time.Nanosecond)}
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.Time{Time: base.In(zone).Add(time.Hour + 1)},
		ResumeToNode: "next", Details: map[string]any{"attempt": 2, "tags": []string{"t"}}}
	rec := newRecord(r.RunID, "call", durable.StepCompleted)
	rec.Effect.Payload = map[string]any{"max_tokens": 256, "temperature": 0.5, "stop": []string{"\n"}}
	rec.Result = map[string]any{"tokens": 12, "scores": []float64{0.5, 1}}
	rec.StartedAt = durable.Time{Time: base.In(zone).Add(5 * time.Nanosecond)}

	committed := r.Clone()
	committedRec := rec.Clone()
	create(t, s, r, rec)
	wantRun := decoded(t, committed)
	wantRun.Version = r.Version
	wantRec := decodedRecord(t, committedRec)
	wantRec.Seq = 1
	// What the store set on the record it stored: a hash-chaining store's
	// hashes are part of it.
	wantRec.PrevHash, wantRec.RecordHash, wantRec.Signature = rec.PrevHash, rec.RecordHash, rec.Signature

	check := func(when string) {
		t.Helper()
		if got := get(t, s, r.RunID); !reflect.DeepEqual(got, wantRun) {
			t.Errorf("%s: RunGet differs from a read of the encoding:\n got %#v\nwant %#v", when, got, wantRun)
		}
		list, err := s.RunList(t.Context(), &store.RunListParams{SessionID: "sess_go"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || !reflect.DeepEqual(list[0], wantRun) {
			t.Errorf("%s: RunList differs from a read of the encoding:\n got %#v\nwant %#v", when, list, wantRun)
		}
		if got := ledger(t, s, r.RunID); len(got) != 1 || !reflect.DeepEqual(got[0], wantRec) {
			t.Errorf("%s: LedgerList differs from a read of the encoding:\n got %#v\nwant %#v", when, got, wantRec)
		}
	}
	check("after create")

	// A commit of the run as read back keeps the same values.
	again := get(t, s, r.RunID)
	again.Vars["count"] = 4
	commit(t, s, again)
	wantRun.Vars["count"] = json.Number("4")
	wantRun.Version = again.Version
	check("after a second commit")
}

// decoded is r as a read of its encoding gives it back.
func decoded(t *testing.T, r *durable.RunState) *durable.RunState {
	t.Helper()
	d, err := durable.UnmarshalRun([]byte(runJSON(t, r)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// decodedRecord is rec as a read of its encoding gives it back.
func decodedRecord(t *testing.T, rec *durable.StepRecord) *durable.StepRecord {
	t.Helper()
	d, err := durable.UnmarshalRecord([]byte(recordJSON(t, rec)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}
