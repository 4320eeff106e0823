package runtime_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// holderReleasesFirst is runner "me"'s view of a memory store on which
// runner "other" holds a due run. Just before "me"'s forced taking of the
// run from "other" (claimTaking, after tickHeldDue's ~1.3 s of looking),
// "other" finishes its tick: it commits the run (its wait released, left
// running at node "done", as a tick that used its MaxSteps leaves it) and
// releases its claim, as a live holder does at the end of every tick.
type holderReleasesFirst struct {
	store.Wrapper
	mem   *memory.Store
	fired atomic.Bool
}

func (s *holderReleasesFirst) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Owner == "me" && p.Force && p.From == "other" && s.fired.CompareAndSwap(false, true) {
		cur, err := s.mem.RunGet(ctx, p.RunID)
		if err != nil {
			return err
		}
		cur.Status, cur.Waiting, cur.CurrentNode = durable.RunRunning, nil, "done"
		if err := s.mem.RunCommit(ctx, &store.CommitParams{Run: cur}); err != nil {
			return err
		}
		if err := s.mem.RunRelease(ctx, p.RunID, "other"); err != nil {
			return err
		}
	}
	return s.Wrapper.RunClaim(ctx, p)
}

// A holder that commits and releases its claim just as a taker takes the
// run over must not leave the claim with a runner that does not work on
// the run: the next tick of the run goes through. (A first version of the
// fence took the claim before fencing and, the fence failing, "handed it
// back" to the holder that had gone: nobody renewed or released it for a
// whole TTL.)
func TestTakeoverRaceHolderReleasedLeavesNoPhantomClaim(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	mem := memory.New()
	st := &holderReleasesFirst{Wrapper: store.Wrapper{Store: mem}, mem: mem}
	reg, _ := runtime.NewRegistry(timerWorkflow())
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "timer"})
	if got, _ := rt.Tick(ctx, id, runtime.TickOptions{}); got.Status != durable.RunWaiting {
		t.Fatalf("timer run: %s", got.Status)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute) // due
	mu.Unlock()
	if err := mem.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: clock()}); err != nil {
		t.Fatal(err)
	}

	// "me" waits for the holder, then takes the run just as the holder
	// finished with it: the run moved on, so "me" leaves it
	// (ErrRunClaimed), or ticks it now that it is free.
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if !st.fired.Load() {
		t.Fatalf("the takeover never happened (Tick: %v)", err)
	}
	if err == nil && got.Status == durable.RunCompleted {
		return
	}
	if !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("first Tick = %v; want ErrRunClaimed (the holder worked on the run meanwhile)", err)
	}
	// Nobody holds the run now: "other" released it and "me" gave it up.
	// A tick of the running run must go ahead.
	got, err = rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || got.Status != durable.RunCompleted {
		holder := "?"
		var held *store.ClaimHeldError
		if cerr := mem.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "probe", TTL: time.Second, Now: clock()}); errors.As(cerr, &held) {
			holder = held.Owner
		}
		t.Fatalf("second Tick = %v, %v; want the running run, which nobody works on, completed. "+
			"The claim is held by %q: a runner that does not work on the run holds it", got, err, holder)
	}
}

// A live holder working on a run commits (its checkpoint before an LLM
// call) in the moment between a taker's last look and its takeover, and
// its renewal comes while the taker is slow: the run must end up either
// with the holder's work going on, or free for another runner, never held
// by a runner that gave it up (a first version of the fence handed the
// claim back to such a holder).
type takerHoldsAWhile struct {
	store.Wrapper
	mem     *memory.Store
	armed   atomic.Bool
	before  func() // the holder's commit lands
	holdFor time.Duration
	taken   atomic.Bool
}

// RunCommit fires the hook too, should the taking's first write be its
// fence rather than its claim (whichever comes first after the looking).
func (s *takerHoldsAWhile) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if len(p.Records) == 0 && s.armed.CompareAndSwap(true, false) {
		s.before()
	}
	return s.Wrapper.RunCommit(ctx, p)
}

func (s *takerHoldsAWhile) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	fire := p.Owner == "me" && p.Force && p.From == "runner-a" && s.armed.CompareAndSwap(true, false)
	if fire {
		s.before()
	}
	err := s.Wrapper.RunClaim(ctx, p)
	if fire && err == nil {
		s.taken.Store(true)
		time.Sleep(s.holdFor) // the taker is slow to read the run (a GC pause, a slow database)
	}
	return err
}

