package scheduler_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// failChildGetOnce fails the first RunGet of one run id after arm: a
// transient store error (a busy database, a dropped connection).
type failChildGetOnce struct {
	store.Wrapper
	mu sync.Mutex
	id string
}

func (s *failChildGetOnce) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	s.mu.Lock()
	fail := runID != "" && runID == s.id
	if fail {
		s.id = ""
	}
	s.mu.Unlock()
	if fail {
		return nil, errors.New("injected: store briefly unavailable")
	}
	return s.Wrapper.RunGet(ctx, runID)
}

// A parent waits on an async child; the child's end is committed and the
// process dies before the parent is resumed. At the restart, Start's
// Recover fails once to read the child (a transient store error). It used
// to skip the parent silently and count the recovery as done: without
// claims nothing else resumed the parent while the process lived. The
// failed read now fails the recovery, which the loop tries again.
func TestRecoverRetriesAParentWhoseChildCouldNotBeRead(t *testing.T) {
	clk := &lockedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	inner := memory.New()
	reg, _ := runtime.NewRegistry(askChildFlows()...)
	before, _ := runtime.New(runtime.Config{Store: inner, Registry: reg, Clock: clk.Now})
	ctx := context.Background()
	pid, child := parentWaitingOnChild(ctx, t, before)
	// The child's end is committed; the process dies before the parent's
	// resume.
	c, err := inner.RunGet(ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	c.Status, c.Waiting, c.Output = durable.RunCompleted, nil, map[string]any{"ok": true}
	if err := inner.RunCommit(ctx, &store.CommitParams{Run: c}); err != nil {
		t.Fatal(err)
	}
	// The restart.
	flaky := &failChildGetOnce{Wrapper: store.Wrapper{Store: inner}, id: child}
	reg2, _ := runtime.NewRegistry(askChildFlows()...)
	rt, _ := runtime.New(runtime.Config{Store: flaky, Registry: reg2, Clock: clk.Now})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: 10 * time.Millisecond})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	deadline := time.Now().Add(10 * time.Second) // 1,000 poll intervals
	for time.Now().Before(deadline) {
		if p, _ := inner.RunGet(ctx, pid); p.Status == durable.RunCompleted {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	p, _ := inner.RunGet(ctx, pid)
	t.Errorf("10 s after the restart the parent is still %s (reason %s) on child %s, which completed: "+
		"the recovery's failed read of the child was dropped (Stats.Errors %q)", p.Status, p.Waiting.Reason, child, s.Stats().Errors)
}

// lockedClock is a settable clock safe for the loop's goroutine.
type lockedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *lockedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// parentWaitingOnChild starts a run of workflow "parent", ticks it until
// it waits on the child it started, and returns both run ids.
func parentWaitingOnChild(ctx context.Context, t *testing.T, rt *runtime.Runtime) (parentID, childID string) {
	t.Helper()
	pid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := rt.Tick(ctx, pid, runtime.TickOptions{})
	if err != nil || parent.Status != durable.RunWaiting || parent.Waiting.Reason != durable.WaitSubworkflow {
		t.Fatalf("setup: parent %v, %v", parent.Status, err)
	}
	return pid, runtime.WaitedChild(parent)
}
