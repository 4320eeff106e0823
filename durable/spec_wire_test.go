package durable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// specLine encodes v in the JSONL line style the stores write.
func specLine(t *testing.T, v any) string {
	t.Helper()
	b, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Spec §1.2 and §8.5: an effect is "always the three-key object"
// {type, payload, result_key}, payload defaulting to {} (never null) and
// result_key to null, here inside a record built in Go.
func TestSpecEffectIsAlwaysTheThreeKeyObject(t *testing.T) {
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepStarted, Attempt: 1,
		Effect: &durable.Effect{Type: durable.EffectWaitEvent}}
	b, err := durable.MarshalRecord(rec, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"effect": {"type": "wait_event", "payload": {}, "result_key": null}`; !strings.Contains(string(b), want) {
		t.Errorf("record written as %s; want the effect as %s", b, want)
	}
}

// Spec §1.7: a ledger record built in Go writes all sixteen keys in
// Python's order, optional ones as null (spec §0: "Optional fields are
// always present with null when empty").
func TestSpecStepRecordKeysInPythonOrder(t *testing.T) {
	at := durable.NewTime(time.Date(2026, 11, 29, 22, 46, 49, 642457000, time.UTC))
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "done", Status: durable.StepCompleted,
		Result: map[string]any{"completed": true, "output": map[string]any{}}, StartedAt: at, EndedAt: at, Attempt: 1}
	b, err := durable.MarshalRecord(rec, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run_id": "r1", "step_id": "s1", "node_id": "done", "status": "completed", "effect": null, ` +
		`"result": {"completed": true, "output": {}}, "error": null, ` +
		`"started_at": "2026-11-29T22:46:49.642457+00:00", "ended_at": "2026-11-29T22:46:49.642457+00:00", ` +
		`"actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, ` +
		`"prev_hash": null, "record_hash": null, "signature": null}`
	if string(b) != want {
		t.Errorf("record written as\n%s\nwant\n%s", b, want)
	}
}

// Spec §1.4 and §1.7: a wait is written as its nine keys in order, empty
// optional members as null; the form a waiting record's result holds
// ({"wait": <all nine WaitState fields, reason as string>}) has the same
// nine members.
func TestSpecWaitStateNineKeysInOrder(t *testing.T) {
	w := &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)),
		AllowFreeText: true}
	want := `{"reason": "until", "wait_key": null, "until": "2030-01-02T03:04:05+00:00", "resume_to_node": null, ` +
		`"result_key": null, "prompt": null, "choices": null, "allow_free_text": true, "details": null}`
	if got := specLine(t, w.JSONValue()); got != want {
		t.Errorf("wait written as\n%s\nwant\n%s", got, want)
	}
	// In a record's result the wait is a JSON object like any other (keys
	// sorted: docs/compatibility.md "object key order"): the nine members.
	m := w.Map()
	if len(m) != 9 || m["reason"] != "until" || m["allow_free_text"] != true || m["until"] != "2030-01-02T03:04:05+00:00" {
		t.Errorf("wait as a result member = %v; want the nine members, reason as a string", m)
	}
	for _, k := range []string{"wait_key", "resume_to_node", "result_key", "prompt", "choices", "details"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("wait member %s = %v (present %v); want null", k, v, ok)
		}
	}
}

// Spec §1.5 and §8.5: a run built in Go writes the thirteen keys in
// Python's order, "vars" as {} (never null) when it has none, and every
// optional member as null.
func TestSpecRunStateKeysInOrderWithNullsAndEmptyVars(t *testing.T) {
	at := durable.NewTime(time.Date(2026, 11, 29, 22, 46, 49, 388378000, time.UTC))
	run := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start",
		CreatedAt: at, UpdatedAt: at}
	b, err := durable.MarshalRun(run, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run_id": "r1", "workflow_id": "wf", "status": "running", "current_node": "start", "vars": {}, ` +
		`"waiting": null, "output": null, "error": null, "created_at": "2026-11-29T22:46:49.388378+00:00", ` +
		`"updated_at": "2026-11-29T22:46:49.388378+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`
	if string(b) != want {
		t.Errorf("run written as\n%s\nwant\n%s", b, want)
	}
}

