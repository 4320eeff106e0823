package hashchain_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// storedVectors appends the spec §4.6 vector through the chaining store
// and reads the two records back as stored.
func storedVectors(t *testing.T) []*durable.StepRecord {
	t.Helper()
	ctx := context.Background()
	st := hashchain.Wrap(memory.New())
	if err := st.LedgerAppend(ctx, "run-1", vectorRecords(t)); err != nil {
		t.Fatal(err)
	}
	stored, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored %d records, %v", len(stored), err)
	}
	return stored
}

// When the last record is the one edited, computed_head_hash is still its
// stored record_hash (Python's walk sets computed_head = stored_hash), not
// the hash recomputed from the edited content. The whole report is the
// one CPython's verify_ledger_chain gives for the spec vector with record
// 2's result changed to {"b": 3}.
func TestVerifyEditedLastRecordReportsStoredHead(t *testing.T) {
	t.Parallel()
	stored := storedVectors(t)
	stored[1].Result = map[string]any{"b": json.Number("3")}
	got, err := json.Marshal(hashchain.VerifyLedgerChain(stored))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"ok":false,"count":2,"errors":[{"index":1,"type":"record_hash_mismatch",` +
		`"stored":"676bd10cf6f705a01ea3b4c8d4f2f9e65a3c93b6af6f1bc3ac05e4e9aa91edca",` +
		`"computed":"73983886a50054c1f07f827b1fa0ba725c8e3c7326509e35d6ce7a80aca50340"}],` +
		`"first_bad_index":1,` +
		`"head_hash":"676bd10cf6f705a01ea3b4c8d4f2f9e65a3c93b6af6f1bc3ac05e4e9aa91edca",` +
		`"computed_head_hash":"676bd10cf6f705a01ea3b4c8d4f2f9e65a3c93b6af6f1bc3ac05e4e9aa91edca"}`
	if string(got) != want {
		t.Errorf("report\n got %s\nwant %s", got, want)
	}
}

// A record edited into one that cannot be hashed (here an integer of 5000
// digits, which the canonical encoder refuses as CPython's json refuses
// to read or write it) is a mismatch: verification must not pass over a
// record it could not recompute.
func TestVerifyRecordThatCannotBeHashedIsAMismatch(t *testing.T) {
	t.Parallel()
	stored := storedVectors(t)
	stored[0].Result = map[string]any{"a": json.Number(strings.Repeat("9", 5000))}
	if _, err := hashchain.RecordHash(stored[0]); err == nil {
		t.Fatal("RecordHash of a 5000-digit integer succeeded; this test needs a record that cannot be hashed")
	}
	rep := hashchain.VerifyLedgerChain(stored)
	if rep.OK {
		t.Fatal("a chain holding a record that cannot be hashed verified")
	}
	if g := errorTypes(rep); len(g) != 1 || g[0] != "record_hash_mismatch@0" {
		t.Errorf("errors %v; want only record_hash_mismatch@0 (record 1 still links to the stored hash)", g)
	}
	if rep.FirstBadIndex == nil || *rep.FirstBadIndex != 0 {
		t.Errorf("first_bad_index = %v; want 0", rep.FirstBadIndex)
	}
}
