package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestStaleRetryDoesNotSettleARecreatedEntry: a retry settles its kept
// follow-up only if the generation it was handed is still the entry's.
// Generations restarted at 0 for every new entry, so a retry left over
// from an entry that another pass already settled (two RetryFollowUps at
// once) matched the entry kept again afterwards for the same run, and
// its success forgot a failure it knew nothing of. A new entry takes a
// generation never handed out, not one next to the last: were it
// lastGen-1, an entry kept again (gen 2), settled, then made again would
// get gen 2 back, and the stale retry of gen 2 would forget the new
// failure.
func TestStaleRetryDoesNotSettleARecreatedEntry(t *testing.T) {
	for _, keptAgain := range []bool{false, true} {
		ctx := context.Background()
		now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		rt := errRuntime(t, memory.New(), Config{Clock: func() time.Time { return now }})
		f := followUp{kind: followTick, runID: "r1"}

		rt.retryLater(ctx, f, false)
		if keptAgain {
			rt.retryLater(ctx, f, false) // a new generation
		}
		now = now.Add(time.Hour)
		first := rt.takeDueRetries()
		second := rt.takeDueRetries() // a second pass running at the same time
		if len(first) != 1 || len(second) != 1 {
			t.Fatalf("kept again %v: due retries: %d and %d, want 1 each", keptAgain, len(first), len(second))
		}
		rt.settleFollowUp(ctx, first[0], nil) // the first pass succeeds: settled
		rt.retryLater(ctx, f, false)          // a new failure makes the entry again
		rt.settleFollowUp(ctx, second[0], nil)
		if n := rt.PendingFollowUps(); n != 1 {
			t.Errorf("kept again %v: %d follow-ups kept; the stale retry settled the entry made after it was taken", keptAgain, n)
		}
	}
}

// followRetry.gen: "a retry settles the entry only if nothing kept it
// again meanwhile": a follow-up kept again while its retry runs stays kept
// when that retry succeeds.
func TestRetryDoesNotSettleAFollowUpKeptAgainWhileItRan(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := errRuntime(t, memory.New(), Config{Clock: func() time.Time { return now }})
	f := followUp{kind: followTick, runID: "r1"}
	rt.retryLater(ctx, f, false)
	now = now.Add(time.Hour)
	due := rt.takeDueRetries()
	if len(due) != 1 {
		t.Fatalf("due retries: %d, want 1", len(due))
	}
	rt.retryLater(ctx, f, false) // kept again (a new failure) while the retry runs
	rt.settleFollowUp(ctx, due[0], nil)
	if n := rt.PendingFollowUps(); n != 1 {
		t.Fatalf("%d follow-ups kept; the retry settled an entry kept again after it was taken", n)
	}
}
