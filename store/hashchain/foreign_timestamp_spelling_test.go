package hashchain_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// Python's StepRecord keeps started_at/ended_at as whatever str it was
// given, and HashChainedLedgerStore hashes that text (compute_record_hash
// over asdict(record), storage/ledger_chain.py), so a host or another
// writer that gave an RFC 3339 "Z" time (a JavaScript client's
// Date.toISOString()), a naive time, a three-digit fraction or text no
// parser reads writes a chain that Python's verify_ledger_chain accepts.
// Go used to re-write the time in its own isoformat ("…+00:00", six
// fraction digits), so VerifyLedgerChain reported record_hash_mismatch on
// an untampered chain, and to refuse a record whose time it could not
// parse. The record_hash values below are compute_record_hash() of the
// lines as Python reads them.
func TestPythonChainWithForeignTimestampSpellingVerifies(t *testing.T) {
	t.Parallel()
	for name, line := range map[string]string{
		"zulu":        `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01.500Z", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "cfe5b61bfff689ff04db1bab03ec7ffce312971301a96de31b83386588883177", "signature": null}`,
		"naive":       `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "376eaaa8d9d0ea39cfe62239e78c91f3d902a0cbdcb8db55e1bdc61732b5c9fb", "signature": null}`,
		"unparseable": `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "yesterday", "ended_at": "2026-01-01T00:00:01.500", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "c6468cd1d09fd6341d368d5ce6e22e2465fad13d2a8887555abe122e80a7dbcd", "signature": null}`,
	} {
		r, err := durable.UnmarshalRecord([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rep := hashchain.VerifyLedgerChain([]*durable.StepRecord{r}); !rep.OK {
			t.Errorf("%s: a record Python hashed and verifies fails VerifyLedgerChain: %+v", name, rep.Errors)
		}
	}
}
