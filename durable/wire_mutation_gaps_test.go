package durable

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Tests added by a second round of mutation testing (area "durable"): each
// guards a promise (doc comment, spec, compatibility doc) that no test
// checked.

// outputRead keeps a non-object output Python stored "while Output stays
// nil": once the runtime sets Output, that is what every style writes, the
// Line fast path included.
func TestOutputSetAfterNonObjectReadIsWrittenInEveryStyle(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "workflow_id": "wf", "status": "completed", "current_node": "end", "vars": {}, "output": "done"}`
	run, err := UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := MarshalRun(run, pyjson.Line); !strings.Contains(string(b), `"output": "done"`) {
		t.Fatalf("the output read is not written back: %s", b)
	}
	run.Output = map[string]any{"x": json.Number("1")}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical, pyjson.Pretty} {
		b, err := MarshalRun(run, st)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(strings.Fields(string(b)), "")
		if !strings.Contains(got, `"output":{"x":1}`) || strings.Contains(got, `"done"`) {
			t.Errorf("style %+v: the output set is not what is written: %s", st, b)
		}
	}
	sameLine(t, "run", func(b []byte) ([]byte, error) { return appendRunLine(b, run) }, run.JSONValue())
}

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

// The wait's typed members are read as their types (spec §1.4: until a
// string or null, details an object or null): a value of another type is
// an error naming the member, not dropped, which would write the wait
// back without its deadline or details.
func TestWaitMembersOfAnotherTypeAreRefusedNotDropped(t *testing.T) {
	t.Parallel()
	for member, in := range map[string]string{
		"until":   `{"reason": "until", "until": 1767225600}`,
		"details": `{"reason": "user", "wait_key": "k", "details": ["not", "an", "object"]}`,
	} {
		m, err := pyjson.DecodeObject([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		w, err := DecodeWaitState(m)
		if err == nil || !strings.Contains(err.Error(), `"`+member+`"`) {
			t.Errorf("DecodeWaitState(%s) = %+v, %v; want an error naming %q", in, w, err, member)
		}
	}
}

// Spec §1.7: attempt defaults to 1, and the record decoders read it as
// Python's int() does. UnmarshalRecord and RecordFromJSON agree: an absent
// attempt is 1, an integral float literal its integer.
func TestRecordAttemptDefaultsToOneAndReadsFloatLiterals(t *testing.T) {
	t.Parallel()
	base := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "completed", "effect": null, "result": null`
	for in, want := range map[string]int{
		base + `}`:                  1,
		base + `, "attempt": null}`: 1,
		base + `, "attempt": 2.0}`:  2,
		base + `, "attempt": 3e0}`:  3,
		base + `, "attempt": 4}`:    4,
	} {
		rec, err := UnmarshalRecord([]byte(in))
		if err != nil {
			t.Fatalf("UnmarshalRecord(%s): %v", in, err)
		}
		if rec.Attempt != want {
			t.Errorf("UnmarshalRecord(%s).Attempt = %d; want %d", in, rec.Attempt, want)
		}
		m, err := pyjson.DecodeObject([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if rec, err = RecordFromJSON(m); err != nil || rec.Attempt != want {
			t.Errorf("RecordFromJSON(%s).Attempt = %d (%v); want %d", in, rec.Attempt, err, want)
		}
	}
}

// Empty optional strings of snapshots and commands are written as null
// (compatibility doc, "empty strings in nullable fields"), as Python's
// Optional[str] = None writes them.
func TestSnapshotAndCommandWriteEmptyOptionalStringsAsNull(t *testing.T) {
	t.Parallel()
	snap := &Snapshot{SnapshotID: "s1", RunID: "r1", Name: "n"}
	b, err := pyjson.Marshal(snap.JSONValue(), pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"step_id": null`, `"description": null`, `"tags": []`, `"created_at": null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("snapshot written as %s; want %s", b, want)
		}
	}
	cmd := &CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause", Seq: 1}
	b, err = pyjson.Marshal(cmd.JSONValue(), pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"client_id": null`, `"ts": null`, `"payload": {}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("command written as %s; want %s", b, want)
		}
	}
}

