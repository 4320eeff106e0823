package runtime

// The kernel's queue of follow-up retries (followretry.go): back-off, due
// times, its cap and forgetting deleted runs, as its doc comments promise.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// runtimeWithClock is a runtime on a memory store whose clock reads *now.
func runtimeWithClock(t *testing.T, now *time.Time) *Runtime {
	t.Helper()
	return errRuntime(t, memory.New(), Config{Clock: func() time.Time { return *now }})
}

// followRetryDueIn is how long after now the queued follow-up f falls due.
func followRetryDueIn(rt *Runtime, f followUp, now time.Time) time.Duration {
	rt.followRetries.mu.Lock()
	defer rt.followRetries.mu.Unlock()
	return rt.followRetries.entries[followKey{f.kind, f.runID}].due.Sub(now)
}

// retryLater: a follow-up kept again keeps its back-off, doubled only when
// it failed again, never past followRetryMax (5 minutes).
func TestFollowUpBackoffDoublesOnlyOnFailureAndIsCapped(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := runtimeWithClock(t, &now)
	f := followUp{kind: followTick, runID: "r1"}
	rt.retryLater(ctx, f, false)
	if d := followRetryDueIn(rt, f, now); d != followRetryFirst {
		t.Fatalf("first keep due in %v, want %v", d, followRetryFirst)
	}
	rt.retryLater(ctx, f, false) // kept again, not a new failure
	if d := followRetryDueIn(rt, f, now); d != followRetryFirst {
		t.Errorf("kept again without failing: due in %v, want the back-off unchanged (%v)", d, followRetryFirst)
	}
	rt.retryLater(ctx, f, true)
	if d := followRetryDueIn(rt, f, now); d != 2*followRetryFirst {
		t.Errorf("failed again: due in %v, want %v", d, 2*followRetryFirst)
	}
	for range 20 {
		rt.retryLater(ctx, f, true)
	}
	if d := followRetryDueIn(rt, f, now); d != followRetryMax {
		t.Errorf("after many failures: due in %v, want the cap %v", d, followRetryMax)
	}
}

// takeDueRetries returns the follow-ups due now: one whose due time is
// exactly now included.
func TestFollowUpDueExactlyNowIsTaken(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := runtimeWithClock(t, &now)
	rt.retryLater(context.Background(), followUp{kind: followTick, runID: "r1"}, false)
	now = now.Add(followRetryFirst - time.Nanosecond)
	if due := rt.takeDueRetries(); len(due) != 0 {
		t.Fatalf("taken before due: %v", due)
	}
	now = now.Add(time.Nanosecond)
	if due := rt.takeDueRetries(); len(due) != 1 || due[0].runID != "r1" {
		t.Fatalf("at its due time: %v, want r1", due)
	}
}

// maxFollowRetries: past it the oldest follow-up is dropped, not another.
func TestFollowUpRetriesFullDropsTheOldest(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := runtimeWithClock(t, &now)
	for i := range maxFollowRetries {
		rt.retryLater(ctx, followUp{kind: followTick, runID: fmt.Sprintf("r%d", i)}, false)
		now = now.Add(time.Millisecond)
	}
	rt.retryLater(ctx, followUp{kind: followTick, runID: "newest"}, false)
	if n := rt.PendingFollowUps(); n != maxFollowRetries {
		t.Fatalf("%d kept, want the cap %d", n, maxFollowRetries)
	}
	rt.followRetries.mu.Lock()
	defer rt.followRetries.mu.Unlock()
	for _, id := range []string{"r1", fmt.Sprintf("r%d", maxFollowRetries-1), "newest"} {
		if _, ok := rt.followRetries.entries[followKey{followTick, id}]; !ok {
			t.Errorf("%s dropped; only the oldest (r0) should be", id)
		}
	}
	if _, ok := rt.followRetries.entries[followKey{followTick, "r0"}]; ok {
		t.Errorf("the oldest follow-up r0 is still kept")
	}
}

// settleFollowUp: a retry whose run was deleted (ErrNotFound) forgets the
// follow-up instead of keeping it for another retry.
func TestFollowUpOfADeletedRunIsForgotten(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := runtimeWithClock(t, &now)
	rt.retryLater(ctx, followUp{kind: followTick, runID: "gone"}, false)
	now = now.Add(time.Hour)
	due := rt.takeDueRetries()
	if len(due) != 1 {
		t.Fatalf("due: %v", due)
	}
	rt.settleFollowUp(ctx, due[0], fmt.Errorf("loading run gone: %w", store.ErrNotFound))
	if n := rt.PendingFollowUps(); n != 0 {
		t.Errorf("%d follow-ups kept after the run was found deleted, want 0", n)
	}
}
