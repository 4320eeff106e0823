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

// pauseMark marks the context of the host call whose store reads the gate
// below holds up.
type pauseMark struct{}

// holdPauseRead is a store that holds the second RunGet made with a
// marked context (Pause's final GetState, after its hostUpdate's read)
// until release is closed: the moment between Pause's commit (or its
// no-op) and the withdrawal of its stop request, stretched.
type holdPauseRead struct {
	store.Wrapper
	reads   atomic.Int32
	reached chan struct{}
	release chan struct{}
}

func (s *holdPauseRead) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if ctx.Value(pauseMark{}) != nil && s.reads.Add(1) == 2 {
		close(s.reached)
		<-s.release
	}
	return s.Store.RunGet(ctx, id)
}

func setupHeldPause(t *testing.T, wfs ...*runtime.Workflow) (*runtime.Runtime, *holdPauseRead) {
	t.Helper()
	st := &holdPauseRead{Wrapper: store.Wrapper{Store: memory.New()},
		reached: make(chan struct{}), release: make(chan struct{})}
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st
}

// Pause is documented as a no-op for a run waiting for a person. Its
// stop request (requestStop) is set before its update and withdrawn only
// after its final GetState, so a Resume answering the ask in that moment
// stops at its first step boundary: the resume is committed, the run is
// left RUNNING, Resume returns success, and nothing (no follow-up, no
// pause, no scheduler without claims) ever drives the run again.
func TestNoopPauseStrandsConcurrentResume(t *testing.T) {
	t.Parallel()
	rt, st := setupHeldPause(t, askWorkflow())
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || w.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", w, err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := rt.Pause(context.WithValue(ctx, pauseMark{}, true), id, "x"); err != nil {
			t.Errorf("Pause: %v", err)
		}
	}()
	select {
	case <-st.reached:
	case <-time.After(5 * time.Second):
		t.Fatal("Pause never reached its final read")
	}
	got, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: w.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
	close(st.release)
	wg.Wait()
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	final, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if final.Status == durable.RunRunning && !runtime.IsPaused(final) && rt.PendingFollowUps() == 0 {
		t.Fatalf("Resume returned %s with no error, the Pause was a no-op (ask wait), and the run is left %s at %q "+
			"with nothing queued to drive it (PendingFollowUps=0): a stale pause request stopped the resumed tick",
			got.Status, final.Status, final.CurrentNode)
	}
}

// Pause then ResumeRun from two host calls (a user clicking pause then
// resume): ResumeRun lifts the committed pause and ticks the run, but the
// tick sees the Pause's stop request, not yet withdrawn, and stops at
// once. ResumeRun returns success with the run RUNNING, undriven and not
// kept for RetryFollowUps: it stays running until the next restart's
// recovery.
func TestResumeRunRightAfterPauseStrandsRun(t *testing.T) {
	t.Parallel()
	rt, st := setupHeldPause(t, chain(3))
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := rt.Pause(context.WithValue(ctx, pauseMark{}, true), id, "x"); err != nil {
			t.Errorf("Pause: %v", err)
		}
	}()
	select {
	case <-st.reached:
	case <-time.After(5 * time.Second):
		t.Fatal("Pause never reached its final read")
	}
	got, err := rt.ResumeRun(ctx, id)
	close(st.release)
	wg.Wait()
	if err != nil {
		t.Fatalf("ResumeRun: %v", err)
	}
	final, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if final.Status == durable.RunRunning && !runtime.IsPaused(final) && rt.PendingFollowUps() == 0 {
		t.Fatalf("ResumeRun returned %s with no error and the run is left %s at %q, not paused, with nothing queued "+
			"to drive it (PendingFollowUps=0): the tick stopped on the Pause's stale stop request",
			got.Status, final.Status, final.CurrentNode)
	}
}
