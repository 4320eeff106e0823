package runtimetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
)

// spinThenWait takes more steps than one tick's budget (100), then waits
// ten seconds (relative to the clock when it enters the wait), then
// completes, noting when the wait was released.
func spinThenWait(steps int) *runtime.Workflow {
	return &runtime.Workflow{ID: "spin_wait", Entry: "spin", Nodes: map[string]runtime.NodeFunc{
		"spin": spinNode(steps, func(int64) runtime.StepPlan { return runtime.Next("wait") }),
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(10 * time.Second))}, ResultKey: "held"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"released_at": durable.FormatTime(rc.Now().Time)}), nil
		},
	}}
}

// A run that Run left running (its step budget used) is driven on by a
// host's scheduler at once (Scheduled.Run → DriveSoon; the loop's wait is
// 0 for an unfinished run due now), so a ten-second wait it enters then
// starts at the time of the Run and is released ten seconds later. Advance
// lets a minute go by under that loop: the run must have completed, its
// wait released ten seconds after the Run. Today Advance sets the clock
// to the end of its span (there is no deadline yet to step to) before its
// first pass: the run is driven on only at t0+60s, enters its wait then,
// and is left waiting until t0+70s.
func TestAdvanceDrivesOnALeftRunningRunAtTheStartOfItsSpan(t *testing.T) {
	t.Parallel()
	requireReleasedWithinAMinute(t, spinThenWait(150), durable.RunRunning, 10*time.Second,
		"a scheduler drives it on at once")
}

// requireReleasedWithinAMinute runs wf on a fresh harness, requires Run
// to leave it in status setup, lets a minute go by under Advance, and
// requires the run completed with its last wait released `released`
// after the Run; why says why the scheduler gets it there in time.
func requireReleasedWithinAMinute(t *testing.T, wf *runtime.Workflow, setup durable.RunStatus,
	released time.Duration, why string) {
	t.Helper()
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{wf}})
	start := h.Clock.Now()
	id, st := h.Run(wf.ID, nil)
	if st.Status != setup {
		t.Fatalf("setup: after Run the run is %s, want %s", st.Status, setup)
	}
	h.Advance(time.Minute)
	st = h.State(id)
	if st.Status != durable.RunCompleted {
		t.Fatalf("after Run and Advance(1m) the run is %s (waiting %+v); %s, so its last wait is released at %s, "+
			"within the span", st.Status, st.Waiting, why, start.Add(released))
	}
	if got, want := st.Output["released_at"], durable.FormatTime(start.Add(released)); got != want {
		t.Errorf("last wait released at %v, want %v (%s after the Run)", got, want, released)
	}
}

// waitSpinWait waits ten seconds, takes more steps than one scheduler
// drive gives a run (maxTicksPerDrive ticks of 100 steps), then waits ten
// seconds again and completes, noting when that second wait was released.
func waitSpinWait(steps int) *runtime.Workflow {
	wf := spinThenWait(steps)
	wf.ID, wf.Entry = "wait_spin_wait", "first"
	wf.Nodes["first"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
			Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(10 * time.Second))}, ResultKey: "held0"}, "spin"), nil
	}
	return wf
}

// The same within a span: the pass at the first deadline (t0+10s) drives
// the released run, which uses the whole of that drive and is left
// running; the scheduler's loop drives it on at once (nextUnfinished
// makes its wait 0), so its second ten-second wait starts at t0+10s and
// is released at t0+20s, within Advance(1m). Today neither Pass (it does
// not go round again for a run its own drive left running) nor Advance
// (it steps only to wait deadlines) drives it again before the end of the
// span: its second wait starts at t0+60s.
func TestAdvanceDrivesOnARunAPassLeftRunningAtThatTime(t *testing.T) {
	t.Parallel()
	requireReleasedWithinAMinute(t, waitSpinWait(10_050), durable.RunWaiting, 20*time.Second,
		"the scheduler's loop drives on at once a run its drive left running")
}
