package runtimetest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// review asks a user, drafts a reply with an LLM, waits an hour before
// sending it, and completes with the draft.
func review() *runtime.Workflow {
	step := func(fn func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return fn(run, rc), nil
		}
	}
	return &runtime.Workflow{ID: "review", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": step(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "Topic?"}, ResultKey: "topic"}, "draft")
		}),
		"draft": step(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			topic := run.Vars["topic"].(map[string]any)["text"]
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": fmt.Sprint("Write about ", topic)}, ResultKey: "draft"}, "hold")
		}),
		"hold": step(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(time.Hour))}, ResultKey: "held"}, "send")
		}),
		"send": step(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sent": run.Vars["draft"]})
		}),
	}}
}

func TestHarness_DrivesARunThroughItsWaits(t *testing.T) {
	t.Parallel()
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{review()}})
	h.Script(durable.EffectLLMCall, runtime.Completed(map[string]any{"content": "A draft."}))

	id, st := h.Run("review", nil)
	if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitUser {
		t.Fatalf("after the first tick: %s %+v, want waiting for the user", st.Status, st.Waiting)
	}
	st = h.Respond(id, map[string]any{"text": "tests"})
	if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("after the answer: %s %+v, want waiting until a time", st.Status, st.Waiting)
	}
	if n := h.Advance(59 * time.Minute); n != 0 {
		t.Fatalf("%d runs due after 59 minutes of a one-hour wait", n)
	}
	h.RequireStatus(id, durable.RunWaiting)
	if n := h.Advance(time.Minute); n != 1 {
		t.Fatalf("%d runs due after the hour, want 1", n)
	}
	st = h.RequireStatus(id, durable.RunCompleted)
	if got := fmt.Sprint(st.Output["sent"]); !strings.Contains(got, "A draft.") {
		t.Fatalf("output %v lacks the scripted draft", st.Output)
	}
	reqs := h.Requests(durable.EffectLLMCall)
	if len(reqs) != 1 || reqs[0].NodeID != "draft" || reqs[0].Payload["prompt"] != "Write about tests" || reqs[0].RunID != id {
		t.Fatalf("LLM requests = %+v", reqs)
	}
	if n := h.Unused(durable.EffectLLMCall); n != 0 {
		t.Fatalf("%d scripted outcomes unused", n)
	}
	want := []string{"ask:ask_user:started", "ask:ask_user:waiting", "ask:resume:completed",
		"draft:llm_call:started", "draft:llm_call:completed", "hold:wait_until:started", "hold:wait_until:waiting",
		"send:complete:completed", "send:emit_event:completed"}
	if got := h.Ledger(id); !slices.Equal(got, want) {
		t.Fatalf("ledger\n got %v\nwant %v", got, want)
	}
}

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func TestHarness_RequestBeyondTheScriptFailsTheTestAndTheEffect(t *testing.T) {
	t.Parallel()
	rec := &recorder{TB: t}
	h := runtimetest.New(rec, runtimetest.Config{Workflows: []*runtime.Workflow{review()}})
	h.Script(durable.EffectLLMCall) // nothing scripted
	id, _ := h.Run("review", nil)
	st := h.Respond(id, map[string]any{"text": "tests"})
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "no scripted outcome") {
		t.Fatalf("run after an unscripted request: %s %q, want failed naming the missing script", st.Status, st.Error)
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "llm_call request 1") {
		t.Fatalf("errors reported to the test: %q", rec.errs)
	}
}

// commitCounter counts the store's commits.
type commitCounter struct {
	store.Store
	mu      sync.Mutex
	commits int
}

func (c *commitCounter) RunCommit(ctx context.Context, p *store.CommitParams) error {
	c.mu.Lock()
	c.commits++
	c.mu.Unlock()
	return c.Store.RunCommit(ctx, p)
}

func (c *commitCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits
}

// TestScriptKeepsTheReplacedHandlersLocalMark: a scripted built-in that
// acts only inside the run (ASK_USER) commits its STARTED record with
// its outcome, as the real one does, so the run commits as often.
func TestScriptKeepsTheReplacedHandlersLocalMark(t *testing.T) {
	t.Parallel()
	commitsToWait := func(script bool) int {
		counter := &commitCounter{Store: memory.New()}
		t.Cleanup(func() { _ = counter.Close() })
		h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{review()}, Store: counter})
		if script {
			h.Script(durable.EffectAskUser, runtime.Waiting(&durable.WaitState{Reason: durable.WaitUser, WaitKey: "scripted", Prompt: "Topic?"}))
			if hd, _ := h.Runtime.Handler(durable.EffectAskUser); !hd.Local {
				t.Fatal("the scripted ASK_USER handler lost the built-in's Local mark")
			}
		}
		h.Run("review", nil)
		return counter.count()
	}
	if real, scripted := commitsToWait(false), commitsToWait(true); real != scripted {
		t.Fatalf("the run commits %d times to its first wait with the real ASK_USER, %d with a scripted one", real, scripted)
	}
}

// TestUnrequestedScriptedOutcomesFailTheTest: outcomes still queued when
// the test ends fail it, naming the type, unless the test looked at them
// with Unused.
func TestUnrequestedScriptedOutcomesFailTheTest(t *testing.T) {
	t.Parallel()
	var rec *recorder
	t.Run("unchecked", func(t *testing.T) {
		rec = &recorder{TB: t}
		h := runtimetest.New(rec, runtimetest.Config{Workflows: []*runtime.Workflow{review()}})
		h.Script(durable.EffectLLMCall, runtime.Completed("one"), runtime.Completed("two"))
		id, _ := h.Run("review", nil)
		h.Respond(id, map[string]any{"text": "tests"})
	})
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "1 scripted llm_call outcome(s) of 2 were never requested") {
		t.Fatalf("errors reported at the end of a test that left a scripted outcome: %q", rec.errs)
	}
	t.Run("checked", func(t *testing.T) {
		rec = &recorder{TB: t}
		h := runtimetest.New(rec, runtimetest.Config{Workflows: []*runtime.Workflow{review()}})
		h.Script(durable.EffectLLMCall, runtime.Completed("one"), runtime.Completed("two"))
		id, _ := h.Run("review", nil)
		h.Respond(id, map[string]any{"text": "tests"})
		if n := h.Unused(durable.EffectLLMCall); n != 1 {
			t.Fatalf("Unused = %d; want 1", n)
		}
	})
	if len(rec.errs) != 0 {
		t.Fatalf("errors reported for leftovers the test checked: %q", rec.errs)
	}
}

// TestConfigArtifactsReachTheRuntime: a run on a harness given an
// artifact store offloads through it (MEMORY_NOTE needs one).
func TestConfigArtifactsReachTheRuntime(t *testing.T) {
	t.Parallel()
	arts := artifact.NewMemory()
	note := &runtime.Workflow{ID: "note", Entry: "note", Nodes: map[string]runtime.NodeFunc{
		"note": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectMemoryNote, Payload: map[string]any{"note": "remember this"}, ResultKey: "noted"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{note}, Artifacts: arts})
	id, st := h.Run("note", nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("run %s: %s %q", id, st.Status, st.Error)
	}
	if n, err := arts.Count(t.Context(), artifact.SearchParams{}); err != nil || n == 0 {
		t.Fatalf("artifact store holds %d artifacts (%v) after a MEMORY_NOTE; want the note", n, err)
	}
}
