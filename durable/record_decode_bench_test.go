package durable_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// benchRecordLine is W1's terminal status record as the stores hold it.
var benchRecordLine = []byte(`{"run_id": "d94e9e30-3689-4349-943c-8d437f62dcce", "step_id": "a2c8f4f1-da36-4a5b-b47f-64ba663113da", "node_id": "n9", "status": "completed", "effect": {"type": "emit_event", "payload": {"name": "abstract.status", "scope": "session", "payload": {"text": "completed"}}, "result_key": null}, "result": {"emitted": true, "name": "abstract.status", "payload": {"text": "completed"}}, "error": null, "started_at": "2026-11-29T22:46:49.642457+00:00", "ended_at": "2026-11-29T22:46:49.643752+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "system:terminal_status:completed", "prev_hash": null, "record_hash": null, "signature": null}`)

// BenchmarkUnmarshalRecord decodes one stored ledger line into a
// StepRecord, what every ledger read a store's cache does not serve costs
// per record.
func BenchmarkUnmarshalRecord(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRecordLine)))
	for b.Loop() {
		if _, err := durable.UnmarshalRecord(benchRecordLine); err != nil {
			b.Fatal(err)
		}
	}
}
