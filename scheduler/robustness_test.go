package scheduler_test

// What this file checks: the scheduler's lifecycle and loop hold up where
// the spec and the Python scheduler say they must — concurrent and
// re-entrant Stop, panicking callbacks, decorated wake stores, new
// workflows registered while running, the clock it defaults to, runs a
// failed drive left running, and held runs that must not starve later
// due runs. Each test's comment states the rule and the bug it guards
// against.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// rvSlowFlow waits until +1min, then calls the effect "slow" and completes.
func rvSlowFlow() *runtime.Workflow {
	wf := waitFlow(time.Minute)
	wf.ID = "slow"
	wf.Nodes["done"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Request(&durable.Effect{Type: "slow", ResultKey: "r"}, "end"), nil
	}
	wf.Nodes["end"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(map[string]any{"ok": true}), nil
	}
	return wf
}

// TestConcurrentStopWaitsForTheLoop: Stop documents "ends the loop
// and waits for it", and Scheduled.Close is Stop. When two goroutines
// stopped the scheduler at once (a signal handler and a deferred Close,
// say), the second Stop saw running == false and returned at once, while the loop is
// still ticking a run: its caller may then close the store under the loop.
// (Python's stop() has the same early return, but it bounds every stop by
// a join timeout anyway; a Go caller relies on "waits for it".)
func TestConcurrentStopWaitsForTheLoop(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, rvSlowFlow())
	entered, release := make(chan struct{}), make(chan struct{})
	var inFlight atomic.Bool
	rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		inFlight.Store(true)
		defer inFlight.Store(false)
		close(entered)
		<-release // a slow effect that notices the stop late
		return runtime.Completed(map[string]any{}), nil
	}})
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	c.Advance(2 * time.Minute)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: 10 * time.Millisecond})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-entered
	returned := make(chan bool, 2) // whether the effect was still in flight when Stop returned
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); s.Stop(); returned <- inFlight.Load() }()
	}
	select {
	case stillTicking := <-returned:
		if stillTicking {
			t.Errorf("a concurrent Stop returned while the loop was still ticking a run (the loop has not ended)")
		}
	case <-time.After(300 * time.Millisecond):
		// Both Stops wait for the loop, which waits for the effect: correct.
	}
	close(release)
	wg.Wait()
}

// TestStopFromCallbackDoesNotDeadlock: a host that stops the
// scheduler from OnRunResumed (stop once the run it waits for is released)
// deadlocked: the callback runs on the loop goroutine, and Stop waited for
// that goroutine to end. Python's stop() called from on_run_resumed stops
// the scheduler (its join of the current thread raises and the callback's
// error is swallowed; the loop then exits): checked with the peer:
// is_running False, its thread ended, the run completed. Were the
// deadlock back, this test would leave the loop goroutine behind.
func TestStopFromCallbackDoesNotDeadlock(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	c.Advance(2 * time.Minute)
	var s *scheduler.Scheduler
	stopped := make(chan struct{})
	s, _ = scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: 10 * time.Millisecond,
		OnRunResumed: func(st *durable.RunState) {
			s.Stop()
			close(stopped)
		}})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("Stop called from OnRunResumed never returned: the loop waits for itself")
	}
}

// TestPanickingCallbackDoesNotEscapeThePoll: Python wraps
// on_run_resumed / on_run_failed in try/except and goes on with the other
// due runs (runs_resumed counts both runs below). Ours called the callback
// bare: a panic left PollOnce (in the loop, it killed the process), and
// the other due run was not released. The runtime itself turns node and
// handler panics into failures; the scheduler was the odd one out.
func TestPanickingCallbackDoesNotEscapeThePoll(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	var ids []string
	for range 2 {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
		rt.Tick(ctx, id, runtime.TickOptions{})
		ids = append(ids, id)
		c.Advance(time.Second)
	}
	c.Advance(2 * time.Minute)
	var calls atomic.Int32
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now,
		OnRunResumed: func(st *durable.RunState) {
			if calls.Add(1) == 1 {
				panic("host callback bug")
			}
		}})
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("a panic in OnRunResumed escaped PollOnce (the loop goroutine would crash the process): %v", p)
			}
		}()
		s.PollOnce(ctx)
	}()
	for _, id := range ids {
		if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
			t.Errorf("due run %s left %s after a callback panicked for another run", id, st.Status)
		}
	}
}

