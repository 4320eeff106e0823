package durable_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// TestEnumsListAndClassifyEveryValue: the five run statuses are valid and
// exactly completed, failed and cancelled are terminal; the five wait
// reasons are valid; StepStatuses lists the five step statuses and
// EffectTypes the 18 effect types of the Python runtime (not resume).
func TestEnumsListAndClassifyEveryValue(t *testing.T) {
	terminal := map[durable.RunStatus]bool{durable.RunCompleted: true, durable.RunFailed: true, durable.RunCancelled: true}
	if got := durable.RunStatuses(); len(got) != 5 {
		t.Errorf("RunStatuses() = %v, want 5", got)
	}
	for _, s := range durable.RunStatuses() {
		if !s.Valid() || s.Terminal() != terminal[s] {
			t.Errorf("%s: Valid %v, Terminal %v; want valid, terminal %v", s, s.Valid(), s.Terminal(), terminal[s])
		}
	}
	if durable.RunStatus("paused").Valid() {
		t.Error(`RunStatus("paused") is valid`)
	}
	if got := durable.WaitReasons(); len(got) != 5 {
		t.Errorf("WaitReasons() = %v, want 5", got)
	}
	for _, r := range durable.WaitReasons() {
		if !r.Valid() {
			t.Errorf("wait reason %s is not valid", r)
		}
	}
	if want := []durable.StepStatus{"started", "completed", "waiting", "failed", "cancelled"}; !slices.Equal(durable.StepStatuses(), want) {
		t.Errorf("StepStatuses() = %v, want %v", durable.StepStatuses(), want)
	}
	types := durable.EffectTypes()
	if len(types) != 18 || !slices.Contains(types, durable.EffectStartSubworkflow) || slices.Contains(types, durable.EffectResume) {
		t.Errorf("EffectTypes() = %v, want the 18 node effect types", types)
	}
}

// TestCheckReadableRefusesAnUnknownWaitReason: a run waiting with a reason
// the decoders refuse is not readable, and the error lists the known
// reasons.
func TestCheckReadableRefusesAnUnknownWaitReason(t *testing.T) {
	r := &durable.RunState{RunID: "r1", Status: durable.RunWaiting, Waiting: &durable.WaitState{Reason: "bogus"}}
	err := r.CheckReadable()
	if err == nil || !strings.Contains(err.Error(), "event, until, user, job or subworkflow") {
		t.Errorf("CheckReadable() = %v, want an error listing the known reasons", err)
	}
	r.Waiting.Reason = durable.WaitJob
	if err := r.CheckReadable(); err != nil {
		t.Errorf("CheckReadable() of a job wait = %v, want nil", err)
	}
}

// TestCheckReadableRefusesARunWithoutIDOrKnownStatus: a store checks
// CheckReadable before writing, so a run the decoders would refuse (no
// run_id, an unknown status) is never written and lost. Would break:
// CheckReadable passing a run without an id.
func TestCheckReadableRefusesARunWithoutIDOrKnownStatus(t *testing.T) {
	if err := (&durable.RunState{Status: durable.RunRunning}).CheckReadable(); err == nil {
		t.Error("CheckReadable() of a run without an id = nil, want an error")
	}
	if err := (&durable.RunState{RunID: "r1", Status: "bogus"}).CheckReadable(); err == nil || !strings.Contains(err.Error(), "running, waiting, completed, failed or cancelled") {
		t.Errorf("CheckReadable() of an unknown status = %v, want an error listing the known statuses", err)
	}
	if err := (&durable.RunState{RunID: "r1", Status: durable.RunRunning}).CheckReadable(); err != nil {
		t.Errorf("CheckReadable() of a running run = %v, want nil", err)
	}
}

// TestRunCloneOwnsItsVars: a Clone's vars are a deep copy.
func TestRunCloneOwnsItsVars(t *testing.T) {
	r := &durable.RunState{RunID: "r1", Status: durable.RunRunning, Vars: map[string]any{"a": map[string]any{"b": "1"}}}
	c := r.Clone()
	c.Vars["a"].(map[string]any)["b"] = "2"
	c.Vars["new"] = true
	if r.Vars["a"].(map[string]any)["b"] != "1" || len(r.Vars) != 1 {
		t.Errorf("changing a clone's vars changed the run's: %v", r.Vars)
	}
}

