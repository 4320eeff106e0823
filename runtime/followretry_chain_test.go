package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// spawnAndWait is a workflow that starts an async child of workflow child,
// waits on it, then completes with the child's result.
func spawnAndWait(id, child string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": child, "async": true, "wait": true}}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": run.Vars["sub"]}), nil
		},
	}}
}

// TestRetriedParentResumeWhoseAnswerWasLostResumesGrandparent: a
// grandparent G waits on an async child P, which waits on an async child
// C. C ends; the follow-up resuming P completes P, but the commit's answer
// is lost (it landed). The follow-up is kept for a retry (followretry.go),
// but the retry's resumeParent(C) found P no longer waiting and forgot
// it: P's own follow-up (resume G, afterTerminal) was never queued, since
// the commit was reported failed, and G waited for good in a live process
// without claims. (Before that, the second resumeParent(C) the child's end
// queues had settled the kept entry at once.) A retry that finds the
// parent no longer waiting now drives the parent, whose end then resumes
// G.
func TestRetriedParentResumeWhoseAnswerWasLostResumesGrandparent(t *testing.T) {
	ctx := context.Background()
	st := &failTerminalOnce{Wrapper: store.Wrapper{Store: memory.New()}, wf: "P", lost: true}
	c := &runtime.Workflow{ID: "C", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(spawnAndWait("G", "P"), spawnAndWait("P", "C"), c)
	now := fakeNow()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: now.Now})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "G"})
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatalf("G's tick: %v", err)
	}
	if !st.failed.Load() {
		t.Fatal("setup: P's terminal commit was not reached")
	}
	for i := 0; i < 10; i++ {
		now.Advance(10 * time.Minute) // ten minutes, past any back-off
		rt.RetryFollowUps(ctx)
	}
	g, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if pid := runtime.WaitedChild(g); pid != "" {
		if p, err := rt.GetState(ctx, pid); err != nil || p.Status != durable.RunCompleted {
			t.Fatalf("setup: P is %v (%v), want completed (its commit landed)", p, err)
		}
	}
	if g.Status != durable.RunCompleted {
		t.Fatalf("grandparent %s (waiting %v) after the retries; its child P is completed (answer of its commit lost); %d follow-ups kept",
			g.Status, g.Waiting != nil, rt.PendingFollowUps())
	}
}

type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func fakeNow() *manualClock { return &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *manualClock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// bTakesChildren is runner A's view of a store shared with a live runner
// B whose Recover picked up A's async children as soon as they were
// created (running, unclaimed): B holds each child's claim (and renews
// it) while it drives the child.
type bTakesChildren struct {
	store.Wrapper
	wf     string
	claims atomic.Int32 // A's claim attempts on runs of wf
}

func (s *bTakesChildren) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Owner == "A" && !p.Renew {
		if r, err := s.Wrapper.RunGet(ctx, p.RunID); err == nil && r.WorkflowID == s.wf {
			s.claims.Add(1)
		}
	}
	return s.Wrapper.RunClaim(ctx, p)
}

func (s *bTakesChildren) RunCommit(ctx context.Context, p *store.CommitParams) error {
	err := s.Wrapper.RunCommit(ctx, p)
	if err == nil && p.Create && p.Run != nil && p.Run.WorkflowID == s.wf {
		if cerr := s.Wrapper.RunClaim(ctx, &store.RunClaimParams{RunID: p.Run.RunID, Owner: "B", TTL: time.Minute}); cerr != nil {
			panic(cerr)
		}
	}
	return err
}

// TestFanOutDoesNotWaitForChildrenALiveRunnerDrives: for a while every
// follow-up tick claimed with claimWaiting (driver.drain), so a child that
// another live runner was driving (the usual reason its claim is held)
// cost the caller ~1.3 s of claim attempts before the refusal: a parent
// fanning out to 5 async children that runner B picked up made A's Tick
// take 6.4 s, for nothing, since B drives them and a refusal is kept for a
// retry anyway. Each child is now claimed once by A's drive.
func TestFanOutDoesNotWaitForChildrenALiveRunnerDrives(t *testing.T) {
	ctx := context.Background()
	const n = 5
	nodes := map[string]runtime.NodeFunc{}
	for i := 0; i < n; i++ {
		next := "end"
		if i+1 < n {
			next = fmt.Sprintf("s%d", i+1)
		}
		nodes[fmt.Sprintf("s%d", i)] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "child", "async": true}}, next), nil
		}
	}
	nodes["end"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(map[string]any{"ok": true}), nil
	}
	parent := &runtime.Workflow{ID: "fan", Entry: "s0", Nodes: nodes}
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(parent, child)
	st := &bTakesChildren{Wrapper: store.Wrapper{Store: memory.New()}, wf: "child"}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &runtime.Claims{Owner: "A"}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "fan"})
	if err != nil {
		t.Fatal(err)
	}
	st.claims.Store(0)
	p, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || p.Status != durable.RunCompleted {
		t.Fatalf("parent: %v %v", p, err)
	}
	if got := st.claims.Load(); got != n {
		t.Errorf("A's drive made %d claim attempts on its %d children, held by the live runner B: want one each (no waiting for B)", got, n)
	}
	if k := rt.PendingFollowUps(); k != n {
		t.Errorf("%d follow-ups kept for a retry, want the %d refused children", k, n)
	}
}