// TestWakeStoreUnderAnotherDecorator: the scheduler listened to a
// WakeStore only when it was the runtime's outermost store
// (s.st.(*WakeStore)); under any other decorator (observe, hashchain,
// offload: all embed store.Wrapper, whose Unwrap exists for this) its
// signals went nowhere and the loop slept its whole poll interval. Spec
// §4.10 recommends the observable store outermost, so
// observe.Wrap(NewWakeStore(backend)) is a natural stacking.
func TestWakeStoreUnderAnotherDecorator(t *testing.T) {
	reg, _ := runtime.NewRegistry()
	rt, err := runtime.New(runtime.Config{Store: observe.Wrap(scheduler.NewWakeStore(memory.New())), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *durable.RunState, 1)
	s, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour,
		OnRunResumed: func(st *durable.RunState) {
			select {
			case done <- st:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	// Let the loop finish its first poll and go to sleep (1h: nothing is
	// due) before the deadline is written.
	for s.Stats().PollCycles == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	expectReleasedOnSignal(t, rt, done, 2*time.Second,
		"the scheduler slept through the deadline: the WakeStore under observe.Wrap is not listened to")
}

// TestConcurrentRunOfANewWorkflow: Scheduled.Run registered the
// workflow with a check-then-act (Get, then Register): two host
// goroutines running the same not-yet-registered workflow at once raced,
// and the loser's Run failed with `workflow "…" is already registered`
// although the workflow it passed is the one registered.
func TestConcurrentRunOfANewWorkflow(t *testing.T) {
	rt, _ := setup(t, runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	sch, err := scheduler.NewScheduled(context.Background(), rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	ctx := context.Background()
	var failures atomic.Int32
	var first atomic.Value
	for round := 0; round < 200 && failures.Load() == 0; round++ {
		wf := &runtime.Workflow{ID: fmt.Sprintf("new-%d", round), Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}}
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				if _, _, err := sch.Run(ctx, wf, nil); err != nil {
					failures.Add(1)
					first.CompareAndSwap(nil, err.Error())
				}
			}()
		}
		close(gate)
		wg.Wait()
	}
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d concurrent Run calls of the same new workflow failed, e.g. %v", n, first.Load())
	}
}

// TestSchedulerClockDefaultsToTheRuntimes: Config.Clock defaulted to
// time.Now, not to the clock of the runtime it drives; NewScheduled on a
// runtime with its own clock (runtime.Config.Clock) therefore listed runs
// as due that the runtime's tick did not release. Such a tick succeeded,
// was counted as "resumed", left the run due, and nextWait saw a past
// deadline with no retry pending: the loop polled again at once, without
// end (Python polls every poll_interval_s whatever happens).
func TestSchedulerClockDefaultsToTheRuntimes(t *testing.T) {
	c := runtimetest.NewClock(time.Now().Add(-time.Hour)) // the runtime's clock, an hour behind
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("not waiting: %s", st.Status)
	}
	sch, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	sch.Close()
	stats := sch.Scheduler.Stats()
	if stats.PollCycles > 5 {
		t.Fatalf("%d poll cycles in 200ms with a 1h poll interval (%d runs \"resumed\"): the loop spins on a run its tick does not release",
			stats.PollCycles, stats.RunsResumed)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunWaiting {
		t.Fatalf("run released before its deadline by the runtime's clock: %s", st.Status)
	}
}

// commitFailures fails RunCommits on demand: the next n (all, n < 0).
type commitFailures struct {
	store.Wrapper
	left atomic.Int32
}

func (f *commitFailures) RunCommit(ctx context.Context, p *store.CommitParams) error {
	for n := f.left.Load(); n != 0; n = f.left.Load() {
		if n < 0 || f.left.CompareAndSwap(n, n-1) {
			return errors.New("injected: commit failure")
		}
	}
	return f.Wrapper.RunCommit(ctx, p)
}

// slowAfterWait is rvSlowFlow whose wait ends d after the run reaches it.
func slowAfterWait(d time.Duration) *runtime.Workflow {
	wf := rvSlowFlow()
	wf.Nodes["wait"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
			Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(d))}}, "done"), nil
	}
	return wf
}

// TestRunLeftRunningByAFailedDriveIsDrivenAgain: a due run whose
// tick fails after a checkpoint that moved it past its wait (a transient
// store error on the commit after an external effect) is left "running"
// in the store. It is no longer due, the scheduler did not put it in its
// "unfinished" list (only successful drives did), and without claims
// Recover runs only at Start: nothing ticked it again until the
// process restarted, although the scheduler fixed exactly this for runs
// left running by a successful drive (TestRunLeftRunningByADriveIsDrivenAgain).
// Python's scheduler would not re-tick it either (it only looks at due
// runs): this is about our own guarantee.
func TestRunLeftRunningByAFailedDriveIsDrivenAgain(t *testing.T) {
	t.Run("memory", func(t *testing.T) { rvRunLeftRunning(t, memory.New()) })
	t.Run("sqlite", func(t *testing.T) {
		db, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rvRunLeftRunning(t, db)
	})
}

