package runtime_test

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

// armedTerminalFail fails the first terminal commit of a run of
// workflow wf once armed: after the inner store made it (lost=true, the
// answer lost on a dead connection) or before.
type armedTerminalFail struct {
	store.Wrapper
	wf     string
	lost   bool
	armed  atomic.Bool
	failed atomic.Bool
}

func (s *armedTerminalFail) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.armed.Load() && p.Run != nil && p.Run.WorkflowID == s.wf && p.Run.Status.Terminal() &&
		s.failed.CompareAndSwap(false, true) {
		if s.lost {
			if err := s.Wrapper.RunCommit(ctx, p); err != nil {
				return err
			}
		}
		return errors.New("connection reset")
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// parentAndAskingChild: "zparent" starts "zchild" async and waits on it,
// then completes with what it received; "zchild" asks a person, then
// completes.
func parentAndAskingChild() []*runtime.Workflow {
	parent := &runtime.Workflow{ID: "zparent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "zchild", "async": true, "wait": true}}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": run.Vars["sub"]}), nil
		},
	}}
	child := &runtime.Workflow{ID: "zchild", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, ResultKey: "answer",
				Payload: map[string]any{"prompt": "ok?"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": run.Vars["answer"]}), nil
		},
	}}
	return []*runtime.Workflow{parent, child}
}

// TestFollowUpsChildEndedByResumeWithLostAnswerResumesParent: an async
// child waits for a person; the host's Resume completes it, but the
// answer of that terminal commit is lost (it landed). session.finish only
// queues the parent's resume (afterTerminal) after a successful flush, so
// nothing is queued and Runtime.Resume's keepQueued keeps nothing. The
// host's retry of the Resume is stale (the child is completed), the
// scheduler has nothing due, and without claims Recover runs only at the
// next start: the parent waits on its ended child for good in a live
// process. (The same loss when a follow-up's tick ends a child is already
// covered: its failure keeps the child's tick, whose retry queues the
// parent's resume; a top-level Tick/Resume/Cancel has no such retry.)
func TestFollowUpsChildEndedByResumeWithLostAnswerResumesParent(t *testing.T) {
	st := &armedTerminalFail{Wrapper: store.Wrapper{Store: memory.New()}, wf: "zchild", lost: true}
	h := runtimetest.New(t, runtimetest.Config{Workflows: parentAndAskingChild(), Store: st})
	pid, p := h.Run("zparent", nil)
	childID := runtime.WaitedChild(p)
	if childID == "" {
		t.Fatalf("setup: parent is %s, not waiting on a child", p.Status)
	}
	c := h.RequireStatus(childID, durable.RunWaiting)
	st.armed.Store(true)
	_, err := h.Runtime.Resume(t.Context(), runtime.ResumeParams{RunID: childID, WaitKey: c.Waiting.WaitKey,
		Payload: map[string]any{"response": "yes"}})
	if err == nil || !st.failed.Load() {
		t.Fatalf("setup: the child's terminal commit did not fail (err %v)", err)
	}
	h.RequireStatus(childID, durable.RunCompleted) // the commit landed
	// The host's retry of its answer is stale: the child has ended.
	if _, err := h.Runtime.Resume(t.Context(), runtime.ResumeParams{RunID: childID, WaitKey: c.Waiting.WaitKey,
		Payload: map[string]any{"response": "yes"}}); err == nil {
		t.Fatal("setup: a second resume of the ended child succeeded")
	}
	for i := 0; i < 12; i++ {
		h.Advance(10 * time.Minute) // the scheduler's loop, two hours of it
	}
	if p := h.State(pid); p.Status != durable.RunCompleted {
		t.Fatalf("parent %s is %s (waiting on %q) two hours after its child %s completed (a commit whose answer "+
			"was lost): the child's end never resumed it (%d follow-ups kept)",
			pid, p.Status, runtime.WaitedChild(p), childID, h.Runtime.PendingFollowUps())
	}
}

