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

// Running tells whether the loop runs (Python's is_running): not before
// Start, between Start and Stop, again after a restart.
func TestSchedulerRunningFollowsStartAndStop(t *testing.T) {
	t.Parallel()
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, _ := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour})
	ctx := context.Background()
	if s.Running() {
		t.Fatal("running before Start")
	}
	for round := range 2 {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if !s.Running() {
			t.Fatalf("round %d: not running after Start", round)
		}
		s.Stop()
		if s.Running() {
			t.Fatalf("round %d: running after Stop", round)
		}
	}
}

// Stats keeps the latest Config.MaxErrorsKept errors (100 by default).
func TestStatsKeepsTheLatestMaxErrorsKept(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ kept, want int }{{3, 3}, {0, 5}} {
		c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		st := &switchableCommits{Store: memory.New()}
		reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
		rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
		ctx := context.Background()
		var ids []string
		for range 5 {
			id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
			if s, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || s.Status != durable.RunWaiting {
				t.Fatalf("setup: %v %v", s, err)
			}
			ids = append(ids, id)
			c.Advance(time.Millisecond) // due in this order
		}
		c.Advance(2 * time.Minute)
		st.fail.Store(true)
		s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, MaxErrorsKept: tc.kept})
		if _, err := s.PollOnce(ctx); err != nil {
			t.Fatal(err)
		}
		errs := s.Stats().Errors
		if len(errs) != tc.want {
			t.Fatalf("MaxErrorsKept %d: %d errors kept, want %d: %q", tc.kept, len(errs), tc.want, errs)
		}
		if last := errs[len(errs)-1]; !strings.Contains(last, ids[4]) {
			t.Fatalf("MaxErrorsKept %d: the last error kept is %q, want the last run's (%s)", tc.kept, last, ids[4])
		}
	}
}

// RunWith starts the run with its actor and session and caps the first
// tick at MaxSteps (Python's run(workflow, vars, actor_id, max_steps)).
func TestScheduledRunWithPassesActorSessionAndStepCap(t *testing.T) {
	t.Parallel()
	reg := &runtime.Registry{}
	rt, _ := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	ctx := context.Background()
	sch, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	counter := &runtime.Workflow{ID: "count", Entry: "inc", Nodes: map[string]runtime.NodeFunc{
		"inc": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := run.Vars["n"].(int)
			run.Vars["n"] = n + 1
			if n+1 >= 10 {
				return runtime.Complete(map[string]any{"n": n + 1}), nil
			}
			return runtime.Next("inc"), nil
		},
	}}
	id, st, err := sch.RunWith(ctx, counter, scheduler.RunParams{
		Vars: map[string]any{"n": 0}, ActorID: "alice", SessionID: "s-1", MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.RunID != id || st.ActorID != "alice" || st.SessionID != "s-1" {
		t.Fatalf("run %s: actor %q, session %q; want alice, s-1", st.RunID, st.ActorID, st.SessionID)
	}
	if st.Status != durable.RunRunning || st.Vars["n"] != 3 {
		t.Fatalf("after a 3-step first tick: status %s, n %v; want running at n 3", st.Status, st.Vars["n"])
	}
	if _, ok := reg.Get("count"); !ok {
		t.Fatal("RunWith did not register the workflow")
	}
}

// TestStatsErrorsAreTheLast100AndACopy: Stats.Errors holds the last 100
// errors (the newest kept), and Stats returns a copy the caller may
// change.
func TestStatsErrorsAreTheLast100AndACopy(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	gone := waitFlow(time.Minute)
	gone.ID = "gone"
	old, _ := runtime.NewRegistry(gone)
	before, _ := runtime.New(runtime.Config{Store: st, Registry: old, Clock: c.Now})
	ctx := context.Background()
	var ids []string
	for range 101 {
		id, err := before.Start(ctx, runtime.StartParams{WorkflowID: "gone"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := before.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		c.Advance(time.Millisecond) // due in this order
	}
	rt, _ := runtime.New(runtime.Config{Store: refusing(st, "gone"), Registry: old, Clock: c.Now}) // every tick fails
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 200})
	c.Advance(2 * time.Minute)
	if n, err := s.PollOnce(ctx); err != nil || n != 101 {
		t.Fatalf("poll ticked %d (%v); want 101", n, err)
	}
	errs := s.Stats().Errors
	if len(errs) != 100 {
		t.Fatalf("%d errors kept; want 100", len(errs))
	}
	if !strings.Contains(errs[99], ids[100]) {
		t.Fatalf("last error %q; want the newest failure (run %s)", errs[99], ids[100])
	}
	for _, e := range errs {
		if strings.Contains(e, ids[0]) {
			t.Fatalf("the oldest failure (run %s) is still kept: %q", ids[0], e)
		}
	}
	errs[0] = "changed by the caller"
	if got := s.Stats().Errors[0]; got == "changed by the caller" {
		t.Fatal("Stats returned the scheduler's own Errors slice, not a copy")
	}
}
