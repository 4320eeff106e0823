package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A host update that takes an idle waiting run from its holder is fenced
// at the version it saw idle: a holder that commits the run between the
// last look at it and the taking keeps it, and the update gives up with
// ErrRunClaimed (claimTaking: "a run that moved on meanwhile is not
// taken").
func TestTakeoverFenceRefusesARunCommittedAfterItsLastLook(t *testing.T) {
	t.Parallel()
	mem, rt0, id := heldListener(t) // waiting run held by "other"
	hs := &hookStore{Store: mem}
	var refusals, getsAfter atomic.Int32
	var committed atomic.Bool
	hs.claim = func(p *store.RunClaimParams) {
		if p.Owner == "me" && !p.Force {
			refusals.Add(1) // every claim of "me" is refused while "other" holds the run
		}
	}
	rt, err := runtime.New(runtime.Config{Store: hs, Registry: rt0.Registry(), Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	// claimHeld reads the run once after its first refusal (what it saw
	// idle), once more after its wait (still idle?), then the taking reads
	// it: "other" commits right after that second look.
	hs.get = func() {
		if refusals.Load() > 0 && getsAfter.Add(1) == 3 && committed.CompareAndSwap(false, true) {
			cur, err := mem.RunGet(context.Background(), id)
			if err == nil {
				cur.Vars["touched"] = true
				err = mem.RunCommit(context.Background(), &store.CommitParams{Run: cur})
			}
			if err != nil {
				t.Error(err)
			}
		}
	}
	ctx := context.Background()
	_, err = rt.Pause(ctx, id, "maintenance")
	if !committed.Load() {
		t.Fatal("setup: the holder's commit was never made")
	}
	if !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("Pause of a run its holder committed just before the taking = %v; want ErrRunClaimed", err)
	}
	got, _ := mem.RunGet(ctx, id)
	if runtime.IsPaused(got) || got.Vars["touched"] != true {
		t.Fatalf("the run: paused=%v touched=%v; want it as its holder left it", runtime.IsPaused(got), got.Vars["touched"])
	}
	// The holder still holds it: a claim by another runner is refused.
	if err := mem.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "third", TTL: time.Hour, Now: time.Now()}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claim by a third runner after the refused takeover: %v; want it held by its holder", err)
	}
}

// flakyRenewals fails the first renewal of a claim (a store briefly out
// of reach), then lets renewals through.
type flakyRenewals struct {
	*memory.Store
	renewals atomic.Int32
}

func (s *flakyRenewals) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Renew && s.renewals.Add(1) == 1 {
		return errors.New("injected: store briefly out of reach")
	}
	return s.Store.RunClaim(ctx, p)
}

// A renewal that fails for another reason than a lost claim is retried
// at the next period (claimHold): one failed renewal does not stop the
// renewals, so an effect outlasting the TTL still completes.
func TestClaimRenewalRetriedAfterATransientFailure(t *testing.T) {
	t.Parallel()
	st := &flakyRenewals{Store: memory.New()}
	const ttl = 300 * time.Millisecond
	slow := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		select {
		case <-time.After(3 * ttl):
			return runtime.Completed(map[string]any{"text": "done"}), nil
		case <-ctx.Done():
			return runtime.Outcome{}, context.Cause(ctx)
		}
	}
	rt := claimingRuntime(t, st, runtime.Claims{Owner: "a", TTL: ttl, RenewEvery: 50 * time.Millisecond}, slowCall(), slow)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("Tick = %v, %v; want the run completed (renewals go on after one failed)", got, err)
	}
	if n := st.renewals.Load(); n < 3 {
		t.Fatalf("%d renewals during an effect of 3 TTLs; want them to go on after the failed first", n)
	}
}

// A call gives an async child that never waits maxFollowRounds (100)
// ticks of its step budget, then keeps it for RetryFollowUps instead of
// holding the caller up (architecture: "100 rounds of the step budget").
func TestFollowUpGivesALoopingChildAHundredTicks(t *testing.T) {
	t.Parallel()
	var steps atomic.Int64
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "loop", "async": true}}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	loop := &runtime.Workflow{ID: "loop", Entry: "l", Nodes: map[string]runtime.NodeFunc{
		"l": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			steps.Add(1)
			return runtime.Next("l")
		}),
	}}
	rt, _, _ := scheduledRuntime(t, 1, parent, loop)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	// The parent's own tick budget is 1 step: tick it until it has
	// started the child and completed.
	for i := 0; i < 5; i++ {
		p, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status == durable.RunCompleted {
			break
		}
	}
	if n := steps.Load(); n != 100 {
		t.Fatalf("the call drove its looping child %d one-step ticks; want 100", n)
	}
	if n := rt.PendingFollowUps(); n != 1 {
		t.Fatalf("%d follow-ups kept; want the child's tick kept for a retry", n)
	}
}

