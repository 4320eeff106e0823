package hashchain_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// emptyPrevHashLine is a first ledger record whose prev_hash was edited
// from null to "" after it was chained: record_hash is still the hash over
// prev_hash null.
const emptyPrevHashLine = `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": "", "record_hash": "93ae44aaa032fbd8cf5072d05522ee4e19b914d33a72e58f0067dc9669e2f7dc", "signature": null}`

// A prev_hash changed from null to "" changes the stored bytes. Python's
// verify_ledger_chain compares it with the expected None and hashes the
// record as stored, so it reports prev_hash_mismatch (actual "") and
// record_hash_mismatch at index 0 (spec §4.6); Go used to read "" as null
// and verify the edited record OK.
func TestEmptyPrevHashIsTamper(t *testing.T) {
	t.Parallel()
	r, err := durable.UnmarshalRecord([]byte(emptyPrevHashLine))
	if err != nil {
		t.Fatal(err)
	}
	rep := hashchain.VerifyLedgerChain([]*durable.StepRecord{r})
	if rep.OK || len(rep.Errors) != 2 {
		t.Fatalf("edited record: want prev_hash_mismatch and record_hash_mismatch, got %+v", rep)
	}
	if e := rep.Errors[0]; e.Index != 0 || e.Type != "prev_hash_mismatch" {
		t.Errorf("first error %+v, want prev_hash_mismatch at 0", e)
	}
	// Python hashes {"prev_hash":""}: 498f2e9d…
	if e := rep.Errors[1]; e.Index != 0 || e.Type != "record_hash_mismatch" || !strings.HasPrefix(e.Computed, "498f2e9d") {
		t.Errorf("second error %+v, want record_hash_mismatch at 0 computed 498f2e9d…", e)
	}
	// Python's report says actual_prev_hash "", not null.
	b, err := json.Marshal(rep.Errors[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"index":0,"type":"prev_hash_mismatch","expected_prev_hash":null,"actual_prev_hash":""}`; string(b) != want {
		t.Errorf("report error JSON %s, want %s", b, want)
	}
}

// A record read with prev_hash "" and appended again (copied to another
// ledger) is chained as a new record: its first link is written null, as
// Go and Python write every record they chain, and the chain verifies.
func TestChainedRecordReadWithEmptyPrevHashWritesNull(t *testing.T) {
	t.Parallel()
	r, err := durable.UnmarshalRecord([]byte(emptyPrevHashLine))
	if err != nil {
		t.Fatal(err)
	}
	st := hashchain.Wrap(memory.New())
	if err := st.LedgerAppend(context.Background(), "run-1", []*durable.StepRecord{r}); err != nil {
		t.Fatal(err)
	}
	b, err := durable.MarshalRecord(r, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"prev_hash": null`) {
		t.Errorf("chained record written %s, want prev_hash null", b)
	}
	if r.RecordHash != "93ae44aaa032fbd8cf5072d05522ee4e19b914d33a72e58f0067dc9669e2f7dc" {
		t.Errorf("record hash %s, want the hash over prev_hash null", r.RecordHash)
	}
	stored, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(stored); !rep.OK {
		t.Errorf("chain as stored does not verify: %+v", rep)
	}
}