// Spec §1.9: a command is written with its seven keys in Python's order:
// command_id, run_id, type, payload, ts, client_id, seq.
func TestSpecCommandRecordKeysInOrder(t *testing.T) {
	c := &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause", Payload: map[string]any{"reason": "x"},
		TS: durable.NewTime(time.Date(2026, 1, 1, 9, 0, 1, 1000, time.UTC)), ClientID: "web", Seq: 3}
	want := `{"command_id": "c1", "run_id": "r1", "type": "pause", "payload": {"reason": "x"}, ` +
		`"ts": "2026-01-01T09:00:01.000001+00:00", "client_id": "web", "seq": 3}`
	if got := specLine(t, c.JSONValue()); got != want {
		t.Errorf("command written as\n%s\nwant\n%s", got, want)
	}
}

// Spec §8.3: writers emit "non-ASCII characters raw in stored JSON" (a
// run's vars and a record's result alike), not as \u escapes.
func TestSpecStoredJSONWritesNonASCIIRaw(t *testing.T) {
	run := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "a",
		Vars: map[string]any{"text": "café ☃ 😀"}}
	b, err := durable.MarshalRun(run, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"text": "café ☃ 😀"`) {
		t.Errorf("run written as %s; want the text raw", b)
	}
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		Result: map[string]any{"t": "ünï"}}
	if b, err = durable.MarshalRecord(rec, pyjson.Line); err != nil || !strings.Contains(string(b), `"t": "ünï"`) {
		t.Errorf("record written as %s (%v); want the text raw", b, err)
	}
}

// Spec §1.1: "Enum values are lower-case strings" — every RunStatus,
// WaitReason, StepStatus and EffectType value is the spec's spelling.
func TestSpecEnumSpellings(t *testing.T) {
	join := func(vs []string) string { return strings.Join(vs, " ") }
	var got []string
	for _, s := range durable.RunStatuses() {
		got = append(got, string(s))
	}
	if want := "running waiting completed failed cancelled"; join(got) != want {
		t.Errorf("run statuses %q; want %q", join(got), want)
	}
	got = nil
	for _, r := range durable.WaitReasons() {
		got = append(got, string(r))
	}
	if want := "event until user job subworkflow"; join(got) != want {
		t.Errorf("wait reasons %q; want %q", join(got), want)
	}
	want := map[string]bool{"wait_event": true, "wait_until": true, "ask_user": true, "answer_user": true,
		"emit_event": true, "llm_call": true, "model_residency": true, "tool_calls": true, "memory_query": true,
		"memory_tag": true, "memory_compact": true, "memory_note": true, "memory_rehydrate": true,
		"memory_kg_assert": true, "memory_kg_query": true, "memory_kg_resolve": true, "vars_query": true,
		"start_subworkflow": true}
	for _, e := range durable.EffectTypes() {
		if !want[string(e)] {
			t.Errorf("effect type %q is not one of the spec's 18", e)
		}
		delete(want, string(e))
	}
	if len(want) != 0 {
		t.Errorf("effect types missing: %v", want)
	}
	if durable.EffectResume != "resume" {
		t.Errorf("pseudo effect type = %q; want resume", durable.EffectResume)
	}
}

// Spec §8.2: readers tolerate "status strings outside the enum in foreign
// ledgers" and unknown effect types (a Go decoder "must accept unknown
// effect.type strings in ledger records"), and write them back as read.
func TestSpecRecordWithForeignStatusAndEffectTypeReadsAndRoundTrips(t *testing.T) {
	in := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "interrupted", ` +
		`"effect": {"type": "diary_write", "payload": {"k": 1}, "result_key": null}, "result": null, "error": null, ` +
		`"started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, ` +
		`"attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`
	rec, err := durable.UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatalf("UnmarshalRecord of a foreign status and effect type: %v", err)
	}
	if rec.Status != "interrupted" || rec.Effect == nil || rec.Effect.Type != "diary_write" {
		t.Errorf("read status %q effect %+v; want them as written", rec.Status, rec.Effect)
	}
	if out, err := durable.MarshalRecord(rec, pyjson.Line); err != nil || string(out) != in {
		t.Errorf("written back as\n%s (%v)\nwant\n%s", out, err, in)
	}
}

// Spec §1.10: a snapshot's name defaults to "" (written as "", not null)
// and its tags to [] (never null).
func TestSpecSnapshotNameDefaultsToEmptyString(t *testing.T) {
	s := &durable.Snapshot{SnapshotID: "s1", RunID: "r1", RunState: map[string]any{}}
	got := specLine(t, s.JSONValue())
	if !strings.Contains(got, `"name": "", "description": null, "tags": [], `) {
		t.Errorf("snapshot written as %s; want name \"\", description null, tags []", got)
	}
}
