package hashchain_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// failingHeadRead fails the reads the chain makes to find a run's head:
// LedgerCount with countErr, LedgerList with listErr (when set).
type failingHeadRead struct {
	store.Store
	countErr, listErr error
}

func (f failingHeadRead) LedgerCount(ctx context.Context, runID string) (int64, error) {
	if f.countErr != nil {
		return 0, f.countErr
	}
	return f.Store.LedgerCount(ctx, runID)
}

func (f failingHeadRead) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	return f.Store.LedgerList(ctx, p)
}

// An append whose head read fails returns the error and appends nothing.
// What would break: chaining on as if the ledger were empty writes a
// record with prev_hash null after the existing ones, and the ledger no
// longer verifies.
func TestAppendFailsWhenTheHeadCannotBeRead(t *testing.T) {
	t.Parallel()
	injected := errors.New("injected: ledger unreadable")
	for name, inner := range map[string]func(store.Store) store.Store{
		"count": func(s store.Store) store.Store { return failingHeadRead{Store: s, countErr: injected} },
		"list":  func(s store.Store) store.Store { return failingHeadRead{Store: s, listErr: injected} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			mem := memory.New()
			recs := vectorRecords(t)
			if err := hashchain.Wrap(mem).LedgerAppend(ctx, "run-1", recs[:1]); err != nil {
				t.Fatal(err)
			}
			err := hashchain.Wrap(inner(mem)).LedgerAppend(ctx, "run-1", recs[1:])
			if !errors.Is(err, injected) {
				t.Fatalf("append with an unreadable head = %v, want the read's error", err)
			}
			stored, err := mem.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
			if err != nil {
				t.Fatal(err)
			}
			if rep := hashchain.VerifyLedgerChain(stored); len(stored) != 1 || !rep.OK {
				t.Errorf("ledger after the failed append: %d records, %+v; want the first record alone, verifying", len(stored), rep)
			}
		})
	}
}

// When only seq 1 is readable, the head is found whatever the ledger's
// length: the window widening backwards from the last seq reaches the
// start. What would break: a walk that gives up one seq short (at an
// after of 1 rather than 0, as ledgers of 2, 3, 5, 9 or 17 records reach)
// chains the new record to null, and the listed ledger fails verification.
func TestAppendChainsToSeqOnePastAnUnreadableTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for n := 2; n <= 17; n++ {
		mem := memory.New()
		var recs []*durable.StepRecord
		for i := range n {
			recs = append(recs, &durable.StepRecord{RunID: "r1", StepID: fmt.Sprint("s", i), NodeID: "n",
				Status: durable.StepCompleted, Attempt: 1})
		}
		if err := hashchain.Wrap(mem).LedgerAppend(ctx, "r1", recs); err != nil {
			t.Fatal(err)
		}
		hide := map[int64]bool{}
		for seq := int64(2); seq <= int64(n); seq++ {
			hide[seq] = true
		}
		rec := &durable.StepRecord{RunID: "r1", StepID: "next", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
		if err := hashchain.Wrap(hidingStore{mem, hide}).LedgerAppend(ctx, "r1", []*durable.StepRecord{rec}); err != nil {
			t.Fatal(err)
		}
		if rec.PrevHash != recs[0].RecordHash {
			t.Errorf("ledger of %d with only seq 1 readable: prev_hash %q, want seq 1's hash %q", n, rec.PrevHash, recs[0].RecordHash)
		}
	}
}
