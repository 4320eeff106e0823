package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// afterGetStore is a runner's view of a shared memory store that calls
// after once a RunGet has read a run, before the caller sees it.
type afterGetStore struct {
	*memory.Store
	after func(ctx context.Context, run *durable.RunState)
}

func (s *afterGetStore) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	run, err := s.Store.RunGet(ctx, id)
	if err == nil && s.after != nil {
		s.after(ctx, run)
	}
	return run, err
}

// childEndHandOver has runner a hand a parent its child's end once, as
// NotifyChildEnded of cid, from within another runner's read.
type childEndHandOver struct {
	once sync.Once
	ran  bool
	err  error
}

func (h *childEndHandOver) notify(ctx context.Context, a *runtime.Runtime, cid string) {
	h.once.Do(func() {
		h.ran = true
		h.err = a.NotifyChildEnded(ctx, cid)
	})
}

// forClaimsAndAsync runs race under each claims and async setting.
func forClaimsAndAsync(t *testing.T, race func(t *testing.T, claims, async bool)) {
	for _, claims := range []bool{true, false} {
		for _, async := range []bool{true, false} {
			t.Run(fmt.Sprintf("claims=%v/async=%v", claims, async), func(t *testing.T) {
				race(t, claims, async)
			})
		}
	}
}

