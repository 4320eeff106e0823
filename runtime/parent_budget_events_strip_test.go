package runtime_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

func counterVar(run *durable.RunState, key string) int64 {
	switch v := run.Vars[key].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	case float64:
		return int64(v)
	case json.Number:
		n, _ := v.Int64()
		return n
	}
	return 0
}

// TestParentResumedByChildEndPastItsBudgetIsDrivenOn: a parent waiting on
// an async child (async+wait) is resumed by the child's end
// (driver.resumeParent) as a follow-up of the call that ended the child,
// which ticks it for one step budget. resumeParent
// ignores the state that resume returns: a parent still running after that
// budget is neither queued for another round (as drain does for a
// followTick, and deliver does for a resumed listener) nor kept for
// RetryFollowUps. Without claims the scheduler's loop only drives runs its
// own drives left running, so the parent stays running forever in a live
// process.
func TestParentResumedByChildEndPastItsBudgetIsDrivenOn(t *testing.T) {
	ctx := context.Background()
	const steps = 5 // the parent needs more than one budget after its resume
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}}, "loop"), nil
		},
		"loop": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n := counterVar(run, "n")
			if n >= steps {
				return runtime.Complete(map[string]any{"n": n}), nil
			}
			run.Vars["n"] = n + 1
			return runtime.Next("loop"), nil
		},
	}}
	child := &runtime.Workflow{ID: "child", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, ResultKey: "answer",
				Payload: map[string]any{"prompt": "go?", "wait_key": "go"}}, "c"), nil
		},
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": true}), nil
		},
	}}
	rt, sched, clock := scheduledRuntime(t, 2, parent, child)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	// The tick parks the parent and drives the child to its question.
	// The answer to the child (another run than the parent: a Tick's own
	// run keeps to its caller's MaxSteps, even when resumed within the
	// call) ends it, and the child's end resumes the parent.
	p, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	childID := runtime.WaitedChild(p)
	if childID == "" {
		t.Fatalf("setup: the parent is %s, not waiting on its child", p.Status)
	}
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: childID, WaitKey: "go", Payload: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	p, err = rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status == durable.RunWaiting {
		t.Fatalf("setup: the parent was not resumed by its child's end: %+v", p.Waiting)
	}
	for i := 0; i < 6; i++ {
		clock.Advance(10 * time.Minute)
		if _, err := sched.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p, err = rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != durable.RunCompleted {
		t.Fatalf("parent %s at n=%v after an hour of scheduler passes: resumed by its child's end, it used its "+
			"step budget and was left running, driven by nobody (%d follow-ups kept)",
			p.Status, p.Vars["n"], rt.PendingFollowUps())
	}
}

// TestEventKeyStripsAsPython: build_event_wait_key normalises scope,
// scope id and name with Python's str.strip(), which also strips the
// information separators U+001C..U+001F (str.isspace is true for them).
// EventKey uses strings.TrimSpace, which keeps them, so the same event
// gets another key than Python's (and "\x1f" passes as a name Python
// refuses as blank). Python 0.4.28:
//
//	build_event_wait_key(scope="session\x1c", name="ping\x1f", session_id="s\x1e")
//	== "evt:session:s:ping"
func TestEventKeyStripsAsPython(t *testing.T) {
	got, err := runtime.EventKey("session\x1c", "ping\x1f", "s\x1e")
	if err != nil || got != "evt:session:s:ping" {
		t.Errorf("EventKey(session\\x1c, ping\\x1f, s\\x1e) = %q, %v; Python: \"evt:session:s:ping\"", got, err)
	}
	if got, err := runtime.EventKey("session", "\x1f", "s"); err == nil {
		t.Errorf("EventKey(session, \\x1f, s) = %q; Python: ValueError('event name is required')", got)
	}
}

// TestEmitEventUnknownScopeMessageAsPython: Python's EMIT_EVENT passes
// str(scope or "session") as given to build_event_wait_key, whose error
// quotes it: "unknown event scope: 'Bogus '". handleEmitEvent hands
// EventKey the lower-cased, trimmed scope, so the run's error quotes
// 'bogus'.
func TestEmitEventUnknownScopeMessageAsPython(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectEmitEvent, map[string]any{
		"name": "ev", "scope": "Bogus ",
	}))
	want := "Effect failed after 1 attempts: emit_event invalid payload: unknown event scope: 'Bogus '"
	if run.Status != durable.RunFailed || run.Error != want {
		t.Errorf("emitter: %s %q; Python: failed with %q", run.Status, run.Error, want)
	}
}

// TestWaitEventChoicesStripAsPython: Python's WAIT_EVENT keeps
// c.strip() of each non-blank string choice; str.strip() removes
// U+001C..U+001F too. cleanStrings uses strings.TrimSpace, so the choice
// " a\x1f" stays "a\x1f" and the blank "\x1f" is kept. Python 0.4.28:
// choices [" a\x1f", "\x1f"] -> ["a"].
func TestWaitEventChoicesStripAsPython(t *testing.T) {
	f := memSetup(t, false)
	run := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectWaitEvent, map[string]any{
		"name": "ev", "choices": []any{" a\x1f", "\x1f"},
	}))
	if run.Status != durable.RunWaiting || run.Waiting == nil {
		t.Fatalf("setup: %s %q", run.Status, run.Error)
	}
	if got := run.Waiting.Choices; len(got) != 1 || got[0] != "a" {
		t.Errorf("choices %q; Python: [\"a\"]", got)
	}
}
