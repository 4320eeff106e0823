package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// slowCall is a one-node workflow whose LLM_CALL effect is handled by
// the handler given to claimRuntime.
func slowCall() *runtime.Workflow {
	return &runtime.Workflow{ID: "slow", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}, ResultKey: "r"}, "")
		}),
	}}
}

func claimRuntime(t *testing.T, st store.Store, owner string, ttl time.Duration, h runtime.HandlerFunc) *runtime.Runtime {
	t.Helper()
	return claimingRuntime(t, st, runtime.Claims{Owner: owner, TTL: ttl}, slowCall(), h)
}

// claimingRuntime is a runtime on st claiming runs as c says, running wf,
// with h handling LLM_CALL.
func claimingRuntime(t *testing.T, st store.Store, c runtime.Claims, wf *runtime.Workflow, h runtime.HandlerFunc) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &c,
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: h}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// An effect that outlasts the claim TTL keeps its run: the claim is
// renewed while the tick works, so a second runner never gets the run
// and the effect runs once.
func TestClaimRenewedDuringLongEffect(t *testing.T) {
	t.Parallel()
	st := memory.New()
	const ttl = time.Second // a renewal late by a tenth of it loses the run: room for a loaded machine
	var calls atomic.Int32
	slow := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		select {
		case <-time.After(4 * ttl):
			return runtime.Completed(map[string]any{"text": "done"}), nil
		case <-ctx.Done():
			return runtime.Outcome{}, ctx.Err()
		}
	}
	a := claimRuntime(t, st, "a", ttl, slow)
	b := claimRuntime(t, st, "b", ttl, slow)
	ctx := context.Background()
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	done := tickAsync(a, id)
	var bErr error
	for tries := 0; ; tries++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("tick of the claim holder: %v", err)
			}
			if tries < 5 {
				t.Fatalf("only %d attempts by the second runner during the effect", tries)
			}
			if n := calls.Load(); n != 1 {
				t.Fatalf("effect executed %d times, want 1 (last error of the second runner: %v)", n, bErr)
			}
			got, _ := a.GetState(ctx, id)
			if got.Status != durable.RunCompleted {
				t.Fatalf("run %s, want completed", got.Status)
			}
			return
		case <-time.After(ttl / 5):
		}
		st, err := b.Tick(ctx, id, runtime.TickOptions{})
		if err == nil && st.Status == durable.RunCompleted {
			// The holder's tick ended the run between the select and
			// this tick: a terminal run ticks as a no-op. The checks
			// above run once done delivers.
			continue
		}
		if bErr = err; !errors.Is(bErr, runtime.ErrRunClaimed) {
			t.Fatalf("second runner's tick during the effect = %v, want ErrRunClaimed", bErr)
		}
	}
}

// stolenClaims is a store whose claims by owner "a" stop renewing after
// the first: another runner has taken the run (as after a stall longer
// than the TTL).
type stolenClaims struct {
	*memory.Store
	claimed atomic.Int32
}

func (s *stolenClaims) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Owner == "a" && s.claimed.Add(1) > 1 {
		return store.ErrConflict
	}
	return s.Store.RunClaim(ctx, p)
}

// A tick whose claim is lost stops: its effect's context is cancelled,
// nothing more of it is committed, and the caller gets ErrRunClaimed.
func TestLostClaimCancelsTheTick(t *testing.T) {
	t.Parallel()
	for _, ignoresCtx := range []bool{false, true} {
		st := &stolenClaims{Store: memory.New()}
		var cancelled atomic.Bool
		var once sync.Once
		h := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			if ignoresCtx {
				time.Sleep(time.Second) // far past the first renewal (TTL/3 = 20 ms)
				return runtime.Completed(map[string]any{"text": "late"}), nil
			}
			select {
			case <-ctx.Done():
				once.Do(func() { cancelled.Store(true) })
				return runtime.Outcome{}, ctx.Err()
			case <-time.After(10 * time.Second):
				return runtime.Completed(map[string]any{"text": "too late"}), nil
			}
		}
		a := claimRuntime(t, st, "a", 60*time.Millisecond, h)
		ctx := context.Background()
		id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Tick(ctx, id, runtime.TickOptions{})
		if !errors.Is(err, runtime.ErrRunClaimed) {
			t.Fatalf("ignoresCtx=%v: tick that lost its claim = %v, want ErrRunClaimed", ignoresCtx, err)
		}
		if !ignoresCtx && !cancelled.Load() {
			t.Fatal("the effect's context was not cancelled when the claim was lost")
		}
		got, _ := a.GetState(ctx, id)
		if got.Status != durable.RunRunning || got.Vars["r"] != nil {
			t.Fatalf("ignoresCtx=%v: run after the lost claim: %s, r=%v; want running without the result", ignoresCtx, got.Status, got.Vars["r"])
		}
		recs, _ := a.GetLedger(ctx, id)
		for _, r := range recs {
			if r.Status != durable.StepStarted {
				t.Fatalf("ignoresCtx=%v: the tick that lost its claim committed a %s record", ignoresCtx, r.Status)
			}
		}
	}
}

