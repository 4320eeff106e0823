package hashchain_test

import (
	"fmt"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// When the rows after the last readable record do not decode and the
// window that finds it holds several readable records, the new record
// chains to the last of them (Python's inner.list(run_id)[-1]), not the
// first.
func TestHeadIsLastReadableOfWideWindow(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	var recs []*durable.StepRecord
	for i := range 10 {
		recs = append(recs, &durable.StepRecord{RunID: "r1", StepID: fmt.Sprint("s", i), NodeID: "n",
			Status: durable.StepCompleted, Attempt: 1})
	}
	if err := hashchain.Wrap(mem).LedgerAppend(ctx, "r1", recs); err != nil {
		t.Fatal(err)
	}
	// Seqs 1..6 read; 7..10 do not: the window that finds a readable
	// record (after seq 2) holds seqs 3..6.
	hide := map[int64]bool{7: true, 8: true, 9: true, 10: true}
	rec := &durable.StepRecord{RunID: "r1", StepID: "next", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	if err := hashchain.Wrap(hidingStore{mem, hide}).LedgerAppend(ctx, "r1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	if want := recs[5].RecordHash; rec.PrevHash != want {
		t.Errorf("prev_hash = %q, want the hash of seq 6 %q", rec.PrevHash, want)
	}
}

// FirstBadIndex is the index of the first error the walk finds, however
// many follow it.
func TestFirstBadIndexIsTheFirst(t *testing.T) {
	t.Parallel()
	stored := chainOf3(t)
	stored[0].StepID = "tampered-0" // record_hash mismatch at 0
	stored[2].StepID = "tampered-2" // and at 2
	rep := hashchain.VerifyLedgerChain(stored)
	if rep.OK || len(rep.Errors) != 2 || rep.FirstBadIndex == nil || *rep.FirstBadIndex != 0 {
		t.Fatalf("report = %+v (errors %v); want 2 errors, first_bad_index 0", rep, errorTypes(rep))
	}
}
