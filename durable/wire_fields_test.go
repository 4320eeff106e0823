package durable_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

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

// A seq stored as a float is cut toward zero, as Python's reader does
// with int(obj["seq"]) (2.7 is 2, -2.7 is -2), whether it comes as
// encoding/json's float64 or as the decoder's number literal. Would
// break: asInt rounding the float (2.7 read as 3).
func TestCommandFloatSeqIsCutTowardZero(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		seq  any
		want int64
	}{
		{2.7, 2}, {-2.7, -2}, {json.Number("2.7"), 2}, {json.Number("-2.7"), -2}, {json.Number("3.0"), 3},
	} {
		c, err := durable.CommandFromJSON(map[string]any{"command_id": "c1", "run_id": "r", "type": "pause", "seq": tc.seq})
		if err != nil || c.Seq != tc.want {
			t.Errorf("seq %v read as %v, %v; want %d (Python's int())", tc.seq, c, err, tc.want)
		}
	}
}

// A Go caller's map may hold seq as a Go integer (int64 or int), which
// CommandFromJSON reads as the number, as it reads json.Number. Would
// break: asInt refusing an int64 ("expected an integer").
func TestCommandFromJSONReadsGoIntegerSeq(t *testing.T) {
	t.Parallel()
	for _, seq := range []any{int64(7), 7} {
		c, err := durable.CommandFromJSON(map[string]any{"command_id": "c1", "run_id": "r", "type": "pause", "seq": seq})
		if err != nil || c.Seq != 7 {
			t.Errorf("CommandFromJSON with seq %T 7 = %+v, %v; want seq 7", seq, c, err)
		}
	}
}

// A seq too large for an integer is refused as out of range, not as a
// number that does not parse. Would break: asInt returning ParseInt's
// syntax error for a json.Number ParseFloat reads as ±Inf.
func TestCommandSeqOverflowingFloatIsOutOfRange(t *testing.T) {
	t.Parallel()
	_, err := durable.CommandFromJSON(map[string]any{"command_id": "c1", "seq": json.Number("1e400")})
	if err == nil || err.Error() != `field "seq": 1e400 is out of range for an integer` {
		t.Errorf("CommandFromJSON with seq 1e400: error %v, want it out of range", err)
	}
}

// A waiting member that is not an object is named once in the error, as
// the other members are; "waiting: " prefixes only the errors of the
// wait's own members. Would break: the prefix added to every error of
// DecodeWaitState ("waiting: field \"waiting\": …").
func TestRunWaitingNotAnObjectErrorNamesItOnce(t *testing.T) {
	t.Parallel()
	_, err := durable.UnmarshalRun([]byte(`{"run_id": "r", "status": "waiting", "waiting": "x"}`))
	if err == nil || err.Error() != `decoding run state: field "waiting": expected an object or null, got string` {
		t.Errorf("waiting \"x\": error %v", err)
	}
	_, err = durable.UnmarshalRun([]byte(`{"run_id": "r", "status": "waiting", "waiting": {"reason": 3}}`))
	if err == nil || err.Error() != `decoding run state: waiting: field "reason": expected a string, got number` {
		t.Errorf("waiting.reason 3: error %v", err)
	}
}

// RunFromJSON applies UnmarshalRun's rules to a decoded object: a member
// of the wrong type, a missing run_id or an unknown status is refused, and
// missing vars default to {}. Would break: RunFromJSON skipping a member's
// error or checkDecoded, building a run no store could read back.
func TestRunFromJSONAppliesTheDecoderRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    map[string]any
		want string
	}{
		{map[string]any{"run_id": "r", "status": "running", "current_node": 5}, `field "current_node"`},
		{map[string]any{"status": "running"}, `field "run_id" is missing`},
		{map[string]any{"run_id": "r", "status": "paused"}, `unknown run status "paused"`},
	} {
		if _, err := durable.RunFromJSON(tc.m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RunFromJSON(%v): error %v, want one saying %s", tc.m, err, tc.want)
		}
	}
	r, err := durable.RunFromJSON(map[string]any{"run_id": "r", "status": "running"})
	if err != nil || r.Vars == nil {
		t.Errorf("RunFromJSON without vars = %+v, %v; want vars {}", r, err)
	}
}

// A snapshot's run_state that is not an object is refused, naming it,
// rather than read as none and written back {}: the run state would be
// lost on the next save. Would break: SnapshotFromJSON ignoring
// getObject's error for run_state.
func TestSnapshotFromJSONRefusesARunStateThatIsNoObject(t *testing.T) {
	t.Parallel()
	_, err := durable.SnapshotFromJSON(map[string]any{"snapshot_id": "s", "run_id": "r", "run_state": "x"})
	if err == nil || !strings.Contains(err.Error(), `field "run_state"`) {
		t.Errorf("SnapshotFromJSON with run_state \"x\": error %v, want one naming run_state", err)
	}
}
