package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// ErrNoDeadline is the error of SetWaitDeadline on a run that does not
// wait with a deadline: it is not waiting, waits for a person, a job or a
// child, or waits for an event without a timeout.
var ErrNoDeadline = errors.New("run does not wait with a deadline")

// SetWaitDeadline moves the deadline of a run that waits with one (a
// WAIT_UNTIL, or a WAIT_EVENT with a timeout) to until: a host fires a
// scheduled run at once (until = now) or re-times it after its interval
// changed (gateway-api §4.2, §4.3). It works under the run's lock and
// claim, as UpdateVars does, so it waits for a tick in progress instead
// of racing it. The rest of the wait is kept; updated_at moves; no ledger
// record is written (a deadline is not a step). A deadline at or before
// the runtime's clock makes the run due: the scheduler releases it at its
// next pass (at once when the runtime's store is a scheduler.WakeStore),
// a WAIT_EVENT then resolving as timed out. A paused run keeps its pause
// and falls due once the pause is lifted.
//
// It returns the run as saved. Errors: ErrNoDeadline (wrapped), a zero
// until, ErrOwnRunLocked from within the run's own tick, ErrRunClaimed
// when another runner holds the run.
func (r *Runtime) SetWaitDeadline(ctx context.Context, runID string, until time.Time) (*durable.RunState, error) {
	if until.IsZero() {
		return nil, fmt.Errorf("set wait deadline of run %s: the deadline is the zero time", runID)
	}
	deadline := durable.NewTime(until)
	err := r.hostUpdate(ctx, runID, true, func(run *durable.RunState) (bool, []*durable.StepRecord, error) {
		w := run.Waiting
		if run.Status != durable.RunWaiting || w == nil || !(w.ReleasedWhenDue() || w.Reason == durable.WaitUntil) {
			reason := "no wait"
			if w != nil {
				reason = "a " + string(w.Reason) + " wait"
				if w.Reason == durable.WaitEvent {
					reason += " without a timeout"
				}
			}
			return false, nil, fmt.Errorf("%w (status %s, %s)", ErrNoDeadline, run.Status, reason)
		}
		if w.Until.Equal(deadline.Time) {
			return false, nil, nil
		}
		w.Until = deadline
		return true, nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("set wait deadline of run %s: %w", runID, err)
	}
	return r.GetState(ctx, runID)
}
