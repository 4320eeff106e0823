package frozen

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// NewStoredRecord keeps exactly what NewRecord(StoredCopy) keeps, Go types
// included, for values on every path: plain JSON types, Go types the
// decoder never gives (ints, typed slices and maps, float64), nil and
// empty containers, invalid UTF-8 in values and keys, and records that
// StoredCopy re-encodes whole (an Extra key shadowing a member).
func TestNewStoredRecord_EqualsStoredCopy(t *testing.T) {
	t.Parallel()
	at := durable.NewTime(time.Date(2026, 11, 30, 7, 0, 0, 123456789, time.FixedZone("x", 3600)))
	values := map[string]map[string]any{
		"json":    map[string]any{"a": []any{json.Number("1"), "x", nil, true}, "b": map[string]any{}},
		"gotypes": map[string]any{"i": 3, "i64": int64(-4), "f": 2.5, "s": []string{"a"}, "m": map[string]int{"k": 1}},
		"nils":    map[string]any{"slice": []any(nil), "map": map[string]any(nil)},
		"badutf8": map[string]any{"v": "a\xffb"},
		"badkey":  map[string]any{"k\xff": 1},
	}
	var recs []*durable.StepRecord
	for name, v := range values {
		recs = append(recs,
			&durable.StepRecord{RunID: "r", StepID: name + "-result", Status: durable.StepCompleted, Result: v,
				StartedAt: at, EndedAt: at},
			&durable.StepRecord{RunID: "r", StepID: name + "-payload", Status: durable.StepStarted, Attempt: 2,
				Effect: &durable.Effect{Type: durable.EffectEmitEvent, Payload: v, ResultKey: "k"}},
			&durable.StepRecord{RunID: "r", StepID: name + "-extra", Status: durable.StepCompleted,
				Extra: v, Result: []any{v, 1.5}})
	}
	recs = append(recs,
		&durable.StepRecord{RunID: "r", StepID: "no-payload", Effect: &durable.Effect{Type: durable.EffectAskUser}},
		&durable.StepRecord{RunID: "r", StepID: "empty-extra", Extra: map[string]any{}},
		&durable.StepRecord{RunID: "r", StepID: "shadow", Extra: map[string]any{"status": "x", "y": 1}},
		&durable.StepRecord{RunID: "r\xff", StepID: "bad-id", Result: 7},
	)
	for _, r := range recs {
		before, err := durable.MarshalRecord(r, pyjson.Line)
		if err != nil {
			t.Fatalf("%s: %v", r.StepID, err)
		}
		c, err := r.StoredCopy()
		if err != nil {
			t.Fatalf("%s: StoredCopy: %v", r.StepID, err)
		}
		c.Seq = 9
		want := NewRecord(c).Thaw()
		f, err := NewStoredRecord(r, 9)
		if err != nil {
			t.Fatalf("%s: NewStoredRecord: %v", r.StepID, err)
		}
		if got := f.Thaw(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", r.StepID, got, want)
		}
		if after, _ := durable.MarshalRecord(r, pyjson.Line); string(after) != string(before) {
			t.Errorf("%s: NewStoredRecord changed the record", r.StepID)
		}
	}
	bad := &durable.StepRecord{RunID: "r", Result: map[string]any{"f": func() {}}}
	if _, err := NewStoredRecord(bad, 1); err == nil {
		t.Error("NewStoredRecord of a record holding a func: no error")
	}
}

// NewStoredRun keeps exactly what NewRun(StoredCopy) keeps, on the fast
// path and the re-encoding one, and refuses what the encoder refuses with
// the encoder's error, which names the value's path.
func TestNewStoredRun_EqualsStoredCopy(t *testing.T) {
	t.Parallel()
	at := durable.Time{Time: time.Date(2026, 11, 30, 7, 0, 0, 123456789, time.FixedZone("x", 3600))}
	runs := []*durable.RunState{
		{RunID: "go-types", Status: durable.RunRunning, CreatedAt: at, UpdatedAt: at, Version: 3,
			Vars: map[string]any{"i": 3, "f": 2.5, "s": []string{"a"}, "m": map[string]int{"k": 1}}},
		{RunID: "nil-vars", Status: durable.RunCompleted, Output: map[string]any{"n": 1}},
		{RunID: "waiting", Status: durable.RunWaiting, Vars: map[string]any{},
			Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: at, Choices: []string{},
				Details: map[string]any{"n": int64(2), "l": []any{1.5}}}},
		{RunID: "null-details", Status: durable.RunWaiting, Waiting: &durable.WaitState{Reason: durable.WaitUser}},
		{RunID: "bad-utf8-key", Status: durable.RunRunning, Vars: map[string]any{"k\xff": 1}},
		{RunID: "bad\xff-id", Status: durable.RunRunning, Vars: map[string]any{"v": 1}},
	}
	for _, r := range runs {
		c, err := r.StoredCopy()
		if err != nil {
			t.Fatalf("%s: StoredCopy: %v", r.RunID, err)
		}
		fc := NewRun(c)
		want := fc.Thaw()
		f, err := NewStoredRun(r)
		if err != nil {
			t.Fatalf("%s: NewStoredRun: %v", r.RunID, err)
		}
		if got := f.Thaw(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", r.RunID, got, want)
		}
	}
	bad := &durable.RunState{RunID: "r", Vars: map[string]any{"deep": map[string]any{"f": func() {}}}}
	if _, err := NewStoredRun(bad); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Errorf("NewStoredRun of a run holding a func: error %v, want one naming its path", err)
	}
}
