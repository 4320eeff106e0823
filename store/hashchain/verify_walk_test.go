package hashchain_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// chainOf3 appends three records through the chain and returns them as
// stored.
func chainOf3(t *testing.T) []*durable.StepRecord {
	t.Helper()
	st := hashchain.Wrap(memory.New())
	ctx := context.Background()
	recs := vectorRecords(t)
	third := *recs[1]
	third.StepID, third.NodeID, third.Result = "step-3", "n3", map[string]any{"c": json.Number("3")}
	if err := st.LedgerAppend(ctx, "run-1", append(recs, &third)); err != nil {
		t.Fatal(err)
	}
	stored, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 3 {
		t.Fatalf("stored %d records (%v)", len(stored), err)
	}
	return stored
}

func errorTypes(rep hashchain.Report) []string {
	out := []string{}
	for _, e := range rep.Errors {
		out = append(out, e.Type+"@"+string(rune('0'+e.Index)))
	}
	return out
}

// TestVerifyWalksAsPythonDoes: verify_ledger_chain (spec §4.6, Python's
// ledger_chain.py) reports head_hash and computed_head_hash, checks the
// first record's prev_hash against null (a ledger cut from the front is
// detected), carries the stored record_hash (not the recomputed one) as
// the next record's expected prev_hash, and stops at a record without
// record_hash.
func TestVerifyWalksAsPythonDoes(t *testing.T) {
	t.Parallel()

	t.Run("valid chain reports both heads", func(t *testing.T) {
		stored := chainOf3(t)
		rep := hashchain.VerifyLedgerChain(stored)
		head := stored[2].RecordHash
		if !rep.OK || rep.HeadHash == nil || *rep.HeadHash != head || rep.ComputedHeadHash == nil || *rep.ComputedHeadHash != head {
			t.Fatalf("report of a valid chain: %+v; want ok with head_hash = computed_head_hash = %s", rep, head)
		}
		one := hashchain.VerifyLedgerChain(stored[:1])
		if !one.OK || one.HeadHash == nil || *one.HeadHash != stored[0].RecordHash ||
			one.ComputedHeadHash == nil || *one.ComputedHeadHash != stored[0].RecordHash {
			t.Fatalf("report of a one-record chain: %+v; want both heads = %s", one, stored[0].RecordHash)
		}
	})

	t.Run("ledger cut from the front", func(t *testing.T) {
		stored := chainOf3(t)
		rep := hashchain.VerifyLedgerChain(stored[1:])
		if rep.OK || rep.FirstBadIndex == nil || *rep.FirstBadIndex != 0 || len(rep.Errors) != 1 ||
			rep.Errors[0].Type != "prev_hash_mismatch" || rep.Errors[0].ActualPrev != stored[0].RecordHash {
			t.Fatalf("a ledger missing its first record verified as %+v (errors %v); want one prev_hash_mismatch at 0",
				rep, errorTypes(rep))
		}
	})

	t.Run("tampered middle record is one error", func(t *testing.T) {
		stored := chainOf3(t)
		stored[1].Result = map[string]any{"b": json.Number("42")}
		rep := hashchain.VerifyLedgerChain(stored)
		if g := errorTypes(rep); rep.OK || len(g) != 1 || g[0] != "record_hash_mismatch@1" {
			t.Fatalf("errors %v; want only record_hash_mismatch@1 (the next link is to the stored hash)", g)
		}
	})

	t.Run("walk stops at a missing record_hash", func(t *testing.T) {
		stored := chainOf3(t)
		stored[0].RecordHash = ""
		rep := hashchain.VerifyLedgerChain(stored)
		if g := errorTypes(rep); rep.OK || len(g) != 1 || g[0] != "missing_record_hash@0" || rep.ComputedHeadHash != nil {
			t.Fatalf("errors %v, computed head %v; want only missing_record_hash@0 and no computed head", g, rep.ComputedHeadHash)
		}
	})
}

// verify_ledger_chain's report heads, as Python's ledger_chain.py computes
// them.

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