// heldListener starts a run of a workflow waiting on the session event
// "ping" on a memory store with claims (runtime owner "me"), and claims
// it as runner "other" for an hour, as a runner would that stopped between
// committing the wait and releasing its claim.
func heldListener(t *testing.T) (st *memory.Store, rt *runtime.Runtime, id string) {
	t.Helper()
	listener := &runtime.Workflow{ID: "listen", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "ping", "scope": "session"}, ResultKey: "evt"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"got": run.Vars["evt"] != nil})
		}),
	}}
	st = memory.New()
	reg, _ := runtime.NewRegistry(listener)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ = rt.Start(ctx, runtime.StartParams{WorkflowID: "listen", SessionID: "s1"})
	if got, _ := rt.Tick(ctx, id, runtime.TickOptions{}); got.Status != durable.RunWaiting {
		t.Fatalf("listener: %s", got.Status)
	}
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return st, rt, id
}

// emitPing emits the event heldListener's run waits on and checks that it
// was delivered and completed the run.
func emitPing(t *testing.T, rt *runtime.Runtime, id string) {
	t.Helper()
	ctx := context.Background()
	delivered, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(delivered) != 1 || delivered[0] != id {
		t.Fatalf("delivered to %v, want [%s]", delivered, id)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted || got.Output["got"] != true {
		t.Fatalf("listener after the event: %s %v", got.Status, got.Output)
	}
}

// holderCommitsSoon makes runner "other", holding run id, commit it a
// moment from now with change applied (and then release it), as a runner
// working on the run would while a caller waits for its claim.
func holderCommitsSoon(t *testing.T, st *memory.Store, id string, change func(*durable.RunState), release bool) {
	t.Helper()
	ctx := context.Background()
	time.AfterFunc(100*time.Millisecond, func() {
		run, err := st.RunGet(ctx, id)
		if err == nil {
			change(run)
			err = st.RunCommit(ctx, &store.CommitParams{Run: run})
		}
		if err == nil && release {
			err = st.RunRelease(ctx, id, "other")
		}
		if err != nil {
			t.Error(err)
		}
	})
}

// An event reaches a listener that another runner holds for a moment (as
// while it resumes the listener with another event): delivery waits for
// the claim instead of dropping the event for that listener.
func TestEventWaitsForAListenerHeldElsewhere(t *testing.T) {
	t.Parallel()
	st, rt, id := heldListener(t)
	time.AfterFunc(50*time.Millisecond, func() { _ = st.RunRelease(context.Background(), id, "other") })
	emitPing(t, rt, id)
}

// A listener whose holder stopped after committing the wait (a runner
// killed before releasing its claim) stays claimed for the claim's TTL.
// Delivery gave up after its short wait, so every event meanwhile was
// lost (the emitter completed with delivered 0, and EmitEvent returned no
// error). A listener still waiting, unchanged, after that wait is now
// taken from its holder, as a cancel takes a run.
func TestEventTakesAnIdleListenerFromItsHolder(t *testing.T) {
	t.Parallel()
	st, rt, id := heldListener(t)
	emitPing(t, rt, id)
	// The holder lost its claim: a claim by it now conflicts with nobody's.
	if err := st.RunClaim(context.Background(), &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: time.Now()}); err != nil {
		t.Fatalf("claim of the old holder after the delivery: %v", err)
	}
}

// A holder that commits the listener while delivery waits for it is
// working on it: delivery leaves it alone, and EmitEvent says so.
func TestEventLeavesABusyListenerToItsHolder(t *testing.T) {
	t.Parallel()
	st, rt, id := heldListener(t)
	ctx := context.Background()
	holderCommitsSoon(t, st, id, func(run *durable.RunState) { run.Vars["touched"] = true }, false)
	delivered, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s1"})
	if len(delivered) != 0 || !errors.Is(err, runtime.ErrRunClaimed) || !strings.Contains(err.Error(), id) {
		t.Fatalf("EmitEvent = %v, %v; want no delivery and ErrRunClaimed naming %s", delivered, err, id)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunWaiting || got.Vars["evt"] != nil {
		t.Fatalf("the busy listener: %s, evt=%v; want it waiting, untouched by the event", got.Status, got.Vars["evt"])
	}
}

// A host's answer to a run whose holder stopped after committing the wait
// failed at once with ErrRunClaimed, for the claim's whole TTL (a gateway
// applying the answer from its command inbox drops a command that fails).
// Resume now waits for the holder like the host updates, and takes a run
// still waiting, unchanged, after that wait.
func TestResumeTakesAnIdleRunFromItsHolder(t *testing.T) {
	t.Parallel()
	_, rt, id := heldListener(t)
	ctx := context.Background()
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"by": "host"}})
	if err != nil || got.Status != durable.RunCompleted || got.Output["got"] != true {
		t.Fatalf("Resume = %v, %v; want the run completed", got, err)
	}
}

