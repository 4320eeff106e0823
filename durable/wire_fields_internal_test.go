package durable

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

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
