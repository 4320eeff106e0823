package durable_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Tests added by mutation testing of the durable package: each guards a
// promise (doc comment, spec, compatibility doc) that no test checked.

// RunState.Vars is "never nil once created" and checkDecoded's rule is
// "vars default to {}": a run stored without vars (or with null) decodes,
// through every entry point, to an empty, writable object.
func TestDecodedRunWithoutVarsHasEmptyVars(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"run_id": "r1", "workflow_id": "wf", "status": "running", "current_node": "a"}`,
		`{"run_id": "r1", "workflow_id": "wf", "status": "running", "current_node": "a", "vars": null}`,
	} {
		run, err := durable.UnmarshalRun([]byte(in))
		if err != nil {
			t.Fatalf("UnmarshalRun(%s): %v", in, err)
		}
		if run.Vars == nil || len(run.Vars) != 0 {
			t.Errorf("UnmarshalRun(%s).Vars = %#v; want an empty non-nil object", in, run.Vars)
		}
		run, err = durable.UnmarshalRunString(in)
		if err != nil || run.Vars == nil {
			t.Errorf("UnmarshalRunString(%s): vars %#v, err %v; want an empty non-nil object", in, run.Vars, err)
		}
		m, err := pyjson.DecodeObject([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		run, err = durable.RunFromJSON(m)
		if err != nil || run.Vars == nil {
			t.Errorf("RunFromJSON(%s): vars %#v, err %v; want an empty non-nil object", in, run.Vars, err)
		}
	}
}

// A caller that assigns Choices after SetChoiceValues replaces the list
// (rawChoices): a longer list must not be written, nor listed by
// ChoiceValues, as the old non-string values.
func TestChoicesAssignedAfterSetChoiceValuesReplaceTheList(t *testing.T) {
	t.Parallel()
	w := &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k"}
	w.SetChoiceValues([]any{json.Number("1"), "b"})
	if got := w.ChoiceValues(); len(got) != 2 || got[0] != json.Number("1") {
		t.Fatalf("ChoiceValues after SetChoiceValues = %#v", got)
	}
	w.Choices = append(w.Choices, "c")
	got := w.ChoiceValues()
	if len(got) != 3 || got[0] != "1" || got[1] != "b" || got[2] != "c" {
		t.Errorf("ChoiceValues after Choices grew = %#v; want [\"1\" \"b\" \"c\"]", got)
	}
	run := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunWaiting, Vars: map[string]any{}, Waiting: w}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		b, err := durable.MarshalRun(run, st)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"c"]`) {
			t.Errorf("style %+v: the assigned choices are not written: %s", st, b)
		}
	}
}