// TestFollowUpsResumeRunHandoffFailureIsRetried: a parent waits on an
// async child and is paused; the child ends during the pause (its end
// skips the paused parent). ResumeRun lifts the pause (committed) and
// hands the parent its child's end through NotifyChildEnded, whose
// resume's commit fails. NotifyChildEnded's keepQueued keeps only what
// the failed resume had queued, never the parent's resume itself, and a
// second ResumeRun finds nothing paused and does nothing: the parent,
// no longer paused, waits on its ended child for good in a live process
// without claims (nothing is due; Recover runs at start only). The
// drive of ResumeRun's other branch (a pause wait) is kept for
// RetryFollowUps when it fails; this hand-off is not.
func TestFollowUpsResumeRunHandoffFailureIsRetried(t *testing.T) {
	st := &armedTerminalFail{Wrapper: store.Wrapper{Store: memory.New()}, wf: "zparent"}
	h := runtimetest.New(t, runtimetest.Config{Workflows: parentAndAskingChild(), Store: st})
	ctx := t.Context()
	pid, p := h.Run("zparent", nil)
	childID := runtime.WaitedChild(p)
	if childID == "" {
		t.Fatalf("setup: parent is %s, not waiting on a child", p.Status)
	}
	if _, err := h.Runtime.Pause(ctx, pid, "hold"); err != nil {
		t.Fatal(err)
	}
	h.Respond(childID, map[string]any{"response": "yes"})
	h.RequireStatus(childID, durable.RunCompleted)
	if p := h.State(pid); p.Status != durable.RunWaiting || !runtime.IsPaused(p) {
		t.Fatalf("setup: the paused parent is %s (paused %v), want still waiting", p.Status, runtime.IsPaused(p))
	}
	st.armed.Store(true)
	if _, err := h.Runtime.ResumeRun(ctx, pid); err == nil || !st.failed.Load() {
		t.Fatalf("setup: ResumeRun's hand-off did not fail (err %v)", err)
	}
	if p := h.State(pid); runtime.IsPaused(p) || runtime.WaitedChild(p) != childID {
		t.Fatalf("setup: after the failed hand-off the parent is %s, paused %v", p.Status, runtime.IsPaused(p))
	}
	// A second ResumeRun by the host finds nothing paused.
	if _, err := h.Runtime.ResumeRun(ctx, pid); err != nil {
		t.Fatalf("second ResumeRun: %v", err)
	}
	for i := 0; i < 12; i++ {
		h.Advance(10 * time.Minute)
	}
	if p := h.State(pid); p.Status != durable.RunCompleted {
		t.Fatalf("parent %s is %s (waiting on %q, paused %v) two hours after ResumeRun's hand-off of its ended child "+
			"failed: the hand-off was not kept for a retry (%d follow-ups kept)",
			pid, p.Status, runtime.WaitedChild(p), runtime.IsPaused(p), h.Runtime.PendingFollowUps())
	}
}

// loseCommitOnce makes the inner store commit, then reports a lost answer,
// for the first commit matching match once armed.
type loseCommitOnce struct {
	store.Wrapper
	match  func(p *store.CommitParams) bool
	armed  atomic.Bool
	failed atomic.Bool
}

