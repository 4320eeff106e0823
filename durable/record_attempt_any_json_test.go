package durable_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// pythonAnyAttemptChain is a hash chain as Python's HashChainedLedgerStore
// and verify_ledger_chain (storage/ledger_chain.py) accept it, whose
// records hold an attempt that is not a JSON number of the integer kind:
// a string, a boolean, a list, an object, a negative float, Infinity, an
// integer past int64 and NaN. Python's ledger stores keep a stored record
// as the dict json.loads gives, without checking attempt, and
// compute_record_hash hashes that dict, so each value is part of the
// hashed text. The lines are json.dumps(record, ensure_ascii=False), the
// hashes compute_record_hash of them, produced and re-verified with
// Python 3.11.7; the comment is what Python's int() makes of the value.
var pythonAnyAttemptChain = []string{
	// int(): 2
	`{"run_id": "r1", "step_id": "s1", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": "2", "idempotency_key": "k1", "prev_hash": null, "record_hash": "afc71f81e01ba36e22bbf760f3c7aa21cd5eaf3a1fa50248797a9404191e0cfe", "signature": null}`,
	// int(): 1
	`{"run_id": "r1", "step_id": "s2", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": true, "idempotency_key": "k2", "prev_hash": "afc71f81e01ba36e22bbf760f3c7aa21cd5eaf3a1fa50248797a9404191e0cfe", "record_hash": "9931d4bdd541fc21f5a74e6fbe2abb5b7b42a21514f423c7630ba7e8d4342790", "signature": null}`,
	// int(): 0
	`{"run_id": "r1", "step_id": "s3", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": false, "idempotency_key": "k3", "prev_hash": "9931d4bdd541fc21f5a74e6fbe2abb5b7b42a21514f423c7630ba7e8d4342790", "record_hash": "726d26fe08fe6b0e6ee8c152202c29210fed8d8019ea349d4786805cd1e8f470", "signature": null}`,
	// int(): 3
	`{"run_id": "r1", "step_id": "s4", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": " 3 ", "idempotency_key": "k4", "prev_hash": "726d26fe08fe6b0e6ee8c152202c29210fed8d8019ea349d4786805cd1e8f470", "record_hash": "f8ba2a07c346f85d85f28b3d60fbff9e2d2cb28ebda4625c87b15906314c6f05", "signature": null}`,
	// int(): ValueError
	`{"run_id": "r1", "step_id": "s5", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": "2.0", "idempotency_key": "k5", "prev_hash": "f8ba2a07c346f85d85f28b3d60fbff9e2d2cb28ebda4625c87b15906314c6f05", "record_hash": "bb77c54cfef5e06ab0fce313d976c2d58591abe48fb2334bb2f1c3328efda5bd", "signature": null}`,
	// int(): ValueError
	`{"run_id": "r1", "step_id": "s6", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": "abc", "idempotency_key": "k6", "prev_hash": "bb77c54cfef5e06ab0fce313d976c2d58591abe48fb2334bb2f1c3328efda5bd", "record_hash": "28145f5e2d9cc41374e648c3647d7a07bce30a2f7334a6ac31333fa2086671cc", "signature": null}`,
	// int(): TypeError
	`{"run_id": "r1", "step_id": "s7", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": [2], "idempotency_key": "k7", "prev_hash": "28145f5e2d9cc41374e648c3647d7a07bce30a2f7334a6ac31333fa2086671cc", "record_hash": "206c30a56fae9919f71701ef6c49edead660a329ddea550c36ccd82d0c28693c", "signature": null}`,
	// int(): TypeError
	`{"run_id": "r1", "step_id": "s8", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": {"n": 2}, "idempotency_key": "k8", "prev_hash": "206c30a56fae9919f71701ef6c49edead660a329ddea550c36ccd82d0c28693c", "record_hash": "fd8db5f0c47b139b7a5da70785444fde2b9ddc77489b9bbfe79441a9a194f56f", "signature": null}`,
	// int(): -2
	`{"run_id": "r1", "step_id": "s9", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": -2.7, "idempotency_key": "k9", "prev_hash": "fd8db5f0c47b139b7a5da70785444fde2b9ddc77489b9bbfe79441a9a194f56f", "record_hash": "f76daa927ccd38dfe0eb96ebdd4fb22c6aeab77c294304d7a4f31c56ea460a4e", "signature": null}`,
	// int(): OverflowError
	`{"run_id": "r1", "step_id": "s10", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": Infinity, "idempotency_key": "k10", "prev_hash": "f76daa927ccd38dfe0eb96ebdd4fb22c6aeab77c294304d7a4f31c56ea460a4e", "record_hash": "f18ba0dc7430fdd0a87f57de311eb3d1f3f1ccf928702d73e3db5175ff15b3c9", "signature": null}`,
	// int(): 99999999999999999999
	`{"run_id": "r1", "step_id": "s11", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 99999999999999999999, "idempotency_key": "k11", "prev_hash": "f18ba0dc7430fdd0a87f57de311eb3d1f3f1ccf928702d73e3db5175ff15b3c9", "record_hash": "dcc96f7db5ce9028afe2ca2494f67450d12b51be5e2606adf50799d689f02e8d", "signature": null}`,
	// int(): ValueError
	`{"run_id": "r1", "step_id": "s12", "node_id": "n", "status": "started", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": NaN, "idempotency_key": "k12", "prev_hash": "dcc96f7db5ce9028afe2ca2494f67450d12b51be5e2606adf50799d689f02e8d", "record_hash": "905095351d4a50429410158439cc0d8aaf9a229b959092cc69a3db7bff62060d", "signature": null}`,
}

