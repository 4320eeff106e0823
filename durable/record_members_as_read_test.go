package durable_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// checkHashedAndWrittenAsRead checks that line, read both ways, hashes as
// want (Python's compute_record_hash text: json.dumps(clean,
// sort_keys=True, separators=(",", ":"), ensure_ascii=False)) and is
// written back unchanged, also from its StoredCopy.
func checkHashedAndWrittenAsRead(t *testing.T, line, want string) {
	t.Helper()
	for how, rec := range decodeBothWays(t, line) {
		cp, err := rec.StoredCopy()
		if err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*durable.StepRecord{how: rec, how + " StoredCopy": cp} {
			got, err := pyjson.Marshal(r.JSONValue(false), pyjson.Canonical)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("%s: hashed text:\n got %s\nwant %s (Python's)", name, got, want)
			}
			out, err := durable.MarshalRecord(r, pyjson.Line)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != line {
				t.Errorf("%s: rewrite:\n got %s\nwant %s", name, out, line)
			}
		}
	}
}

// Python's ledger_chain.compute_record_hash hashes a stored record as
// json.loads gives it, so an effect read without result_key (another
// writer's resume record) or payload is hashed and written without it,
// as the record's own absent members are; filled in, a valid Python chain
// would be reported tampered and the line rewritten with members it never
// had.
func TestRecordEffectMissingMembersHashedAndWrittenAsRead(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "completed", "effect": {"type": "resume", "payload": {"wait_key": "k"}}, "result": {"resumed": true}, "error": null, "started_at": "2026-11-29T22:46:49.642457+00:00", "ended_at": "2026-11-29T22:46:49.643752+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "x", "signature": null}`
	want := `{"actor_id":null,"attempt":1,"effect":{"payload":{"wait_key":"k"},"type":"resume"},"ended_at":"2026-11-29T22:46:49.643752+00:00","error":null,"idempotency_key":null,"node_id":"n","prev_hash":null,"result":{"resumed":true},"run_id":"r1","session_id":null,"started_at":"2026-11-29T22:46:49.642457+00:00","status":"completed","step_id":"s1"}`
	checkHashedAndWrittenAsRead(t, in, want)

	noPayload := strings.Replace(in, `"payload": {"wait_key": "k"}`, `"result_key": "out"`, 1)
	checkHashedAndWrittenAsRead(t, noPayload, strings.Replace(want, `"payload":{"wait_key":"k"},"type":"resume"`, `"result_key":"out","type":"resume"`, 1))
}

// A member read absent is written once it is set, and a record derived
// from one (a cancelled end) writes the whole effect, as Go's own do.
func TestRecordEffectMissingMembersWrittenOnceSetOrDerived(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "started", "effect": {"type": "resume"}, "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`
	rec, err := durable.UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	d := rec.Derived()
	rec.Effect.ResultKey = "out"
	rec.Effect.Payload["k"] = "v"
	out, err := durable.MarshalRecord(rec, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"effect": {"type": "resume", "payload": {"k": "v"}, "result_key": "out"}`; !strings.Contains(string(out), want) {
		t.Errorf("set members not written: %s", out)
	}
	d.Effect.ResultKey = ""
	out, err = durable.MarshalRecord(&d, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"effect": {"type": "resume", "payload": {"k": "v"}, "result_key": null}`; !strings.Contains(string(out), want) {
		t.Errorf("derived record: %s", out)
	}
}

// Python's StepRecord holds node_id as the plan gave it, None included,
// and hashes the stored null: a record read with node_id (or run_id,
// step_id, status) null hashes and writes null, not "".
func TestRecordNullStringMembersHashedAndWrittenAsRead(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r1", "step_id": "s1", "node_id": null, "status": "completed", "effect": null, "result": {"completed": true}, "error": null, "started_at": "2026-11-29T22:46:49.642457+00:00", "ended_at": "2026-11-29T22:46:49.643752+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "x", "signature": null}`
	want := `{"actor_id":null,"attempt":1,"effect":null,"ended_at":"2026-11-29T22:46:49.643752+00:00","error":null,"idempotency_key":null,"node_id":null,"prev_hash":null,"result":{"completed":true},"run_id":"r1","session_id":null,"started_at":"2026-11-29T22:46:49.642457+00:00","status":"completed","step_id":"s1"}`
	checkHashedAndWrittenAsRead(t, in, want)

	allNull := strings.NewReplacer(`"run_id": "r1"`, `"run_id": null`, `"step_id": "s1"`, `"step_id": null`,
		`"status": "completed"`, `"status": null`).Replace(in)
	checkHashedAndWrittenAsRead(t, allNull, strings.NewReplacer(`"run_id":"r1"`, `"run_id":null`,
		`"step_id":"s1"`, `"step_id":null`, `"status":"completed"`, `"status":null`).Replace(want))

	// Set to a value, the field is written as it.
	rec, err := durable.UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	rec.NodeID = "m"
	out, err := durable.MarshalRecord(rec, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"node_id": "m"`) {
		t.Errorf("node_id set: %s", out)
	}
}