// TestRecordCloneOwnsItsResult: a StepRecord Clone's result is a deep copy.
func TestRecordCloneOwnsItsResult(t *testing.T) {
	s := &durable.StepRecord{RunID: "r1", StepID: "s", Status: durable.StepCompleted, Result: map[string]any{"k": []any{"v"}}}
	c := s.Clone()
	c.Result.(map[string]any)["k"].([]any)[0] = "changed"
	if got := s.Result.(map[string]any)["k"].([]any)[0]; got != "v" {
		t.Errorf("changing a clone's result changed the record's: %v", got)
	}
}

// TestCommandSeqPastInt64IsRefused: a seq of 2^63 (a float past the int64
// range) is an error, not a wrapped-around number.
func TestCommandSeqPastInt64IsRefused(t *testing.T) {
	c, err := durable.CommandFromJSON(map[string]any{"command_id": "c1", "seq": float64(1 << 63)})
	if err == nil {
		t.Errorf("CommandFromJSON with seq 2^63 gave seq %d, want an error", c.Seq)
	}
}

// TestPrevHashEmptyNotNullOnlyWhileEmpty: a record read with prev_hash ""
// holds "" rather than null only while PrevHash is still "".
func TestPrevHashEmptyNotNullOnlyWhileEmpty(t *testing.T) {
	s, err := durable.UnmarshalRecord([]byte(`{"run_id": "r1", "step_id": "s", "node_id": "n", "status": "started", "prev_hash": ""}`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.PrevHashEmptyNotNull() {
		t.Fatal(`precondition: prev_hash "" read as null`)
	}
	s.PrevHash = "abc"
	if s.PrevHashEmptyNotNull() {
		t.Error(`PrevHashEmptyNotNull() is true with PrevHash "abc"`)
	}
}

// TestRecordAttemptFromGoValues: RecordFromJSON reads a Go int64 attempt
// as Python's int() does (negative and zero included), and a float64
// holding an integer is written back as the integer.
func TestRecordAttemptFromGoValues(t *testing.T) {
	for _, v := range []int64{-3, 0} {
		s, err := durable.RecordFromJSON(map[string]any{"run_id": "r1", "attempt": v})
		if err != nil || s.Attempt != int(v) {
			t.Errorf("attempt int64(%d): Attempt %v (err %v), want %d", v, s.Attempt, err, v)
		}
	}
	s, err := durable.RecordFromJSON(map[string]any{"run_id": "r1", "attempt": float64(2)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := durable.MarshalRecord(s, pyjson.Line)
	if err != nil || !strings.Contains(string(b), `"attempt": 2,`) {
		t.Errorf("attempt float64(2) written as %s (err %v), want the integer 2", b, err)
	}
}

// TestDerivedWritesEveryMember: a record made with Derived from one read
// without session_id, attempt and idempotency_key writes them all.
func TestDerivedWritesEveryMember(t *testing.T) {
	s, err := durable.UnmarshalRecord([]byte(`{"run_id": "r1", "step_id": "s", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "prev_hash": null}`))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Derived()
	b, err := durable.MarshalRecord(&d, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`"session_id": null`, `"attempt": 1`, `"idempotency_key": null`, `"record_hash": null`, `"signature": null`} {
		if !strings.Contains(string(b), m) {
			t.Errorf("Derived record written as %s, lacks %s", b, m)
		}
	}
}

// TestSetChoiceValuesReplacesChoicesReadAsNonList: SetChoiceValues(nil)
// sets null, and a list replaces the list given before it, whatever
// choices the wait was read with or later assigned.
func TestSetChoiceValuesReplacesChoicesReadAsNonList(t *testing.T) {
	w, err := durable.DecodeWaitState(map[string]any{"reason": "user", "choices": "yes/no"})
	if err != nil {
		t.Fatal(err)
	}
	w.SetChoiceValues(nil)
	if got := w.Map()["choices"]; got != nil {
		t.Errorf("choices after SetChoiceValues(nil) = %v, want null", got)
	}
	w.SetChoiceValues([]any{1.5, "a"})
	w.Choices = []string{"x", "y"} // same length, other strings
	got, _ := w.Map()["choices"].([]any)
	if len(got) != 2 || got[0] != "x" || got[1] != "y" {
		t.Errorf("choices after assigning Choices = %v, want [x y]", got)
	}
}

// TestCommandTSTextKeptAsGiven: SetTSText keeps the text for the wire
// (Python keeps ts as given) and parses a time into TS; a text that is no
// time still counts as a ts.
func TestCommandTSTextKeptAsGiven(t *testing.T) {
	var c durable.CommandRecord
	c.SetTSText("2030-01-01T00:00:00Z")
	if c.TSString() != "2030-01-01T00:00:00Z" || !c.TS.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("TSString %q, TS %v; want the text as given and its instant", c.TSString(), c.TS)
	}
	c.SetTSText("soon")
	if !c.HasTS() || !c.TS.IsZero() || c.TSValue() != "soon" {
		t.Errorf("HasTS %v, TS %v, TSValue %v; want a ts kept as text", c.HasTS(), c.TS, c.TSValue())
	}
}

// TestSnapshotCreatedAtTextOnlyWhileZero: the created_at text kept as read
// is reported only while CreatedAt is zero; once set, the time is written.
func TestSnapshotCreatedAtTextOnlyWhileZero(t *testing.T) {
	s, err := durable.SnapshotFromJSON(map[string]any{"snapshot_id": "s1", "run_id": "r1", "created_at": "yesterday"})
	if err != nil || s.CreatedAtText() != "yesterday" {
		t.Fatalf("precondition: CreatedAtText %q (err %v)", s.CreatedAtText(), err)
	}
	s.CreatedAt = durable.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	if got := s.CreatedAtText(); got != "" {
		t.Errorf("CreatedAtText() = %q with CreatedAt set, want \"\"", got)
	}
}

// TestRunStoredCopyDropsTextReplacedByATime: StoredCopy is the run as it
// reads back once written: a created_at read as text but since set to a
// time is written as the time, so the copy keeps no text either.
func TestRunStoredCopyDropsTextReplacedByATime(t *testing.T) {
	r, err := durable.UnmarshalRun([]byte(`{"run_id": "r1", "workflow_id": "wf", "status": "running", "current_node": "n", "vars": {}, "created_at": "yesterday", "updated_at": "later"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.CreatedAt = durable.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	r.UpdatedAt = r.CreatedAt
	c, err := r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	c.CreatedAt, c.UpdatedAt = durable.Time{}, durable.Time{}
	if c.CreatedAtValue() != nil || c.UpdatedAtValue() != nil {
		t.Errorf("stored copy still holds the text read: created_at %v, updated_at %v; want null once the time is cleared",
			c.CreatedAtValue(), c.UpdatedAtValue())
	}
}

// TestParseTimeRefusesOneDigitHourBeforeMinutes: a one-digit hour is refused, as
// Python's fromisoformat refuses it ("2024-01-01T1:00:00").
func TestParseTimeRefusesOneDigitHourBeforeMinutes(t *testing.T) {
	for _, s := range []string{"2024-01-01T1:00:00", "2024-01-01T1:00:00+01:00"} {
		if got, err := durable.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %s, want an error", s, got)
		}
	}
}

// TestParseTimeAddsUpOffsetParts: Python 3.11's fromisoformat reads an
// offset's minutes and seconds past 59 by adding the parts up, refusing
// only a total of a day or more: "+05:60" is +06:00, "-00:99" is -01:39
// (values from CPython 3.11.7).
func TestParseTimeAddsUpOffsetParts(t *testing.T) {
	for s, want := range map[string]time.Time{
		"2030-01-01T00:00:00+05:60":        time.Date(2029, 12, 31, 18, 0, 0, 0, time.UTC),
		"2030-01-01T00:00:00+05:30:60":     time.Date(2029, 12, 31, 18, 29, 0, 0, time.UTC),
		"2030-01-01T00:00:00+00:99":        time.Date(2029, 12, 31, 22, 21, 0, 0, time.UTC),
		"2030-01-01T00:00:00-00:99":        time.Date(2030, 1, 1, 1, 39, 0, 0, time.UTC),
		"2030-01-01T00:00:00+05:30:60.5":   time.Date(2029, 12, 31, 18, 28, 59, 500_000_000, time.UTC),
		"2030-01-01T00:00:00+2359":         time.Date(2029, 12, 31, 0, 1, 0, 0, time.UTC),
		"2030-01-01T00:00:00+22:99:99":     time.Date(2029, 12, 31, 0, 19, 21, 0, time.UTC),
		"2030-01-01T00:00:00+23:59:59.999": time.Date(2029, 12, 31, 0, 0, 0, 1_000_000, time.UTC),
	} {
		got, err := durable.ParseTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %s as Python 3.11 reads it", s, got, err, want.Format(time.RFC3339Nano))
		}
	}
	for _, s := range []string{"2030-01-01T00:00:00+23:60", "2030-01-01T00:00:00+23:59:60", "2030-01-01T00:00:00-24:00"} {
		if got, err := durable.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %s; want an error (an offset of a day or more)", s, got)
		}
	}
}
