package durable_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// pythonOddAttemptChain is a hash chain as Python writes and verifies it,
// whose records hold an attempt of null, 2.0, 0 and 2.5 and an
// idempotency_key of "". Python's verify_ledger_chain
// (storage/ledger_chain.py compute_record_hash) hashes each record as
// json.loads gives it, so these spellings are part of the hashed text.
// The lines are json.dumps(record, ensure_ascii=False) and the hashes
// compute_record_hash of them, produced with Python 3.11.
var pythonOddAttemptChain = []string{
	`{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "started", "effect": {"type": "llm_call", "payload": {}, "result_key": "out"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": null, "idempotency_key": "k1", "prev_hash": null, "record_hash": "0c44710875b8ddf904a36cec0e6d821d0a62cbe2c91254d36247119ea87f4ef4", "signature": null}`,
	`{"run_id": "r1", "step_id": "s2", "node_id": "n", "status": "started", "effect": {"type": "llm_call", "payload": {}, "result_key": "out"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 2.0, "idempotency_key": "k2", "prev_hash": "0c44710875b8ddf904a36cec0e6d821d0a62cbe2c91254d36247119ea87f4ef4", "record_hash": "76a5bf1e96e4a8d4064f9022c0ed37b83946b7a9751ad7222b3d80cb2735a6c4", "signature": null}`,
	`{"run_id": "r1", "step_id": "s3", "node_id": "n", "status": "started", "effect": {"type": "llm_call", "payload": {}, "result_key": "out"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 0, "idempotency_key": "k3", "prev_hash": "76a5bf1e96e4a8d4064f9022c0ed37b83946b7a9751ad7222b3d80cb2735a6c4", "record_hash": "8ed436247761ec4dcc5539ce19ffefbf4900277625330c2628f64cba721a6414", "signature": null}`,
	`{"run_id": "r1", "step_id": "s4", "node_id": "n", "status": "started", "effect": {"type": "llm_call", "payload": {}, "result_key": "out"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 2.5, "idempotency_key": "", "prev_hash": "8ed436247761ec4dcc5539ce19ffefbf4900277625330c2628f64cba721a6414", "record_hash": "e858b08ee93d0d17164164a7a82aa3dd15acac375b27e66680b8c6ceb20650e0", "signature": null}`,
	`{"run_id": "r1", "step_id": "s5", "node_id": "n", "status": "started", "effect": {"type": "llm_call", "payload": {}, "result_key": "out"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 3, "idempotency_key": null, "prev_hash": "e858b08ee93d0d17164164a7a82aa3dd15acac375b27e66680b8c6ceb20650e0", "record_hash": "c02617704433d0df118ca245c980f2540409019e905920397f8d4a1c64252e5d", "signature": null}`,
}

// decodeBothWays reads line with UnmarshalRecord and with RecordFromJSON
// (the JSON file store's path), which must agree.
func decodeBothWays(t *testing.T, line string) map[string]*durable.StepRecord {
	t.Helper()
	direct, err := durable.UnmarshalRecord([]byte(line))
	if err != nil {
		t.Fatalf("UnmarshalRecord: %v", err)
	}
	m, err := pyjson.DecodeObject([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	viaMap, err := durable.RecordFromJSON(m)
	if err != nil {
		t.Fatalf("RecordFromJSON: %v", err)
	}
	return map[string]*durable.StepRecord{"UnmarshalRecord": direct, "RecordFromJSON": viaMap}
}

// A chain Python verifies verifies here too: the record hashes with
// attempt and idempotency_key as read (null, 2.0, 0, 2.5, ""), not as
// the integer or null our Attempt and IdempotencyKey would be written as.
// Promise: the store/hashchain package doc (chains written by either
// implementation verify in the other); spec runtime-model.md §1
// (StepRecord) and its hash-chain section.
func TestPythonChainWithNullAndFloatAttemptVerifies(t *testing.T) {
	t.Parallel()
	checkChainVerifiesBothWays(t, pythonOddAttemptChain)
}

// checkChainVerifiesBothWays checks that the chain of record lines, which
// Python verifies, verifies here read through UnmarshalRecord and through
// RecordFromJSON.
func checkChainVerifiesBothWays(t *testing.T, lines []string) {
	t.Helper()
	for _, how := range []string{"UnmarshalRecord", "RecordFromJSON"} {
		var recs []*durable.StepRecord
		for _, l := range lines {
			recs = append(recs, decodeBothWays(t, l)[how])
		}
		if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
			t.Errorf("%s: a chain Python verifies is reported broken: %+v", how, rep.Errors)
		}
	}
}

// Go callers see a usable Attempt (null is the default 1, a float is cut
// to an integer as Python's int() does), while the record is written back
// exactly as read, in every encoding and through StoredCopy.
func TestRecordAttemptWrittenBackAsRead(t *testing.T) {
	t.Parallel()
	wantAttempt := []int{1, 2, 0, 2, 3}
	for i, l := range pythonOddAttemptChain {
		for how, r := range decodeBothWays(t, l) {
			if r.Attempt != wantAttempt[i] {
				t.Errorf("%s of record %d: Attempt = %d, want %d", how, i, r.Attempt, wantAttempt[i])
			}
			b, err := durable.MarshalRecord(r, pyjson.Line)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != l {
				t.Errorf("%s of record %d written back as\n%s\nwant\n%s", how, i, b, l)
			}
			c, err := r.StoredCopy()
			if err != nil {
				t.Fatal(err)
			}
			back, err := durable.UnmarshalRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, back) {
				t.Errorf("%s of record %d: StoredCopy\n%#v\ndiffers from the record read back\n%#v", how, i, c, back)
			}
			if b, _ := durable.MarshalRecord(c, pyjson.Line); string(b) != l {
				t.Errorf("%s of record %d: StoredCopy written as\n%s\nwant\n%s", how, i, b, l)
			}
		}
	}
}

// A Go caller that sets Attempt replaces the value read; a record derived
// from a read one (Derived: a new record, e.g. the cancelled end of a
// STARTED record) writes its attempt as the integer a Go-built record has.
func TestRecordAttemptSetOrDerivedWritesInteger(t *testing.T) {
	t.Parallel()
	checkAttemptSetOrDerivedWritesInteger(t, pythonOddAttemptChain[:4])
}

// checkAttemptSetOrDerivedWritesInteger checks, for each record line, that
// Derived writes the integer Attempt and that setting Attempt replaces the
// value read in the line and in the hashed text.
func checkAttemptSetOrDerivedWritesInteger(t *testing.T, lines []string) {
	t.Helper()
	for i, l := range lines {
		r, err := durable.UnmarshalRecord([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		d := r.Derived()
		want := r.Attempt
		if want == 0 {
			want = 1 // a Go-built record with no attempt set is written as 1
		}
		b, err := durable.MarshalRecord(&d, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		if s := `"attempt": ` + itoa(want) + `,`; !strings.Contains(string(b), s) {
			t.Errorf("Derived of record %d written as\n%s\nwant it to hold %s", i, b, s)
		}
		r.Attempt = 7
		b, err = durable.MarshalRecord(r, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"attempt": 7,`) {
			t.Errorf("record %d with Attempt set to 7 written as\n%s", i, b)
		}
		canon, err := pyjson.Marshal(r.JSONValue(false), pyjson.Canonical)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(canon), `"attempt":7,`) {
			t.Errorf("record %d with Attempt set to 7 hashes\n%s", i, canon)
		}
	}
}

func itoa(n int) string {
	b, _ := pyjson.Marshal(n, pyjson.Line)
	return string(b)
}