func (s *loseCommitOnce) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.armed.Load() && p.Run != nil && s.match(p) && s.failed.CompareAndSwap(false, true) {
		if err := s.Wrapper.RunCommit(ctx, p); err != nil {
			return err
		}
		return errors.New("connection reset")
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// TestFollowUpsListenerResumedWithLostAnswerIsDriven: an event resumes
// a listener (deliver, MaxSteps -1: the resume is committed, the drive is
// a follow-up queued only when the resume returned no error). When the
// answer of the resume's commit is lost (it landed), the delivery is
// reported failed and no drive is queued or kept: the listener is left
// "running" in the store, undriven, while the event cannot be delivered
// again (the listener no longer waits). Without claims nothing drives it
// in a live process (Recover runs at start only). A drive kept for
// RetryFollowUps (a tick of a listener still waiting does nothing) would
// continue it, as a lost answer does for a child's tick or a parent's
// resume.
func TestFollowUpsListenerResumedWithLostAnswerIsDriven(t *testing.T) {
	listener := &runtime.Workflow{ID: "zlisten", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "evt",
				Payload: map[string]any{"name": "go", "scope": "session"}}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"got": run.Vars["evt"]}), nil
		},
	}}
	st := &loseCommitOnce{Wrapper: store.Wrapper{Store: memory.New()}, match: func(p *store.CommitParams) bool {
		return p.Run.WorkflowID == "zlisten" && p.Run.Status == durable.RunRunning && !p.Create
	}}
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{listener}, Store: st})
	ctx := t.Context()
	id, err := h.Runtime.Start(ctx, runtime.StartParams{WorkflowID: "zlisten", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if l := h.Tick(id); l.Status != durable.RunWaiting {
		t.Fatalf("setup: listener is %s, want waiting", l.Status)
	}
	st.armed.Store(true)
	_, err = h.Runtime.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "s1"})
	if !st.failed.Load() {
		t.Fatalf("setup: the listener's resume commit was not reached (emit err %v)", err)
	}
	if l := h.State(id); l.Status == durable.RunWaiting {
		t.Fatalf("setup: listener is still waiting after the lost answer (the resume should have landed)")
	}
	for i := 0; i < 12; i++ {
		h.Advance(10 * time.Minute)
	}
	if l := h.State(id); l.Status != durable.RunCompleted {
		t.Fatalf("listener %s is %s at %q two hours after an event resumed it (its resume's answer lost): "+
			"nothing drove it (%d follow-ups kept); emit returned %v", id, l.Status, l.CurrentNode,
			h.Runtime.PendingFollowUps(), err)
	}
}

// TestFollowUpsChildCancelledWithLostAnswerResumesParent: the Cancel
// variant of TestFollowUpsChildEndedByResumeWithLostAnswerResumesParent.
// The cancel's commit of the child lands with its answer lost; Cancel
// fails and has queued nothing (afterTerminal follows a successful flush
// only). The host's retry of the Cancel finds the child terminal and
// returns at once (cancelOnce: "if s.run.Status.Terminal() return nil"),
// queuing nothing either: the parent, outside the cancelled tree, never
// learns its child ended.
func TestFollowUpsChildCancelledWithLostAnswerResumesParent(t *testing.T) {
	st := &armedTerminalFail{Wrapper: store.Wrapper{Store: memory.New()}, wf: "zchild", lost: true}
	h := runtimetest.New(t, runtimetest.Config{Workflows: parentAndAskingChild(), Store: st})
	ctx := t.Context()
	pid, p := h.Run("zparent", nil)
	childID := runtime.WaitedChild(p)
	if childID == "" {
		t.Fatalf("setup: parent is %s, not waiting on a child", p.Status)
	}
	st.armed.Store(true)
	if _, err := h.Runtime.Cancel(ctx, childID, "stop"); err == nil || !st.failed.Load() {
		t.Fatalf("setup: the child's cancel commit did not fail (err %v)", err)
	}
	h.RequireStatus(childID, durable.RunCancelled) // the commit landed
	if _, err := h.Runtime.Cancel(ctx, childID, "stop"); err != nil {
		t.Fatalf("the host's retry of the cancel: %v", err)
	}
	for i := 0; i < 12; i++ {
		h.Advance(10 * time.Minute)
	}
	if p := h.State(pid); p.Status != durable.RunCompleted {
		t.Fatalf("parent %s is %s (waiting on %q) two hours after its child %s was cancelled (the cancel's answer "+
			"lost, the cancel retried): it never received its child's end (%d follow-ups kept)",
			pid, p.Status, runtime.WaitedChild(p), childID, h.Runtime.PendingFollowUps())
	}
}
