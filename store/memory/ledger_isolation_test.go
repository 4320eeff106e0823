package memory_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// isolationLedger returns records with nested objects, arrays, strings and
// numbers in their results, payloads and extras.
func isolationLedger(runID string) []*durable.StepRecord {
	now := durable.NewTime(time.Now())
	rec := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: runID, StepID: step, NodeID: "n1", Status: durable.StepCompleted,
			StartedAt: now, EndedAt: now, Attempt: 1,
			Effect: &durable.Effect{Type: durable.EffectAskUser, ResultKey: "answer",
				Payload: map[string]any{"prompt": "Continue?", "choices": []any{"yes", "no", json.Number("3")}}},
			Result: map[string]any{"list": []any{"a", []any{"b", json.Number("1.5")}, map[string]any{"k": "v"}},
				"text": "hello", "n": json.Number("12345"), "obj": map[string]any{"deep": []any{"x"}},
				"empty_list": []any{}, "empty_obj": map[string]any{}},
			Extra: map[string]any{"x_note": "kept", "x_list": []any{"e"}}}
	}
	return []*durable.StepRecord{rec("s1"), rec("s2"), rec("s3")}
}

// scribble changes every map, slice and value it can reach in v.
func scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scribble(e)
			x[k] = "changed"
		}
		x["added"] = "added"
	case []any:
		for i, e := range x {
			scribble(e)
			x[i] = "changed"
		}
		if len(x) > 0 {
			_ = append(x[:len(x)-1], "appended") // in place: within the slice
		}
		_ = append(x, "grown") // past its length: must not reach a neighbour
	}
}

func readLedger(t *testing.T, s *memory.Store, runID string) []*durable.StepRecord {
	t.Helper()
	recs, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestLedgerListIsolation: every record LedgerList returns is a deep copy
// of its own (records read together share nothing a caller can change),
// and what a caller does to it, or a later append, never shows in another
// read.
func TestLedgerListIsolation(t *testing.T) {
	t.Parallel()
	const id = "run-isolation"
	s := memory.New()
	if err := s.LedgerAppend(t.Context(), id, isolationLedger(id)); err != nil {
		t.Fatal(err)
	}
	want := readLedger(t, s, id)
	if len(want) != 3 {
		t.Fatalf("read %d records, want 3", len(want))
	}
	if got := want[0].Result.(map[string]any)["list"].([]any)[1].([]any)[1]; got != json.Number("1.5") {
		t.Fatalf("number read as %#v", got)
	}
	if got := want[0].Effect.Payload["prompt"]; got != "Continue?" {
		t.Fatalf("string read as %#v", got)
	}
	if l, ok := want[0].Result.(map[string]any)["empty_list"].([]any); !ok || l == nil {
		t.Fatalf("empty list read as %#v", want[0].Result.(map[string]any)["empty_list"])
	}
	if m, ok := want[0].Result.(map[string]any)["empty_obj"].(map[string]any); !ok || m == nil {
		t.Fatalf("empty object read as %#v", want[0].Result.(map[string]any)["empty_obj"])
	}

	got := readLedger(t, s, id)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("two reads differ")
	}
	// Change the first record only: the others, read with it, must not move.
	scribble(got[0].Result)
	scribble(map[string]any(got[0].Effect.Payload))
	scribble(map[string]any(got[0].Extra))
	got[0].Effect.ResultKey = "changed"
	got[0].StepID = "changed"
	for i := 1; i < len(got); i++ {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("record %d changed with record 1 of the same read", i+1)
		}
	}
	for _, r := range got[1:] {
		scribble(r.Result)
		scribble(map[string]any(r.Effect.Payload))
		scribble(map[string]any(r.Extra))
	}
	if again := readLedger(t, s, id); !reflect.DeepEqual(again, want) {
		t.Fatal("a caller's changes to a read show in the next read")
	}

	// A later append shows in a later read only.
	before := readLedger(t, s, id)
	if err := s.LedgerAppend(t.Context(), id, isolationLedger(id)[:1]); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, want) {
		t.Fatal("an append changed an earlier read")
	}
	if after := readLedger(t, s, id); len(after) != 4 || !reflect.DeepEqual(after[:3], want) {
		t.Fatalf("read %d records after the append", len(after))
	}

	// The same through LedgerFindCompleted's single record.
	recs := isolationLedger(id)[:1]
	recs[0].IdempotencyKey = "key-1"
	if err := s.LedgerAppend(t.Context(), id, recs); err != nil {
		t.Fatal(err)
	}
	one, err := s.LedgerFindCompleted(t.Context(), id, "key-1")
	if err != nil || one == nil {
		t.Fatal(one, err)
	}
	scribble(one.Result)
	scribble(map[string]any(one.Effect.Payload))
	if again, _ := s.LedgerFindCompleted(t.Context(), id, "key-1"); !reflect.DeepEqual(again.Result, want[0].Result) {
		t.Fatal("a caller's changes to a found record show in the next find")
	}
}