func rvRunLeftRunning(t *testing.T, inner store.Store) {
	flaky := &commitFailures{Wrapper: store.Wrapper{Store: inner}}
	runLeftRunningIsDrivenAgain(t, flaky, func() { flaky.left.Store(1) })
}

// runLeftRunningIsDrivenAgain runs a slowAfterWait run on st; at the
// first call of its effect, fail makes st fail the commit of the effect's
// completion (and whatever else it chooses). A scheduler must then drive
// the run, left running past its wait, to its end.
func runLeftRunningIsDrivenAgain(t *testing.T, st store.Store, fail func()) {
	t.Helper()
	wf := slowAfterWait(30 * time.Millisecond)
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if calls.Add(1) == 1 {
			fail()
		}
		return runtime.Completed(map[string]any{"n": calls.Load()}), nil
	}})
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("not waiting: %s", st.Status)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: 10 * time.Millisecond})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	deadline := time.Now().Add(10 * time.Second) // 1,000 poll intervals
	var cur *durable.RunState
	for time.Now().Before(deadline) {
		if cur, err = rt.GetState(ctx, id); err == nil && cur.Status == durable.RunCompleted {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	stats := s.Stats()
	s.Stop()
	after, err := rt.Tick(ctx, id, runtime.TickOptions{}) // the run is fine: one tick finishes it
	t.Fatalf("run still %s at %q 10 s after its tick failed (failures %d: %v): nothing drives it again (a plain Tick then gives %s, %v)",
		cur.Status, cur.CurrentNode, stats.RunsFailed, stats.Errors, after.Status, err)
}

// TestHeldRunsDoNotStarveLaterDueRuns: PollOnce listed at most
// BatchSize + min(held, 1000) due runs, earliest first, and passed over
// the held ones. With more than 1000 + BatchSize due runs that keep
// failing (the store refusing their commits), every listing held only
// them: a healthy run due later was never listed, never released
// (maxPassedOver's comment promises "beyond that many failing runs, they
// share the batches with the others"; compatibility.md: "polls pass over
// it"). Python starves it too, already behind 100 failing runs.
func TestHeldRunsDoNotStarveLaterDueRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 1002 runs")
	}
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	gone := waitFlow(time.Minute)
	gone.ID = "gone"
	old, _ := runtime.NewRegistry(waitFlow(time.Minute), gone)
	before, _ := runtime.New(runtime.Config{Store: st, Registry: old, Clock: c.Now})
	ctx := context.Background()
	for range 1002 {
		id, _ := before.Start(ctx, runtime.StartParams{WorkflowID: "gone"})
		before.Tick(ctx, id, runtime.TickOptions{})
	}
	c.Advance(time.Second) // the healthy run falls due after all of them
	healthy, _ := before.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	before.Tick(ctx, healthy, runtime.TickOptions{})
	rt, _ := runtime.New(runtime.Config{Store: refusing(st, "gone"), Registry: old, Clock: c.Now}) // "gone" runs' ticks fail
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 1})
	c.Advance(2 * time.Minute)
	// Poll as the loop would, letting time pass whenever a poll finds
	// nothing to do, for up to 3000 polls or one simulated minute (~1003 polls suffice once
	// held runs no longer hide the rest).
	start := c.Now()
	polls := 0
	for ; polls < 3000 && c.Now().Sub(start) < time.Minute; polls++ {
		n, err := s.PollOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := rt.GetState(ctx, healthy); got.Status == durable.RunCompleted {
			return
		}
		if n == 0 {
			c.Advance(time.Second)
		}
	}
	got, _ := rt.GetState(ctx, healthy)
	t.Fatalf("healthy due run still %s after %d polls (%v simulated) behind 1002 failing runs (%d failures counted): never listed",
		got.Status, polls, c.Now().Sub(start), s.Stats().RunsFailed)
}

// TestDoneWaitsForACallbackAStopCouldNotWaitFor: a Stop made from another
// goroutine while the loop runs OnRunResumed returns at once (it cannot be
// told apart from a Stop made by the callback); Done is how that caller
// waits for the loop. It must stay open while the callback runs and close
// once the loop has ended.
func TestDoneWaitsForACallbackAStopCouldNotWaitFor(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	c.Advance(2 * time.Minute)
	inCallback, release := make(chan struct{}), make(chan struct{})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: 10 * time.Millisecond,
		OnRunResumed: func(*durable.RunState) {
			close(inCallback)
			<-release
		}})
	select {
	case <-s.Done():
	default:
		t.Fatal("Done of a scheduler never started is not closed")
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-inCallback
	s.Stop()
	select {
	case <-s.Done():
		t.Fatal("Done closed while the loop's callback still runs")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done never closed after the callback returned and the loop was stopped")
	}
}
