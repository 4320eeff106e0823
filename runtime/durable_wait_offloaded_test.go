package runtime_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// A kill between the ledger append of an effect's WAITING record and the
// state write (the JSON-file store appends a commit's records first)
// leaves that record durable; the next tick reuses its wait instead of
// calling the handler again (execute.go durableWait, docs/compatibility.md
// row "kill after an effect's WAITING record is appended"). Behind the
// offloading decorator (spec §4.7, Python OffloadingLedgerStore) the
// record's result.wait is walked depth first, so a single large leaf in
// it becomes {"$artifact": id} while the wait object, now small, stays
// inline. The reused wait must be the one the handler returned:
//   - details: a tool call's 700-byte argument (600-byte threshold) was
//     left a ref, so a host running the delegated calls got wrong
//     arguments;
//   - prompt: a 700-byte prompt left a ref made the wait unreadable
//     (DecodeWaitState refuses an object prompt), and the handler ran a
//     second time (the job submitted twice).
func TestDurableWaitRestoresNestedOffloadedValues(t *testing.T) {
	t.Run("details", func(t *testing.T) { durableWaitOffloaded(t, false) })
	t.Run("prompt", func(t *testing.T) { durableWaitOffloaded(t, true) })
}

// durableWaitOffloaded runs the kill and the replay with either a large
// tool-call argument or a large prompt in the wait.
func durableWaitOffloaded(t *testing.T, bigPrompt bool) {
	content := strings.Repeat("c", 700)
	prompt := "go?"
	if bigPrompt {
		prompt, content = strings.Repeat("p", 700), "small"
	}
	var calls atomic.Int32
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Waiting(&durable.WaitState{Reason: durable.WaitEvent, WaitKey: "tools:" + req.IdempotencyKey,
			ResumeToNode: req.ResumeTarget(), ResultKey: req.Effect.ResultKey, Prompt: prompt,
			Details: map[string]any{"mode": "delegated", "tool_calls": []any{
				map[string]any{"call_id": "c1", "name": "write", "arguments": map[string]any{"content": content}},
			}}}), nil
	}}
	wf := &runtime.Workflow{ID: "w", Entry: "act", Nodes: map[string]runtime.NodeFunc{
		"act": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r",
				Payload: map[string]any{"tool_calls": []any{map[string]any{"call_id": "c1", "name": "write"}}}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	arts := artifact.NewMemory()
	newRuntime := func(st store.Store) *runtime.Runtime {
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: offload.Wrap(st, arts, offload.Config{MaxInlineBytes: 600}),
			Registry: reg, Artifacts: arts, Handlers: map[durable.EffectType]runtime.Handler{durable.EffectToolCalls: h}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	run, _, _ := replayAfterKill(t, newRuntime, func(r *durable.StepRecord) bool {
		return r.Status == durable.StepWaiting && r.Effect != nil
	})
	if got := calls.Load(); got != 1 {
		t.Errorf("handler called %d times, want 1 (the durable waiting end is reused)", got)
	}
	if run.Status != durable.RunWaiting || run.Waiting == nil {
		t.Fatalf("after the replay: status %s, waiting %+v", run.Status, run.Waiting)
	}
	if run.Waiting.Prompt != prompt {
		t.Errorf("the restored wait's prompt is %d bytes, want the handler's %d", len(run.Waiting.Prompt), len(prompt))
	}
	calls0, _ := run.Waiting.Details["tool_calls"].([]any)
	if len(calls0) != 1 {
		t.Fatalf("wait details %v", run.Waiting.Details)
	}
	args, _ := calls0[0].(map[string]any)["arguments"].(map[string]any)
	if got, _ := args["content"].(string); got != content {
		t.Errorf("the restored wait's tool-call argument is %#v, want the handler's 700-byte string", args["content"])
	}
}
