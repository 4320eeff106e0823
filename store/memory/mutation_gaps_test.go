package memory_test

// Tests from a mutation-testing review run to find code the other tests leave unchecked.

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A run handed over by a commit (Handoff) and not read yet must not be
// handed out after a later commit without Handoff: RunCommit updates the
// caller's object's Version in place, so a still-handed pointer would then
// match the stored version, and RunGet would return the caller's own
// (live, mutable) object instead of a private copy, against the store's
// contract that reads are private (store.Store, aliasing_test.go).
// Mutant killed: memory.go RunCommit `s.handed.Store(nil) // stale from now
// on` skipped.
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

// A renewal only extends a claim its owner still holds (store.RunClaimParams
// Renew): once another runner took the run over, the first owner's renew
// fails with ErrConflict, even after the taker's claim has expired; it
// must not silently re-acquire the run (its holder had lost it, and may
// hold a stale working copy). Mutant killed: claims.go RunClaim, the
// Renew check reduced to `!ok` (a renew of a claim held by another owner
// fell through to the ordinary claim, which takes an expired one).
func TestRenewAfterTakeoverConflicts(t *testing.T) {
	ctx := t.Context()
	s := memory.New()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	claim := func(p store.RunClaimParams) error {
		p.RunID, p.TTL = "run-c", time.Minute
		return s.RunClaim(ctx, &p)
	}
	if err := claim(store.RunClaimParams{Owner: "a", Now: t0}); err != nil {
		t.Fatal(err)
	}
	if err := claim(store.RunClaimParams{Owner: "b", Now: t0.Add(2 * time.Minute)}); err != nil {
		t.Fatal(err) // a's claim expired: b takes the run
	}
	err := claim(store.RunClaimParams{Owner: "a", Now: t0.Add(5 * time.Minute), Renew: true})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("renew by the former owner after a takeover: %v, want ErrConflict", err)
	}
}