// A run its holder commits while Resume waits for it is the holder's:
// Resume gives up with ErrRunClaimed and leaves it alone.
func TestResumeLeavesABusyRunToItsHolder(t *testing.T) {
	t.Parallel()
	st, rt, id := heldListener(t)
	ctx := context.Background()
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	key := run.Waiting.WaitKey
	holderCommitsSoon(t, st, id, func(run *durable.RunState) { run.Vars["touched"] = true }, false)
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"by": "host"}}); !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("Resume: %v; want ErrRunClaimed", err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunWaiting || got.Vars["evt"] != nil {
		t.Fatalf("the busy run: %s, evt=%v; want it waiting, unanswered", got.Status, got.Vars["evt"])
	}
}

// timerWorkflow is workflow "timer": node "wait" waits until 12:01 on
// 2026-12-01 (WAIT_UNTIL), then "done" completes with {"ok": true}.
func timerWorkflow() *runtime.Workflow {
	return &runtime.Workflow{ID: "timer", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": "2026-12-01T12:01:00+00:00"}, ResultKey: "woke"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
}

// heldDueRun starts a run that waits until a time already past (WAIT_UNTIL,
// on a runtime whose clock is then moved past it) on a memory store with
// claims (owner "me"), claimed for an hour by runner "other".
func heldDueRun(t *testing.T) (st *memory.Store, rt *runtime.Runtime, id string) {
	t.Helper()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	timer := timerWorkflow()
	st = memory.New()
	reg, _ := runtime.NewRegistry(timer)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ = rt.Start(ctx, runtime.StartParams{WorkflowID: "timer"})
	if got, _ := rt.Tick(ctx, id, runtime.TickOptions{}); got.Status != durable.RunWaiting {
		t.Fatalf("timer run: %s", got.Status)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return st, rt, id
}

// A due run whose holder stopped after committing the wait was refused to
// every scheduler for the claim's TTL, holding the timer up that long. A
// Tick now waits for the holder and takes a due run still unchanged.
func TestTickTakesAnIdleDueRunFromItsHolder(t *testing.T) {
	t.Parallel()
	_, rt, id := heldDueRun(t)
	got, err := rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("Tick = %v, %v; want the due run completed", got, err)
	}
}

// A due run its holder works on while the Tick waits (the holder ticks it:
// the usual race of two schedulers polling one store) is the holder's:
// the Tick reports ErrRunClaimed, as it did at once before, and does not
// tick it again.
func TestTickLeavesADueRunItsHolderWorkedOn(t *testing.T) {
	t.Parallel()
	st, rt, id := heldDueRun(t)
	ctx := context.Background()
	holderCommitsSoon(t, st, id, func(run *durable.RunState) {
		run.Status, run.Waiting, run.Output = durable.RunCompleted, nil, map[string]any{"by": "other"}
	}, true)
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("Tick: %v; want ErrRunClaimed", err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted || got.Output["by"] != "other" {
		t.Fatalf("the run: %s %v; want it as its holder left it", got.Status, got.Output)
	}
}

// A runner killed between a run's terminal commit and the release of its
// claim left Ticks of that run refused with ErrRunClaimed for the claim's
// whole TTL, though nothing is left to do: a Tick returns the ended run.
func TestTickReturnsAnEndedRunHeldElsewhere(t *testing.T) {
	t.Parallel()
	st, rt, id := heldDueRun(t)
	ctx := context.Background()
	if err := st.RunRelease(ctx, id, "other"); err != nil {
		t.Fatal(err)
	}
	if got, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("Tick = %v, %v; want the run completed", got, err)
	}
	// Another runner claims the ended run and dies holding it.
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || got.Status != durable.RunCompleted || got.Output["ok"] != true {
		t.Fatalf("Tick = %v, %v; want the completed run as stored", got, err)
	}
}

// A pause of a waiting run whose holder stopped after committing the wait
// failed with ErrRunClaimed for the claim's whole TTL. Host updates now
// take a run still waiting unchanged after their wait, as resumes do.
func TestPauseTakesAnIdleWaitingRunFromItsHolder(t *testing.T) {
	t.Parallel()
	_, rt, id := heldListener(t)
	ctx := context.Background()
	if _, err := rt.Pause(ctx, id, "maintenance"); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if got, _ := rt.GetState(ctx, id); !runtime.IsPaused(got) {
		t.Fatalf("the run after Pause: %s, not paused", got.Status)
	}
}

// claimTimes records the Now and TTL of every claim.
type claimTimes struct {
	*memory.Store
	mu  sync.Mutex
	now []time.Time
	ttl []time.Duration
}

func (s *claimTimes) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	s.mu.Lock()
	s.now = append(s.now, p.Now)
	s.ttl = append(s.ttl, p.TTL)
	s.mu.Unlock()
	return s.Store.RunClaim(ctx, p)
}

