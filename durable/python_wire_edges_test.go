package durable_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// A hash chain written by an older Python AbstractRuntime, which verifies
// in Python 0.4.28, verifies here. The v0.1 models
// (core/models.py at 15ea10d, shipped with storage/ledger_chain.py's
// HashChainedLedgerStore) have no session_id, attempt or idempotency_key
// in StepRecord. Python's verify_ledger_chain hashes each stored record as
// json.loads gives it (ledger_chain.py compute_record_hash: dict(record)
// minus record_hash/signature, prev_hash set). Our decoder used to add the
// missing members (session_id null, attempt 1, idempotency_key null)
// before hashing, so every record of such a chain failed. Promises:
// durable/record.go emptyNotNull ("a record re-encoded or hashed must write
// what was read, or a chain Python wrote would not verify"), the
// store/hashchain package doc ("chains written by either implementation
// verify in the other"), spec §8.2 (readers tolerate other writers). The
// lines and hashes below were produced with Python 3.11 (json.dumps +
// compute_record_hash).
func TestOlderPythonChainVerifies(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"run_id": "r1", "step_id": "s1", "node_id": "ask", "status": "started", "effect": {"type": "ask_user", "payload": {"prompt": "Continue?"}, "result_key": "answer"}, "result": null, "error": null, "started_at": "2025-01-01T10:00:00.123456+00:00", "ended_at": null, "actor_id": null, "prev_hash": null, "record_hash": "8dbfb6360ae7bab108c456531f62122d762faff2655092f62f3a9fc0cfde5e37", "signature": null}`,
		`{"run_id": "r1", "step_id": "s1", "node_id": "ask", "status": "waiting", "effect": {"type": "ask_user", "payload": {"prompt": "Continue?"}, "result_key": "answer"}, "result": {"wait": {"reason": "user", "wait_key": "user:r1:ask", "until": null, "resume_to_node": "done", "result_key": "answer", "prompt": "Continue?", "choices": null, "allow_free_text": true, "details": null}}, "error": null, "started_at": "2025-01-01T10:00:00.123456+00:00", "ended_at": "2025-01-01T10:00:00.223456+00:00", "actor_id": null, "prev_hash": "8dbfb6360ae7bab108c456531f62122d762faff2655092f62f3a9fc0cfde5e37", "record_hash": "a4e9dd72770b065b68082cb559b379a09c69d44648521db719c1f6eeb3eef2b0", "signature": null}`,
	}
	var recs []*durable.StepRecord
	for _, l := range lines {
		r, err := durable.UnmarshalRecord([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Errorf("a chain Python wrote (and verify_ledger_chain accepts) is reported broken: %+v", rep.Errors)
	}
	// The text Python hashes for the first record.
	want := `{"actor_id":null,"effect":{"payload":{"prompt":"Continue?"},"result_key":"answer","type":"ask_user"},"ended_at":null,"error":null,"node_id":"ask","prev_hash":null,"result":null,"run_id":"r1","started_at":"2025-01-01T10:00:00.123456+00:00","status":"started","step_id":"s1"}`
	got, err := pyjson.Marshal(recs[0].JSONValue(false), pyjson.Canonical)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("canonical text of the record read:\n got %s\nwant %s", got, want)
	}
}

// Duplicate object keys: Python's json.loads keeps the last value (and so
// does pyjson.Decode, hence RunFromJSON). UnmarshalRun and UnmarshalRecord
// used to apply every occurrence in turn and keep side state from the
// earlier ones: "output": 5 then "output": null was written back as 5,
// "error": "" then "error": null as "", and a first "waiting" with an
// unknown reason refused the whole run although the last value is null.
// Python reads output None, error None and waiting None. Promise: spec §8
// / the brief (decode as Python's json module: last wins); durable/run.go
// UnmarshalRun ("decodes a RunState written by this package or by
// Python") must agree with RunFromJSON(pyjson.DecodeObject(text)).
func TestDuplicateKeysLastWins(t *testing.T) {
	t.Parallel()
	run := `{"run_id": "r1", "workflow_id": "wf", "status": "completed", "current_node": "n", "vars": {}, "waiting": null, "output": 5, "error": "", "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", "actor_id": "", "session_id": null, "parent_run_id": null, "output": null, "error": null, "actor_id": null}`
	m, err := pyjson.DecodeObject([]byte(run))
	if err != nil {
		t.Fatal(err)
	}
	viaMap, err := durable.RunFromJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	wantB, _ := durable.MarshalRun(viaMap, pyjson.Line)
	r, err := durable.UnmarshalRun([]byte(run))
	if err != nil {
		t.Fatal(err)
	}
	b, err := durable.MarshalRun(r, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"output": null`, `"error": null`, `"actor_id": null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("run with duplicate keys (Python keeps the last) written as\n%s\nwant %s (RunFromJSON gives\n%s)", b, want, wantB)
		}
	}
	rec := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "failed", "effect": null, "result": null, "error": "", "started_at": null, "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null, "error": null}`
	s, err := durable.UnmarshalRecord([]byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := durable.MarshalRecord(s, pyjson.Line); !strings.Contains(string(b), `"error": null`) {
		t.Errorf("record with duplicate error keys written as\n%s\nwant \"error\": null (the last value)", b)
	}
	superseded := `{"run_id": "r2", "workflow_id": "wf", "status": "running", "current_node": "n", "vars": {}, "waiting": {"reason": "bogus"}, "waiting": null}`
	if _, err := durable.UnmarshalRun([]byte(superseded)); err != nil {
		t.Errorf("run whose superseded \"waiting\" is invalid (Python reads waiting None) refused: %v", err)
	}
}

