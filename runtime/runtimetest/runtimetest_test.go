package runtimetest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"go.uber.org/goleak"
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
