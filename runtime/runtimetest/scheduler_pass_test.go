package runtimetest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// failChildEndOnce fails the first commit that ends a run of the
// "rv_child" workflow (a store write that did not get through): the
// runtime keeps the child's tick as a follow-up to retry.
type failChildEndOnce struct {
	store.Wrapper
	failed atomic.Bool
}

func (s *failChildEndOnce) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.WorkflowID == "rv_child" && p.Run.Status.Terminal() && s.failed.CompareAndSwap(false, true) {
		return errors.New("connection reset")
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// parentAndChild: a parent starts an async child and waits for it;
// the child completes at once.
func parentAndChild() []*runtime.Workflow {
	parent := &runtime.Workflow{ID: "rv_parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "rv_child", "async": true, "wait": true}}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": run.Vars["sub"]}), nil
		},
	}}
	child := &runtime.Workflow{ID: "rv_child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	return []*runtime.Workflow{parent, child}
}

func newFollowUpHarness(t *testing.T) (*runtimetest.Harness, *failChildEndOnce) {
	st := &failChildEndOnce{Wrapper: store.Wrapper{Store: memory.New()}}
	t.Cleanup(func() { _ = st.Close() })
	h := runtimetest.New(t, runtimetest.Config{Workflows: parentAndChild(), Store: st})
	return h, st
}

// TestAdvanceRetriesFollowUpsByTheFakeClock: the scheduler's loop
// calls Runtime.RetryFollowUps at each pass, so a child whose terminal
// commit failed is driven again (and its parent resumed) about a second
// later. Advance(time.Hour) — a pass an hour later by the harness's clock —
// should do the same. It did not: Advance only called PollOnce, and the
// runtime timed its follow-up retries by the wall clock, not Config.Clock.
func TestAdvanceRetriesFollowUpsByTheFakeClock(t *testing.T) {
	t.Parallel()
	h, st := newFollowUpHarness(t)
	id, p := h.Run("rv_parent", nil)
	if !st.failed.Load() || p.Status != durable.RunWaiting || h.Runtime.PendingFollowUps() != 1 {
		t.Fatalf("setup: child commit failed %v, parent %s, %d follow-ups kept",
			st.failed.Load(), p.Status, h.Runtime.PendingFollowUps())
	}
	h.Advance(time.Hour)
	st2 := h.State(id)
	if st2.Status != durable.RunCompleted {
		t.Fatalf("after Advance(1h) the parent is %s with %d follow-ups still kept; "+
			"a scheduler loop at that time would have retried the child and resumed the parent",
			st2.Status, h.Runtime.PendingFollowUps())
	}
}

// TestAdvanceRetriesDueFollowUps isolates the harness's part: even
// once the follow-up's back-off has passed, Advance did not call
// Runtime.RetryFollowUps as a scheduler pass does, so the parent never
// ended in a harness test.
func TestAdvanceRetriesDueFollowUps(t *testing.T) {
	t.Parallel()
	h, st := newFollowUpHarness(t)
	id, p := h.Run("rv_parent", nil)
	if !st.failed.Load() || p.Status != durable.RunWaiting || h.Runtime.PendingFollowUps() != 1 {
		t.Fatalf("setup: child commit failed %v, parent %s, %d follow-ups kept",
			st.failed.Load(), p.Status, h.Runtime.PendingFollowUps())
	}
	time.Sleep(1200 * time.Millisecond) // past the first back-off (1s) on any clock
	h.Advance(2 * time.Second)
	if got := h.State(id).Status; got != durable.RunCompleted {
		t.Fatalf("after a scheduler pass past the retry's back-off the parent is %s with %d follow-ups still kept, want completed",
			got, h.Runtime.PendingFollowUps())
	}
}

// spinAfterHold waits an hour, then takes more steps than a scheduler
// drive gives a run (100 ticks of 100 steps) before it completes.
func spinAfterHold(steps int) *runtime.Workflow {
	return &runtime.Workflow{ID: "rv_spin", Entry: "hold", Nodes: map[string]runtime.NodeFunc{
		"hold": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(time.Hour))}, ResultKey: "held"}, "spin"), nil
		},
		"spin": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := runtime.AsInt(run.Vars["n"])
			if n >= int64(steps) {
				return runtime.Complete(map[string]any{"n": n}), nil
			}
			run.Vars["n"] = n + 1
			return runtime.Next("spin"), nil
		},
	}}
}

