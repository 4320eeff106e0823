package memory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A renewal only extends a claim its owner still holds (store.RunClaimParams
// Renew): once another runner took the run over, the first owner's renew
// fails with ErrConflict, even after the taker's claim has expired; it
// must not silently re-acquire the run (its holder had lost it, and may
// hold a stale working copy). This pins claims.go RunClaim's Renew check:
// a renew of a claim held by another owner must not fall through to the
// ordinary claim, which takes an expired one.
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
