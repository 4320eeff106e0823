package hashchain_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// The STARTED record Python 0.4.28 appends through HashChainedLedgerStore
// (record_hash = compute_record_hash of asdict(record)) when a node returns
// Effect(type=WAIT_EVENT, payload=None): StepRecord.start copies the payload
// as it is and Effect does not validate it. Python's verify_ledger_chain
// accepts this chain; ours read "payload": null as {} (durable/effect.go
// decodeEffect) and hashed a different text.
const pyNullPayloadLine = `{"run_id": "run-1", "step_id": "s1", "node_id": "listen", "status": "started", "effect": {"type": "wait_event", "payload": null, "result_key": "evt"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "k1", "prev_hash": null, "record_hash": "1c35b117adfda60a87db895e6f3d038c5642f6e5f43f95ec3c5c853c60c3b4a8", "signature": null}`

func TestFidelityPythonNullEffectPayloadVerifies(t *testing.T) {
	t.Parallel()
	r, err := durable.UnmarshalRecord([]byte(pyNullPayloadLine))
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain([]*durable.StepRecord{r}); !rep.OK {
		t.Fatalf("a chain Python wrote and verifies fails in Go: %+v", rep.Errors)
	}
}
