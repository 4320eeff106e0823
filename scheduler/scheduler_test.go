package scheduler_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func waitFlow(delay time.Duration) *runtime.Workflow {
	return &runtime.Workflow{ID: "wait", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			until := durable.FormatTime(rc.Now().Add(delay))
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": until}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// refusedWorkflow wraps a store so that every commit of an existing run
// of one workflow fails: ticks of its due runs fail each time, as a store
// refusing their writes makes them. (A workflow missing from the registry
// no longer makes a due run's tick fail: the scheduler leaves such runs
// for a runner that serves it.)
type refusedWorkflow struct {
	store.Wrapper
	workflowID string
}

// refusing wraps inner, refusing the commits of runs of workflowID.
func refusing(inner store.Store, workflowID string) *refusedWorkflow {
	return &refusedWorkflow{Wrapper: store.Wrapper{Store: inner}, workflowID: workflowID}
}

func (s *refusedWorkflow) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && !p.Create && p.Run.WorkflowID == s.workflowID {
		return fmt.Errorf("injected: commit of run %s of workflow %q refused", p.Run.RunID, s.workflowID)
	}
	return s.Wrapper.RunCommit(ctx, p)
}

func setup(t *testing.T, c *runtimetest.Clock, wfs ...*runtime.Workflow) (*runtime.Runtime, *memory.Store) {
	t.Helper()
	st := memory.New()
	reg, _ := runtime.NewRegistry(wfs...)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st
}

func TestPollOnceReleasesOnlyDueRuns(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	var ids []string
	for i := 0; i < 3; i++ {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
		if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
			t.Fatalf("not waiting: %s", st.Status)
		}
		ids = append(ids, id)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 2})
	if n, err := s.PollOnce(ctx); n != 0 || err != nil {
		t.Fatalf("before deadline: %d %v", n, err)
	}
	c.Advance(2 * time.Minute)
	if n, _ := s.PollOnce(ctx); n != 2 {
		t.Fatalf("first batch = %d, want 2", n)
	}
	if n, _ := s.PollOnce(ctx); n != 1 {
		t.Fatalf("second batch = %d, want 1", n)
	}
	if n, _ := s.PollOnce(ctx); n != 0 {
		t.Fatalf("third batch = %d, want 0", n)
	}
	for _, id := range ids {
		if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
			t.Fatalf("run %s: %s", id, st.Status)
		}
	}
	if got := s.Stats(); got.RunsResumed != 3 || got.PollCycles != 4 {
		t.Fatalf("stats %+v", got)
	}
}

// TestPausedDueRunsDoNotHoldBackOthers: more paused runs are due than a
// poll takes, yet the one that is not paused is released.
func TestPausedDueRunsDoNotHoldBackOthers(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	var paused []string
	for range 3 {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
		rt.Tick(ctx, id, runtime.TickOptions{})
		if _, err := rt.Pause(ctx, id, "hold"); err != nil {
			t.Fatal(err)
		}
		paused = append(paused, id)
		c.Advance(time.Second) // the paused runs fall due first
	}
	last, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	rt.Tick(ctx, last, runtime.TickOptions{})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 2})
	c.Advance(2 * time.Minute)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Fatalf("poll found %d due (%v), want only the run that is not paused", n, err)
	}
	if st, _ := rt.GetState(ctx, last); st.Status != durable.RunCompleted {
		t.Fatalf("run that is not paused: %s", st.Status)
	}
	// Lifting a pause makes the run due again.
	if _, err := rt.ResumeRun(ctx, paused[0]); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.PollOnce(ctx); n != 1 {
		t.Fatalf("after resume-run: %d due, want 1", n)
	}
	if st, _ := rt.GetState(ctx, paused[0]); st.Status != durable.RunCompleted {
		t.Fatalf("resumed run: %s", st.Status)
	}
}