// An effect read with a payload that is not an object keeps it for a
// rewrite only "while Payload stays empty": a payload the runtime sets
// afterwards is what is written (and hashed).
func TestEffectPayloadSetAfterNonObjectReadIsWritten(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", "effect": {"type": "wait_event", "payload": null, "result_key": "evt"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`
	rec, err := durable.UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	rec.Effect.Payload = map[string]any{"event": "go"}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		b, err := durable.MarshalRecord(rec, st)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"event"`) || strings.Contains(string(b), `"payload": null`) || strings.Contains(string(b), `"payload":null`) {
			t.Errorf("style %+v: the new payload is not written: %s", st, b)
		}
	}
	if m := rec.Effect.Map(); m["payload"] == nil {
		t.Errorf("Effect.Map payload = nil; want the new payload")
	}
}

// Effect.Clone, WaitState.Clone and RunState.Clone promise deep copies:
// writing into the copy's payload, details or wait leaves the original as
// it was.
func TestClonesAreDeep(t *testing.T) {
	t.Parallel()
	e := &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "hi", "opts": map[string]any{"t": 1}}}
	ec := e.Clone()
	ec.Payload["prompt"] = "changed"
	ec.Payload["opts"].(map[string]any)["t"] = 2
	if e.Payload["prompt"] != "hi" || e.Payload["opts"].(map[string]any)["t"] != 1 {
		t.Errorf("Effect.Clone shares its payload: original now %v", e.Payload)
	}

	rec := &durable.StepRecord{RunID: "r", StepID: "s", Effect: e}
	rc := rec.Clone()
	rc.Effect.Payload["prompt"] = "changed"
	if e.Payload["prompt"] != "hi" {
		t.Errorf("StepRecord.Clone shares the effect payload: original now %v", e.Payload)
	}

	w := &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", Choices: []string{"a"}, Details: map[string]any{"d": "x"}}
	wc := w.Clone()
	wc.Details["d"] = "changed"
	wc.Choices[0] = "changed"
	if w.Details["d"] != "x" || w.Choices[0] != "a" {
		t.Errorf("WaitState.Clone shares details or choices: original now %+v", w)
	}

	run := &durable.RunState{RunID: "r", Status: durable.RunWaiting, Vars: map[string]any{}, Waiting: w}
	c := run.Clone()
	if c.Waiting == run.Waiting {
		t.Fatalf("RunState.Clone shares the wait")
	}
	c.Waiting.WaitKey = "other"
	c.Waiting.Details["d"] = "changed"
	if w.WaitKey != "k" || w.Details["d"] != "x" {
		t.Errorf("RunState.Clone shares the wait: original now %+v", w)
	}
}

// Python's Snapshot.from_dict indexes snapshot_id and run_id, so a file
// without them is refused (snapshot.go), not read as an id-less snapshot.
func TestSnapshotFromJSONRequiresIDs(t *testing.T) {
	t.Parallel()
	full := map[string]any{"snapshot_id": "s1", "run_id": "r1", "name": "n", "run_state": map[string]any{}}
	if _, err := durable.SnapshotFromJSON(full); err != nil {
		t.Fatalf("SnapshotFromJSON(full) = %v", err)
	}
	for _, k := range []string{"snapshot_id", "run_id"} {
		m := map[string]any{}
		for kk, v := range full {
			if kk != k {
				m[kk] = v
			}
		}
		if _, err := durable.SnapshotFromJSON(m); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("SnapshotFromJSON without %s = %v; want an error naming it", k, err)
		}
	}
}

// Spec §1.9: a command's payload defaults to {}; a stored command without
// command_id (its idempotency key) is refused.
func TestCommandFromJSONDefaultsPayloadAndRequiresID(t *testing.T) {
	t.Parallel()
	c, err := durable.CommandFromJSON(map[string]any{"command_id": "c1", "run_id": "r", "type": "pause", "seq": json.Number("3")})
	if err != nil {
		t.Fatal(err)
	}
	if c.Payload == nil || len(c.Payload) != 0 || c.Seq != 3 {
		t.Errorf("CommandFromJSON without payload = %+v; want payload {} and seq 3", c)
	}
	c, err = durable.CommandFromJSON(map[string]any{"command_id": "c1", "run_id": "r", "type": "pause", "payload": nil})
	if err != nil || c.Payload == nil {
		t.Errorf("CommandFromJSON with payload null = %+v, %v; want payload {}", c, err)
	}
	if _, err := durable.CommandFromJSON(map[string]any{"run_id": "r", "type": "pause"}); err == nil || !strings.Contains(err.Error(), "command_id") {
		t.Errorf("CommandFromJSON without command_id = %v; want an error naming it", err)
	}
}

// Each of the run's nullable strings read as "" is written back as "" on
// its own: the flag of one field must not decide another's.
func TestRunEachEmptyStringFieldKeptOnItsOwn(t *testing.T) {
	t.Parallel()
	base := map[string]string{"error": `"boom"`, "actor_id": `"a1"`, "session_id": `"s1"`, "parent_run_id": `"p1"`}
	for _, empty := range []string{"error", "actor_id", "session_id", "parent_run_id"} {
		var b strings.Builder
		b.WriteString(`{"run_id": "r", "workflow_id": "wf", "status": "running", "current_node": "a", "vars": {}, "waiting": null, "output": null`)
		for _, k := range []string{"error", "actor_id", "session_id", "parent_run_id"} {
			v := base[k]
			if k == empty {
				v = `""`
			} else if k != "error" {
				v = "null" // the others null: only the field read as "" is ""
			}
			b.WriteString(`, "` + k + `": ` + v)
		}
		b.WriteString(`}`)
		run, err := durable.UnmarshalRun([]byte(b.String()))
		if err != nil {
			t.Fatalf("%s: %v", b.String(), err)
		}
		for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical, pyjson.Pretty} {
			out, err := durable.MarshalRun(run, st)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.NewReplacer(" ", "", "\n", "").Replace(string(out))
			for _, k := range []string{"actor_id", "session_id", "parent_run_id"} {
				want := `"` + k + `":null`
				if k == empty {
					want = `"` + k + `":""`
				}
				if !strings.Contains(text, want) {
					t.Errorf("%s read as \"\", style %+v: want %s in %s", empty, st, want, out)
				}
			}
		}
	}
}

// An effect's members written by a newer peer are kept when the record is
// re-encoded or hashed (Effect.extra, like StepRecord.Extra).
func TestEffectUnknownMembersKeptOnRewrite(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", "effect": {"type": "llm_call", "payload": {"p": 1}, "result_key": "out", "priority": 5, "tags": ["x"]}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`
	rec, err := durable.UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := durable.MarshalRecord(rec, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("Line re-encoding\n got %s\nwant %s", out, in)
	}
	canon, err := durable.MarshalRecord(rec, pyjson.Canonical)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(canon), `"priority":5`) || !strings.Contains(string(canon), `"tags":["x"]`) {
		t.Errorf("canonical text (hashed) lost the effect's extra members: %s", canon)
	}
	if m := rec.Effect.Map(); m["priority"] == nil {
		t.Errorf("Effect.Map lost the extra member: %v", m)
	}
}

