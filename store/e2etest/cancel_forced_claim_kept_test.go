package e2etest_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A Cancel through one runner takes the run from the runner holding it
// with a forced claim; that runner learns it lost the run only at its next
// renewal, its effect's handler still running meanwhile. These tests check
// that the cancelling runner never lets the run go unclaimed in that time
// (docs/architecture.md "Several runners": a takeover never lets an effect
// run on two runners at once): a third runner ticking the run then would
// replay the effect in flight and call its handler a second time.

// forcedClaimStore is one runner's view of a shared memory store. It
// notes a forced claim, calls afterRelease once each release made after
// one has gone through, and lets a test act before (or fail) each commit.
type forcedClaimStore struct {
	*memory.Store
	sawForce     atomic.Bool
	afterRelease func(runID, owner string)
	beforeCommit func() error
}

func (s *forcedClaimStore) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	err := s.Store.RunClaim(ctx, p)
	if err == nil && p.Force {
		s.sawForce.Store(true)
	}
	return err
}

func (s *forcedClaimStore) RunRelease(ctx context.Context, runID, owner string) error {
	err := s.Store.RunRelease(ctx, runID, owner)
	if s.afterRelease != nil && s.sawForce.Load() {
		s.afterRelease(runID, owner)
	}
	return err
}

func (s *forcedClaimStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.beforeCommit != nil {
		if err := s.beforeCommit(); err != nil {
			return err
		}
	}
	return s.Store.RunCommit(ctx, p)
}

// claimsRunner is a runtime claiming runs as owner, with renewals far
// apart: the runner a cancel takes a run from does not learn within the
// test that it lost it (in production it learns within RenewEvery, 1 s,
// while its call may still be running).
func claimsRunner(t *testing.T, owner string, st store.Store, h runtime.HandlerFunc, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	hs := map[durable.EffectType]runtime.Handler{}
	if h != nil {
		hs["charge"] = runtime.Handler{Func: h}
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Handlers: hs,
		Claims: &runtime.Claims{Owner: owner, TTL: time.Hour, RenewEvery: 10 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// effectCalls records the handler calls of an effect type, per
// idempotency key, by runner.
type effectCalls struct {
	mu    sync.Mutex
	byKey map[string][]string
}

func (c *effectCalls) add(who string, req *runtime.EffectRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string][]string{}
	}
	c.byKey[req.IdempotencyKey] = append(c.byKey[req.IdempotencyKey], who)
}

// checkOnce fails t for each effect whose handler was called more than once.
func (c *effectCalls) checkOnce(t *testing.T, cancelErr error) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, who := range c.byKey {
		if len(who) > 1 {
			t.Errorf("effect %s called by %v: a second call while the first was in flight (cancel error: %v)", key, who, cancelErr)
		}
	}
}

// tickOnRelease makes c tick runID right after a releases a claim once
// a forced claim was seen (c's scheduler polling at that moment), giving
// c's handler a moment to be called. The returned function waits for
// that tick, if it was made.
func tickOnRelease(st *forcedClaimStore, c *runtime.Runtime, runID string, cCalled <-chan struct{}) (wait func()) {
	var once sync.Once
	done := make(chan struct{})
	st.afterRelease = func(id, owner string) {
		if id != runID || owner != "a" {
			return
		}
		once.Do(func() {
			go func() {
				defer close(done)
				_, _ = c.Tick(context.Background(), runID, runtime.TickOptions{})
			}()
			select {
			case <-cCalled:
			case <-done: // c's tick did nothing
			case <-time.After(2 * time.Second):
			}
		})
	}
	return func() {
		once.Do(func() { close(done) })
		<-done
	}
}

// startTicking starts a run of wf through rt and ticks it in the
// background once it is entered (closed by rt's handler); the returned
// channel gets the tick's error.
func startTicking(t *testing.T, rt *runtime.Runtime, wf *runtime.Workflow, entered <-chan struct{}) (string, <-chan error) {
	t.Helper()
	runID, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := rt.Tick(context.Background(), runID, runtime.TickOptions{})
		done <- err
	}()
	<-entered
	return runID, done
}

// slowCharge is a handler whose call takes a while (an LLM call, a
// payment): recorded as who's, it closes entered at its first call and
// returns once free is closed or its context ends.
func slowCharge(calls *effectCalls, who string, entered, free chan struct{}) runtime.HandlerFunc {
	var once sync.Once
	return func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.add(who, req)
		once.Do(func() { close(entered) })
		select {
		case <-free:
		case <-ctx.Done():
		}
		return runtime.Completed(map[string]any{"by": who}), nil
	}
}

