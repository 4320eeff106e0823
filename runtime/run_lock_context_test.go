package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Calls on a run that a tick in this process holds (its effect running,
// or waiting out a retry's backoff: spec §2.10 "Retries happen inside one
// tick (blocking sleep)") wait for it only as long as their context
// allows. A host calls UpdateLimits (Python's update_limits: "mid-session
// updates"), Pause, ResumeRun or Resume from a request with a deadline:
// past it they return its error and change nothing.

// heldRunRuntime returns a runtime whose workflow requests an "x" effect
// at node a and then completes; handler handles "x".
func heldRunRuntime(t *testing.T, policy runtime.EffectPolicy, sleep func(context.Context, time.Duration) error,
	handler runtime.HandlerFunc) *runtime.Runtime {
	t.Helper()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "x", Payload: map[string]any{}, ResultKey: "r"}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Policy: policy, Sleep: sleep,
		Handlers: map[durable.EffectType]runtime.Handler{"x": {Func: handler}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestHostCallsGiveUpAtDeadlineWhileTickHoldsRun(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	rt := heldRunRuntime(t, nil, nil, func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		entered <- struct{}{}
		<-release // a long LLM call
		return runtime.Completed(map[string]any{"ok": true}), nil
	})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, id, runtime.TickOptions{}); done <- err }()
	<-entered
	calls := map[string]func(context.Context) error{
		"UpdateLimits": func(c context.Context) error {
			return rt.UpdateLimits(c, id, map[string]any{"max_tokens": 65536})
		},
		"Pause":     func(c context.Context) error { _, err := rt.Pause(c, id, "stop"); return err },
		"ResumeRun": func(c context.Context) error { _, err := rt.ResumeRun(c, id); return err },
		"Resume": func(c context.Context) error {
			_, err := rt.Resume(c, runtime.ResumeParams{RunID: id, Payload: map[string]any{}})
			return err
		},
		"Tick": func(c context.Context) error { _, err := rt.Tick(c, id, runtime.TickOptions{}); return err },
	}
	for name, call := range calls {
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		t0 := time.Now()
		err := call(cctx)
		took := time.Since(t0)
		cancel()
		if took > 2*time.Second || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with a 50ms deadline returned after %v with %v; want context.DeadlineExceeded at its deadline",
				name, took.Round(time.Millisecond), err)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	maxTokens, _ := runtime.AsInt(st.Vars["_limits"].(map[string]any)["max_tokens"])
	if st.Status != durable.RunCompleted || runtime.IsPaused(st) || maxTokens != 32768 {
		t.Fatalf("run %s, paused %v, max_tokens %d; want the calls that gave up to have changed nothing "+
			"(completed, not paused, max_tokens 32768)", st.Status, runtime.IsPaused(st), maxTokens)
	}
	if rt.Busy(id) {
		t.Fatal("Busy after every call returned: a waiter that gave up kept its reference to the run's lock")
	}
}

// Waiters get the lock in turn: one that gives up does not keep the
// next from it.
func TestRunLockWaiterGivingUpPassesItOn(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	rt := heldRunRuntime(t, nil, nil, func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		entered <- struct{}{}
		<-release
		return runtime.Completed(map[string]any{"ok": true}), nil
	})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, id, runtime.TickOptions{}); done <- err }()
	<-entered
	updated := make(chan error, 1)
	go func() { updated <- rt.UpdateLimits(ctx, id, map[string]any{"max_tokens": 1000}) }() // waits without deadline
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := rt.UpdateLimits(cctx, id, map[string]any{"max_tokens": 2000}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("UpdateLimits with a deadline: %v, want context.DeadlineExceeded", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-updated:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter without deadline never got the run's lock")
	}
	st, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := runtime.AsInt(st.Vars["_limits"].(map[string]any)["max_tokens"]); n != 1000 || rt.Busy(id) {
		t.Fatalf("max_tokens %d, busy %v; want the patient update applied (1000) and the lock free", n, rt.Busy(id))
	}
}

// A pause requested while the tick waits out a retry's backoff ends the
// wait: no attempt follows the pause, which Pause commits at once
// (Pause: "A tick in progress stops at its next step boundary").
func TestPauseDuringRetryBackoffStopsBeforeNextAttempt(t *testing.T) {
	ctx := context.Background()
	inBackoff := make(chan struct{}, 1)
	var calls, sleeps atomic.Int32
	sleep := func(sctx context.Context, d time.Duration) error {
		if sleeps.Add(1) > 1 {
			return nil
		}
		inBackoff <- struct{}{}
		select {
		case <-time.After(10 * time.Second):
			return nil
		case <-sctx.Done():
			return context.Cause(sctx)
		}
	}
	rt := heldRunRuntime(t, runtime.RetryPolicy{DefaultAttempts: 3}, sleep, func(context.Context, *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Failed("provider unavailable"), nil
	})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, id, runtime.TickOptions{}); done <- err }()
	<-inBackoff
	t0 := time.Now()
	st, err := rt.Pause(ctx, id, "hold on")
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if took > 5*time.Second || !runtime.IsPaused(st) || calls.Load() != 1 {
		t.Fatalf("Pause took %v, run %s paused %v, %d attempt(s); want the backoff cut short, the run paused "+
			"after its first attempt", took.Round(time.Millisecond), st.Status, runtime.IsPaused(st), calls.Load())
	}
	// Lifting the pause goes on with the attempts left (2 and 3): the
	// policy's budget holds across the pause.
	st, err = rt.ResumeRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunFailed || calls.Load() != 3 {
		t.Fatalf("after ResumeRun: run %s (%q), %d attempts in all; want the 2 attempts left run and failed (3 in all)",
			st.Status, st.Error, calls.Load())
	}
}
