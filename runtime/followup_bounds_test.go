package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// readCountingStore counts the reads of one run (runID).
type readCountingStore struct {
	store.Wrapper
	runID atomic.Value
	gets  atomic.Int64
}

func (s *readCountingStore) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if v, _ := s.runID.Load().(string); v != "" && v == id {
		s.gets.Add(1)
	}
	return s.Wrapper.RunGet(ctx, id)
}

// asyncSpawnWorkflow starts child as an async+wait subworkflow (with vars
// when given) and completes with its output.
func asyncSpawnWorkflow(id, child string, vars map[string]any) *Workflow {
	return &Workflow{ID: id, Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			p := map[string]any{"workflow_id": child, "async": true, "wait": true}
			if vars != nil {
				p["vars"] = vars
			}
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub", Payload: p}, "after")
		}),
		"after": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["sub"]}) }),
	}}
}

// leafWorkflow completes at its first step.
func leafWorkflow(id string) *Workflow {
	return &Workflow{ID: id, Entry: "c", Nodes: map[string]NodeFunc{
		"c": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
}

// A child started running but host-paused (its vars carry
// _runtime.control.paused) cannot be moved by a tick while paused
// (spec §2.3, §2.7): the follow-up that drives it is settled, not
// re-queued as if it had used its step budget, which gave it 100 empty
// ticks per call and kept it for RetryFollowUps to spin on at every poll
// for as long as the pause lasted. ResumeRun drives it once the pause is
// lifted.
func TestPausedRunningChildFollowUpIsSettled(t *testing.T) {
	ctx := context.Background()
	st := &readCountingStore{Wrapper: store.Wrapper{Store: memory.New()}}
	paused := map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": true}}}
	reg, _ := NewRegistry(asyncSpawnWorkflow("P", "C", paused), leafWorkflow("C"))
	clock := newBusyClock()
	rt, err := New(Config{Store: st, Registry: reg, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(ctx, StartParams{WorkflowID: "P"})
	p, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || p.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", err, p)
	}
	child := WaitedChild(p)
	c, _ := rt.GetState(ctx, child)
	if c.Status != durable.RunRunning || !IsPaused(c) {
		t.Fatalf("setup: child %s paused %v", c.Status, IsPaused(c))
	}
	st.runID.Store(child)
	for i := 0; i < 5; i++ {
		clock.Advance(2 * time.Second)
		rt.RetryFollowUps(ctx)
	}
	if n := st.gets.Load(); n > 10 || rt.PendingFollowUps() != 0 {
		t.Fatalf("paused child read %d times by 5 follow-up retries, %d follow-ups kept; want it settled",
			n, rt.PendingFollowUps())
	}
	if _, err := rt.ResumeRun(ctx, child); err != nil {
		t.Fatal(err)
	}
	if p, _ := rt.GetState(ctx, id); p.Status != durable.RunCompleted {
		t.Fatalf("parent %s once the child's pause was lifted; want completed", p.Status)
	}
}

// maxFollowRounds bounds the ticks one call gives a run it drives,
// however the run comes back to the call: a listener looping over an
// async+wait subworkflow whose child completes at once is resumed by
// each child's end, and those resumes count. Before, each resume's tick
// restarted the count, so one EmitEvent drove the loop until
// maxFollowUps (100,000 follow-ups). Past the bound the run is left
// running, its answer committed, and kept for RetryFollowUps.
func TestAsyncSubflowLoopIsBoundedPerCall(t *testing.T) {
	const maxSteps = 5
	bound := int64(maxFollowRounds * maxSteps)
	var spawns atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loop := &Workflow{ID: "L", Entry: "w", Nodes: map[string]NodeFunc{
		"w": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "evt",
				Payload: map[string]any{"name": "go"}}, "spawn")
		}),
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			if spawns.Add(1) >= 3*bound {
				cancel() // far past the bound: stop the call
			}
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "leaf", "async": true, "wait": true}}, "spawn")
		}),
	}}
	reg, _ := NewRegistry(loop, leafWorkflow("leaf"))
	clock := newBusyClock()
	rt, err := New(Config{Store: memory.New(), Registry: reg, MaxSteps: maxSteps, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(ctx, StartParams{WorkflowID: "L", SessionID: "s"})
	if st, err := rt.Tick(ctx, id, TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", err, st)
	}
	if _, err := rt.EmitEvent(ctx, EmitParams{Name: "go", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	first := spawns.Load()
	if first > bound {
		t.Fatalf("one EmitEvent drove the looping listener %d steps; want at most maxFollowRounds x MaxSteps = %d", first, bound)
	}
	if l, _ := rt.GetState(ctx, id); l.Status != durable.RunRunning || rt.PendingFollowUps() == 0 {
		t.Fatalf("listener %s with %d follow-ups kept after its rounds; want running, kept for a later drive",
			l.Status, rt.PendingFollowUps())
	}
	clock.Advance(2 * time.Second)
	rt.RetryFollowUps(ctx)
	if n := spawns.Load() - first; n == 0 || n > bound+1 {
		t.Fatalf("a retry drove the kept listener %d steps; want some, at most %d", n, bound+1)
	}
}
