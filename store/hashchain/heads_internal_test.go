package hashchain

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/lru"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestHeadsAreBounded: with room for one cached head, appends to runs in
// turn read the others' heads back from their ledgers, and every chain
// still verifies; a deleted ledger starts a new chain.
func TestHeadsAreBounded(t *testing.T) {
	t.Parallel()
	s := Wrap(memory.New())
	s.heads = lru.New[string](1) // keeps only the head put last
	ctx := context.Background()
	now := durable.NewTime(time.Now())
	runs := []string{"run-a", "run-b", "run-c"}
	for round := range 4 {
		for _, id := range runs {
			rec := &durable.StepRecord{RunID: id, StepID: fmt.Sprintf("s%d", round), NodeID: "n",
				Status: durable.StepCompleted, StartedAt: now, EndedAt: now, Result: map[string]any{"round": fmt.Sprint(round)}}
			if err := s.LedgerAppend(ctx, id, []*durable.StepRecord{rec}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, _ := s.heads.Size(); n != 1 {
		t.Errorf("%d heads cached, want 1", n)
	}
	for _, id := range runs {
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		if rep := VerifyLedgerChain(recs); !rep.OK || rep.Count != 4 {
			t.Errorf("%s: chain %+v, want 4 linked records", id, rep)
		}
	}
	if _, err := s.LedgerDelete(ctx, "run-c"); err != nil {
		t.Fatal(err)
	}
	rec := &durable.StepRecord{RunID: "run-c", StepID: "again", NodeID: "n", Status: durable.StepCompleted,
		StartedAt: now, EndedAt: now}
	if err := s.LedgerAppend(ctx, "run-c", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	if rec.PrevHash != "" {
		t.Errorf("first record after a delete chains onto %q, want a new chain", rec.PrevHash)
	}
}