// failFirstForcedCommit makes st's first commit after a forced claim fail.
func failFirstForcedCommit(st *forcedClaimStore) {
	var failed atomic.Bool
	st.beforeCommit = func() error {
		if st.sawForce.Load() && failed.CompareAndSwap(false, true) {
			return errors.New("store out of reach")
		}
		return nil
	}
}

func chargeRequest(n int, next string) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Request(&durable.Effect{Type: "charge", Payload: map[string]any{"n": n}, ResultKey: "r"}, next), nil
	}
}

func completeNode(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
	return runtime.Complete(nil), nil
}

// A runner that does not serve the run's workflow cancels it under its
// forced claim (without the workflow: a cancel runs no node), rather than
// releasing that claim when the workflow lookup fails and claiming the run
// again for a host update.
func TestCancelThroughRunnerWithoutWorkflowKeepsForcedClaim(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "charge_flow", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": chargeRequest(1, "done"), "done": completeNode}}
	other := &runtime.Workflow{ID: "other", Entry: "end", Nodes: map[string]runtime.NodeFunc{"end": completeNode}}
	shared := memory.New()
	var calls effectCalls
	bEntered, bFree := make(chan struct{}), make(chan struct{})
	cCalled := make(chan struct{}, 4)
	b := claimsRunner(t, "b", shared, slowCharge(&calls, "b", bEntered, bFree), wf)
	c := claimsRunner(t, "c", shared, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.add("c", req)
		cCalled <- struct{}{}
		return runtime.Completed(map[string]any{"by": "c"}), nil
	}, wf)
	aStore := &forcedClaimStore{Store: shared}
	a := claimsRunner(t, "a", aStore, nil, other) // serves another workflow only

	runID, bDone := startTicking(t, b, wf, bEntered)
	waitC := tickOnRelease(aStore, c, runID, cCalled)

	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	st, cerr := a.Cancel(cctx, runID, "stop")
	close(bFree)
	<-bDone
	waitC()
	if cerr != nil || st.Status != durable.RunCancelled {
		t.Fatalf("Cancel through a runner without the workflow: %v, %v; want cancelled", st, cerr)
	}
	calls.checkOnce(t, cerr)
}

// A cancel whose commit conflicts (the runner it took the run from
// committed first, not yet knowing it lost the run, and started its next
// effect) reloads the run and commits again under the same forced claim,
// rather than releasing it and claiming the run again.
func TestCancelRetryAfterConflictKeepsForcedClaim(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "two_charges", Entry: "first", Nodes: map[string]runtime.NodeFunc{
		"first": chargeRequest(1, "second"), "second": chargeRequest(2, "done"), "done": completeNode}}
	shared := memory.New()
	var calls effectCalls
	bFirst, bSecond := make(chan struct{}), make(chan struct{})
	releaseFirst, bFree := make(chan struct{}), make(chan struct{})
	cCalled := make(chan struct{}, 4)
	var nB atomic.Int32
	b := claimsRunner(t, "b", shared, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.add("b", req)
		if nB.Add(1) == 1 {
			close(bFirst)
			<-releaseFirst // completes once a has taken the run and read it
			return runtime.Completed(1), nil
		}
		close(bSecond)
		select {
		case <-bFree:
		case <-ctx.Done():
		}
		return runtime.Completed(2), nil
	}, wf)
	c := claimsRunner(t, "c", shared, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.add("c", req)
		cCalled <- struct{}{}
		return runtime.Completed(3), nil
	}, wf)
	aStore := &forcedClaimStore{Store: shared}
	a := claimsRunner(t, "a", aStore, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.add("a", req)
		return runtime.Completed(4), nil
	}, wf)

	runID, bDone := startTicking(t, b, wf, bFirst)

	// a's cancel commit (made after its forced claim and its read) waits
	// until b, unaware, has committed its first call's end and started
	// its second call: a's commit then conflicts.
	var commitOnce sync.Once
	aStore.beforeCommit = func() error {
		if aStore.sawForce.Load() {
			commitOnce.Do(func() {
				close(releaseFirst)
				select {
				case <-bSecond:
				case <-time.After(5 * time.Second):
				}
			})
		}
		return nil
	}
	waitC := tickOnRelease(aStore, c, runID, cCalled)

	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	st, cerr := a.Cancel(cctx, runID, "stop")
	commitOnce.Do(func() { close(releaseFirst) })
	close(bFree)
	<-bDone
	waitC()
	if cerr != nil || st.Status != durable.RunCancelled {
		t.Fatalf("Cancel after a conflicting commit: %v, %v; want cancelled", st, cerr)
	}
	calls.checkOnce(t, cerr)
}

