package runtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

// settleFollowUp: a retry that fails again backs the follow-up off
// further (its back-off doubled), so a run whose follow-up keeps failing
// (a store down, a claim held) is not driven again every second. Were a
// failure kept as a plain keep, the back-off would stay at its first
// second for ever.
func TestFollowUpRetryThatFailsAgainIsBackedOff(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := runtimeWithClock(t, &now)
	rt.settleFollowUp(ctx, followUp{kind: followTick, runID: "r1"}, errors.New("store down"))
	now = now.Add(followRetryFirst)
	due := rt.takeDueRetries()
	if len(due) != 1 {
		t.Fatalf("due: %v, want r1's retry", due)
	}
	rt.settleFollowUp(ctx, due[0], errors.New("store still down"))
	if d := followRetryDueIn(rt, due[0], now); d != 2*followRetryFirst {
		t.Errorf("retry failed again: due in %v, want the back-off doubled (%v)", d, 2*followRetryFirst)
	}
}
