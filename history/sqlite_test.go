package history_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// The same bundle from a SQLite store, written by one store value and
// read back by another after a reopen: the snapshot ref, the child found
// through its parent link, the ledgers with their cursors.
func TestExportFromSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	arts, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, st, arts, newClock())
	parent := startTick(t, rt, runtime.StartParams{WorkflowID: "parent", SessionID: "s"})
	kids := children(t, st, parent)
	if len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
	child := kids[0]
	ref, err := history.PersistWorkflowSnapshot(ctx, st, arts, history.SnapshotParams{
		RunID: parent, WorkflowID: "parent", Snapshot: snapshotDoc, Format: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: child, Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatal(err)
	}
	opts := history.Options{LedgerMaxItems: 3}
	before, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, parent, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src := history.Source{Runs: st, Ledger: st, Artifacts: arts}
	b, err := history.Export(ctx, src, parent, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b["workflow_snapshot"], ref) {
		t.Fatalf("workflow_snapshot %v, want %v", b["workflow_snapshot"], ref)
	}
	if run := b["run"].(map[string]any); run["status"] != "completed" {
		t.Fatalf("parent %v", run)
	}
	for _, id := range []string{parent, child} {
		l := ledgerOf(t, b, id)
		total := num(t, l["total"], "total")
		if total <= 3 || !reflect.DeepEqual(cursors(t, l), seq(total-2, total)) {
			t.Fatalf("run %s: total %d cursors %v", id, total, cursors(t, l))
		}
		checkRecords(t, st, l, id, total-2)
	}
	// Apart from when it was made, the bundle is what the first store
	// value gave.
	delete(before, "generated_at")
	delete(b, "generated_at")
	if !reflect.DeepEqual(before, b) {
		t.Fatalf("bundle changed across a reopen\nbefore %v\n after %v", before, b)
	}
}
