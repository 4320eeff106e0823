package offload_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Every vars key starting with "_" is a private namespace whose members a
// terminal run offloads, "__"-prefixed ones included (Python:
// key.startswith("_")).
func TestDoubleUnderscoreVarsAreOffloaded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	run := newRun(durable.RunRunning)
	run.Vars["__private"] = map[string]any{"big": big}
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	run.Status = durable.RunCompleted
	if err := b.st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	got, err := b.inner.RunGet(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Vars["__private"].(map[string]any)["big"]; !artifact.IsRef(v) {
		t.Errorf("vars.__private.big stored as %.40v; want a ref", v)
	}
}

// A record's artifacts belong to the record's own run when it names one,
// as Python's OffloadingLedgerStore takes record.run_id; the ledger's run
// id is used only for a record without one.
func TestRecordArtifactsTakeTheRecordsRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rec := newRecord() // RunID run-1
	if err := b.st.LedgerAppend(ctx, "ledger-run", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	stored, err := b.inner.LedgerList(ctx, &store.LedgerListParams{RunID: "ledger-run"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("LedgerList = %d, %v", len(stored), err)
	}
	refTags(t, b, stored[0].Effect.Payload["prompt"], big) // checks the artifact's run is run-1
}
