package scheduler_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// What this file checks: Recover hands a waiting parent the end of a
// child that failed or was cancelled (not only one that completed), and a
// pass retries a parent's resume that the child's own call could not
// commit (the runtime's follow-ups).

// askChildFlows are a parent that starts an async child, waits for it
// and completes, and the child, which asks a question.
func askChildFlows() []*runtime.Workflow {
	return []*runtime.Workflow{
		{ID: "ask", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "ans"}, "done"), nil
			},
			"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}},
		{ID: "parent", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
					Payload: map[string]any{"workflow_id": "ask", "async": true, "wait": true}}, "done"), nil
			},
			"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}},
	}
}

// Recover's doc: "parents waiting on a child that has ended are resumed".
// A child that failed or was cancelled has ended as much as one that
// completed; a crash between its end and its parent's resume must not
// leave the parent waiting forever. Found by mutating Recover to resume
// parents of completed children only, which no test caught.
func TestRecoverResumesParentsOfFailedAndCancelledChildren(t *testing.T) {
	for _, status := range []durable.RunStatus{durable.RunFailed, durable.RunCancelled} {
		t.Run(string(status), func(t *testing.T) {
			c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			rt, st := setup(t, c, askChildFlows()...)
			ctx := context.Background()
			pid, child := parentWaitingOnChild(ctx, t, rt)
			// The child's end is committed; the process dies before the
			// parent's resume.
			ch, err := st.RunGet(ctx, child)
			if err != nil {
				t.Fatal(err)
			}
			ch.Status, ch.Waiting, ch.Error = status, nil, "injected end"
			if err := st.RunCommit(ctx, &store.CommitParams{Run: ch}); err != nil {
				t.Fatal(err)
			}
			s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
			if err := s.Recover(ctx); err != nil {
				t.Fatal(err)
			}
			p, _ := st.RunGet(ctx, pid)
			if p.Status == durable.RunWaiting {
				t.Fatalf("after Recover the parent still waits (%s) on child %s, which %s", p.Waiting.Reason, child, status)
			}
			if p.Status != durable.RunCompleted {
				t.Fatalf("parent %s (%s), want completed: its flow goes on whatever the child's outcome", p.Status, p.Error)
			}
		})
	}
}

// failRunCommits fails the next n commits of one run.
type failRunCommits struct {
	store.Wrapper
	runID string
	left  atomic.Int32
}

func (f *failRunCommits) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.RunID == f.runID && f.left.Add(-1) >= 0 {
		return errors.New("injected: commit failure")
	}
	return f.Wrapper.RunCommit(ctx, p)
}

// The host answers an async child; the child completes, but the commit
// of its parent's resume fails (a store error). The runtime keeps that
// resume for a retry, which nothing but the scheduler's pass runs in a
// process without claims: Pass (and the loop) must drive it, or the parent
// waits on an ended child until the next restart. Found by removing the
// RetryFollowUps call from the scheduler's pass, which no test caught.
func TestPassRetriesAParentResumeThatFailedToCommit(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	failing := &failRunCommits{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(askChildFlows()...)
	rt, err := runtime.New(runtime.Config{Store: failing, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pid, child := parentWaitingOnChild(ctx, t, rt)
	cst, err := rt.GetState(ctx, child)
	if err != nil || cst.Status != durable.RunWaiting || cst.Waiting == nil {
		t.Fatalf("setup: child %+v, %v", cst, err)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	failing.runID = pid
	failing.left.Store(1)
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: child, WaitKey: cst.Waiting.WaitKey,
		Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Logf("Resume of the child: %v", err)
	}
	if c, _ := rt.GetState(ctx, child); c.Status != durable.RunCompleted {
		t.Fatalf("setup: child %s, want completed", c.Status)
	}
	if p, _ := rt.GetState(ctx, pid); p.Status != durable.RunWaiting {
		t.Fatalf("setup: the parent's resume did not fail (parent %s)", p.Status)
	}
	if rt.PendingFollowUps() == 0 {
		t.Fatal("setup: the runtime kept no follow-up for the parent's failed resume")
	}
	c.Advance(10 * time.Minute) // past any follow-up back-off
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _ := rt.GetState(ctx, pid); p.Status != durable.RunCompleted {
		t.Fatalf("after a pass the parent is %s (its child completed and its resume's retry was due): "+
			"the pass did not drive the runtime's follow-ups (%d pending)", p.Status, rt.PendingFollowUps())
	}
}

// WakeStore's doc: a commit signals "when the run now waits with a
// deadline". A commit without one (a run left running, an event wait with
// no timeout) gives the loop nothing to release: waking it for every
// commit would make it poll the store at each step of every run. Found by
// mutating WakeStore to signal after every commit, which no test caught.
func TestWakeStoreDoesNotSignalACommitWithoutDeadline(t *testing.T) {
	t.Parallel()
	ws, s := wakeLoopAsleep(t, memory.New())
	ctx := context.Background()
	before := s.Stats().PollCycles
	running := &durable.RunState{RunID: "r1", WorkflowID: "wait", Status: durable.RunRunning, Vars: map[string]any{}}
	if err := ws.RunCommit(ctx, &store.CommitParams{Run: running, Create: true}); err != nil {
		t.Fatal(err)
	}
	event := &durable.RunState{RunID: "r2", WorkflowID: "wait", Status: durable.RunWaiting,
		Waiting: &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "evt"}, Vars: map[string]any{}}
	if err := ws.RunCommit(ctx, &store.CommitParams{Run: event, Create: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if after := s.Stats().PollCycles; after != before {
		t.Fatalf("the loop polled %d more times after commits that wrote no deadline; want none", after-before)
	}
}
