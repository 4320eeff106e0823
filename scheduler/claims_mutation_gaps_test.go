package scheduler_test

import (
	"context"
	"errors"
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

// atFlow is workflow "at": it waits until the time in vars["until"]
// (WAIT_UNTIL), then completes.
func atFlow() *runtime.Workflow {
	return &runtime.Workflow{ID: "at", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": run.Vars["until"]}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// heldAndTwoDue sets up, with BatchSize 1 and a scheduler clock ahead of
// the runtime's: run h held back for a retry (its listed deadline, 1m,
// was not released by the runtime, whose clock was behind), then runs a
// and b due at 10s and 20s, before h's deadline. The runtime's clock is
// then moved on, so ticks release what is due.
func heldAndTwoDue(t *testing.T) (s *scheduler.Scheduler, rt *runtime.Runtime, h, a, b string) {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rc := runtimetest.NewClock(t0)
	sc := runtimetest.NewClock(t0.Add(2 * time.Minute))
	rt, _ = setup(t, rc, atFlow())
	ctx := context.Background()
	start := func(until time.Duration) string {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "at",
			Vars: map[string]any{"until": durable.FormatTime(t0.Add(until))}})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
			t.Fatalf("setup: run not waiting: %v %v", st, err)
		}
		return id
	}
	var err error
	s, err = scheduler.New(scheduler.Config{Runtime: rt, Clock: sc.Now, BatchSize: 1, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h = start(time.Minute)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Fatalf("setup: first poll = %d, %v", n, err)
	}
	if st, _ := rt.GetState(ctx, h); st.Status != durable.RunWaiting {
		t.Fatalf("setup: the runtime (clock behind) released h: %s", st.Status)
	}
	a, b = start(10*time.Second), start(20*time.Second)
	rc.Advance(5 * time.Minute)
	return s, rt, h, a, b
}

// PollOnce ticks at most BatchSize runs, even when the listing it read
// (BatchSize plus the held runs, to read past them) holds more that are
// not held.
func TestPollOnceTicksAtMostBatchSizeWhenAHeldRunIsNotListed(t *testing.T) {
	t.Parallel()
	s, rt, _, a, b := heldAndTwoDue(t)
	ctx := context.Background()
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Fatalf("PollOnce = %d, %v; want 1 (BatchSize)", n, err)
	}
	sa, _ := rt.GetState(ctx, a)
	sb, _ := rt.GetState(ctx, b)
	if sa.Status != durable.RunCompleted || sb.Status != durable.RunWaiting {
		t.Fatalf("after one poll of batch 1: a %s, b %s; want a completed and b still waiting", sa.Status, sb.Status)
	}
}

// A run held back for a retry stays held when a poll's listing was cut
// at its limit and did not reach it: only a complete listing says a run
// is no longer due (forgetUnlisted).
func TestHeldRunStaysHeldPastATruncatedListing(t *testing.T) {
	t.Parallel()
	s, rt, h, _, _ := heldAndTwoDue(t)
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		if _, err := s.PollOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := rt.GetState(ctx, h); st.Status != durable.RunWaiting {
		t.Fatalf("run h, held for a retry an hour away, was ticked within the hour (%s): a truncated listing "+
			"that did not list it dropped its hold", st.Status)
	}
}