// A cancel that fails after it took the run from its holder (here its
// commit fails) keeps the forced claim until it expires instead of
// releasing it: the holder may still run its effect, and neither another
// runner nor the cancelling runner itself may tick the run meanwhile. A
// Cancel made again through that runner takes the run back and succeeds.
func TestFailedCancelKeepsForcedClaimUntilItExpires(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "charge_flow", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": chargeRequest(1, "done"), "done": completeNode}}
	shared := memory.New()
	var calls effectCalls
	bEntered, bFree := make(chan struct{}), make(chan struct{})
	b := claimsRunner(t, "b", shared, slowCharge(&calls, "b", bEntered, bFree), wf)
	other := func(who string) runtime.HandlerFunc {
		return func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			calls.add(who, req)
			return runtime.Completed(map[string]any{"by": who}), nil
		}
	}
	c := claimsRunner(t, "c", shared, other("c"), wf)
	aStore := &forcedClaimStore{Store: shared}
	a := claimsRunner(t, "a", aStore, other("a"), wf)

	runID, bDone := startTicking(t, b, wf, bEntered)
	defer func() {
		close(bFree)
		<-bDone
	}()

	failFirstForcedCommit(aStore)
	if _, err := a.Cancel(ctx, runID, "stop"); err == nil {
		t.Fatal("Cancel succeeded although its commit failed")
	}
	for _, r := range []*runtime.Runtime{c, a} {
		if _, err := r.Tick(ctx, runID, runtime.TickOptions{}); !errors.Is(err, runtime.ErrRunClaimed) {
			t.Errorf("tick through %s after the failed cancel: %v, want ErrRunClaimed", r.ClaimOwner(), err)
		}
	}
	calls.checkOnce(t, nil)
	if n := len(calls.byKey); n != 1 {
		t.Errorf("effects called: %v, want b's only", calls.byKey)
	}

	st, err := a.Cancel(ctx, runID, "stop")
	if err != nil || st.Status != durable.RunCancelled {
		t.Fatalf("second Cancel: %v, %v; want cancelled", st, err)
	}
}

// The claim a failed cancel keeps expires as any claim does (its TTL
// after it was taken): the run is then ticked again, by the cancelling
// runner too.
func TestFailedCancelForcedClaimExpires(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "charge_flow", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": chargeRequest(1, "done"), "done": completeNode}}
	shared := memory.New()
	// Seconds, not less: b must keep its claim until a forces it, and a's
	// next tick must come while the claim a kept still holds, on a
	// loaded machine too.
	const ttl = 2 * time.Second
	mk := func(owner string, st store.Store, h runtime.HandlerFunc) *runtime.Runtime {
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
			Handlers: map[durable.EffectType]runtime.Handler{"charge": {Func: h}},
			Claims:   &runtime.Claims{Owner: owner, TTL: ttl, RenewEvery: ttl / 3}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	bEntered := make(chan struct{})
	var bOnce sync.Once
	b := mk("b", shared, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		bOnce.Do(func() { close(bEntered) })
		<-ctx.Done() // stops once b learns it lost the run
		return runtime.Outcome{}, ctx.Err()
	})
	aStore := &forcedClaimStore{Store: shared}
	a := mk("a", aStore, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"by": "a"}), nil
	})
	runID, bDone := startTicking(t, b, wf, bEntered)
	failFirstForcedCommit(aStore)
	if _, err := a.Cancel(ctx, runID, "stop"); err == nil {
		t.Fatal("Cancel succeeded although its commit failed")
	}
	if _, err := a.Tick(ctx, runID, runtime.TickOptions{}); !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("tick through a right after its failed cancel: %v, want ErrRunClaimed", err)
	}
	if err := <-bDone; !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("b's tick: %v, want ErrRunClaimed (its claim taken)", err)
	}
	time.Sleep(ttl + ttl/3)
	st, err := a.Tick(ctx, runID, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick through a once the kept claim expired: %v, %v; want completed", st, err)
	}
}