// A command line without seq reads as seq 0, as Python's
// int(obj.get("seq") or 0): the JSON file store keeps such a line aside
// (seq <= 0) instead of giving it a seq another command holds.
func TestCommandWithoutSeqReadsAsSeqZero(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"command_id": "c1", "run_id": "r1", "type": "pause", "payload": {}}`,
		`{"command_id": "c1", "run_id": "r1", "type": "pause", "payload": {}, "seq": null}`,
	} {
		m, err := pyjson.DecodeObject([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		c, err := CommandFromJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		if c.Seq != 0 {
			t.Errorf("CommandFromJSON(%s).Seq = %d; want 0", in, c.Seq)
		}
	}
}

// Members a newer writer added to an effect are written back by the Line
// fast path exactly as by the generic encoder: names that need escaping
// stay valid JSON, and their values keep their depth in the record (the
// nesting limit is the generic encoder's).
func TestLineEncodingOfEffectExtraMembers(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", ` +
		`"effect": {"type": "emit_event", "payload": {}, "result_key": null, "a\"b": 1, "new\nline": {"x": [1]}, "é": "ü"}}`
	rec, err := UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	sameLine(t, "effect extra names", func(b []byte) ([]byte, error) { return appendRecordLine(b, rec) }, rec.JSONValue(true))
	b, err := MarshalRecord(rec, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalRecord(b)
	if err != nil {
		t.Fatalf("the Line encoding of effect extra members does not decode: %v\n%s", err, b)
	}
	if got := back.Effect.Map(); got["a\"b"] == nil || got["new\nline"] == nil || got["é"] != "ü" {
		t.Errorf("effect extra members after a round trip: %#v", got)
	}

	for _, levels := range []int{pyjson.MaxDepth - 3, pyjson.MaxDepth - 2, pyjson.MaxDepth - 1} {
		var v any = "leaf"
		for range levels {
			v = []any{v}
		}
		deep := &StepRecord{RunID: "r", Effect: &Effect{Type: EffectEmitEvent, extra: map[string]any{"deep": v}}}
		_, lineErr := appendRecordLine(nil, deep)
		_, genericErr := genericLine(deep.JSONValue(true))
		if (lineErr == nil) != (genericErr == nil) {
			t.Errorf("%d levels in an effect extra member: Line fast path error %v, generic encoder's error %v",
				levels, lineErr != nil, genericErr != nil)
		}
	}
}

// The Line fast path gives the generic encoder's errors, paths included:
// a bad value in an effect's extra member is named under "effect." (it
// was not, before; Effect.extra only ever holds decoded JSON today, so no
// exported call reached it).
func TestLineEncodingEffectExtraErrorPathHasEffectPrefix(t *testing.T) {
	t.Parallel()
	rec := &StepRecord{RunID: "r", Effect: &Effect{Type: EffectEmitEvent, extra: map[string]any{"x": map[string]any{"f": func() {}}}}}
	sameLine(t, "effect extra error", func(b []byte) ([]byte, error) { return appendRecordLine(b, rec) }, rec.JSONValue(true))
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

// UnmarshalRun and UnmarshalRecord read one object: a line two writers
// concatenated is an error (its reader recovers both records), never the
// first record alone.
func TestUnmarshalRefusesConcatenatedObjects(t *testing.T) {
	t.Parallel()
	rec := `{"run_id": "r", "step_id": "s1", "node_id": "n", "status": "completed"}`
	if got, err := UnmarshalRecord([]byte(rec + rec)); err == nil {
		t.Errorf("UnmarshalRecord of two concatenated records = %+v; want an error", got)
	}
	run := `{"run_id": "r", "workflow_id": "wf", "status": "running", "current_node": "a", "vars": {}}`
	if got, err := UnmarshalRun([]byte(run + ` {"x": 1}`)); err == nil {
		t.Errorf("UnmarshalRun with trailing data = %+v; want an error", got)
	}
	if got, err := UnmarshalRunString(run + `x`); err == nil {
		t.Errorf("UnmarshalRunString with trailing data = %+v; want an error", got)
	}
}