func TestTakeoverRaceHolderRenewingMeanwhile(t *testing.T) {
	t.Parallel()
	mem := memory.New()
	think := make(chan struct{})
	aThinking := make(chan struct{}) // closed once A's tick is in "think"
	var thinkOnce sync.Once
	started := make(chan struct{}, 1)
	interrupted := make(chan struct{}, 1)
	wf := func() *runtime.Workflow {
		return &runtime.Workflow{ID: "think", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
					Payload: map[string]any{"until": run.Vars["until"]}}, "think")
			}),
			"think": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				if run.Vars["who"] == "a" {
					thinkOnce.Do(func() { close(aThinking) })
					<-think
				}
				return runtime.Next("call"), nil
			},
			"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"},
					ResultKey: "r"}, "")
			}),
		}}
	}
	a := claimingRuntime(t, mem, runtime.Claims{Owner: "runner-a", TTL: 3 * time.Second, RenewEvery: 300 * time.Millisecond}, wf(),
		func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				interrupted <- struct{}{}
				return runtime.Outcome{}, ctx.Err()
			case <-time.After(20 * time.Second):
				return runtime.Completed(map[string]any{"text": "a"}), nil
			}
		})
	bStore := &takerHoldsAWhile{Wrapper: store.Wrapper{Store: mem}, mem: mem, holdFor: 700 * time.Millisecond}
	b := claimingRuntime(t, bStore, runtime.Claims{Owner: "me", TTL: 30 * time.Second}, wf(),
		func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"text": "b"}), nil
		})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Due in two seconds: the first tick must find the run not due yet
	// ("think" ignores its context), even on a loaded machine.
	due := time.Now().Add(2 * time.Second)
	until := due.UTC().Format("2006-01-02T15:04:05.000000+00:00")
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "think", Vars: map[string]any{"until": until, "who": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := a.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("first tick: %v, %v", st, err)
	}
	time.Sleep(time.Until(due) + 100*time.Millisecond) // due
	aDone := make(chan error, 1)
	go func() { // A ticks the due run: the wait released, "think" runs
		_, err := a.Tick(ctx, id, runtime.TickOptions{})
		aDone <- err
	}()
	select { // A holds the claim, in "think"
	case <-aThinking:
	case <-time.After(30 * time.Second):
		close(think)
		t.Fatal("runner A's tick never reached the thinking node")
	}
	bStore.before = func() {
		close(think) // A's pure node ends; A checkpoints and calls its LLM
		select {
		case <-started:
		case <-time.After(3 * time.Second): // A was fenced off before its call
		}
	}
	bStore.armed.Store(true)
	bRun, bErr := b.Tick(ctx, id, runtime.TickOptions{})
	var aErr error
	select {
	case aErr = <-aDone:
	case <-time.After(2 * time.Second):
		// A still works on the run: it kept it.
		return
	}
	if bErr == nil && bRun != nil && bRun.Status == durable.RunCompleted {
		return // B ticked the run to its end
	}
	if !bStore.taken.Load() {
		t.Logf("B never took the claim (B's tick: %v)", bErr)
	}
	// A stopped: the run must then be free for another runner.
	got, err := b.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || got.Status != durable.RunCompleted {
		var held *store.ClaimHeldError
		holder := "?"
		if cerr := mem.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "probe", TTL: time.Millisecond}); errors.As(cerr, &held) {
			holder = held.Owner
		}
		t.Fatalf("runner A's tick ended (%v; its effect interrupted: %v), yet the run is held: "+
			"B's next tick = %v, %v (claim held by %q); want the run, which nobody works on, ticked to its end",
			aErr, len(interrupted) > 0, got, err, holder)
	}
}

// thirdRunnerFirst is runner C's view of a memory store: just before C's
// forced taking of the run from the dead runner "dead", runner B (another
// scheduler that saw the same due run) takes it over first, ticks it and
// releases it.
type thirdRunnerFirst struct {
	store.Wrapper
	fired  atomic.Bool
	before func()
}

func (s *thirdRunnerFirst) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Owner == "runner-c" && p.Force && p.From == "dead" && s.fired.CompareAndSwap(false, true) {
		s.before()
	}
	return s.Wrapper.RunClaim(ctx, p)
}

// A runner died holding a due run. Two schedulers (B and C) wait for it
// and both take the run over; B gets there first, ticks the run (one step:
// its tick budget, so the run is left running for its next turn) and
// releases it. C's takeover must then leave the run to B, not give the
// claim to anyone (a first version of the fence handed it back to the dead
// runner for a fresh TTL, and B's next tick was refused).
func TestTakeoverRaceThirdRunnerFirst(t *testing.T) {
	t.Parallel()
	mem := memory.New()
	thirdRunnerFirstCase(t, mem, mem)
}