// TestParseTimeReadsEverySpellingPythonReads: spellings Python 3.11's
// datetime.fromisoformat reads (its C parser) read as the same instant
// (compatibility.md: a deadline in any such spelling is compared as an
// instant). Expected values are Python's, converted to UTC.
func TestParseTimeReadsEverySpellingPythonReads(t *testing.T) {
	t.Parallel()
	at := func(h, m, s, us int) time.Time { return time.Date(2030, 1, 1, h, m, s, us*1000, time.UTC) }
	for in, want := range map[string]time.Time{
		// A basic date then any single character, a digit included
		// (time.go:113 leaves a basic date followed by a digit as it is).
		"2030010101200":  at(12, 0, 0, 0),
		"20300101012:00": at(12, 0, 0, 0),
		// A fraction of a minute: Python reads HH:MM.fff.
		"2030-01-01T12:30.5":       at(12, 30, 0, 500000),
		"2030-01-01T12:30.5+00:00": at(12, 30, 0, 500000),
		// An offset with seconds after a time without seconds (no
		// HH or HH:MM layout carries a Z07:00:00 zone).
		"2030-01-01T12+05:30:15":    at(6, 29, 45, 0),
		"2030-01-01T12:30+05:30:15": at(6, 59, 45, 0),
		// A fraction of an hour, as Python reads HH.fff.
		"2030-01-01T12.5": at(12, 0, 0, 500000),
		// Week dates split where Python splits them: a digit after
		// YYYY-Www-D makes the hyphen the separator (Monday of week 1 of
		// 2030 is 2029-12-31); YYYYWwwD then a digit separator.
		"2030-W01-2012": time.Date(2029, 12, 31, 20, 12, 0, 0, time.UTC),
		"2030-W01-2T12": at(12, 0, 0, 0),
		"2030W012012":   at(12, 0, 0, 0),
		"2030W01T1230":  time.Date(2029, 12, 31, 12, 30, 0, 0, time.UTC),
	} {
		got, err := durable.ParseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; Python reads %s", in, got, err, durable.FormatTime(want))
		}
	}
}