// pythonAnyAttemptInts is the Attempt each record of pythonAnyAttemptChain
// reads as: Python's int() of the value where it gives one that fits a Go
// int, else the default 1.
var pythonAnyAttemptInts = []int{2, 1, 0, 3, 1, 1, 1, 1, -2, 1, 1, 1}

// A chain Python wrote and verifies with any JSON value in attempt is
// read (it was refused as "field attempt: want an integer") and verifies
// here. Promise: the store/hashchain package doc (chains written by
// either implementation verify in the other); spec runtime-model.md §1
// (StepRecord) and its hash-chain section.
func TestPythonChainWithAnyJSONAttemptVerifies(t *testing.T) {
	t.Parallel()
	checkChainVerifiesBothWays(t, pythonAnyAttemptChain)
}

// Attempt is Python's int() of the value read, or 1, while the record is
// written back byte for byte as read, directly, through StoredCopy and
// through Clone.
func TestAnyJSONAttemptReadAsIntWrittenBackAsRead(t *testing.T) {
	t.Parallel()
	for i, l := range pythonAnyAttemptChain {
		for how, r := range decodeBothWays(t, l) {
			if r.Attempt != pythonAnyAttemptInts[i] {
				t.Errorf("%s of record %d: Attempt = %d, want %d", how, i, r.Attempt, pythonAnyAttemptInts[i])
			}
			c, err := r.StoredCopy()
			if err != nil {
				t.Fatal(err)
			}
			for what, rec := range map[string]*durable.StepRecord{"record": r, "StoredCopy": c, "Clone": r.Clone()} {
				b, err := durable.MarshalRecord(rec, pyjson.Line)
				if err != nil {
					t.Fatalf("%s of record %d: %s: %v", how, i, what, err)
				}
				if string(b) != l {
					t.Errorf("%s of record %d: %s written as\n%s\nwant\n%s", how, i, what, b, l)
				}
			}
		}
	}
}

// A Go caller that sets Attempt replaces the value read, in the line and
// in the hashed text; a record derived from a read one writes the integer.
func TestAnyJSONAttemptSetOrDerivedWritesInteger(t *testing.T) {
	t.Parallel()
	checkAttemptSetOrDerivedWritesInteger(t, pythonAnyAttemptChain)
}

// A string attempt reads as Python 3.11.7's int() of it (checked there
// case by case), or as 1 where int() raises ValueError.
func TestStringAttemptReadAsPythonInt(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{
		"1_000": 1000, "+5": 5, "-0": 0, " \t7\n": 7, "007": 7, "-12": -12,
		"1__0": 1, "_1": 1, "1_": 1, "--1": 1, "+-1": 1, "": 1, " ": 1,
		"0x10": 1, "- 1": 1, "2.0": 1, "1e3": 1, "99999999999999999999": 1,
	} {
		line := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", "attempt": ` + string(mustLine(t, in)) + `}`
		r, err := durable.UnmarshalRecord([]byte(line))
		if err != nil {
			t.Errorf("attempt %q: %v", in, err)
			continue
		}
		if r.Attempt != want {
			t.Errorf("attempt %q: Attempt = %d, want %d", in, r.Attempt, want)
		}
	}
}

// A value given to RecordFromJSON in Go types the decoder does not use
// is written as JSON, and StoredCopy gives what reading that back gives.
func TestForeignTypedAttemptStoredCopyAsReadBack(t *testing.T) {
	t.Parallel()
	r, err := durable.RecordFromJSON(map[string]any{"run_id": "r", "step_id": "s", "node_id": "n",
		"status": "started", "attempt": []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := durable.MarshalRecord(r, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"attempt": ["a", "b"],`) || r.Attempt != 1 {
		t.Fatalf("Attempt %d, written as %s", r.Attempt, b)
	}
	back, err := durable.UnmarshalRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, back) {
		t.Errorf("StoredCopy\n%#v\ndiffers from the record read back\n%#v", c, back)
	}
}

func mustLine(t *testing.T, v any) []byte {
	t.Helper()
	b, err := pyjson.Marshal(v, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