// Claims leave the time to the store (the database server's clock on a
// store shared across machines) unless the runtime was given a Clock.
func TestClaimsUseTheStoreClockUnlessGivenOne(t *testing.T) {
	t.Parallel()
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, clock := range []func() time.Time{nil, func() time.Time { return fixed }} {
		st := &claimTimes{Store: memory.New()}
		reg, err := runtime.NewRegistry(slowCall())
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &runtime.Claims{Owner: "a"}, Clock: clock,
			Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				return runtime.Completed(map[string]any{"text": "ok"}), nil
			}}}})
		if err != nil {
			t.Fatal(err)
		}
		id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "slow"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Tick(t.Context(), id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		st.mu.Lock()
		got := st.now
		st.mu.Unlock()
		if len(got) == 0 {
			t.Fatal("the tick claimed nothing")
		}
		want := time.Time{}
		if clock != nil {
			want = fixed
		}
		for _, now := range got {
			if !now.Equal(want) {
				t.Fatalf("claim Now = %v with clock set %v; want %v", now, clock != nil, want)
			}
		}
	}
}

// A claim lasts a minute by default: renewals every second keep a live
// runner's claims, so the TTL only decides how soon a dead runner's runs
// are continued elsewhere.
func TestClaimsDefaultTTLIsAMinute(t *testing.T) {
	t.Parallel()
	st := &claimTimes{Store: memory.New()}
	reg, err := runtime.NewRegistry(chain(3))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &runtime.Claims{Owner: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(t.Context(), id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.ttl) == 0 {
		t.Fatal("the tick claimed nothing")
	}
	for _, ttl := range st.ttl {
		if ttl != time.Minute {
			t.Fatalf("claim TTL = %v; want the default of 1m", ttl)
		}
	}
}

// A host's pause through one runner while another runner executes the
// run's effect waits for that runner instead of committing beside it
// (which would make its commit conflict, drop the effect's completion and
// execute the effect again when the run continues).
func TestPauseWaitsForTheRunnerHoldingTheRun(t *testing.T) {
	t.Parallel()
	st := memory.New()
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	slow := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if calls.Add(1) == 1 {
			close(entered)
		}
		<-release
		return runtime.Completed(map[string]any{"text": "done"}), nil
	}
	a := claimRuntime(t, st, "a", time.Minute, slow)
	b := claimRuntime(t, st, "b", time.Minute, slow)
	ctx := context.Background()
	id, _ := a.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	tickDone := tickAsync(a, id)
	<-entered
	pauseDone := make(chan error, 1)
	go func() {
		_, err := b.Pause(ctx, id, "hold")
		pauseDone <- err
	}()
	select {
	case err := <-pauseDone:
		t.Fatalf("pause returned while the other runner held the run: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-tickDone; err != nil {
		t.Fatalf("tick: %v", err)
	}
	if err := <-pauseDone; err != nil {
		t.Fatalf("pause: %v", err)
	}
	got, _ := a.GetState(ctx, id)
	if got.Status != durable.RunCompleted || calls.Load() != 1 {
		t.Fatalf("run %s after %d executions; want completed by the tick (the pause came after), once", got.Status, calls.Load())
	}
}

// claimThenFail takes a claim and reports a failure, as a call cancelled
// after the database committed its statement does.
type claimThenFail struct {
	*memory.Store
	fail atomic.Bool
}

func (s *claimThenFail) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	err := s.Store.RunClaim(ctx, p)
	if err == nil && s.fail.Load() {
		return context.Canceled
	}
	return err
}

// A claim whose taking failed is released all the same: the run is not
// left held until the claim expires.
func TestFailedClaimIsReleased(t *testing.T) {
	t.Parallel()
	st := &claimThenFail{Store: memory.New()}
	done := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{}), nil
	}
	a := claimRuntime(t, st, "a", time.Hour, done)
	b := claimRuntime(t, st, "b", time.Hour, done)
	ctx := context.Background()
	id, _ := a.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	st.fail.Store(true)
	if _, err := a.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("tick with a failing claim = %v", err)
	}
	st.fail.Store(false)
	if got, err := b.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("another runner after the failed claim: %v %v (the claim stayed held)", got, err)
	}
}