func TestLoopWakesAtDeadline(t *testing.T) {
	t.Parallel()
	rt, _ := setup(t, runtimetest.NewClock(time.Now()), waitFlow(0))
	real, _ := runtime.New(runtime.Config{Store: rt.Store(), Registry: rt.Registry()})
	done := make(chan *durable.RunState, 8)
	sch, err := scheduler.NewScheduled(context.Background(), real, scheduler.Config{
		PollInterval: time.Hour, // only the deadline can wake the loop in time
		OnRunResumed: func(st *durable.RunState) { done <- st },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	wf := waitFlow(30 * time.Millisecond)
	wf.ID = "wait30"
	id, st, err := sch.Run(context.Background(), wf, nil)
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("run: %v %v", st, err)
	}
	// The loop may also drive the run while Run ticks it into its wait
	// (the registry gained its workflow: driveNewlyServed), and report
	// that drive, the run waiting; the completion is what must come.
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-done:
			if got.RunID != id || got.Status != durable.RunCompleted && got.Status != durable.RunWaiting {
				t.Fatalf("resumed %s in %s", got.RunID, got.Status)
			}
			if got.Status == durable.RunCompleted {
				return
			}
		case <-deadline:
			t.Fatal("the scheduler did not wake at the deadline")
		}
	}
}

func TestScheduledRespondAndFind(t *testing.T) {
	t.Parallel()
	ask := &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "name?"}, ResultKey: "name"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"hello": run.Vars["name"]}), nil
		},
	}}
	rt, _ := setup(t, runtimetest.NewClock(time.Now()))
	sch, err := scheduler.NewScheduled(context.Background(), rt, scheduler.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	ctx := context.Background()
	id, _, err := sch.Run(ctx, ask, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	waiting, _ := sch.FindWaitingRuns(ctx, durable.WaitUser, "", 10)
	if len(waiting) != 1 || waiting[0].RunID != id {
		t.Fatalf("waiting runs %v", waiting)
	}
	st, err := sch.Respond(ctx, id, map[string]any{"text": "Ada"})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("respond: %v %v", st, err)
	}
	if _, err := sch.Respond(ctx, id, map[string]any{}); err == nil {
		t.Fatal("respond to a completed run must fail")
	}
}

func TestRecoverTicksInterruptedRuns(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(-time.Minute))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"}) // left running, as after a crash
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("interrupted run not continued: %s", st.Status)
	}
}

// A due run another runner holds and works on is left to it: the poll's
// Tick waits a moment for the holder, sees the run changed, and passes
// over it (no failure) until a later poll. (A held run that stays
// unchanged through that wait is taken instead: runtime's
// TestTickTakesAnIdleDueRunFromItsHolder.)
func TestClaimsSkipRunsHeldByAnotherRunner(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	c.Advance(2 * time.Minute)
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: c.Now()}); err != nil {
		t.Fatal(err)
	}
	// The holder commits the run (still waiting, due) while the poll waits.
	time.AfterFunc(100*time.Millisecond, func() {
		run, err := st.RunGet(ctx, id)
		if err == nil {
			run.Vars["holder"] = "other"
			err = st.RunCommit(ctx, &store.CommitParams{Run: run})
		}
		if err != nil {
			t.Error(err)
		}
	})
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	s.PollOnce(ctx)
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunWaiting || got.Vars["holder"] != "other" {
		t.Fatalf("a run another runner worked on was ticked: %s %v", got.Status, got.Vars)
	}
	if n := s.Stats().RunsFailed; n != 0 {
		t.Fatalf("a run claimed elsewhere counted as a failure (%d)", n)
	}
	st.RunRelease(ctx, id, "other")
	if n, _ := s.PollOnce(ctx); n != 0 {
		t.Fatalf("a run held elsewhere was tried again at once (%d ticked)", n)
	}
	c.Advance(time.Second) // PollInterval
	s.PollOnce(ctx)
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Fatalf("released run not ticked: %s", got.Status)
	}
}

