package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// blockingFlow's only node signals entered, then blocks until release
// is closed or its context ends (a long LLM call that honours its
// context), then completes.
func blockingFlow(entered, release chan struct{}) *runtime.Workflow {
	var once sync.Once
	return &runtime.Workflow{ID: "block", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			once.Do(func() { close(entered) })
			select {
			case <-release:
			case <-ctx.Done():
				return runtime.StepPlan{}, ctx.Err()
			}
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// recoverBehindHostTick sets up a runner with claims (so the loop runs
// Recover every RecoverInterval) whose host is ticking a run in this
// process (Scheduled.Run, a long node), and lets the loop's periodic
// Recover list that run as "running". It returns the Scheduled and a
// cleanup that releases the host's tick and stops the scheduler.
func recoverBehindHostTick(t *testing.T) (*scheduler.Scheduled, func()) {
	t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	reg, _ := runtime.NewRegistry(blockingFlow(entered, release), waitFlow(50*time.Millisecond))
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Claims: &runtime.Claims{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sc, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: 20 * time.Millisecond,
		RecoverInterval: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hostDone := make(chan struct{})
	go func() { // a host request running a workflow: its node takes long
		defer close(hostDone)
		wf, _ := rt.Registry().Get("block")
		sc.Run(ctx, wf, nil)
	}()
	<-entered
	time.Sleep(200 * time.Millisecond) // several RecoverIntervals: the loop's Recover lists the run as running
	var once sync.Once
	return sc, func() {
		once.Do(func() {
			close(release)
			<-hostDone
			sc.Close()
		})
	}
}

// TestPeriodicRecoverDoesNotHoldUpDueRuns: with claims, the
// loop runs Recover every RecoverInterval, and Recover drives every run
// listed "running" — including one that a host's Tick in this very
// process is working on (a long effect). drive → Tick → Runtime.lock
// blocks (not context-aware) until that host tick ends, so the loop
// releases no due deadline meanwhile: a WAIT_UNTIL due in 50 ms stays
// waiting for as long as the other run's LLM call lasts.
func TestPeriodicRecoverDoesNotHoldUpDueRuns(t *testing.T) {
	sc, cleanup := recoverBehindHostTick(t)
	defer cleanup()
	ctx := context.Background()
	wf, _ := sc.Registry().Get("wait")
	id, st, err := sc.Run(ctx, wf, nil)
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("wait run: %v %v", st, err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if got, _ := sc.GetState(ctx, id); got != nil && got.Status == durable.RunCompleted {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, _ := sc.GetState(ctx, id)
	t.Fatalf("a WAIT_UNTIL due after 50ms is still %s 3s later: the loop's periodic Recover is blocked on the run lock of a run a host's Tick in this process holds", got.Status)
}

// TestStopIsPromptWhileRecoverMeetsAHostTick: the same
// blocked Recover makes Stop (Scheduled.Close) wait for the host's tick
// to end: cancelling the loop's context does not reach a goroutine
// waiting on Runtime.lock.
func TestStopIsPromptWhileRecoverMeetsAHostTick(t *testing.T) {
	sc, cleanup := recoverBehindHostTick(t)
	defer cleanup()
	stopped := make(chan struct{})
	go func() {
		sc.Scheduler.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("Stop did not return within 2s: the loop's Recover waits on the run lock of a host's tick in this process, and Stop's cancel does not reach it")
	}
}

// TestStopDuringStartRecoveryIsPrompt: Start drives the runs a
// crash left running (Recover) with the caller's context, not the loop's:
// a Stop made meanwhile (a shutdown signal while the process starts)
// cancels a context nothing uses yet and waits for done, which only the
// loop launched after the whole recovery closes. The recovery's tick in
// flight (an LLM call) is not interrupted, unlike a tick of the loop
// (docs/compatibility.md: "Stop cancels the context of a tick in flight
// … a stop does not wait on an LLM call").
func TestStopDuringStartRecoveryIsPrompt(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	entered, release := make(chan struct{}), make(chan struct{})
	rt, _ := setup(t, c, blockingFlow(entered, release))
	ctx := context.Background()
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "block"}); err != nil { // left running, as after a crash
		t.Fatal(err)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	started := make(chan error, 1)
	go func() { started <- s.Start(ctx) }()
	defer func() {
		close(release)
		<-started
		s.Stop()
	}()
	<-entered
	stopped := make(chan struct{})
	go func() {
		s.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("Stop during Start's recovery did not return within 2s: the recovery's tick runs under the caller's context, which Stop does not cancel")
	}
}

// TestStopFromCallbackAfterRestartDoesNotDeadlock: Stop tells
// a Stop made from a callback of the loop by one flag, loopCallback,
// shared by every loop. After a restart made while a callback of the
// first Start runs (supported: TestRestartDuringStartRecoveryDoesNotCrash),
// that older callback's deferred reset clears the flag while the new
// loop is inside its own callback; a Stop from that callback then waits
// for its own loop to end — forever.
func TestStopFromCallbackAfterRestartDoesNotDeadlock(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	one := &runtime.Workflow{ID: "one", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	rt, _ := setup(t, c, one, waitFlow(time.Minute))
	ctx := context.Background()
	r1, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}) // left running: the first Start's Recover drives it
	r2, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if st, _ := rt.Tick(ctx, r2, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("r2 %s", st.Status)
	}
	c.Advance(2 * time.Minute) // r2 is due: the second loop's poll ticks it

	inC1, releaseC1 := make(chan struct{}), make(chan struct{})
	inC2, c1Over := make(chan struct{}), make(chan struct{})
	stopReturned := make(chan struct{})
	var s *scheduler.Scheduler
	s, _ = scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour,
		OnRunResumed: func(st *durable.RunState) {
			switch st.RunID {
			case r1: // callback of the first Start's recovery
				close(inC1)
				<-releaseC1
			case r2: // callback of the second loop
				close(inC2)
				<-c1Over
				s.Stop() // documented: from a callback, returns at once
				close(stopReturned)
			}
		}})
	started := make(chan error, 1)
	go func() { started <- s.Start(ctx) }()
	<-inC1
	s.Stop() // during a callback: returns at once (documented)
	if err := s.Start(ctx); err != nil {
		t.Fatalf("restart: %v", err)
	}
	<-inC2
	close(releaseC1)
	if err := <-started; err != nil { // the first callback has returned, its deferred reset run
		t.Fatal(err)
	}
	close(c1Over)
	select {
	case <-stopReturned:
		<-s.Done()
	case <-time.After(2 * time.Second):
		t.Fatal("Stop called from OnRunResumed of the restarted loop never returned: the first Start's callback cleared the shared loopCallback flag, so Stop waits for its own loop")
	}
}

// TestStaleRetryOfAnUnfinishedRunDoesNotSpinTheLoop: a run X
// whose ticks failed twice after a checkpoint (a store error) is left
// running, in unfinished, to be driven again after its back-off (2
// poll intervals). Meanwhile a periodic Recover drives it and finds it
// held by another runner (ErrRunClaimed): retryLater(X, false) sets its
// retry time to one poll interval, before its back-off ends, and leaves
// the unfinished entry. Once that retry time has passed, nothing drives X
// (driveUnfinished waits for the back-off; X is not due, PollOnce never
// lists it), forgetUnlisted keeps the entry (X is unfinished), and
// nextWait, seeing a run due now (H, held for its own back-off) and a
// retry entry whose time has passed, answers 0: the loop polls without
// pause, ticking nothing, until X's back-off ends (up to 5 min).
func TestStaleRetryOfAnUnfinishedRunDoesNotSpinTheLoop(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := memory.New()
	flaky := &commitFailures{Wrapper: store.Wrapper{Store: inner}}
	slow := slowAfterWait(time.Minute)
	gone := waitFlow(time.Minute)
	gone.ID = "gone"
	oldReg, _ := runtime.NewRegistry(slow, gone)
	before, _ := runtime.New(runtime.Config{Store: flaky, Registry: oldReg, Clock: c.Now})
	rt, err := runtime.New(runtime.Config{Store: refusing(flaky, "gone"), Registry: oldReg, Clock: c.Now, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		flaky.left.Store(1) // the commit of the effect's completion fails
		return runtime.Completed(map[string]any{}), nil
	}})
	ctx := context.Background()
	x, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	if st, _ := rt.Tick(ctx, x, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("x %s", st.Status)
	}
	h, _ := before.Start(ctx, runtime.StartParams{WorkflowID: "gone"}) // rt's commits of it are refused: its ticks fail
	if st, _ := before.Tick(ctx, h, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("h %s", st.Status)
	}
	c.Advance(2 * time.Minute)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	s.PollOnce(ctx) // T0: both fail once; X left running (unfinished at T0+1s)
	if cur, _ := inner.RunGet(ctx, x); cur.Status != durable.RunRunning {
		t.Fatalf("x not left running: %s", cur.Status)
	}
	c.Advance(time.Second)
	s.Pass(ctx) // T1: X driven again, fails again (back-off 2s: T3); H too (T3)
	if got := s.Stats().RunsFailed; got != 4 {
		t.Fatalf("RunsFailed %d, want 4", got)
	}
	c.Advance(500 * time.Millisecond)
	if err := inner.RunClaim(ctx, &store.RunClaimParams{RunID: x, Owner: "other", TTL: time.Hour, Now: c.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(ctx); err != nil { // T1.5: X held by another runner: retry at T2.5
		t.Fatal(err)
	}
	if st := s.Stats(); st.RunsFailed != 4 {
		t.Fatalf("Recover's drive of X failed (%d failures, %q); want it passed over as held elsewhere", st.RunsFailed, st.Errors)
	}
	c.Advance(1100 * time.Millisecond) // T2.6: nothing can be done before T3
	for i := range 3 {
		if n, err := s.PollOnce(ctx); n != 0 || err != nil {
			t.Fatalf("poll %d ticked %d (%v); want nothing (H is held until T3)", i, n, err)
		}
		if w := scheduler.NextWait(s, ctx); w <= 0 {
			t.Fatalf("poll %d ticked nothing, nothing can be done for 400ms (X's back-off, H's retry), yet the loop would sleep %v: it polls without pause", i, w)
		}
	}
}
