package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// loggingRuntime is servingRuntime on clock (time.Now when nil), logging
// its warnings to the returned buffer.
func loggingRuntime(t *testing.T, st store.Store, owner string, clock func() time.Time, wfs ...*runtime.Workflow) (*runtime.Runtime, *storetest.LogBuffer) {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	logs := &storetest.LogBuffer{}
	rt, err := runtime.New(runtime.Config{
		Store: st, Registry: reg, Clock: clock,
		Claims: &runtime.Claims{Owner: owner, TTL: 30 * time.Second},
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt, logs
}

// waitingParent calls "child" (async+wait, or sync) and completes with
// what the call gave at "sub".
func waitingParent(async bool) *runtime.Workflow {
	payload := map[string]any{"workflow_id": "child", "vars": map[string]any{"ask": !async}}
	if async {
		payload["async"], payload["wait"] = true, true
	}
	return &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: payload, ResultKey: "sub"}, "after")
		}),
		"after": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
}

// parentWaitingOnChild starts "parent" through rt and ticks it until it
// waits on its child, returning both ids. An async child is left unticked
// (the gate lets only the parent step); a sync one waits for its answer.
func parentWaitingOnChild(t *testing.T, rt *runtime.Runtime, async bool) (pid, cid string) {
	t.Helper()
	ctx := context.Background()
	pid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	var gate runtime.StepGate
	if async {
		gate = func(ctx context.Context, run *durable.RunState, nodeID string) error {
			if run.RunID != pid {
				return runtime.ErrStepGateClosed // the child waits for the test
			}
			return nil
		}
	}
	pst, err := rt.Tick(ctx, pid, runtime.TickOptions{StepGate: gate})
	if err != nil || pst.Status != durable.RunWaiting || runtime.WaitedChild(pst) == "" {
		t.Fatalf("parent's first tick: %v, %v; want waiting on its child", pst, err)
	}
	return pid, runtime.WaitedChild(pst)
}

// driveChild ends the child cid left by parentWaitingOnChild through rt:
// it ticks an async one and answers a sync one.
func driveChild(t *testing.T, rt *runtime.Runtime, cid string, async bool) (*durable.RunState, error) {
	t.Helper()
	ctx := context.Background()
	if async {
		return rt.Tick(ctx, cid, runtime.TickOptions{})
	}
	waiting, err := rt.GetState(ctx, cid)
	if err != nil || waiting.Status != durable.RunWaiting {
		t.Fatalf("sync child after the parent's tick: %v, %v; want waiting", waiting, err)
	}
	return rt.Resume(ctx, runtime.ResumeParams{RunID: cid, WaitKey: waiting.Waiting.WaitKey,
		Payload: map[string]any{"text": "yes"}})
}

// wantLastRecordResume fails the test unless the last ledger record of
// run id (named what) is its resume record.
func wantLastRecordResume(t *testing.T, st store.Store, id, what string) {
	t.Helper()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	if last := recs[len(recs)-1]; last.Effect == nil || last.Effect.Type != durable.EffectResume {
		t.Fatalf("%s's last record %+v; want its resume record", what, last)
	}
}

// answeringChild completes with {"answer": "42"}, first asking a person
// when vars.ask is true.
func answeringChild() *runtime.Workflow {
	return &runtime.Workflow{ID: "child", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			if run.Vars["ask"] == true && run.Vars["reply"] == nil {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
					Payload: map[string]any{"prompt": "?"}, ResultKey: "reply"}, "a")
			}
			return runtime.Complete(map[string]any{"answer": "42"})
		}),
	}}
}

