package store_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// copyingStore is a CopyingWriter that stores (and returns) copies of the
// records it is given, as store/offload does.
type copyingStore struct {
	store.Store
}

func copies(recs []*durable.StepRecord) []*durable.StepRecord {
	out := make([]*durable.StepRecord, len(recs))
	for i, r := range recs {
		c := *r
		c.NodeID = "stored-" + r.NodeID
		out[i] = &c
	}
	return out
}

func (s copyingStore) RunCommitStored(ctx context.Context, p *store.CommitParams) ([]*durable.StepRecord, error) {
	stored := copies(p.Records)
	q := *p
	q.Records = stored
	return stored, s.Store.RunCommit(ctx, &q)
}

func (s copyingStore) LedgerAppendStored(ctx context.Context, runID string, records []*durable.StepRecord) ([]*durable.StepRecord, error) {
	stored := copies(records)
	return stored, s.Store.LedgerAppend(ctx, runID, stored)
}

// TestCommitAndAppendStoredReturnTheStoredCopies: on a CopyingWriter,
// CommitStored and AppendStored return the records as that store stored
// them (its RunCommitStored / LedgerAppendStored), not the caller's.
func TestCommitAndAppendStoredReturnTheStoredCopies(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := copyingStore{memory.New()}
	run := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n", Vars: map[string]any{}}
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted}
	got, err := store.CommitStored(ctx, st, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] == rec || got[0].NodeID != "stored-n" {
		t.Errorf("CommitStored returned %+v, want the store's copy (node stored-n)", got)
	}
	rec2 := &durable.StepRecord{RunID: "r1", StepID: "s2", NodeID: "m", Status: durable.StepCompleted}
	got, err = store.AppendStored(ctx, st, "r1", []*durable.StepRecord{rec2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] == rec2 || got[0].NodeID != "stored-m" {
		t.Errorf("AppendStored returned %+v, want the store's copy (node stored-m)", got)
	}
}
