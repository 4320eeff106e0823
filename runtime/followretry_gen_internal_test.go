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
// its success forgot a failure it knew nothing of.
func TestStaleRetryDoesNotSettleARecreatedEntry(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := errRuntime(t, memory.New(), Config{Clock: func() time.Time { return now }})
	f := followUp{kind: followTick, runID: "r1"}

	rt.retryLater(ctx, f, false)
	now = now.Add(time.Hour)
	first := rt.takeDueRetries()
	second := rt.takeDueRetries() // a second pass running at the same time
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("due retries: %d and %d, want 1 each", len(first), len(second))
	}
	rt.settleFollowUp(ctx, first[0], nil) // the first pass succeeds: settled
	rt.retryLater(ctx, f, false)          // a new failure keeps the run again
	rt.settleFollowUp(ctx, second[0], nil)
	if n := rt.PendingFollowUps(); n != 1 {
		t.Fatalf("%d follow-ups kept; the stale retry settled the entry kept after it was taken", n)
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

// followRetry.gen: a new entry takes a generation never handed out
// before, not one next to the last. Were it lastGen-1, an entry kept
// again (gen 2), settled by one pass, then made again for the same run
// would get gen 2 back, and a second pass's stale retry of gen 2 would
// forget the new failure.
func TestRecreatedEntryDoesNotReuseAKeptAgainGeneration(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := errRuntime(t, memory.New(), Config{Clock: func() time.Time { return now }})
	f := followUp{kind: followTick, runID: "r1"}

	rt.retryLater(ctx, f, false)
	rt.retryLater(ctx, f, false) // kept again: a new generation
	now = now.Add(time.Hour)
	first := rt.takeDueRetries()
	second := rt.takeDueRetries() // a second pass running at the same time
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("due retries: %d and %d, want 1 each", len(first), len(second))
	}
	rt.settleFollowUp(ctx, first[0], nil) // settled
	rt.retryLater(ctx, f, false)          // a new failure makes the entry again
	rt.settleFollowUp(ctx, second[0], nil)
	if n := rt.PendingFollowUps(); n != 1 {
		t.Fatalf("%d follow-ups kept; the stale retry settled the entry made after it was taken", n)
	}
}