// The same on SQLite, runners B and C in two processes (two stores
// sharing one file).
func TestTakeoverRaceThirdRunnerFirstSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	open := func() *sqlite.Store {
		s, err := sqlite.New(t.Context(), sqlite.Config{Path: path, Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	thirdRunnerFirstCase(t, open(), open())
}

type claimingStore interface {
	store.Store
	store.RunClaimer
}

func thirdRunnerFirstCase(t *testing.T, bInner, cInner claimingStore) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	wf := &runtime.Workflow{ID: "steps", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": "2026-12-01T12:01:00+00:00"}}, "one")
		}),
		"one": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan { return runtime.Next("two") }),
		"two": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	mk := func(st store.Store, owner string) *runtime.Runtime {
		reg, _ := runtime.NewRegistry(wf)
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock, Claims: &runtime.Claims{Owner: owner}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	cStore := &thirdRunnerFirst{Wrapper: store.Wrapper{Store: cInner}}
	b, c := mk(bInner, "runner-b"), mk(cStore, "runner-c")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, _ := b.Start(ctx, runtime.StartParams{WorkflowID: "steps"})
	if got, _ := b.Tick(ctx, id, runtime.TickOptions{}); got.Status != durable.RunWaiting {
		t.Fatalf("run: %s", got.Status)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute) // due
	mu.Unlock()
	if err := bInner.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "dead", TTL: time.Hour, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	var bFirst *durable.RunState
	var bErr error
	cStore.before = func() { bFirst, bErr = b.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1}) }

	_, cErr := c.Tick(ctx, id, runtime.TickOptions{})
	if !cStore.fired.Load() {
		t.Fatalf("C never took the run over (C's tick: %v)", cErr)
	}
	if bErr != nil || bFirst == nil || bFirst.Status != durable.RunRunning {
		t.Fatalf("B's takeover tick = %v, %v; want the run taken from the dead runner and left running", bFirst, bErr)
	}
	// B continues its running run (its scheduler's next turn).
	got, err := b.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || got.Status != durable.RunCompleted {
		holder := "?"
		var held *store.ClaimHeldError
		if cerr := bInner.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "probe", TTL: time.Second, Now: clock()}); errors.As(cerr, &held) {
			holder = held.Owner
		}
		t.Fatalf("B's next tick = %v, %v (C's tick: %v); want the run completed. The claim is held by %q: "+
			"C handed the run back to the runner that had died holding it", got, err, cErr, holder)
	}
}

// A host update that takes an idle waiting run from its holder is fenced
// at the version it saw idle: a holder that commits the run between the
// last look at it and the taking keeps it, and the update gives up with
// ErrRunClaimed (claimTaking: "a run that moved on meanwhile is not
// taken").
func TestTakeoverFenceRefusesARunCommittedAfterItsLastLook(t *testing.T) {
	t.Parallel()
	mem, rt0, id := heldListener(t) // waiting run held by "other"
	hs := &hookStore{Store: mem}
	var refusals, getsAfter atomic.Int32
	var committed atomic.Bool
	hs.claim = func(p *store.RunClaimParams) {
		if p.Owner == "me" && !p.Force {
			refusals.Add(1) // every claim of "me" is refused while "other" holds the run
		}
	}
	rt, err := runtime.New(runtime.Config{Store: hs, Registry: rt0.Registry(), Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	// claimHeld reads the run once after its first refusal (what it saw
	// idle), once more after its wait (still idle?), then the taking reads
	// it: "other" commits right after that second look.
	hs.get = func() {
		if refusals.Load() > 0 && getsAfter.Add(1) == 3 && committed.CompareAndSwap(false, true) {
			cur, err := mem.RunGet(context.Background(), id)
			if err == nil {
				cur.Vars["touched"] = true
				err = mem.RunCommit(context.Background(), &store.CommitParams{Run: cur})
			}
			if err != nil {
				t.Error(err)
			}
		}
	}
	ctx := context.Background()
	_, err = rt.Pause(ctx, id, "maintenance")
	if !committed.Load() {
		t.Fatal("setup: the holder's commit was never made")
	}
	if !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("Pause of a run its holder committed just before the taking = %v; want ErrRunClaimed", err)
	}
	got, _ := mem.RunGet(ctx, id)
	if runtime.IsPaused(got) || got.Vars["touched"] != true {
		t.Fatalf("the run: paused=%v touched=%v; want it as its holder left it", runtime.IsPaused(got), got.Vars["touched"])
	}
	// The holder still holds it: a claim by another runner is refused.
	if err := mem.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "third", TTL: time.Hour, Now: time.Now()}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claim by a third runner after the refused takeover: %v; want it held by its holder", err)
	}
}
