package memory_test

import (
	"math"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestLedgerListHugeLimitDoesNotPanic: a caller asking for "as many as
// there are" with Limit math.MaxInt past a cursor gets the records after
// the cursor, as from the SQLite and JSON stores (the end of the page must
// not be computed as an overflowing start+Limit).
func TestLedgerListHugeLimitDoesNotPanic(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	recs := []*durable.StepRecord{
		{RunID: "pl", StepID: "a", Status: durable.StepStarted},
		{RunID: "pl", StepID: "b", Status: durable.StepStarted},
	}
	if err := s.LedgerAppend(ctx, "pl", recs); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("LedgerList(After: 1, Limit: math.MaxInt) panicked: %v", r)
		}
	}()
	got, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "pl", After: 1, Limit: math.MaxInt})
	if err != nil || len(got) != 1 || got[0].StepID != "b" {
		t.Errorf("LedgerList(After: 1, Limit: math.MaxInt) = %d records, %v; want the one after the cursor", len(got), err)
	}
}
