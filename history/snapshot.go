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
	// Host, when set, saves the ref through the runtime that runs the run
	// (*runtime.Runtime is one): under the run's lock and claim, so the
	// save waits for a tick in progress. Without it the run is committed
	// directly, which makes the commit of a tick in progress conflict:
	// the tick's work since its last commit is dropped and its effect in
	// flight runs again.
	Host VarsUpdater
}

// VarsUpdater changes a run's vars serialised with the run's ticks
// (runtime.Runtime.UpdateVars): mutate changes vars in place and reports
// whether it changed them; it may be called again after a conflict.
type VarsUpdater interface {
	UpdateVars(ctx context.Context, runID string, mutate func(vars map[string]any) (bool, error)) error
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
// without moving its updated_at, through p.Host when set (which a host
// running the run should set); without it a concurrent commit of the run
// is retried on the fresh state, and the call must not overlap a tick of
// the run (see SnapshotParams.Host).
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
	if p.Host != nil {
		return saveSnapshotRef(ctx, p.Host, rid, ref)
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

// saveSnapshotRef writes ref through host, unless a ref was recorded
// meanwhile, and returns the ref the run keeps.
func saveSnapshotRef(ctx context.Context, host VarsUpdater, rid string, ref map[string]any) (map[string]any, error) {
	var kept map[string]any
	err := host.UpdateVars(ctx, rid, func(vars map[string]any) (bool, error) {
		run := &durable.RunState{Vars: vars}
		if kept = snapshotRef(run); kept != nil {
			return false, nil
		}
		setSnapshotRef(run, ref)
		kept = pyjson.CloneObject(ref)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("saving run: %w", err)
	}
	return kept, nil
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