// chainFlow waits on an event until 1m, then until 2m, then until 3m
// after t0 (each times out), and then completes: each tick releases one
// wait into the next, already due once the clock is past 3m.
func chainFlow(t0 time.Time) *runtime.Workflow {
	wait := func(at time.Duration, next string) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"wait_key": "k", "until": durable.FormatTime(t0.Add(at))}}, next), nil
		}
	}
	return &runtime.Workflow{ID: "chain", Entry: "w1", Nodes: map[string]runtime.NodeFunc{
		"w1": wait(time.Minute, "w2"),
		"w2": wait(2*time.Minute, "w3"),
		"w3": wait(3*time.Minute, "done"),
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// Pass polls again while a poll leaves a run due that is not held back (a
// run released into a wait whose deadline has passed), as its doc says:
// one Pass carries a run through a chain of waits all already due.
func TestPassPollsAgainWhileARunIsReleasedIntoADueWait(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	rt, _ := setup(t, c, chainFlow(t0))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("setup: %s", st.Status)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(10 * time.Minute)
	n, err := s.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted || n != 3 {
		t.Fatalf("after one Pass: run %s at %q, %d polled; want completed through its three due waits (3)",
			st.Status, st.CurrentNode, n)
	}
}

// One drive gives a run that never waits at most maxTicksPerDrive (100)
// ticks, then leaves it running for a later pass, so that due runs are
// not held up behind it.
func TestDriveGivesALoopingRunAHundredTicks(t *testing.T) {
	t.Parallel()
	var steps atomic.Int64
	loop := &runtime.Workflow{ID: "loop", Entry: "l", Nodes: map[string]runtime.NodeFunc{
		"l": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps.Add(1)
			return runtime.Next("l"), nil
		},
	}}
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg, _ := runtime.NewRegistry(loop)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Clock: c.Now, MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(ctx); err != nil { // drives the running run once
		t.Fatal(err)
	}
	if n := steps.Load(); n != 100 {
		t.Fatalf("one drive ran %d one-step ticks; want 100", n)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunRunning {
		t.Fatalf("run %s after the drive; want it left running", st.Status)
	}
}

// failingCommitStore fails every RunCommit.
type failingCommitStore struct{ *memory.Store }

func (s failingCommitStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	return errors.New("injected: commit failed")
}

// A WakeStore signals a deadline only once the commit that wrote it went
// through: a failed commit wrote none, and must not make the loop poll.
func TestWakeStoreDoesNotSignalAFailedCommit(t *testing.T) {
	t.Parallel()
	ws := scheduler.NewWakeStore(failingCommitStore{memory.New()})
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: ws, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	deadline := time.Now().Add(2 * time.Second)
	for s.Stats().PollCycles < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the loop is asleep for its hour
	before := s.Stats().PollCycles
	run := &durable.RunState{RunID: "r1", WorkflowID: "wait", Status: durable.RunWaiting,
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(time.Now().Add(time.Minute))},
		Vars:    map[string]any{}}
	if err := ws.RunCommit(ctx, &store.CommitParams{Run: run}); err == nil {
		t.Fatal("setup: the commit did not fail")
	}
	time.Sleep(200 * time.Millisecond)
	if after := s.Stats().PollCycles; after != before {
		t.Fatalf("the loop polled %d more times after a failed commit; want none (a wake for a deadline never written)",
			after-before)
	}
}

// Scheduled.Respond wakes the loop: an answer whose run then waits on a
// new deadline (written by this process) is released on time, not after
// the loop's PollInterval sleep.
func TestScheduledRespondWakesTheLoopForTheNextDeadline(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "ask_then_wait", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"wait_key": "answer"}, ResultKey: "a"}, "wait"), nil
		},
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(100 * time.Millisecond))}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg}) // no WakeStore
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sd, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	id, st, err := sd.Run(ctx, wf, nil)
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("Run = %v, %v", st, err)
	}
	time.Sleep(50 * time.Millisecond) // the loop goes to sleep for its hour
	if st, err := sd.Respond(ctx, id, map[string]any{"text": "yes"}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("Respond = %v, %v; want the run waiting on its timer", st, err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if st, _ := rt.GetState(ctx, id); st.Status == durable.RunCompleted {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the timer written by Respond's tick was not released within 3s: the loop slept on (Respond did not wake it)")
}

// switchableCommits fails RunCommit while fail is set.
type switchableCommits struct {
	*memory.Store
	fail atomic.Bool
}

func (s *switchableCommits) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.fail.Load() {
		return errors.New("injected: commit failed")
	}
	return s.Store.RunCommit(ctx, p)
}

// A due run's retry back-off doubles only with failures in a row: a tick
// that succeeds in between starts it again from PollInterval.
func TestDueRunBackoffRestartsAfterASuccessfulTick(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	st := &switchableCommits{Store: memory.New()}
	reg, _ := runtime.NewRegistry(chainFlow(t0))
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if got, _ := rt.Tick(ctx, id, runtime.TickOptions{}); got.Status != durable.RunWaiting {
		t.Fatalf("setup: %s", got.Status)
	}
	const poll = time.Minute
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: poll})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(10 * time.Minute) // all three waits are due
	pollOnce := func(want int, what string) {
		t.Helper()
		if n, err := s.PollOnce(ctx); n != want || err != nil {
			t.Fatalf("%s: PollOnce = %d, %v; want %d", what, n, err, want)
		}
	}
	st.fail.Store(true)
	pollOnce(1, "first tick, failing") // held for one PollInterval
	st.fail.Store(false)
	c.Advance(poll)
	pollOnce(1, "second tick, succeeding") // w1 released into w2, due
	if got, _ := rt.GetState(ctx, id); got.CurrentNode != "w2" {
		t.Fatalf("setup: the successful tick left the run at %q; want w2", got.CurrentNode)
	}
	st.fail.Store(true)
	pollOnce(1, "third tick, failing") // a first failure in a row again
	st.fail.Store(false)
	c.Advance(poll)
	pollOnce(1, "one PollInterval after a failure that followed a success")
}