// An effect type read as null (another writer's record) is hashed and
// written back null, as the record's own null ids are: decoded to "" and
// written "type": "", a valid chain was reported tampered.
func TestRecordEffectNullTypeHashedAndWrittenAsRead(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "completed", "effect": {"type": null, "payload": {"wait_key": "k"}, "result_key": null}, "result": null, "error": null, "started_at": "2026-11-29T22:46:49.642457+00:00", "ended_at": "2026-11-29T22:46:49.643752+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "x", "signature": null}`
	want := `{"actor_id":null,"attempt":1,"effect":{"payload":{"wait_key":"k"},"result_key":null,"type":null},"ended_at":"2026-11-29T22:46:49.643752+00:00","error":null,"idempotency_key":null,"node_id":"n","prev_hash":null,"result":null,"run_id":"r1","session_id":null,"started_at":"2026-11-29T22:46:49.642457+00:00","status":"completed","step_id":"s1"}`
	checkHashedAndWrittenAsRead(t, in, want)
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

// A record read without one of its string members (node_id here, as an
// older or foreign writer may omit it) is hashed and written without it:
// the member still holds the decoder's "" and is not written as "".
// Would break: StepRecord.writes leaving out only absent members still
// null, so the line was rewritten, and hashed, with "node_id": "".
func TestRecordStringMemberReadAbsentHashedAndWrittenAsRead(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r1", "step_id": "s1", "status": "completed", "effect": null, "result": {"completed": true}, "error": null, "started_at": "2026-11-29T22:46:49.642457+00:00", "ended_at": "2026-11-29T22:46:49.643752+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "x", "signature": null}`
	want := `{"actor_id":null,"attempt":1,"effect":null,"ended_at":"2026-11-29T22:46:49.643752+00:00","error":null,"idempotency_key":null,"prev_hash":null,"result":{"completed":true},"run_id":"r1","session_id":null,"started_at":"2026-11-29T22:46:49.642457+00:00","status":"completed","step_id":"s1"}`
	checkHashedAndWrittenAsRead(t, in, want)
}

// An effect read without type is written with it once the type is set,
// as result_key and payload are (TestRecordEffectMissingMembersWrittenOnceSetOrDerived).
// Would break: Effect.writesType leaving out a type read absent whatever
// Type holds since.
func TestRecordEffectTypeReadAbsentIsWrittenOnceSet(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "started", "effect": {"payload": {"k": "v"}, "result_key": "out"}, "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`
	rec, err := durable.UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	rec.Effect.Type = durable.EffectResume
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		out, err := durable.MarshalRecord(rec, st)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.ReplaceAll(string(out), " ", ""), `"type":"resume"`) {
			t.Errorf("style %+v: the type set is not written: %s", st, out)
		}
	}
}