// Runner A serves only the parent's workflow, runner B only the child's,
// on one store. The child ends in B (B ticks it, or B's resume of it does):
// B's automatic resume of the parent ticked it, which failed as
// workflow-not-found and was retried (and warned about) for ever, the
// parent left waiting until A's recovery noticed. B now commits the
// resume without a tick: the parent is running at its resume node with
// the child's output at its result key, and A's tick or Recover ends it.
func TestChildEndResumesParentServedByAnotherRuntime(t *testing.T) {
	stores := map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return memory.New() },
		"sqlite": func(t *testing.T) store.Store {
			sq, err := sqlite.New(t.Context(), sqlite.Config{Path: t.TempDir() + "/db.sqlite"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sq.Close() })
			return sq
		},
	}
	for storeName, open := range stores {
		for _, async := range []bool{true, false} {
			for _, finish := range []string{"tick", "recover"} {
				t.Run(fmt.Sprintf("%s/async=%v/%s", storeName, async, finish), func(t *testing.T) {
					childEndsInUnservingRuntime(t, open(t), async, finish)
				})
			}
		}
	}
}

func childEndsInUnservingRuntime(t *testing.T, shared store.Store, async bool, finish string) {
	ctx := context.Background()
	// A runner serving both starts the parent and leaves it waiting on
	// its child: an async child unticked (its gate), a sync one asking.
	setup := servingRuntime(t, shared, "runner-c", waitingParent(async), answeringChild())
	a, aLogs := loggingRuntime(t, shared, "runner-a", nil, waitingParent(async))
	b, bLogs := loggingRuntime(t, shared, "runner-b", nil, answeringChild())
	pid, cid := parentWaitingOnChild(t, setup, async)

	if cst, err := driveChild(t, b, cid, async); err != nil || cst.Status != durable.RunCompleted {
		t.Fatalf("child driven by runner B: %v, %v; want completed", cst, err)
	}

	pst, err := a.GetState(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := pst.Vars["sub"].(map[string]any)
	if pst.Status != durable.RunRunning || pst.CurrentNode != "after" || sub["sub_run_id"] != cid ||
		fmt.Sprint(sub["output"]) != "map[answer:42]" {
		t.Fatalf("parent after its child ended in runner B: %s at %q, sub %v; want running at after with the child's output",
			pst.Status, pst.CurrentNode, pst.Vars["sub"])
	}
	wantLastRecordResume(t, shared, pid, "parent")
	if n := b.PendingFollowUps(); n != 0 || bLogs.String() != "" {
		t.Fatalf("runner B keeps %d follow-ups, logged %q; want none (nothing left to retry)", n, bLogs.String())
	}

	switch finish {
	case "tick":
		pst, err = a.Tick(ctx, pid, runtime.TickOptions{})
	case "recover":
		var s *scheduler.Scheduler
		if s, err = scheduler.New(scheduler.Config{Runtime: a}); err != nil {
			t.Fatal(err)
		}
		if err = s.Recover(ctx); err == nil {
			pst, err = a.GetState(ctx, pid)
		}
	}
	out, _ := pst.Output["sub"].(map[string]any)
	if err != nil || pst.Status != durable.RunCompleted || fmt.Sprint(out["output"]) != "map[answer:42]" {
		t.Fatalf("parent finished by runner A (%s): %v, %v; want completed with the child's output", finish, pst, err)
	}
	if aLogs.String() != "" || a.PendingFollowUps() != 0 {
		t.Fatalf("runner A logged %q, keeps %d follow-ups; want neither", aLogs.String(), a.PendingFollowUps())
	}
	// Runner B's retries, if any were due, would find nothing to do.
	if n := b.RetryFollowUps(ctx); n != 0 {
		t.Fatalf("runner B retried %d follow-ups; want none", n)
	}
}

// parentCommitLost loses the answer of the first commit of a run of
// workflow "parent" once armed: the store made it, the caller is told it
// failed.
type parentCommitLost struct {
	store.Wrapper
	armed bool
	lost  bool
}

func (s *parentCommitLost) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if err := s.Wrapper.RunCommit(ctx, p); err != nil {
		return err
	}
	if s.armed && !s.lost && p.Run != nil && p.Run.WorkflowID == "parent" {
		s.lost = true
		return errors.New("connection reset")
	}
	return nil
}

