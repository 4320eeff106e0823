package history_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func review2Run(id, parent string, at time.Time) *durable.RunState {
	return &durable.RunState{RunID: id, WorkflowID: "w", Status: durable.RunCompleted, CurrentNode: "n",
		Vars: map[string]any{}, ParentRunID: parent, CreatedAt: durable.NewTime(at), UpdatedAt: durable.NewTime(at)}
}

// TestExportNegativeLedgerMaxItemsKeepsEveryRecord: Options.LedgerMaxItems
// negative keeps every record (as a non-positive Python limit does), not
// the default window of DefaultLedgerMaxItems.
func TestExportNegativeLedgerMaxItemsKeepsEveryRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	n := history.DefaultLedgerMaxItems + 1
	recs := make([]*durable.StepRecord, n)
	for i := range recs {
		recs[i] = &durable.StepRecord{RunID: "r", StepID: fmt.Sprint("s", i), NodeID: "n", Status: durable.StepCompleted,
			StartedAt: durable.NewTime(at), Attempt: 1}
	}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: review2Run("r", "", at), Create: true, Records: recs}); err != nil {
		t.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "r", history.Options{LedgerMaxItems: -1})
	if err != nil {
		t.Fatal(err)
	}
	sec := b["ledgers"].(map[string]any)["r"].(map[string]any)
	if items := sec["items"].([]any); len(items) != n || fmt.Sprint(sec["cursor_start"]) != "1" {
		t.Fatalf("LedgerMaxItems -1 kept %d of %d records from cursor %v; want all from 1", len(items), n, sec["cursor_start"])
	}
}

// TestExportCoversAtMostMaxSubruns: a run with more children than
// MaxSubruns yields a bundle covering the run and MaxSubruns descendants.
func TestExportCoversAtMostMaxSubruns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := st.RunCommit(ctx, &store.CommitParams{Run: review2Run("root", "", at), Create: true}); err != nil {
		t.Fatal(err)
	}
	for i := range history.MaxSubruns + 1 {
		if err := st.RunCommit(ctx, &store.CommitParams{Run: review2Run(fmt.Sprintf("kid-%05d", i), "root", at.Add(time.Duration(i)*time.Millisecond)),
			Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "root", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ledgers := b["ledgers"].(map[string]any)
	if len(ledgers) != history.MaxSubruns+1 {
		t.Fatalf("bundle covers %d runs; want the root and MaxSubruns (%d) descendants", len(ledgers), history.MaxSubruns)
	}
	if _, ok := ledgers[fmt.Sprintf("kid-%05d", history.MaxSubruns)]; ok {
		t.Fatalf("the youngest child, past the cap, is in the bundle")
	}
}

// TestExportRunArtifactsTieByID: a ledger section lists the run's
// artifacts oldest first by (created_at, artifact_id): those stored in
// the same instant come in id order.
func TestExportRunArtifactsTieByID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := st.RunCommit(ctx, &store.CommitParams{Run: review2Run("r", "", at), Create: true}); err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	arts.SetClock(func() time.Time { return at })
	for _, id := range []string{"bbb", "aaa", "ccc"} {
		if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte(id), RunID: "r", ArtifactID: id}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, "r", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range b["ledgers"].(map[string]any)["r"].(map[string]any)["artifacts"].([]any) {
		got = append(got, a.(map[string]any)["artifact_id"].(string))
	}
	if want := []string{"aaa", "bbb", "ccc"}; !slices.Equal(got, want) {
		t.Fatalf("artifacts = %v, want %v", got, want)
	}
}