// Cancel made through a runner that does not hold the run takes the run
// from the one that does, at once: the holder learns it at its next
// renewal, its effect in flight is interrupted (or, when the handler
// ignores its context, its result is dropped), and the attempt ends as
// cancelled in the ledger, once.
func TestCancelTakesTheRunFromItsHolder(t *testing.T) {
	t.Parallel()
	for _, ignoresCtx := range []bool{false, true} {
		st := memory.New()
		entered := make(chan struct{})
		var calls atomic.Int32
		var cause atomic.Value
		h := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			calls.Add(1)
			close(entered)
			if ignoresCtx {
				time.Sleep(300 * time.Millisecond) // many renewals (every 20 ms)
				return runtime.Completed(map[string]any{"text": "late"}), nil
			}
			select {
			case <-ctx.Done():
				cause.Store(context.Cause(ctx))
				return runtime.Outcome{}, ctx.Err()
			case <-time.After(10 * time.Second):
				return runtime.Completed(map[string]any{"text": "too late"}), nil
			}
		}
		runner := func(owner string) *runtime.Runtime {
			return claimingRuntime(t, st, runtime.Claims{Owner: owner, TTL: time.Minute, RenewEvery: 20 * time.Millisecond}, slowCall(), h)
		}
		a, b := runner("a"), runner("b")
		ctx := context.Background()
		id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
		if err != nil {
			t.Fatal(err)
		}
		tickDone := tickAsync(a, id)
		<-entered
		got, err := b.Cancel(ctx, id, "stop")
		if err != nil || got.Status != durable.RunCancelled || got.Error != "stop" {
			t.Fatalf("ignoresCtx=%v: cancel through the other runner = %+v, %v; want cancelled", ignoresCtx, got, err)
		}
		// A handler that ignores its context returns on its own; its tick
		// then finds the claim lost, or (on a starved machine, before a
		// renewal told it) its commit refused by the cancel's.
		if err := <-tickDone; !errors.Is(err, runtime.ErrRunClaimed) && !(ignoresCtx && err == nil) {
			t.Fatalf("ignoresCtx=%v: the holder's tick = %v, want ErrRunClaimed", ignoresCtx, err)
		}
		if !ignoresCtx {
			if c, _ := cause.Load().(error); !errors.Is(c, runtime.ErrRunClaimed) {
				t.Errorf("the effect's context ended with %v, want the lost claim", c)
			}
		}
		got, _ = a.GetState(ctx, id)
		if got.Status != durable.RunCancelled || got.Vars["r"] != nil || calls.Load() != 1 {
			t.Fatalf("ignoresCtx=%v: run %s, r=%v after %d calls; want cancelled without the result, one call",
				ignoresCtx, got.Status, got.Vars["r"], calls.Load())
		}
		recs, _ := a.GetLedger(ctx, id)
		byStatus := map[durable.StepStatus]int{}
		var startedID, cancelledID string
		for _, r := range recs {
			byStatus[r.Status]++
			switch {
			case r.Status == durable.StepStarted:
				startedID = r.StepID
			case r.Status == durable.StepCancelled:
				cancelledID = r.StepID
			}
		}
		if byStatus[durable.StepStarted] != 1 || byStatus[durable.StepCancelled] != 1 || cancelledID != startedID ||
			byStatus[durable.StepCompleted] != 1 { // the cancelled status event
			t.Errorf("ignoresCtx=%v: ledger %v; want the attempt STARTED then cancelled, and the status event", ignoresCtx, byStatus)
		}
	}
}

// A resume whose commit comes after a cancel that took the run from its
// runner fails as stale: the answer is not recorded and the caller is
// not told it was.
func TestResumeOvertakenByACancelIsStale(t *testing.T) {
	t.Parallel()
	st := memory.New()
	entered, release := make(chan struct{}), make(chan struct{})
	wf := &runtime.Workflow{ID: "ask_think", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "answer"}, "think")
		}),
		"think": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			close(entered)
			<-release // the pure step after the resume: the resume is not committed yet
			return runtime.Complete(map[string]any{"answer": run.Vars["answer"]}), nil
		},
	}}
	runner := func(owner string) *runtime.Runtime {
		// Renewals far apart: the resume meets the cancel at its commit.
		return claimingRuntime(t, st, runtime.Claims{Owner: owner, TTL: time.Minute, RenewEvery: time.Minute}, wf, nil)
	}
	a, b := runner("a"), runner("b")
	ctx := context.Background()
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "ask_think"})
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := a.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || waiting.Status != durable.RunWaiting {
		t.Fatalf("tick: %v, %v", waiting, err)
	}
	resumed := make(chan error, 1)
	go func() {
		_, err := a.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: waiting.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
		resumed <- err
	}()
	<-entered
	if got, err := b.Cancel(ctx, id, "stop"); err != nil || got.Status != durable.RunCancelled {
		t.Fatalf("cancel: %v, %v", got, err)
	}
	close(release)
	var stale *runtime.StaleResumeError
	if err := <-resumed; !errors.As(err, &stale) || stale.Status != "cancelled" {
		t.Fatalf("resume overtaken by the cancel = %v; want a stale resume of a cancelled run", err)
	}
	recs, _ := a.GetLedger(ctx, id)
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			t.Fatalf("the overtaken resume left a record: %+v", r)
		}
	}
}