// An integer member beyond int64 — Python's int is unbounded; its ledger
// records are the dicts json.loads gives and its command reader does
// int(obj["seq"]) — is refused with an error naming the field. asInt used
// to convert the float64 1e20 (and NaN, Infinity) to int64, which yields
// -9223372036854775808 on amd64, and the record was written back and
// hashed with that number (a command got a negative seq). Promise: spec
// §8.1 ("never round-trip numbers through float64 … big ints lose
// precision"), the brief (wrong types: a clear error naming the field, or
// Python's leniency), wire_fields_internal_test.go ("read it as Python's
// int() does").
func TestOutOfRangeIntegersAreNotWrapped(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{"100000000000000000000", "1e20", "Infinity"} {
		rec := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", "effect": null, "result": null, "attempt": ` + lit + `}`
		s, err := durable.UnmarshalRecord([]byte(rec))
		if err != nil {
			if !strings.Contains(err.Error(), "attempt") {
				t.Errorf("attempt %s: error does not name the field: %v", lit, err)
			}
			continue // a clear refusal is fine
		}
		// Kept as read, or refused: anything else is a silent rewrite
		// (int64(float64) gives MinInt64 on amd64, MaxInt64 on arm64).
		if b, _ := durable.MarshalRecord(s, pyjson.Line); !strings.Contains(string(b), `"attempt": `+lit+`,`) {
			t.Errorf("attempt %s read as %d, written back as\n%s", lit, s.Attempt, b)
		}
	}
	m, err := pyjson.DecodeObject([]byte(`{"command_id": "c1", "run_id": "r", "type": "pause", "payload": {}, "ts": "2026-01-01T00:00:00+00:00", "client_id": null, "seq": 100000000000000000000}`))
	if err != nil {
		t.Fatal(err)
	}
	// Seq is an int64: such a seq can only be refused, naming the field.
	if c, err := durable.CommandFromJSON(m); err == nil {
		t.Errorf("command seq 100000000000000000000 read as %d", c.Seq)
	} else if !strings.Contains(err.Error(), "seq") {
		t.Errorf("command seq: error does not name the field: %v", err)
	}
}

// durable.Time promises (time.go) to be "written as Python's isoformat()
// writes it … The zero Time is written as null", and spec §0 asks Go to
// emit that format (mixing Z and +00:00 breaks Python's string
// comparisons). Time embeds time.Time, whose MarshalJSON it inherited
// until it had its own: a Time a node puts in vars, a payload or a result
// (RunContext.Now() returns one; pyjson sends Go values through
// encoding/json) was written in RFC 3339 ("2026-11-29T22:46:49.64666Z"),
// and the zero Time as "0001-01-01T00:00:00Z" instead of null. Same with
// encoding/json.
func TestTimeValueWrittenAsIsoformat(t *testing.T) {
	t.Parallel()
	tm := durable.NewTime(time.Date(2026, 11, 29, 22, 46, 49, 646660000, time.UTC))
	got, err := pyjson.Marshal(map[string]any{"at": tm, "none": durable.Time{}}, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"at": "2026-11-29T22:46:49.646660+00:00", "none": null}`
	if string(got) != want {
		t.Errorf("vars holding durable.Time values written as\n%s\nwant\n%s", got, want)
	}
	j, err := json.Marshal(struct {
		At durable.Time `json:"at"`
	}{tm})
	if err != nil || string(j) != `{"at":"2026-11-29T22:46:49.646660+00:00"}` {
		t.Errorf("encoding/json writes a durable.Time as %s (%v); want the isoformat text", j, err)
	}
}

// Of a string member repeated as null then "", the last value counts:
// Python's json.loads gives node_id "", and a record re-encoded or hashed
// must write "" (its chain would not verify otherwise). Would break:
// nullFields.note only ever adding a field (no "else" clearing it), so a
// null read first left node_id written as null.
func TestRecordMemberNullThenEmptyIsWrittenEmpty(t *testing.T) {
	t.Parallel()
	rec := `{"run_id": "r", "step_id": "s", "node_id": null, "status": "completed", "effect": null, "result": null, "error": null, "started_at": null, "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null, "node_id": ""}`
	s, err := durable.UnmarshalRecord([]byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical} {
		b, err := durable.MarshalRecord(s, st)
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), " ", ""), `"node_id":""`) {
			t.Errorf("style %+v: record with node_id null then \"\" written as\n%s\nwant \"node_id\": \"\" (the last value) (%v)", st, b, err)
		}
	}
}
