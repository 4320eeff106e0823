package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store/memory"
)

// A runner whose process was frozen (SIGSTOP, a long GC pause) past its
// claim's local expiry runs on for a moment before the overdue expiry
// timer fires; another runner may already have taken the run. lost, which
// a commit and an external effect's start consult, must report the claim
// lost from the deadline alone, and cancel the work as the timer would.
// The deadline is moved into the past here, standing in for the freeze
// (the timer, a TTL away, has not fired).
func TestClaimPastLocalExpiryIsLostBeforeItsTimerFires(t *testing.T) {
	r, id := claimingRuntimeWithAskRun(t)
	ctx := context.Background()
	work, hold, err := r.claim(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.release()
	if err := hold.lost(); err != nil {
		t.Fatalf("fresh claim lost: %v", err)
	}
	// Consulted before every commit: it must not allocate while held.
	if n := testing.AllocsPerRun(100, func() { _ = hold.lost() }); n != 0 {
		t.Errorf("lost allocates %v times per call on a held claim", n)
	}
	hold.deadline.Store(claimClock() - 1)
	if err := hold.lost(); !errors.Is(err, ErrRunClaimed) {
		t.Fatalf("claim past its local expiry: lost() = %v, want ErrRunClaimed", err)
	}
	if !errors.Is(context.Cause(work), ErrRunClaimed) {
		t.Fatalf("work context cause %v, want ErrRunClaimed", context.Cause(work))
	}
}

// claimingRuntimeWithAskRun is a runtime on a memory store whose claims
// (owner "me") renew hourly for a three-hour TTL, and the id of an "ask"
// run started on it (not ticked).
func claimingRuntimeWithAskRun(t *testing.T) (*Runtime, string) {
	t.Helper()
	reg, err := NewRegistry(perRunWorkflows()...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Store: memory.New(), Registry: reg, Claims: &Claims{Owner: "me", RenewEvery: time.Hour, TTL: 3 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := r.Start(context.Background(), StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	return r, id
}