// TestAdvanceContinuesRunsAPassLeftRunning: a run released by a
// scheduler pass that is still running after the drive's tick bound is
// kept by the scheduler (unfinished) and driven again at the loop's next
// pass, at once. The harness's passes never drove it again: it stayed
// running whatever the test advanced.
func TestAdvanceContinuesRunsAPassLeftRunning(t *testing.T) {
	t.Parallel()
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{spinAfterHold(10_300)}})
	id, st := h.Run("rv_spin", nil)
	if st.Status != durable.RunWaiting {
		t.Fatalf("setup: %s, want waiting", st.Status)
	}
	if n := h.Advance(time.Hour); n != 1 {
		t.Fatalf("%d runs due after the hour, want 1", n)
	}
	for range 3 {
		h.Advance(time.Second)
	}
	st = h.State(id)
	if st.Status != durable.RunCompleted {
		n, _ := runtime.AsInt(st.Vars["n"])
		t.Fatalf("after four scheduler passes the run is %s at step %d; a scheduler loop drives a run its pass left running again at once", st.Status, n)
	}
}

// TestScriptedOutcomesAreHandedOutAsPrepared: Script promises each
// request "the next" prepared outcome, but serve handed out the scripted
// Result itself, which the kernel writes into run.Vars uncopied: a node
// that edited its result in place (as nodes may change run.Vars) edited
// the test's script, so a later request got the first run's edit instead
// of what was scripted. A real handler returns a fresh value per call.
func TestScriptedOutcomesAreHandedOutAsPrepared(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "rv_edit", Entry: "llm", Nodes: map[string]runtime.NodeFunc{
		"llm": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, ResultKey: "r",
				Payload: map[string]any{"prompt": "x"}}, "edit"), nil
		},
		"edit": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			r := run.Vars["r"].(map[string]any)
			r["content"] = r["content"].(string) + " (edited)"
			return runtime.Complete(map[string]any{"content": r["content"]}), nil
		},
	}}
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{wf}})
	out := runtime.Completed(map[string]any{"content": "scripted"})
	h.Script(durable.EffectLLMCall, out, out)
	for i := range 2 {
		_, st := h.Run("rv_edit", nil)
		if got := st.Output["content"]; got != "scripted (edited)" {
			t.Fatalf("run %d: output %q, want %q: the scripted outcome was changed by an earlier run", i+1, got, "scripted (edited)")
		}
	}
}

// TestAdvanceReleasesEveryDueRun: Advance's doc says the runs whose
// deadline has passed are ticked, and a scheduler loop does so — a poll
// that fills its batch (100) polls again at once. Advance made a single
// PollOnce, so with more than 100 runs due some stayed waiting past their
// deadline after the pass.
func TestAdvanceReleasesEveryDueRun(t *testing.T) {
	t.Parallel()
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{spinAfterHold(0)}})
	ids := make([]string, 101)
	for i := range ids {
		ids[i], _ = h.Run("rv_spin", nil)
	}
	n := h.Advance(time.Hour)
	var waiting []string
	for _, id := range ids {
		if h.State(id).Status != durable.RunCompleted {
			waiting = append(waiting, id)
		}
	}
	if len(waiting) > 0 {
		t.Fatalf("Advance(1h) reported %d runs due and left %d of the 101 due runs unreleased (e.g. %s is %s)",
			n, len(waiting), waiting[0], h.State(waiting[0]).Status)
	}
}

// TestPolicyRetriesOnTheFakeClock: the harness had no way to set an effect
// policy, so every scripted effect got one attempt; with one, the runtime's
// back-off would sleep for real. Config.Policy now sets it, and its
// back-off advances the fake clock.
func TestPolicyRetriesOnTheFakeClock(t *testing.T) {
	wf := &runtime.Workflow{ID: "call", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "p"}, ResultKey: "r"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{wf},
		Policy: runtime.RetryPolicy{DefaultAttempts: 3, Base: time.Minute, Max: time.Hour}})
	h.Script(durable.EffectLLMCall, runtime.Failed("busy"), runtime.Failed("busy"), runtime.Completed(map[string]any{"text": "ok"}))
	before := h.Clock.Now()
	real := time.Now()
	id, _ := h.Run("call", nil)
	h.RequireStatus(id, durable.RunCompleted)
	var attempts []int
	for _, r := range h.Requests(durable.EffectLLMCall) {
		attempts = append(attempts, r.Attempt)
	}
	if len(attempts) != 3 || attempts[0] != 1 || attempts[2] != 3 {
		t.Fatalf("attempts %v, want 1, 2, 3", attempts)
	}
	if waited := h.Clock.Now().Sub(before); waited != 3*time.Minute {
		t.Errorf("the fake clock moved %v, want the back-off 1m + 2m", waited)
	}
	if time.Since(real) > 30*time.Second {
		t.Errorf("the back-off slept for real")
	}
}