// resumedElsewhere runs the race of the tests below on one store: runner B
// serves the parent's workflow and the child's, runner A neither. B leaves
// the parent waiting on its child and ends the child; at the first run B
// reads for which handOverAt holds, A hands the parent the child's end
// (its NotifyChildEnded, or its scheduler's Recover), without a tick. It
// returns runner B and the parent as B's call left it.
func resumedElsewhere(t *testing.T, claims, async bool,
	handOverAt func(ctx context.Context, shared *memory.Store, run *durable.RunState, pid, cid string) bool,
) (*runtime.Runtime, *durable.RunState) {
	t.Helper()
	ctx := context.Background()
	shared := memory.New()
	owner := func(name string) string {
		if claims {
			return name
		}
		return ""
	}
	a := servingRuntime(t, shared, owner("runner-a"))
	bs := &afterGetStore{Store: shared}
	b := servingRuntime(t, bs, owner("runner-b"), waitingParent(async), answeringChild())
	pid, cid := parentWaitingOnChild(t, b, async)

	var h childEndHandOver
	bs.after = func(ctx context.Context, run *durable.RunState) {
		if handOverAt(ctx, shared, run, pid, cid) {
			h.notify(ctx, a, cid)
		}
	}
	cst, err := driveChild(t, b, cid, async)
	bs.after = nil
	if err != nil || cst.Status != durable.RunCompleted {
		t.Fatalf("child driven by runner B: %v, %v; want completed", cst, err)
	}
	if !h.ran || h.err != nil {
		t.Fatalf("runner A's NotifyChildEnded ran: %v, %v; want it run, without error", h.ran, h.err)
	}
	pst, err := b.GetState(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	return b, pst
}

// Runner B serves the parent's workflow and the child's, runner A
// neither, on one store. B commits the child's end; before B's resume of
// the parent reads it (B has just seen it waiting), A's NotifyChildEnded
// (or its scheduler's Recover) hands the parent the child's end, without
// a tick: A does not serve the parent. B's resume is then stale, and B
// returned without driving the parent, which A left running at its
// resume node: nothing drove it until the next Recover (up to 15 s with
// claims; without claims never, until a restart). B, which serves it,
// now drives it on in the same call.
func TestParentResumedElsewhereMeanwhileIsDriven(t *testing.T) {
	forClaimsAndAsync(t, parentResumedElsewhereMeanwhile)
}

func parentResumedElsewhereMeanwhile(t *testing.T, claims, async bool) {
	// Once the child's end is committed, B's first read of the parent
	// still waiting on it lets A hand the parent that end first.
	b, pst := resumedElsewhere(t, claims, async,
		func(ctx context.Context, shared *memory.Store, run *durable.RunState, pid, cid string) bool {
			if run.RunID != pid || runtime.WaitedChild(run) != cid {
				return false
			}
			child, err := shared.RunGet(ctx, cid)
			return err == nil && child.Status.Terminal()
		})
	out, _ := pst.Output["sub"].(map[string]any)
	if pst.Status != durable.RunCompleted || fmt.Sprint(out["output"]) != "map[answer:42]" {
		t.Fatalf("parent after runner B's call ended its child: %s at %q; want completed with the child's output "+
			"(B serves it; A, which handed it the child's end, does not)", pst.Status, pst.CurrentNode)
	}
	if n := b.PendingFollowUps(); n != 0 {
		t.Errorf("runner B keeps %d follow-ups; want none", n)
	}
}

// The same race where B serves only the child: B's stale resume leaves
// the parent running at its resume node for a runtime that serves it,
// queueing no tick that would fail for want of the workflow (and be
// retried, and warned about, for as long as the parent ran).
func TestParentResumedElsewhereMeanwhileUnservedIsLeft(t *testing.T) {
	ctx := context.Background()
	shared := memory.New()
	setup := servingRuntime(t, shared, "runner-c", waitingParent(true), answeringChild())
	a := servingRuntime(t, shared, "runner-a")
	bs := &afterGetStore{Store: shared}
	b, bLogs := loggingRuntime(t, bs, "runner-b", nil, answeringChild())
	pid, cid := parentWaitingOnChild(t, setup, true)
	var h childEndHandOver
	bs.after = func(ctx context.Context, run *durable.RunState) {
		if run.RunID != pid || runtime.WaitedChild(run) != cid {
			return
		}
		if child, err := shared.RunGet(ctx, cid); err != nil || !child.Status.Terminal() {
			return
		}
		h.notify(ctx, a, cid)
	}
	cst, err := b.Tick(ctx, cid, runtime.TickOptions{})
	bs.after = nil
	if err != nil || cst.Status != durable.RunCompleted || !h.ran || h.err != nil {
		t.Fatalf("child driven by runner B: %v, %v (A notified: %v, %v); want completed", cst, err, h.ran, h.err)
	}
	pst, err := setup.GetState(ctx, pid)
	if err != nil || pst.Status != durable.RunRunning || pst.CurrentNode != "after" {
		t.Fatalf("parent: %v at %q, %v; want running at after, for a runtime that serves it", pst.Status, pst.CurrentNode, err)
	}
	if n := b.PendingFollowUps(); n != 0 || bLogs.String() != "" {
		t.Fatalf("runner B keeps %d follow-ups, logged %q; want none", n, bLogs.String())
	}
}

// The same race one read earlier: runner A (serving neither workflow)
// hands the parent its child's end (its NotifyChildEnded or Recover)
// before runner B's resume of the parent reads it, not between that read
// and B's resume. B found the parent running at its resume node, not
// waiting, and returned without driving it: nothing drove it until the
// next Recover (up to 15 s with claims; never without). B, which serves
// it, now drives it on in the same call.
func TestParentResumedElsewhereBeforeServingRunnerReadsItIsDriven(t *testing.T) {
	forClaimsAndAsync(t, parentResumedElsewhereBeforeRead)
}

func parentResumedElsewhereBeforeRead(t *testing.T, claims, async bool) {
	// B's first read of the ended child (its resume of the parent reads
	// the child before the parent) lets A hand the parent the end first.
	_, pst := resumedElsewhere(t, claims, async,
		func(_ context.Context, _ *memory.Store, run *durable.RunState, _, cid string) bool {
			return run.RunID == cid && run.Status.Terminal()
		})
	if pst.Status != durable.RunCompleted {
		t.Fatalf("parent after runner B's call ended its child: %s at %q; want completed "+
			"(B serves it; A, which handed it the child's end first, does not, and left it running)",
			pst.Status, pst.CurrentNode)
	}
}

// A parent its caller's step gate stopped after its sync child ended
// within its tick is not driven by a later NotifyChildEnded of that child
// (a host's, with no gate): it was not handed the child's end by another
// runtime and left at its resume node (its last ledger record is its own
// step, not that resume), but left at its checkpoint by its caller.
func TestNotifyChildEndedLeavesGatedParentAtCheckpoint(t *testing.T) {
	ctx := context.Background()
	parent := waitingParent(false)
	parent.Nodes["spawn"] = node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
		// A sync child that ends within the parent's tick.
		return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
			Payload: map[string]any{"workflow_id": "child"}}, "after")
	})
	rt := servingRuntime(t, memory.New(), "", parent, answeringChild())
	pid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	gate := func(ctx context.Context, run *durable.RunState, nodeID string) error {
		if run.RunID == pid && nodeID == "after" {
			return runtime.ErrStepGateClosed
		}
		return nil
	}
	pst, err := rt.Tick(ctx, pid, runtime.TickOptions{StepGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	if pst.Status != durable.RunRunning || pst.CurrentNode != "after" {
		t.Fatalf("parent after its gated tick: %s at %q; want running at \"after\"", pst.Status, pst.CurrentNode)
	}
	sub, _ := pst.Vars["sub"].(map[string]any)
	cid, _ := sub["sub_run_id"].(string)
	if cid == "" {
		t.Fatalf("parent's vars.sub = %v; want its ended sync child's result", pst.Vars["sub"])
	}
	if err := rt.NotifyChildEnded(ctx, cid); err != nil {
		t.Fatal(err)
	}
	if pst, err = rt.GetState(ctx, pid); err != nil {
		t.Fatal(err)
	}
	if pst.Status != durable.RunRunning || pst.CurrentNode != "after" {
		t.Fatalf("parent after NotifyChildEnded of its ended sync child: %s at %q; want left running at \"after\"",
			pst.Status, pst.CurrentNode)
	}
}
