package hashchain_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// A Go-written record whose result holds number literals that are not in
// Python repr form (client/LLM JSON, Go typed floats) was hashed over the
// literal, but Python's verify_ledger_chain re-encodes the parsed numbers,
// so the chain Go wrote failed verification in Python. The wanted
// hashes are compute_record_hash() of the record as Go stores it (Python
// reads {"v":1e400,...} and hashes {"v":Infinity,"w":1.5,"x":1e-07,
// "y":100000.0,"z":0}).
func TestGoWrittenNumberLiteralsVerifyInPython(t *testing.T) {
	start, _ := durable.ParseTime("2026-01-01T00:00:00+00:00")
	decoded, err := pyjson.Decode([]byte(`{"x":1e-7,"y":1E5,"z":-0,"w":1.50,"v":1e400}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		result any
		python string
	}{
		{"decoded", decoded, "13afc6bc5e6294b86ba7ad2720ae1bf2b0115a2bd38b63c98fcf3e56026c943a"},
		{"typed_float", map[string]float64{"p": 1e-7}, "075f36f05003dd267a0cff1d97d78fb48e33243846ca174161301d547b1dd906"},
	} {
		r := &durable.StepRecord{RunID: "run-1", StepID: "s1", NodeID: "n1", Status: durable.StepCompleted,
			Result: c.result, StartedAt: start, Attempt: 1}
		got, err := hashchain.RecordHash(r)
		if err != nil || got != c.python {
			t.Errorf("%s: Go hash %s (err %v), Python computes %s", c.name, got, err, c.python)
		}
	}
}

// Python stores "" and null distinctly (Runtime.start keeps
// actor_id=""/session_id="" verbatim and StepRecord.start copies them; an
// Effect may carry result_key=""), but StepRecord mapped "" to null, so a
// chain Python wrote failed VerifyLedgerChain in Go. Lines as written by
// Python's JSONL ledger (json.dumps(asdict(record), ensure_ascii=False)).
func TestPythonEmptyStringFieldsVerifyInGo(t *testing.T) {
	for name, line := range map[string]string{
		"actor_id":          `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": "", "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "285d3a8ef460f17bde12defb088995d05a59b78e9fcd1078c1e1339fcb3202e2", "signature": null}`,
		"session_id":        `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": "", "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "899797a2b22759e66366750a6fce014c0dd24d99af19f5909efe0e763b5ef085", "signature": null}`,
		"effect.result_key": `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": {"type": "llm_call", "payload": {}, "result_key": ""}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "6ef971f0432fa9794b1ad7478e9962bf35582ab1a01e43460cb6353706a62632", "signature": null}`,
		"error":             `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": null, "result": null, "error": "", "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": "9fb1d48ca22348c5a0f53b1063cecaa7fa64199d184e8144cffb5e40fabacb26", "signature": null}`,
	} {
		r, err := durable.UnmarshalRecord([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rep := hashchain.VerifyLedgerChain([]*durable.StepRecord{r}); !rep.OK {
			t.Errorf("%s=\"\": Python-written chain fails in Go: %+v", name, rep.Errors)
		}
	}
}