// A sync subworkflow whose child another runner holds does not fail the
// parent: the parent's tick stops at its checkpoint (ErrRunClaimed) and
// completes when ticked again once the child is free.
func TestSyncChildHeldElsewhereInterruptsTheParent(t *testing.T) {
	t.Parallel()
	st := memory.New()
	reg, err := runtime.NewRegistry(
		&runtime.Workflow{ID: "sync_parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload: map[string]any{"workflow_id": "sync_child", "run_id": "kid"}, ResultKey: "child"}, "done")
			}),
			"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"child": run.Vars["child"]})
			}),
		}},
		&runtime.Workflow{ID: "sync_child", Entry: "only", Nodes: map[string]runtime.NodeFunc{
			"only": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &runtime.Claims{Owner: "a", TTL: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "kid", Owner: "other", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "sync_parent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("tick with the child held elsewhere = %v, want ErrRunClaimed", err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunRunning {
		t.Fatalf("parent after the interrupted tick: %s %q; want running at its checkpoint", got.Status, got.Error)
	}
	if err := st.RunRelease(ctx, "kid", "other"); err != nil {
		t.Fatal(err)
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("tick once the child is free = %v, %v; want completed", got, err)
	}
	child, _ := got.Output["child"].(map[string]any)
	if out, _ := child["output"].(map[string]any); out["ok"] != true {
		t.Errorf("parent output %v lacks the child's", got.Output)
	}
}

// pauseThenCancel holds the first pause commit until the first cancel
// commit has been built, so that the pause lands between the cancel's
// load and its commit.
type pauseThenCancel struct {
	store.Wrapper
	pauseAt, cancelAt chan struct{} // closed when each commit arrives
	pauseGo, cancelGo chan struct{} // closed to let each through
	paused, cancelled atomic.Bool
}

func (s *pauseThenCancel) RunCommit(ctx context.Context, p *store.CommitParams) error {
	switch {
	case runtime.IsPaused(p.Run) && s.paused.CompareAndSwap(false, true):
		close(s.pauseAt)
		<-s.pauseGo
	case p.Run.Status == durable.RunCancelled && s.cancelled.CompareAndSwap(false, true):
		close(s.cancelAt)
		<-s.cancelGo
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// A cancel through one runner whose commit meets a pause committed
// through the runner it took the run from (the pause landed first) does
// not give up on the paused run: it reloads it and cancels it.
func TestCancelOvertakenByAPauseCancelsAgain(t *testing.T) {
	t.Parallel()
	st, a, b, id := pauseCancelRig(t)
	ctx := context.Background()
	paused := make(chan error, 1)
	go func() { _, err := a.Pause(ctx, id, "hold"); paused <- err }()
	<-st.pauseAt // a holds the run, its pause commit on its way
	cancelled := make(chan error, 1)
	var final *durable.RunState
	go func() {
		var err error
		final, err = b.Cancel(ctx, id, "stop")
		cancelled <- err
	}()
	<-st.cancelAt // b took the run and loaded it unpaused
	close(st.pauseGo)
	if err := <-paused; err != nil {
		t.Fatalf("pause: %v", err)
	}
	close(st.cancelGo)
	if err := <-cancelled; err != nil || final.Status != durable.RunCancelled {
		t.Fatalf("cancel overtaken by the pause = %s (paused %v), %v; want the run cancelled", final.Status, runtime.IsPaused(final), err)
	}
}

// listHeld holds the first ledger read until released.
type listHeld struct {
	store.Wrapper
	at, release chan struct{}
	once        sync.Once
}

func (s *listHeld) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.at)
		<-s.release
	}
	return s.Wrapper.LedgerList(ctx, p)
}

// Two cancels of one run through two runners: the one whose claim the
// other took midway does not fail; it finds the run cancelled.
func TestTwoCancelsThroughTwoRunners(t *testing.T) {
	t.Parallel()
	st := &listHeld{Wrapper: store.Wrapper{Store: memory.New()}, at: make(chan struct{}), release: make(chan struct{})}
	a, b := runnerPair(t, st, runtime.Claims{TTL: time.Minute, RenewEvery: 2 * time.Millisecond}, slowCall())
	ctx := context.Background()
	id, _ := a.Start(ctx, runtime.StartParams{WorkflowID: "slow"}) // running, never ticked
	first := make(chan error, 1)
	go func() {
		st, err := a.Cancel(ctx, id, "first")
		if err == nil && st.Status != durable.RunCancelled {
			err = fmt.Errorf("status %s", st.Status)
		}
		first <- err
	}()
	<-st.at // a holds the run, reading its ledger
	if got, err := b.Cancel(ctx, id, "second"); err != nil || got.Status != durable.RunCancelled || got.Error != "second" {
		t.Fatalf("the second cancel = %v, %v", got, err)
	}
	time.Sleep(50 * time.Millisecond) // many renewals: a learns it lost the run
	close(st.release)
	if err := <-first; err != nil {
		t.Fatalf("the cancel whose claim the other took = %v; want it to find the run cancelled", err)
	}
}

