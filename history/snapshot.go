package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// snapshotKey is the member of vars._runtime holding the snapshot ref.
const snapshotKey = "workflow_snapshot"

// snapshotCommitAttempts bounds the read-modify-commit rounds of
// PersistWorkflowSnapshot against concurrent writers.
const snapshotCommitAttempts = 5

// SnapshotParams is the input of PersistWorkflowSnapshot.
type SnapshotParams struct {
	RunID      string // required
	WorkflowID string // required
	// Snapshot is the workflow definition (e.g. a VisualFlow document).
	// Required; it must be JSON.
	Snapshot map[string]any
	// Format names the snapshot's format; "" means "unknown".
	Format string
	// Now stamps the ref's created_at; time.Now when nil.
	Now func() time.Time
}

// PersistWorkflowSnapshot records which workflow definition a run
// executes: it stores p.Snapshot as a JSON artifact of the run, tagged
// kind=workflow_snapshot, workflow_id, format and sha256 (the SHA-256 of
// the snapshot's canonical JSON: keys sorted, separators "," and ":",
// non-ASCII raw), and writes the ref {workflow_id, format, sha256,
// artifact_id, created_at} to vars._runtime.workflow_snapshot. It returns
// the ref.
//
// It is idempotent: when the run already has a ref naming an artifact,
// that ref is returned unchanged and nothing is written. The run is saved
// without moving its updated_at; a concurrent commit of the run is
// retried on the fresh state. A host running several runners should call
// it while no runner ticks the run (right after Start, typically), since
// the commit does not take the run's claim.
func PersistWorkflowSnapshot(ctx context.Context, runs store.RunStore, arts artifact.Store, p SnapshotParams) (map[string]any, error) {
	rid, wid := pyval.Strip(p.RunID), pyval.Strip(p.WorkflowID)
	switch {
	case rid == "":
		return nil, errors.New("history: persist workflow snapshot: run id is required")
	case wid == "":
		return nil, fmt.Errorf("history: persist workflow snapshot of run %q: workflow id is required", rid)
	case p.Snapshot == nil:
		return nil, fmt.Errorf("history: persist workflow snapshot of run %q: snapshot is required", rid)
	case runs == nil || arts == nil:
		return nil, fmt.Errorf("history: persist workflow snapshot of run %q: a run store and an artifact store are required", rid)
	}
	ref, err := persistSnapshot(ctx, runs, arts, rid, wid, p)
	if err != nil {
		return nil, fmt.Errorf("history: persist workflow snapshot of run %q: %w", rid, err)
	}
	return ref, nil
}

func persistSnapshot(ctx context.Context, runs store.RunStore, arts artifact.Store, rid, wid string, p SnapshotParams) (map[string]any, error) {
	run, err := runs.RunGet(ctx, rid)
	if err != nil {
		return nil, fmt.Errorf("loading run: %w", err)
	}
	if ref := snapshotRef(run); ref != nil {
		return ref, nil
	}
	format := pyval.Strip(p.Format)
	if format == "" {
		format = "unknown"
	}
	canonical, err := pyjson.Marshal(p.Snapshot, pyjson.Canonical)
	if err != nil {
		return nil, fmt.Errorf("encoding snapshot: %w", err)
	}
	sum := sha256.Sum256(canonical)
	sha := hex.EncodeToString(sum[:])
	// The hashed bytes are what PutJSON would store (canonical, compact):
	// stored as they are rather than encoded again.
	meta, err := arts.Put(ctx, artifact.PutParams{
		RunID: rid, Content: canonical, ContentType: "application/json",
		Tags: map[string]string{"kind": "workflow_snapshot", "workflow_id": wid, "format": format, "sha256": sha},
	})
	if err != nil {
		return nil, fmt.Errorf("storing snapshot artifact: %w", err)
	}
	ref := map[string]any{
		"workflow_id": wid,
		"format":      format,
		"sha256":      sha,
		"artifact_id": meta.ArtifactID,
		"created_at":  durable.FormatTime(now(p.Now)),
	}
	for attempt := 1; ; attempt++ {
		setSnapshotRef(run, ref)
		err := runs.RunCommit(ctx, &store.CommitParams{Run: run})
		if err == nil {
			return pyjson.CloneObject(ref), nil
		}
		if !errors.Is(err, store.ErrConflict) || attempt == snapshotCommitAttempts {
			return nil, fmt.Errorf("saving run: %w", err)
		}
		// Another writer committed since the load: apply the ref to the
		// run as it is now, unless that writer recorded one first.
		if run, err = runs.RunGet(ctx, rid); err != nil {
			return nil, fmt.Errorf("reloading run: %w", err)
		}
		if existing := snapshotRef(run); existing != nil {
			return existing, nil
		}
	}
}

// setSnapshotRef writes ref to vars._runtime.workflow_snapshot, creating
// the namespace when it is missing or not an object.
func setSnapshotRef(run *durable.RunState, ref map[string]any) {
	if run.Vars == nil {
		run.Vars = map[string]any{}
	}
	rt, ok := run.Vars["_runtime"].(map[string]any)
	if !ok {
		rt = map[string]any{}
		run.Vars["_runtime"] = rt
	}
	rt[snapshotKey] = pyjson.CloneObject(ref)
}
