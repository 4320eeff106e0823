package runtime_test

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

// noDeadlineListenWorkflow waits on the session event "go" (no deadline),
// then completes with what it received.
func noDeadlineListenWorkflow() *runtime.Workflow {
	return &runtime.Workflow{ID: "listen_nodeadline", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "go", "scope": "session"}, ResultKey: "ev"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ev": run.Vars["ev"]})
		}),
	}}
}

// runnerA is runner A's view of the shared store: once armed, the
// release of run `run` that follows A's commit of the event's resume is
// the moment runner B takes the run (hold), and A's next claim of it is
// refused while B holds it.
type runnerA struct {
	store.Wrapper
	run     string
	armed   atomic.Bool
	hold    func() // runner B takes the run; returns once B holds it
	refused chan struct{}
	once    sync.Once
}

func (s *runnerA) RunRelease(ctx context.Context, runID, owner string) error {
	err := s.Wrapper.RunRelease(ctx, runID, owner)
	if runID == s.run && s.armed.CompareAndSwap(true, false) {
		s.hold()
	}
	return err
}

func (s *runnerA) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	err := s.Wrapper.RunClaim(ctx, p)
	if p.RunID == s.run && errors.Is(err, store.ErrConflict) && !p.Renew {
		s.once.Do(func() { close(s.refused) })
	}
	return err
}

// runnerB blocks B's first load of run `run` once armed: B holds the
// run's claim meanwhile, as any resume, tick or host update does between
// its claim and its release.
type runnerB struct {
	store.Wrapper
	run     string
	armed   atomic.Bool
	holding chan struct{}
	proceed chan struct{}
}

func (s *runnerB) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	if runID == s.run && s.armed.CompareAndSwap(true, false) {
		close(s.holding)
		<-s.proceed
	}
	return s.Wrapper.RunGet(ctx, runID)
}

// twoRunnersOnMemory returns runners A and B (claims on) on one memory
// store, A's and B's stores hooked as above, and a listener waiting on
// the session event "go" of session "s1".
func twoRunnersOnMemory(t *testing.T) (a, b *runtime.Runtime, sa *runnerA, sb *runnerB, id string) {
	t.Helper()
	mem := memory.New()
	t.Cleanup(func() { _ = mem.Close() })
	sa = &runnerA{Wrapper: store.Wrapper{Store: mem}, refused: make(chan struct{})}
	sb = &runnerB{Wrapper: store.Wrapper{Store: mem}, holding: make(chan struct{}), proceed: make(chan struct{})}
	mk := func(st store.Store, owner string) *runtime.Runtime {
		reg, _ := runtime.NewRegistry(noDeadlineListenWorkflow())
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &runtime.Claims{Owner: owner}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	a, b = mk(sa, "A"), mk(sb, "B")
	ctx := context.Background()
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "listen_nodeadline", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := a.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("listener: %v %v", st, err)
	}
	sa.run, sb.run = id, id
	return a, b, sa, sb, id
}

// Runner A delivers an external event to a listener; runner B, answering
// the same wait at the same moment (a host's Resume with the wait key),
// claims the run just after A committed the event's resume and released
// it, finds it no longer waiting and gives up (StaleResumeError). A's
// drive of the resumed listener came in that moment: its claim was
// refused and the drive was dropped on the assumption that "another
// runner works on it and continues it" (driver.drain). B does not: the
// listener stayed "running" at its resume node, driven by nobody, though
// EmitEvent reported it delivered without error. A refused follow-up is
// now kept and driven again by RetryFollowUps (the scheduler's loop).
func TestEmitEventListenerDrivenWhenAStaleResumeHoldsIt(t *testing.T) {
	a, b, sa, sb, id := twoRunnersOnMemory(t)
	ctx := context.Background()
	key := "evt:session:s1:go"
	var resumeErr error
	var wg sync.WaitGroup
	sa.hold = func() {
		sb.armed.Store(true)
		wg.Go(func() {
			_, resumeErr = b.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"from": "host"}})
		})
		<-sb.holding // B holds the run's claim
		go func() {
			select {
			case <-sa.refused: // A's drive of the listener was refused
			case <-time.After(3 * time.Second):
			}
			close(sb.proceed)
		}()
	}
	sa.armed.Store(true)
	delivered, err := a.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "s1", Payload: map[string]any{"from": "emit"}})
	wg.Wait()
	if err != nil || len(delivered) != 1 {
		t.Fatalf("EmitEvent = %v, %v; want the listener, no error", delivered, err)
	}
	var stale *runtime.StaleResumeError
	if !errors.As(resumeErr, &stale) {
		t.Fatalf("B's resume: %v, want a stale resume (the event answered the wait first)", resumeErr)
	}
	st := retriedUntil(t, a, id, func(st *durable.RunState) bool { return st.Status == durable.RunCompleted })
	if st.Status != durable.RunCompleted {
		t.Fatalf("listener is %s at node %q after the event was delivered and both runners returned; want completed "+
			"(A's drive was dropped because B held the claim, but B does not drive it)", st.Status, st.CurrentNode)
	}
}

// ResumeRun lifts the pause of a run paused while running (its pause
// wait) through runner A; runner B updates the run's limits at the same
// moment and claims the run just after A's hostUpdate released it. A's
// drive of the run (ResumeRun's Tick) was refused and ResumeRun returned,
// taking it that "another runner took it up: it drives it", but B's
// UpdateLimits never drives a run. The run stayed "running" before its
// WAIT_EVENT node, driven by nobody: an event emitted then found no
// listener and was lost, with no error to its emitter. ResumeRun now
// keeps a refused drive for a retry.
func TestResumeRunDrivenWhenALimitsUpdateHoldsIt(t *testing.T) {
	a, b, sa, sb, _ := twoRunnersOnMemory(t)
	ctx := context.Background()
	// A second run, paused while running (before its first tick).
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "listen_nodeadline", SessionID: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := a.Pause(ctx, id, "hold on"); err != nil || st.Waiting == nil {
		t.Fatalf("pause: %v %v", st, err)
	}
	sa.run, sb.run = id, id
	var limitsErr error
	var wg sync.WaitGroup
	sa.hold = func() {
		sb.armed.Store(true)
		wg.Go(func() {
			limitsErr = b.UpdateLimits(ctx, id, map[string]any{"max_iterations": 7})
		})
		<-sb.holding // B holds the run's claim
		go func() {
			select {
			case <-sa.refused:
			case <-time.After(3 * time.Second):
			}
			close(sb.proceed)
		}()
	}
	sa.armed.Store(true)
	if _, err := a.ResumeRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if limitsErr != nil {
		t.Fatal(limitsErr)
	}
	st := retriedUntil(t, a, id, func(st *durable.RunState) bool { return st.Status == durable.RunWaiting })
	if st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.Reason != durable.WaitEvent {
		t.Errorf("after ResumeRun and the limits update: run %s at node %q, want waiting on its event "+
			"(ResumeRun's drive was refused while B held the run, and B never drives it)", st.Status, st.CurrentNode)
	}
	delivered, err := a.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "s2"})
	if err != nil || len(delivered) != 1 {
		t.Errorf("EmitEvent after ResumeRun returned = %v, %v: the event reached no listener, with no error", delivered, err)
	}
}

// retriedUntil drives rt's kept follow-ups (as the scheduler's loop does,
// about a second after they were refused) until run id satisfies ok, or 5
// seconds; it returns the run's last state.
func retriedUntil(t *testing.T, rt *runtime.Runtime, id string, ok func(*durable.RunState) bool) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := rt.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		rt.RetryFollowUps(ctx)
		time.Sleep(50 * time.Millisecond)
	}
}