// A renewal may come before the claim's taker has stored its timer (a
// period shorter than the time between the two): the race detector
// watches this test.
func TestClaimRenewedAtOnce(t *testing.T) {
	t.Parallel()
	slow := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		time.Sleep(5 * time.Millisecond) // renewals while the effect runs
		return runtime.Completed(map[string]any{"text": "done"}), nil
	}
	rt := claimingRuntime(t, memory.New(), runtime.Claims{Owner: "a", TTL: time.Minute, RenewEvery: time.Microsecond}, slowCall(), slow)
	ctx := context.Background()
	for range 20 {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
		if got, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.Status != durable.RunCompleted {
			t.Fatalf("tick with renewals every microsecond: %v, %v", got, err)
		}
	}
}

// getHeld holds the first run read after it is armed until the reader's
// context ends.
type getHeld struct {
	store.Wrapper
	armed atomic.Bool
	at    chan struct{}
}

func (s *getHeld) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	if s.armed.CompareAndSwap(true, false) {
		close(s.at)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Wrapper.RunGet(ctx, runID)
}

// A tick or a host update whose claim a cancel through another runner
// takes while it loads the run reports the lost claim, not a failed read.
func TestClaimLostWhileLoading(t *testing.T) {
	t.Parallel()
	ops := map[string]func(rt *runtime.Runtime, id string) error{
		"tick": func(rt *runtime.Runtime, id string) error {
			_, err := rt.Tick(context.Background(), id, runtime.TickOptions{})
			return err
		},
		"pause": func(rt *runtime.Runtime, id string) error {
			_, err := rt.Pause(context.Background(), id, "hold")
			return err
		},
	}
	for name, op := range ops {
		st := &getHeld{Wrapper: store.Wrapper{Store: memory.New()}, at: make(chan struct{})}
		a, b := runnerPair(t, st, runtime.Claims{TTL: time.Minute, RenewEvery: 2 * time.Millisecond}, slowCall())
		ctx := context.Background()
		id, _ := a.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
		st.armed.Store(true)
		done := make(chan error, 1)
		go func() { done <- op(a, id) }()
		<-st.at
		if got, err := b.Cancel(ctx, id, "stop"); err != nil || got.Status != durable.RunCancelled {
			t.Fatalf("%s: cancel: %v, %v", name, got, err)
		}
		if err := <-done; !errors.Is(err, runtime.ErrRunClaimed) {
			t.Fatalf("%s whose claim went while it loaded the run = %v, want ErrRunClaimed", name, err)
		}
	}
}

// A pause whose commit comes after a cancel through another runner took
// the run and committed (the pausing runner has not learnt it yet)
// applies itself to the run as it now is: a cancelled run stays
// cancelled, and the pause does not fail.
func TestPauseOvertakenByACancel(t *testing.T) {
	t.Parallel()
	st, a, b, id := pauseCancelRig(t)
	close(st.cancelGo) // the cancel goes through at once
	ctx := context.Background()
	type result struct {
		st  *durable.RunState
		err error
	}
	paused := make(chan result, 1)
	go func() { st, err := a.Pause(ctx, id, "hold"); paused <- result{st, err} }()
	<-st.pauseAt
	if got, err := b.Cancel(ctx, id, "stop"); err != nil || got.Status != durable.RunCancelled {
		t.Fatalf("cancel: %v, %v", got, err)
	}
	close(st.pauseGo)
	if res := <-paused; res.err != nil || res.st.Status != durable.RunCancelled {
		t.Fatalf("pause overtaken by the cancel = %v, %v; want no error and the run cancelled", res.st, res.err)
	}
}

// tickAsync ticks id on rt in a goroutine; the channel receives the
// tick's error.
func tickAsync(rt *runtime.Runtime, id string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := rt.Tick(context.Background(), id, runtime.TickOptions{})
		done <- err
	}()
	return done
}