// The answer of runner B's resume of the parent (committed without a
// tick) is lost: B keeps the parent's resume for a retry, which finds the
// parent running. The retry ticked it, as a parent left running by a
// resume whose answer was lost must be driven, which failed as
// workflow-not-found in B and was kept again, for ever. B now leaves a
// parent it does not serve to a runtime that serves it: the retry settles.
func TestRetriedParentResumeLeavesUnservedParentRunning(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	bView := &parentCommitLost{Wrapper: store.Wrapper{Store: mem}}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	setup := servingRuntime(t, mem, "runner-c", waitingParent(true), answeringChild())
	a, _ := loggingRuntime(t, mem, "runner-a", nil, waitingParent(true))
	b, _ := loggingRuntime(t, bView, "runner-b", clock, answeringChild())
	pid, cid := parentWaitingOnChild(t, setup, true)
	bView.armed = true
	if cst, err := b.Tick(ctx, cid, runtime.TickOptions{}); err != nil || cst.Status != durable.RunCompleted {
		t.Fatalf("child ticked by runner B: %v, %v; want completed", cst, err)
	}
	if !bView.lost || b.PendingFollowUps() != 1 {
		t.Fatalf("lost answer %v, B keeps %d follow-ups; want the parent's resume kept after its lost answer",
			bView.lost, b.PendingFollowUps())
	}
	for range 3 {
		mu.Lock()
		now = now.Add(10 * time.Minute)
		mu.Unlock()
		b.RetryFollowUps(ctx)
	}
	if n := b.PendingFollowUps(); n != 0 {
		t.Fatalf("runner B keeps %d follow-ups after its retries; want none", n)
	}
	if pst, err := a.Tick(ctx, pid, runtime.TickOptions{}); err != nil || pst.Status != durable.RunCompleted {
		t.Fatalf("parent ticked by runner A: %v, %v; want completed", pst, err)
	}
}

// diesAfterChildCancel is a process's view of a store that dies once a
// run of workflow "child" is committed cancelled: that commit is made,
// and every later one fails.
type diesAfterChildCancel struct {
	store.Wrapper
	dead bool
}

func (s *diesAfterChildCancel) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.dead {
		return errors.New("process killed")
	}
	if err := s.Wrapper.RunCommit(ctx, p); err != nil {
		return err
	}
	if p.Run != nil && p.Run.WorkflowID == "child" && p.Run.Status == durable.RunCancelled {
		s.dead = true
	}
	return nil
}

// A Cancel of the parent through runner B is killed after it cancelled
// the child: the parent waits on a child the cancel covered. Runner B,
// restarted and serving only the child, hands the child's end over: the
// parent is cancelled (its workflow is not needed for that), not resumed
// or left failing to be.
func TestCoveredCancelEndsParentServedByAnotherRuntime(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	setup := servingRuntime(t, mem, "runner-c", waitingParent(true), answeringChild())
	pid, cid := parentWaitingOnChild(t, setup, true)
	killed, _ := loggingRuntime(t, &diesAfterChildCancel{Wrapper: store.Wrapper{Store: mem}}, "runner-b", nil, answeringChild())
	if _, err := killed.Cancel(ctx, pid, "stop"); err == nil {
		t.Fatal("Cancel through the dying store succeeded; want it killed after the child's cancel")
	}
	if cst, _ := mem.RunGet(ctx, cid); cst.Status != durable.RunCancelled {
		t.Fatalf("child after the killed cancel: %s; want cancelled", cst.Status)
	}
	if pst, _ := mem.RunGet(ctx, pid); pst.Status != durable.RunWaiting {
		t.Fatalf("parent after the killed cancel: %s; want still waiting", pst.Status)
	}

	b, bLogs := loggingRuntime(t, mem, "runner-b2", nil, answeringChild())
	if err := b.NotifyChildEnded(ctx, cid); err != nil {
		t.Fatal(err)
	}
	pst, err := b.GetState(ctx, pid)
	if err != nil || pst.Status != durable.RunCancelled || pst.Error != "stop" {
		t.Fatalf("parent after runner B handed it its child's end: %v, %v; want cancelled with the reason", pst, err)
	}
	if n := b.PendingFollowUps(); n != 0 || bLogs.String() != "" {
		t.Fatalf("runner B keeps %d follow-ups, logged %q; want none", n, bLogs.String())
	}
}