// WaitedChild prefers the wait's details.sub_run_id to its wait key, as
// its doc says.
func TestWaitedChildPrefersDetailsSubRunID(t *testing.T) {
	t.Parallel()
	run := &durable.RunState{Status: durable.RunWaiting, Waiting: &durable.WaitState{Reason: durable.WaitSubworkflow,
		WaitKey: runtime.SubworkflowWaitKey("by-key"), Details: map[string]any{"sub_run_id": "by-details"}}}
	if got := runtime.WaitedChild(run); got != "by-details" {
		t.Fatalf("WaitedChild = %q; want details.sub_run_id %q", got, "by-details")
	}
	run.Waiting.Details = nil
	if got := runtime.WaitedChild(run); got != "by-key" {
		t.Fatalf("WaitedChild without details = %q; want the wait key's %q", got, "by-key")
	}
}

// NotifyChildEnded of a run that does not exist reports it and keeps no
// follow-up for a retry (a deleted run is forgotten, never retried).
func TestNotifyChildEndedOfAMissingRunKeepsNoRetry(t *testing.T) {
	t.Parallel()
	rt, _, _ := scheduledRuntime(t, 0, asyncParentAndChild()...)
	err := rt.NotifyChildEnded(context.Background(), "no-such-run")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("NotifyChildEnded of a missing run = %v; want ErrNotFound", err)
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Fatalf("%d follow-ups kept for a run that does not exist; want none", n)
	}
}

// NotifyChildEnded resumes the parent only if it still waits on the
// child: a parent that does not wait (here running, never ticked) is left
// as it is, not driven.
func TestNotifyChildEndedLeavesAParentThatDoesNotWaitAlone(t *testing.T) {
	t.Parallel()
	var parentSteps atomic.Int32
	parent := &runtime.Workflow{ID: "busy", Entry: "work", Nodes: map[string]runtime.NodeFunc{
		"work": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			parentSteps.Add(1)
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	child := &runtime.Workflow{ID: "quick", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"child": true})
		}),
	}}
	rt, _, _ := scheduledRuntime(t, 0, parent, child)
	ctx := context.Background()
	pid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	cid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "quick", ParentRunID: pid})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rt.Tick(ctx, cid, runtime.TickOptions{}); err != nil || c.Status != durable.RunCompleted {
		t.Fatalf("setup: child %v, %v", c, err)
	}
	before, _ := rt.GetState(ctx, pid)
	if err := rt.NotifyChildEnded(ctx, cid); err != nil {
		t.Fatalf("NotifyChildEnded: %v", err)
	}
	after, _ := rt.GetState(ctx, pid)
	if n := parentSteps.Load(); n != 0 || after.Status != durable.RunRunning || after.Version != before.Version {
		t.Fatalf("the parent, which does not wait on the child, was driven: %d steps, %s, version %d -> %d",
			n, after.Status, before.Version, after.Version)
	}
}

// A child that ends while its parent is paused does not resume the parent
// (a paused run is not resumed) and that is no failure: nothing is kept
// for a retry, and NotifyChildEnded reports no error.
func TestChildEndLeavesAPausedParentWaitingWithoutError(t *testing.T) {
	t.Parallel()
	parent := &runtime.Workflow{ID: "p", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "c", "async": true, "wait": true}}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	child := &runtime.Workflow{ID: "c", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"wait_key": "go"}, ResultKey: "go"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"child": true})
		}),
	}}
	rt, _, _ := scheduledRuntime(t, 0, parent, child)
	ctx := context.Background()
	pid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Tick(ctx, pid, runtime.TickOptions{})
	if err != nil || p.Status != durable.RunWaiting {
		t.Fatalf("setup: parent %v, %v", p, err)
	}
	cid := runtime.WaitedChild(p)
	if _, err := rt.Pause(ctx, pid, "hold on"); err != nil {
		t.Fatal(err)
	}
	if c, err := rt.Resume(ctx, runtime.ResumeParams{RunID: cid, WaitKey: "go", Payload: map[string]any{}}); err != nil || c.Status != durable.RunCompleted {
		t.Fatalf("setup: child %v, %v", c, err)
	}
	if err := rt.NotifyChildEnded(ctx, cid); err != nil {
		t.Fatalf("NotifyChildEnded with the parent paused = %v; want no error", err)
	}
	if got, _ := rt.GetState(ctx, pid); got.Status != durable.RunWaiting || !runtime.IsPaused(got) {
		t.Fatalf("the paused parent: %s paused=%v; want it still paused, waiting on its child", got.Status, runtime.IsPaused(got))
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Fatalf("%d follow-ups kept for a paused parent; want none", n)
	}
}