// pauseCancelRig is two runners a and b on a pauseThenCancel store
// (renewals a minute apart: neither learns of a lost claim), and a run
// started and waiting on an event.
func pauseCancelRig(t *testing.T) (st *pauseThenCancel, a, b *runtime.Runtime, id string) {
	t.Helper()
	listener := &runtime.Workflow{ID: "listen", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "ping"}, ResultKey: "evt"}, "")
		}),
	}}
	st = &pauseThenCancel{Wrapper: store.Wrapper{Store: memory.New()},
		pauseAt: make(chan struct{}), cancelAt: make(chan struct{}), pauseGo: make(chan struct{}), cancelGo: make(chan struct{})}
	a, b = runnerPair(t, st, runtime.Claims{TTL: time.Minute, RenewEvery: time.Minute}, listener)
	ctx := context.Background()
	id, _ = a.Start(ctx, runtime.StartParams{WorkflowID: "listen"})
	if got, err := a.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.Status != durable.RunWaiting {
		t.Fatalf("tick: %v, %v", got, err)
	}
	return st, a, b, id
}

// runnerPair is runners "a" and "b" on st, claiming runs as c says,
// running wf.
func runnerPair(t *testing.T, st store.Store, c runtime.Claims, wf *runtime.Workflow) (a, b *runtime.Runtime) {
	t.Helper()
	c.Owner = "a"
	a = claimingRuntime(t, st, c, wf, nil)
	c.Owner = "b"
	b = claimingRuntime(t, st, c, wf, nil)
	return a, b
}

// unreachableClaims is a store whose claim renewals hang for hang and then
// fail, whatever their context says: a store out of reach, whose client
// gives up on its own timeout (the PostgreSQL store's write timeout).
type unreachableClaims struct {
	*memory.Store
	hang time.Duration
}

func (s *unreachableClaims) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Renew {
		time.Sleep(s.hang)
		return errors.New("connection lost (test)")
	}
	return s.Store.RunClaim(ctx, p)
}

// A runner whose renewals cannot reach the store gives its claim up by
// its own clock before the claim expires in the store: its effect's
// context is cancelled (cause ErrRunClaimed) and nothing more of the tick
// is committed, so a runner that takes the run once the claim expired
// never calls the effect while the first one still runs it.
func TestClaimGivenUpWhenRenewalsCannotReachTheStore(t *testing.T) {
	t.Parallel()
	// The runner gives up at nine tenths of the TTL: a TTL of seconds
	// leaves a loaded machine (or -race) room to cancel in time.
	const ttl = 2 * time.Second
	st := &unreachableClaims{Store: memory.New(), hang: 3 * time.Second}
	var cancelledAfter atomic.Int64
	var cause error
	start := time.Now()
	h := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		select {
		case <-ctx.Done():
			cancelledAfter.Store(int64(time.Since(start)))
			cause = context.Cause(ctx)
			return runtime.Outcome{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return runtime.Completed(map[string]any{"text": "too late"}), nil
		}
	}
	a := claimRuntime(t, st, "a", ttl, h)
	ctx := context.Background()
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, err = a.Tick(ctx, id, runtime.TickOptions{})
	if !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("tick of a runner cut off from the store: %v, want ErrRunClaimed", err)
	}
	after := time.Duration(cancelledAfter.Load())
	if after == 0 || after >= ttl || !errors.Is(cause, runtime.ErrRunClaimed) {
		t.Fatalf("effect cancelled after %v (cause %v); want before the TTL (%v), cause ErrRunClaimed", after, cause, ttl)
	}
	got, err := st.Store.RunGet(ctx, id)
	if err != nil || got.Status != durable.RunRunning {
		t.Fatalf("stored run %v (%v): the abandoned tick committed", got.Status, err)
	}
}

// flakyRenewals fails the first renewal of a claim (a store briefly out
// of reach), then lets renewals through.
type flakyRenewals struct {
	*memory.Store
	renewals atomic.Int32
}

func (s *flakyRenewals) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Renew && s.renewals.Add(1) == 1 {
		return errors.New("injected: store briefly out of reach")
	}
	return s.Store.RunClaim(ctx, p)
}

// A renewal that fails for another reason than a lost claim is retried
// at the next period (claimHold): one failed renewal does not stop the
// renewals, so an effect outlasting the TTL still completes.
func TestClaimRenewalRetriedAfterATransientFailure(t *testing.T) {
	t.Parallel()
	st := &flakyRenewals{Store: memory.New()}
	const ttl = time.Second // the retried renewal must land within nine tenths of it, under load too
	slow := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		select {
		case <-time.After(3 * ttl):
			return runtime.Completed(map[string]any{"text": "done"}), nil
		case <-ctx.Done():
			return runtime.Outcome{}, context.Cause(ctx)
		}
	}
	rt := claimingRuntime(t, st, runtime.Claims{Owner: "a", TTL: ttl, RenewEvery: 100 * time.Millisecond}, slowCall(), slow)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("Tick = %v, %v; want the run completed (renewals go on after one failed)", got, err)
	}
	if n := st.renewals.Load(); n < 3 {
		t.Fatalf("%d renewals during an effect of 3 TTLs; want them to go on after the failed first", n)
	}
}