// TestFailingDueRunsBackOff: due runs whose tick fails (the store refuses
// their commits) are tried again later, with a growing delay; meanwhile they
// neither fill the batches nor keep the loop from sleeping.
func TestFailingDueRunsBackOff(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	gone := waitFlow(time.Minute)
	gone.ID = "gone"
	old, _ := runtime.NewRegistry(waitFlow(time.Minute), gone)
	before, _ := runtime.New(runtime.Config{Store: st, Registry: old, Clock: c.Now})
	ctx := context.Background()
	for _, wf := range []string{"gone", "gone", "gone", "wait"} {
		id, _ := before.Start(ctx, runtime.StartParams{WorkflowID: wf})
		before.Tick(ctx, id, runtime.TickOptions{})
		c.Advance(time.Second) // the "gone" runs fall due first
	}
	rt, _ := runtime.New(runtime.Config{Store: refusing(st, "gone"), Registry: old, Clock: c.Now})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 2})
	c.Advance(2 * time.Minute)
	polls := []struct{ ticked, failed int }{
		{2, 2}, // two "gone" runs fail
		{2, 3}, // the third fails; "wait" is released behind the held ones
		{0, 3}, // all that is due waits for its retry
	}
	for i, want := range polls {
		n, err := s.PollOnce(ctx)
		if err != nil || n != want.ticked || s.Stats().RunsFailed != int64(want.failed) {
			t.Fatalf("poll %d: ticked %d (%v), %d failed; want %d, %d", i, n, err, s.Stats().RunsFailed, want.ticked, want.failed)
		}
	}
	if got, _ := rt.GetState(ctx, waitRunOf(t, st)); got.Status != durable.RunCompleted {
		t.Fatalf("the run behind the failing ones: %s", got.Status)
	}
	if w := scheduler.NextWait(s, ctx); w <= 0 || w > time.Second {
		t.Fatalf("loop would sleep %v with only held runs due; want until the first retry (≤ 1s)", w)
	}
	// First retry after PollInterval, the next after twice that.
	c.Advance(time.Second)
	if n, _ := s.PollOnce(ctx); n != 2 {
		t.Fatalf("first retry ticked %d, want 2", n)
	}
	c.Advance(time.Second)
	if n, _ := s.PollOnce(ctx); n != 1 {
		t.Fatalf("after 1s more, ticked %d; want only the run whose first retry is due", n)
	}
	if n, _ := s.PollOnce(ctx); n != 0 {
		t.Fatalf("ticked %d; want none until the doubled delay passes", n)
	}
	c.Advance(time.Second)
	if n, _ := s.PollOnce(ctx); n != 2 {
		t.Fatalf("after the doubled delay, ticked %d; want 2", n)
	}
}

// TestStopMidTickIsNotAFailure: stopping the scheduler while it ticks a
// run interrupts the tick without failing the run or counting a failure;
// the next scheduler's Recover finishes it.
func TestStopMidTickIsNotAFailure(t *testing.T) {
	t.Parallel()
	c, rt, id, entered := dueRunWithBlockingCall(t)
	ctx := context.Background()
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-entered
	s.Stop()
	if st := s.Stats(); st.RunsFailed != 0 {
		t.Fatalf("a stop counted as a failure: %v", st.Errors)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunRunning {
		t.Fatalf("run after the stop: %s (%s), want running at its checkpoint", st.Status, st.Error)
	}
	again, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if err := again.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("run after recovery: %s (%s)", st.Status, st.Error)
	}
}

// dueRunWithBlockingCall starts a run whose one-minute wait is due on c
// and whose next node calls an effect that, the first time, signals
// entered and blocks until its context ends (then fails); later calls
// complete, and the run then completes.
func dueRunWithBlockingCall(t *testing.T) (c *runtimetest.Clock, rt *runtime.Runtime, id string, entered chan struct{}) {
	t.Helper()
	c = runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wf := waitFlow(time.Minute)
	wf.Nodes["done"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Request(&durable.Effect{Type: "call", ResultKey: "r"}, "end"), nil
	}
	wf.Nodes["end"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(map[string]any{"ok": true}), nil
	}
	rt, _ = setup(t, c, wf)
	entered = make(chan struct{}, 1)
	var calls atomic.Int32
	rt.SetHandler("call", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if calls.Add(1) == 1 {
			entered <- struct{}{}
			<-ctx.Done()
			return runtime.Failed("call: " + ctx.Err().Error()), nil
		}
		return runtime.Completed(map[string]any{}), nil
	}})
	ctx := context.Background()
	id, _ = rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	c.Advance(2 * time.Minute)
	return c, rt, id, entered
}

// waitRunOf returns the id of the one "wait" run in st.
func waitRunOf(t *testing.T, st store.Store) string {
	t.Helper()
	runs, err := st.RunList(context.Background(), &store.RunListParams{WorkflowID: "wait"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("wait runs: %v, %v", runs, err)
	}
	return runs[0].RunID
}

// A run released from its wait that needs more steps than one tick allows
// is driven to its end, not left running.
func TestDriveContinuesPastTheStepBudget(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	long := &runtime.Workflow{ID: "long", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			until := durable.FormatTime(rc.Now().Add(time.Minute))
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": until}}, "loop"), nil
		},
		"loop": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := runtime.AsInt(run.Vars["n"]) // json.Number once read back after the wait
			if n >= 250 {
				return runtime.Complete(map[string]any{"n": n}), nil
			}
			run.Vars["n"] = n + 1
			return runtime.Next("loop"), nil
		},
	}}
	rt, _ := setup(t, c, long)
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "long"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	c.Advance(2 * time.Minute)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	s.PollOnce(ctx)
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("run left %s at %s after its release", st.Status, st.CurrentNode)
	}
}

