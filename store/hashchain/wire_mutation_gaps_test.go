package hashchain_test

import (
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// Tests added by a second round of mutation testing (area "durable"):
// verify_ledger_chain's report heads, as Python's ledger_chain.py computes
// them, where no test checked them.

// computed_head_hash is the stored record_hash of the last record walked,
// errors or not (Python sets it after the loop whatever it found): a
// tampered chain still reports how far the walk went.
func TestVerifyReportsComputedHeadOfATamperedChain(t *testing.T) {
	t.Parallel()
	stored := chainOf3(t)
	stored[1].Result = map[string]any{"b": json.Number("42")}
	rep := hashchain.VerifyLedgerChain(stored)
	if rep.OK {
		t.Fatal("a tampered chain verified")
	}
	if rep.ComputedHeadHash == nil || *rep.ComputedHeadHash != stored[2].RecordHash {
		t.Errorf("computed_head_hash = %v; want the last record's stored hash %s", rep.ComputedHeadHash, stored[2].RecordHash)
	}
}

// head_hash is the last record's record_hash (Python:
// records[-1].get("record_hash")): null when that record has none, even
// if earlier ones do; the walk stops there and computed_head_hash is the
// record before it.
func TestVerifyHeadHashIsTheLastRecordsHash(t *testing.T) {
	t.Parallel()
	stored := chainOf3(t)
	stored[2].RecordHash = ""
	rep := hashchain.VerifyLedgerChain(stored)
	if rep.HeadHash != nil {
		t.Errorf("head_hash = %s; want null (the last record has no record_hash)", *rep.HeadHash)
	}
	if rep.ComputedHeadHash == nil || *rep.ComputedHeadHash != stored[1].RecordHash {
		t.Errorf("computed_head_hash = %v; want the second record's hash %s", rep.ComputedHeadHash, stored[1].RecordHash)
	}
	if g := errorTypes(rep); len(g) != 1 || g[0] != "missing_record_hash@2" {
		t.Errorf("errors %v; want only missing_record_hash@2", g)
	}
}
