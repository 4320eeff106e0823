package history_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// snapshotRefRun stores a run whose vars._runtime.workflow_snapshot ref
// names its artifact with a number (a ref another writer recorded).
func snapshotRefRun(t *testing.T) *memory.Store {
	t.Helper()
	st := memory.New()
	r := completedRun("r1", "", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	r.Vars = map[string]any{"_runtime": map[string]any{"workflow_snapshot": map[string]any{
		"workflow_id": "w", "format": "visualflow", "sha256": "abc", "artifact_id": 7}}}
	putRunAsIs(t, st, r)
	return st
}

// Spec §6.2: "workflow_snapshot": <vars._runtime.workflow_snapshot or
// null>. Python history_bundle.py export_run_history_bundle keeps the ref
// when str(ws.get("artifact_id") or "").strip() is non-empty, so a ref
// whose artifact_id is the number 7 ("7") is exported as it is.
func TestBundleKeepsSnapshotRefWithNumericArtifactID(t *testing.T) {
	st := snapshotRefRun(t)
	b, err := history.Export(context.Background(), history.Source{Runs: st, Ledger: st}, "r1", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := b["workflow_snapshot"].(map[string]any)
	if ref == nil || fmt.Sprint(ref["artifact_id"]) != "7" || ref["workflow_id"] != "w" {
		t.Errorf("workflow_snapshot = %v, want the stored ref (Python: artifact_id 7 is non-blank as str())", b["workflow_snapshot"])
	}
}

// Spec §6.2 persist_workflow_snapshot: "idempotent: an existing ref is
// returned unchanged". Python (history_bundle.py) treats a ref as existing
// when str(existing.get("artifact_id") or "").strip() is non-empty, so a
// ref with artifact_id 7 is returned and nothing is stored.
func TestPersistSnapshotKeepsRefWithNumericArtifactID(t *testing.T) {
	ctx := context.Background()
	st := snapshotRefRun(t)
	arts := artifact.NewMemory()
	ref, err := history.PersistWorkflowSnapshot(ctx, st, arts, history.SnapshotParams{
		RunID: "r1", WorkflowID: "w2", Snapshot: map[string]any{"nodes": []any{}}, Format: "visualflow"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ref["artifact_id"]) != "7" || ref["workflow_id"] != "w" {
		t.Errorf("returned ref = %v, want the existing ref unchanged", ref)
	}
	metas, err := arts.ListByRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(metas) != 0 {
		t.Errorf("%d snapshot artifact(s) stored, want none: the run already had a ref", len(metas))
	}
}
