package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// fenceGate is a runner's view of a shared memory store that calls
// onFence before each fence the runner commits (a commit of a waiting
// run with no records: the first step of a takeover).
type fenceGate struct {
	*memory.Store
	onFence func()
}

func (s *fenceGate) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if len(p.Records) == 0 && !p.Create && p.Run.Status == durable.RunWaiting {
		s.onFence()
	}
	return s.Store.RunCommit(ctx, p)
}

// A forced take took the claim from whoever held it then, not from the
// holder seen idle. Runners
// that give up on a dead holder give up together: every scheduler wakes
// at the run's deadline and all wait through the same claimWaits. Here
// runners b and c both find the timer run idle behind the dead runner
// "other"; b takes it first, releases the wait and checkpoints the
// STARTED record of the LLM call that follows; c's force then took the
// run from b, found the version moved and released it, and b, learning
// at its next renewal that it lost the run, had its call cancelled: the
// run was left running, held and driven by nobody until a Recover. A
// takeover now takes the claim from the holder it saw only
// (store.RunClaimParams.From), after a fence that only the first of
// several takers gets through.
func TestTakeoverSecondForcerDoesNotStealFromTheFirst(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var cmu sync.Mutex
	clock := func() time.Time { cmu.Lock(); defer cmu.Unlock(); return now }
	wf := &runtime.Workflow{ID: "timer_call", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": "2026-12-01T12:01:00+00:00"}}, "call")
		}),
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}, ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	shared := memory.New()
	cFencing := make(chan struct{}) // c is about to fence (its idle check is done)
	bCalling := make(chan struct{}) // b's LLM call has started (its STARTED is committed)
	var cOnce, bOnce sync.Once
	newRunner := func(owner string, onFence func(), h runtime.HandlerFunc) *runtime.Runtime {
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{
			Store: &fenceGate{Store: shared, onFence: onFence}, Registry: reg, Clock: clock,
			Claims:   &runtime.Claims{Owner: owner, TTL: time.Hour, RenewEvery: 20 * time.Millisecond},
			Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: h}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	b := newRunner("b", func() {
		select { // b fences once c has checked the run idle too
		case <-cFencing:
		case <-time.After(30 * time.Second):
		}
	}, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		bOnce.Do(func() { close(bCalling) })
		select { // a call that takes a while
		case <-ctx.Done():
			return runtime.Outcome{}, ctx.Err()
		case <-time.After(time.Second):
			return runtime.Completed(map[string]any{"answer": "by b"}), nil
		}
	})
	c := newRunner("c", func() {
		cOnce.Do(func() { close(cFencing) })
		select {
		case <-bCalling:
		case <-time.After(30 * time.Second):
		}
	}, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"answer": "by c"}), nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only to fail a hung test
	defer cancel()
	id, err := b.Start(ctx, runtime.StartParams{WorkflowID: "timer_call"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.Status != durable.RunWaiting {
		t.Fatalf("timer run: %v, %v", got, err)
	}
	cmu.Lock()
	now = now.Add(2 * time.Minute)
	cmu.Unlock()
	// The runner that committed the wait died before releasing its claim.
	if err := shared.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: clock()}); err != nil {
		t.Fatal(err)
	}

	type res struct {
		st  *durable.RunState
		err error
	}
	bDone, cDone := make(chan res, 1), make(chan res, 1)
	go func() { st, err := b.Tick(ctx, id, runtime.TickOptions{}); bDone <- res{st, err} }()
	go func() { st, err := c.Tick(ctx, id, runtime.TickOptions{}); cDone <- res{st, err} }()
	rb, rc := <-bDone, <-cDone

	if !errors.Is(rc.err, runtime.ErrRunClaimed) {
		t.Logf("c's Tick: %v (want ErrRunClaimed: b worked on the run)", rc.err)
	}
	got, _ := shared.RunGet(ctx, id)
	free := shared.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "probe", TTL: time.Minute, Now: clock()}) == nil
	if rb.err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("b's Tick = %v; the run is %s at node %q, held by nobody: %v. "+
			"c's force took the run from b, which had taken it from the dead holder and was working on it; "+
			"b's LLM call was cancelled and the run is left for a Recover to replay the call", rb.err, got.Status, got.CurrentNode, free)
	}
}
