package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestSpecStartTwiceIsAnError pins spec §5.2: start() launches one
// background loop and is an error if the loop is already running.
func TestSpecStartTwiceIsAnError(t *testing.T) {
	t.Parallel()
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, _ := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour})
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.Start(ctx); err == nil {
		t.Fatal("a second Start of a running scheduler succeeded")
	}
	if !s.Running() {
		t.Fatal("the refused Start stopped the running loop")
	}
}

// TestSpecPollStatsAndFailureRecord pins spec §5.2's poll cycle:
// poll_cycles++ and last_poll_at = now at each poll; a failed tick makes
// runs_failed++, records "<iso>: Run <id>: <msg>" and calls
// on_run_failed(run_id, exc).
func TestSpecPollStatsAndFailureRecord(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	st := &switchableCommits{Store: memory.New()}
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if s, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || s.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", s, err)
	}
	var failedIDs []string
	var failedErrs []error
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, OnRunFailed: func(runID string, err error) {
		failedIDs, failedErrs = append(failedIDs, runID), append(failedErrs, err)
	}})

	if _, err := s.PollOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats(); got.PollCycles != 1 || !got.LastPollAt.Equal(t0) || got.RunsResumed != 0 || got.RunsFailed != 0 {
		t.Fatalf("stats after a poll with nothing due: %+v; want 1 cycle at %v", got, t0)
	}

	c.Advance(2 * time.Minute)
	st.fail.Store(true)
	if _, err := s.PollOnce(ctx); err != nil {
		t.Fatal(err)
	}
	got := s.Stats()
	if got.PollCycles != 2 || !got.LastPollAt.Equal(c.Now()) || got.RunsFailed != 1 || got.RunsResumed != 0 {
		t.Fatalf("stats after a failed tick: %+v", got)
	}
	if len(got.Errors) != 1 {
		t.Fatalf("errors %q; want one", got.Errors)
	}
	prefix := durable.FormatTime(c.Now()) + ": Run " + id + ": "
	if e := got.Errors[0]; !strings.HasPrefix(e, prefix) || !strings.Contains(e, "injected: commit failed") {
		t.Errorf("error entry %q; want %q followed by the tick's error", e, prefix)
	}
	if len(failedIDs) != 1 || failedIDs[0] != id || failedErrs[0] == nil {
		t.Errorf("OnRunFailed calls: %v %v; want one for %s", failedIDs, failedErrs, id)
	}
}

// TestSpecFindWaitingRunsFilters pins spec §5.2's find_waiting_runs
// (wait_reason?, workflow_id?, limit): list_runs(status=waiting, …), so
// only waiting runs, of the given reason and workflow; and §5.3's
// create_scheduled_runtime, whose scheduler is started (auto_start).
func TestSpecFindWaitingRunsFilters(t *testing.T) {
	t.Parallel()
	ask := func(id string) *runtime.Workflow {
		return &runtime.Workflow{ID: id, Entry: "ask", Nodes: map[string]runtime.NodeFunc{
			"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, "done"), nil
			},
			"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(nil), nil
			},
		}}
	}
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, ask("a1"), ask("a2"), waitFlow(time.Hour))
	sch, err := scheduler.NewScheduled(context.Background(), rt, scheduler.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	if !sch.Scheduler.Running() {
		t.Fatal("the scheduler of NewScheduled is not running")
	}
	ctx := context.Background()
	start := func(wf string) string {
		t.Helper()
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
			t.Fatalf("setup %s: %v %v", wf, st, err)
		}
		c.Advance(time.Second)
		return id
	}
	a1, a2, w, answered := start("a1"), start("a2"), start("wait"), start("a1")
	if _, err := sch.Respond(ctx, answered, map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	ids := func(reason durable.WaitReason, wf string, limit int) []string {
		t.Helper()
		runs, err := sch.FindWaitingRuns(ctx, reason, wf, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.RunID)
		}
		return out
	}
	check := func(got []string, want ...string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("FindWaitingRuns = %v, want %v", got, want)
		}
	}
	check(ids("", "", 0), w, a2, a1)
	check(ids(durable.WaitUser, "", 0), a2, a1)
	check(ids(durable.WaitUntil, "", 0), w)
	check(ids("", "a1", 0), a1)
	check(ids(durable.WaitUntil, "a1", 0))
	check(ids("", "", 1), w)
}
