package memory_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s := memory.New()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s := memory.New()
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestHandoffIsReadOnce: a run created with Handoff reads back as the very
// object committed, once; then as private copies.
func TestHandoffIsReadOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memory.New()
	r := &durable.RunState{RunID: "run-h", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{"k": "v"}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Handoff: true}); err != nil {
		t.Fatal(err)
	}
	for i, wantSame := range []bool{true, false} {
		got, err := s.RunGet(ctx, r.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if (got == r) != wantSame || got.Vars["k"] != "v" || got.Version != 1 {
			t.Fatalf("read %d: the committed object: %v (want %v), vars %v, version %d", i+1, got == r, wantSame, got.Vars, got.Version)
		}
	}
}

// A run handed over by a commit (Handoff) and not read yet must not be
// handed out after a later commit without Handoff: RunCommit updates the
// caller's object's Version in place, so a still-handed pointer would then
// match the stored version, and RunGet would return the caller's own
// (live, mutable) object instead of a private copy, against the store's
// contract that reads are private (store.Store, aliasing_test.go).
// This pins memory.go RunCommit's `s.handed.Store(nil) // stale from now
// on`.
func TestCommitWithoutHandoffDropsTheHandedRun(t *testing.T) {
	ctx := t.Context()
	s := memory.New()
	r := &durable.RunState{RunID: "run-h2", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{"k": "v"}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Handoff: true}); err != nil {
		t.Fatal(err)
	}
	// The caller commits the same object again, without Handoff.
	r.Vars["k"] = "w"
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunGet(ctx, r.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got == r {
		t.Fatal("RunGet returned the caller's object after a commit without Handoff: reads must be private copies")
	}
	if got.Version != 2 || got.Vars["k"] != "w" {
		t.Fatalf("read version %d vars %v, want 2 and k=w", got.Version, got.Vars)
	}
}
