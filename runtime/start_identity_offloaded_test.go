package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// An earlier release's offloading store, with a small MaxInlineBytes,
// moved a finished run's vars._meta.creation_digest (71 bytes) into an
// artifact. The members now stay inline, but runs stored by that release
// still hold the ref: Start with the run's id and the identity it was
// created with (a parent replaying START_SUBWORKFLOW after a crash) must
// find the run, the ref restored from the run's own run-vars offload as
// the cancel marker is, not report an identity conflict.
func TestStartIdentityComparesDigestOffloadedByAnEarlierRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, arts, st, p := finishedRunWithExplicitID(t)
	offloadStoredDigest(t, ctx, st, arts, "child-1", artifact.SourceRunVars)

	id, err := rt.Start(ctx, p)
	if err != nil || id != "child-1" {
		t.Fatalf("Start(RunID child-1) with the run's own identity over its offloaded digest = (%q, %v); want the run", id, err)
	}
	// The restored digest is still compared: another request conflicts.
	p.Vars = map[string]any{"task": "b"}
	var conflict *runtime.IdentityConflictError
	if _, err := rt.Start(ctx, p); !errors.As(err, &conflict) || conflict.Field != "vars._meta.creation_digest" {
		t.Fatalf("Start with other vars = %v; want an identity conflict on the digest", err)
	}
}

// Only the run's own run-vars offload is restored: a ref to an artifact
// of another source (here the output offload) is compared as it is, and
// conflicts.
func TestStartIdentityRestoresOnlyTheRunsOwnVarsOffload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, arts, st, p := finishedRunWithExplicitID(t)
	offloadStoredDigest(t, ctx, st, arts, "child-1", artifact.SourceRunOutput)

	var conflict *runtime.IdentityConflictError
	if _, err := rt.Start(ctx, p); !errors.As(err, &conflict) || conflict.Field != "vars._meta.creation_digest" {
		t.Fatalf("Start over a digest ref of another source = %v; want an identity conflict on the digest", err)
	}
}

// finishedRunWithExplicitID starts run child-1 of chain(1) with an
// explicit id (so it carries a creation digest) and ticks it to its end.
func finishedRunWithExplicitID(t *testing.T) (*runtime.Runtime, artifact.Store, store.Store, runtime.StartParams) {
	t.Helper()
	st := memory.New()
	arts := artifact.NewMemory()
	reg, err := runtime.NewRegistry(chain(1))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	p := runtime.StartParams{WorkflowID: "chain", RunID: "child-1", ParentRunID: "parent-1", SessionID: "s1",
		Vars: map[string]any{"task": "a"}}
	ctx := context.Background()
	if _, err := rt.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	if s, err := rt.Tick(ctx, "child-1", runtime.TickOptions{}); err != nil || s.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", s, err)
	}
	return rt, arts, st, p
}

// offloadStoredDigest rewrites the stored run as an offloading store of
// the earlier release wrote it: its digest moved into a text artifact of
// the run tagged with source, a ref left in its place.
func offloadStoredDigest(t *testing.T, ctx context.Context, st store.Store, arts artifact.Store, runID, source string) {
	t.Helper()
	run, err := st.RunGet(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	meta := run.Vars["_meta"].(map[string]any)
	ref, err := artifact.Offload(ctx, arts, meta["creation_digest"], artifact.OffloadOptions{
		RunID: runID, MaxInlineBytes: 64, BaseTags: map[string]string{"source": source},
		RootPath: "vars._meta.creation_digest", AllowRootReplace: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !artifact.IsRef(ref) {
		t.Fatalf("the digest was not offloaded: %#v", ref)
	}
	meta["creation_digest"] = ref
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
}
