package runtimetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
)

// hourlyReminders waits an hour (relative to the clock when it enters
// the wait) three times, noting the time each wait was released at, then
// completes with those times.
func hourlyReminders() *runtime.Workflow {
	return &runtime.Workflow{ID: "hourly", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(time.Hour))}, ResultKey: "held"}, "remind"), nil
		},
		"remind": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			at, _ := run.Vars["reminded_at"].([]any)
			at = append(at, durable.FormatTime(rc.Now().Time))
			run.Vars["reminded_at"] = at
			if len(at) == 3 {
				return runtime.Complete(map[string]any{"reminded_at": at}), nil
			}
			return runtime.Next("wait"), nil
		},
	}}
}

// requireRemindedHourly fails the test unless the run of hourlyReminders
// started at start completed, reminded one, two and three hours later.
func requireRemindedHourly(t *testing.T, h *runtimetest.Harness, id string, start time.Time) {
	t.Helper()
	st := h.State(id)
	if st.Status != durable.RunCompleted {
		t.Fatalf("after Advance the run of three one-hour waits is %s (reminded at %v, waiting %+v); "+
			"a scheduler running those hours releases each wait at its deadline",
			st.Status, st.Vars["reminded_at"], st.Waiting)
	}
	want := []any{
		durable.FormatTime(start.Add(time.Hour)),
		durable.FormatTime(start.Add(2 * time.Hour)),
		durable.FormatTime(start.Add(3 * time.Hour)),
	}
	got, _ := st.Output["reminded_at"].([]any)
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("reminded at %v, want %v", got, want)
	}
}

// TestAdvanceReleasesDeadlinesItPassesInTurn: Advance(d) stands for d of
// time going by under the scheduler's loop, which sleeps until the next
// deadline and releases each wait when it falls due. A run that waits an
// hour three times in a row is, after Advance(3h), completed, reminded at
// +1h, +2h and +3h: not released once at +3h into a wait until +4h.
func TestAdvanceReleasesDeadlinesItPassesInTurn(t *testing.T) {
	t.Parallel()
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{hourlyReminders()}})
	id, st := h.Run("hourly", nil)
	if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("setup: %s %+v", st.Status, st.Waiting)
	}
	if n := h.Advance(3 * time.Hour); n != 3 {
		t.Fatalf("Advance(3h) reported %d runs due, want 3 (one per deadline)", n)
	}
	if now := h.Clock.Now(); !now.Equal(runtimetest.DefaultStart.Add(3 * time.Hour)) {
		t.Fatalf("after Advance(3h) the clock reads %s", now)
	}
	requireRemindedHourly(t, h, id, runtimetest.DefaultStart)
}

// TestAdvanceStepsPastADeadlineLeftDue: a run a pass leaves due (here
// one of a workflow this harness does not serve, in a store it shares
// with another) keeps the earliest deadline; Advance reads past it to the
// deadlines still ahead rather than stop stepping.
func TestAdvanceStepsPastADeadlineLeftDue(t *testing.T) {
	t.Parallel()
	other := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{hourlyReminders()}})
	other.Run("hourly", nil) // due at +1h, for a runner serving "hourly"
	wf := hourlyReminders()
	wf.ID = "hourly_served"
	start := runtimetest.DefaultStart.Add(-time.Minute)
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{wf}, Store: other.Store, Start: start})
	id, _ := h.Run("hourly_served", nil) // due at +59m, +1h59m, +2h59m
	h.Advance(3*time.Hour + time.Minute)
	requireRemindedHourly(t, h, id, start)
}