// A deadline committed through a WakeStore wakes a scheduler that would
// otherwise sleep for its whole poll interval.
func TestWakeStoreWakesTheLoop(t *testing.T) {
	t.Parallel()
	reg, _ := runtime.NewRegistry()
	rt, err := runtime.New(runtime.Config{Store: scheduler.NewWakeStore(memory.New()), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *durable.RunState, 1)
	s, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour,
		OnRunResumed: func(st *durable.RunState) { done <- st }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	expectReleasedOnSignal(t, rt, done, 10*time.Second, "the scheduler slept through the deadline")
}

// expectReleasedOnSignal starts a run of a 20 ms WAIT_UNTIL flow and ticks
// it into its wait directly, not through Scheduled, so that only the
// store can tell a sleeping scheduler loop about the deadline; then it
// waits for done to report the run completed, failing with why after
// within.
func expectReleasedOnSignal(t *testing.T, rt *runtime.Runtime, done <-chan *durable.RunState, within time.Duration, why string) {
	t.Helper()
	wf := waitFlow(20 * time.Millisecond)
	if err := rt.Registry().Register(wf); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("%s", st.Status)
	}
	select {
	case st := <-done:
		if st.RunID != id || st.Status != durable.RunCompleted {
			t.Fatalf("%s %s", st.RunID, st.Status)
		}
	case <-time.After(within):
		t.Fatal(why)
	}
}

// Recover runs again every 15 s by default when the runtime claims runs
// (several runners), and only at Start when it does not.
func TestRecoverIntervalDefault(t *testing.T) {
	t.Parallel()
	reg, _ := runtime.NewRegistry()
	for _, claims := range []*runtime.Claims{nil, {}} {
		rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Claims: claims})
		if err != nil {
			t.Fatal(err)
		}
		s, err := scheduler.New(scheduler.Config{Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		want := time.Duration(0)
		if claims != nil {
			want = 15 * time.Second
		}
		if got := scheduler.RecoverInterval(s); got != want {
			t.Errorf("RecoverInterval with claims %v = %v; want %v", claims != nil, got, want)
		}
	}
}

// With claims (several runners), the loop runs Recover again every
// RecoverInterval: a run left running after Start — by a runner that
// died, say — is continued without a restart.
func TestRecoverIntervalContinuesRunsLeftRunning(t *testing.T) {
	t.Parallel()
	chain := &runtime.Workflow{ID: "two", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Next("b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(chain)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Claims: &runtime.Claims{}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *durable.RunState, 1)
	s, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour,
		RecoverInterval: 20 * time.Millisecond, OnRunResumed: func(st *durable.RunState) { done <- st }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: "two"}) // running, never ticked
	if err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-done:
		if st.RunID != id || st.Status != durable.RunCompleted {
			t.Fatalf("%s %s", st.RunID, st.Status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a run left running after Start was never recovered")
	}
}

// TestRecoverLeavesRunsOfWorkflowsItLacks: a runner whose registry lacks
// a run's workflow leaves the run running, with no error, for a runner
// that has the workflow, which then continues it.
func TestRecoverLeavesRunsOfWorkflowsItLacks(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	owner, st := setup(t, c, waitFlow(-time.Minute))
	ctx := context.Background()
	id, _ := owner.Start(ctx, runtime.StartParams{WorkflowID: "wait"}) // left running, as after a crash
	other := &runtime.Workflow{ID: "other", Entry: "n", Nodes: map[string]runtime.NodeFunc{
		"n": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	reg, _ := runtime.NewRegistry(other)
	stranger, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: stranger, Clock: c.Now})
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if run, _ := st.RunGet(ctx, id); run.Status != durable.RunRunning {
		t.Fatalf("a runner without the workflow left the run %s (%q); want it running", run.Status, run.Error)
	}
	if errs := s.Stats().Errors; len(errs) != 0 {
		t.Fatalf("errors recorded for a run of another runner's workflow: %q", errs)
	}
	s2, _ := scheduler.New(scheduler.Config{Runtime: owner, Clock: c.Now})
	if err := s2.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if run, _ := st.RunGet(ctx, id); run.Status != durable.RunCompleted {
		t.Fatalf("the runner with the workflow left the run %s", run.Status)
	}
}