// An effect read with a payload that is not an object (null) has an
// empty, writable Payload, as one read without a payload does: the
// runtime can add keys in place, and they are what is written. Would
// break: decodeEffect leaving Payload nil for such a payload (the
// assignment panics).
func TestEffectPayloadReadNullTakesKeysInPlace(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", "effect": {"type": "wait_event", "payload": null, "result_key": "evt"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`
	for how, rec := range decodeBothWays(t, in) {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: adding a payload key panicked: %v", how, p)
				}
			}()
			rec.Effect.Payload["event"] = "go"
		}()
		out, err := durable.MarshalRecord(rec, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), `"payload": {"event": "go"}`) {
			t.Errorf("%s: the key added is not written: %s", how, out)
		}
	}
}

// Effect.Map and WaitState.Map give "the wire object, deep-copied": a
// change to the map (a node editing the effect stored in vars) leaves the
// effect's payload and the wait's details as they were. Would break:
// orderedMap sharing the wire object's values (JSONValue hands out the
// payload and details themselves).
func TestMapsAreDeepCopies(t *testing.T) {
	t.Parallel()
	e := &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"nested": map[string]any{"k": "v"}}, ResultKey: "out"}
	m := e.Map()
	m["payload"].(map[string]any)["nested"].(map[string]any)["k"] = "CHANGED"
	m["payload"].(map[string]any)["added"] = true
	if got := e.Payload["nested"].(map[string]any)["k"]; got != "v" || len(e.Payload) != 1 {
		t.Errorf("a change to Effect.Map reached the effect: payload %v", e.Payload)
	}
	w := &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", Details: map[string]any{"list": []any{"a"}}}
	wm := w.Map()
	wm["details"].(map[string]any)["list"].([]any)[0] = "CHANGED"
	if got := w.Details["list"].([]any)[0]; got != "a" {
		t.Errorf("a change to WaitState.Map reached the wait: details %v", w.Details)
	}
}

// An effect read with type null is hashed and written with the type the
// runtime sets afterwards, in the hashed (generic) text as in the Line
// text. Would break: Effect.typeValue writing null whenever null was read,
// whatever Type holds since: the hash would cover "type": null while the
// line holds the type.
func TestRecordEffectTypeSetAfterNullReadIsHashed(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "completed", "effect": {"type": null, "payload": {"wait_key": "k"}, "result_key": null}, "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`
	for how, rec := range decodeBothWays(t, in) {
		rec.Effect.Type = durable.EffectResume
		hashed, err := pyjson.Marshal(rec.JSONValue(false), pyjson.Canonical)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(hashed), `"type":"resume"`) {
			t.Errorf("%s: hashed text lacks the type set: %s", how, hashed)
		}
		if line, _ := durable.MarshalRecord(rec, pyjson.Line); !strings.Contains(string(line), `"type": "resume"`) {
			t.Errorf("%s: line lacks the type set: %s", how, line)
		}
	}
}

// An effect read without a type (another writer's record) is hashed and
// written without it, as one read without payload or result_key is: the
// Line fast path, which a ledger rewrite takes when the record's own
// members are all present, must omit it too. Would break: appendRecordLine
// writing "type": "" whatever Effect.absent says (the generic encoder
// alone omitting it).
func TestRecordEffectMissingTypeHashedAndWrittenAsRead(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "completed", "effect": {"payload": {"wait_key": "k"}, "result_key": null}, "result": null, "error": null, "started_at": "2026-11-29T22:46:49.642457+00:00", "ended_at": "2026-11-29T22:46:49.643752+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "x", "signature": null}`
	want := `{"actor_id":null,"attempt":1,"effect":{"payload":{"wait_key":"k"},"result_key":null},"ended_at":"2026-11-29T22:46:49.643752+00:00","error":null,"idempotency_key":null,"node_id":"n","prev_hash":null,"result":null,"run_id":"r1","session_id":null,"started_at":"2026-11-29T22:46:49.642457+00:00","status":"completed","step_id":"s1"}`
	checkHashedAndWrittenAsRead(t, in, want)
}
