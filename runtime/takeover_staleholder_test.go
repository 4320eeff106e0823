package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// hookStore is a runner's view of a shared memory store with hooks.
type hookStore struct {
	*memory.Store
	claim  func(p *store.RunClaimParams) // before each RunClaim
	get    func()                        // before each RunGet
	commit func()                        // before each RunCommit
}

func (s *hookStore) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if s.claim != nil {
		s.claim(p)
	}
	return s.Store.RunClaim(ctx, p)
}
func (s *hookStore) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if s.get != nil {
		s.get()
	}
	return s.Store.RunGet(ctx, id)
}
func (s *hookStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.commit != nil {
		s.commit()
	}
	return s.Store.RunCommit(ctx, p)
}

// A multi-runner race: b takes over a due timer run from a
// dead holder; c, in its own tickHeldDue, was refused by b on its last
// wait, named b as the holder and forced the claim from b (From: "b")
// before b's first commit. c's version check then failed, c released, and
// c's next Tick (its scheduler's Recover) found the run free and replayed
// the effect b was still executing. A takeover now gives up when the
// holder changed while it waited.
func TestTakeoverGivesUpWhenTheHolderChanged(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var cmu sync.Mutex
	clock := func() time.Time { cmu.Lock(); defer cmu.Unlock(); return now }
	wf := &runtime.Workflow{ID: "timer_call", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": "2026-12-01T12:01:00+00:00"}}, "call")
		}),
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: "charge", Payload: map[string]any{"x": 1}, ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	shared := memory.New()
	bForced := make(chan struct{})
	cForceDone := make(chan struct{})
	bCommitted := make(chan struct{})
	cExecuted := make(chan struct{})
	var bForceOnce, cForceOnce, bCommitOnce, cExecOnce sync.Once
	var cClaims, cForceFromB atomic.Int32
	var bAfterForce atomic.Bool
	var cAfterForce atomic.Int32
	var mu sync.Mutex
	var execs []string

	mk := func(owner string, hs *hookStore, h runtime.HandlerFunc) *runtime.Runtime {
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		hs.Store = shared
		rt, err := runtime.New(runtime.Config{Store: hs, Registry: reg, Clock: clock,
			Claims:   &runtime.Claims{Owner: owner, TTL: time.Hour, RenewEvery: 5 * time.Second},
			Handlers: map[durable.EffectType]runtime.Handler{"charge": {Func: h}}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	bs := &hookStore{}
	bs.claim = func(p *store.RunClaimParams) {
		if p.Force {
			bAfterForce.Store(true)
			bForceOnce.Do(func() { close(bForced) })
		}
	}
	bs.commit = func() {
		if bAfterForce.Load() {
			select { // b's first commit after its takeover (the STARTED) waits for c's force
			case <-cForceDone:
			case <-time.After(10 * time.Second):
			}
			bCommitOnce.Do(func() { close(bCommitted) })
		}
	}
	b := mk("b", bs, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		mu.Lock()
		execs = append(execs, "b:"+req.IdempotencyKey)
		mu.Unlock()
		select { // the call is still in flight when c replays it
		case <-cExecuted:
		case <-time.After(time.Second):
		}
		return runtime.Completed(map[string]any{"by": "b"}), nil
	})
	cs := &hookStore{}
	cs.claim = func(p *store.RunClaimParams) {
		if p.Renew {
			return
		}
		if p.Force {
			if p.From == "b" {
				cForceFromB.Add(1)
			}
			cAfterForce.Store(1)
			return
		}
		if cClaims.Add(1) == 9 { // c's last claim before it gives up on the holder
			select {
			case <-bForced:
				time.Sleep(20 * time.Millisecond) // b's force has landed
			case <-time.After(10 * time.Second):
			}
		}
	}
	cs.get = func() {
		if cAfterForce.Load() == 1 {
			// c's first load after its force: let b's STARTED commit land first.
			cForceOnce.Do(func() { close(cForceDone) })
			select {
			case <-bCommitted:
				time.Sleep(20 * time.Millisecond)
			case <-time.After(10 * time.Second):
			}
			cAfterForce.Store(2)
		}
	}
	c := mk("c", cs, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		mu.Lock()
		execs = append(execs, "c:"+req.IdempotencyKey)
		mu.Unlock()
		cExecOnce.Do(func() { close(cExecuted) })
		return runtime.Completed(map[string]any{"by": "c"}), nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := b.Start(ctx, runtime.StartParams{WorkflowID: "timer_call", Vars: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	runID := st
	if got, err := b.Tick(ctx, runID, runtime.TickOptions{}); err != nil || got.Status != durable.RunWaiting {
		t.Fatalf("first tick: %v %v", got, err)
	}
	cmu.Lock()
	now = now.Add(2 * time.Minute)
	cmu.Unlock()
	// The runner that committed the wait died holding the claim.
	if err := shared.RunClaim(ctx, &store.RunClaimParams{RunID: runID, Owner: "dead", TTL: time.Hour, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	bDone := make(chan error, 1)
	go func() {
		// b gives up on "dead" first and takes the run.
		_, err := b.Tick(ctx, runID, runtime.TickOptions{})
		bDone <- err
	}()
	time.Sleep(2 * time.Millisecond)
	_, cerr := c.Tick(ctx, runID, runtime.TickOptions{}) // c's scheduler poll
	forcedFromB := cForceFromB.Load()
	t.Logf("c's takeover tick: %v (forced from b: %d)", cerr, forcedFromB)
	_, cerr2 := c.Tick(ctx, runID, runtime.TickOptions{}) // c's Recover right after
	t.Logf("c's recover tick: %v", cerr2)
	berr := <-bDone
	t.Logf("b's tick: %v", berr)
	recs, _ := shared.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
	for _, r := range recs {
		t.Logf("ledger %d %s %s %s", r.Seq, r.NodeID, r.Status, r.IdempotencyKey)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("executions: %v", execs)
	if forcedFromB > 0 {
		t.Errorf("c's takeover forced the claim from b, a live runner that had taken the run over first")
	}
	if len(execs) > 1 {
		t.Errorf("the effect was executed by two live runners at once: %v", execs)
	}
}
