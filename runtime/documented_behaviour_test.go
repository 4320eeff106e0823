package runtime_test

// Claims the docs make that the code must keep (docs/compatibility.md,
// README.md, doc comments in runtime/).

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func docRuntime(t *testing.T, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// README.md "Using the kernel", on the memory store (the SQLite variant is in
// store/sqlite): Tick leaves the run waiting, Resume completes it.
func TestDocumentedReadmeKernelExample(t *testing.T) {
	ctx := context.Background()
	rt := docRuntime(t, &runtime.Workflow{ID: "hello", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Name?"}, ResultKey: "name"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"hello": run.Vars["name"]}), nil
		},
	}})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	state, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || state.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", state.Status, err)
	}
	state, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: state.Waiting.WaitKey, Payload: map[string]any{"text": "Ada"}})
	if err != nil || state.Status != durable.RunCompleted {
		t.Fatalf("resume: %v %v", state.Status, err)
	}
}

// compatibility.md rows "node function error" and "unknown current_node".
func TestDocumentedNodeErrorMessages(t *testing.T) {
	ctx := context.Background()
	rt := docRuntime(t,
		&runtime.Workflow{ID: "boom", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.StepPlan{}, errors.New("kaput")
			}}},
		&runtime.Workflow{ID: "lost", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Next("nowhere"), nil
			}}},
	)
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "boom"})
	s, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || s.Status != durable.RunFailed || s.Error != `node "a" failed: kaput` {
		t.Fatalf("got %v %q %v", s.Status, s.Error, err)
	}
	id, _ = rt.Start(ctx, runtime.StartParams{WorkflowID: "lost"})
	s, err = rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || s.Status != durable.RunFailed || s.Error != `unknown node "nowhere" in workflow "lost"` {
		t.Fatalf("got %v %q %v", s.Status, s.Error, err)
	}
}

// compatibility.md row "WAIT_UNTIL whose until is not a timestamp".
func TestDocumentedWaitUntilErrors(t *testing.T) {
	ctx := context.Background()
	for until, want := range map[any]string{
		42:         "wait_until requires payload.until (ISO timestamp)",
		"  ":       "wait_until requires payload.until (ISO timestamp)",
		"tomorrow": `wait_until: invalid ISO timestamp "tomorrow"`,
	} {
		u := until
		rt := docRuntime(t, &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": u}}, "b"), nil
			},
			"b": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(nil), nil
			}}})
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
		s, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil || s.Status != durable.RunFailed || !strings.Contains(s.Error, want) {
			t.Errorf("until %v: got %v %q %v, want error containing %q", until, s.Status, s.Error, err, want)
		}
	}
}

// compatibility.md row "workflow registry": IDs() sorted; `workflow "x" is not registered`.
func TestDocumentedRegistryIDsAndMessage(t *testing.T) {
	nop := map[string]runtime.NodeFunc{"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(nil), nil
	}}
	reg, err := runtime.NewRegistry(&runtime.Workflow{ID: "zeta", Entry: "a", Nodes: nop}, &runtime.Workflow{ID: "alpha", Entry: "a", Nodes: nop})
	if err != nil {
		t.Fatal(err)
	}
	if ids := reg.IDs(); !slices.IsSorted(ids) || len(ids) < 2 {
		t.Fatalf("IDs() = %v", ids)
	}
	rt := docRuntime(t)
	_, err = rt.Start(context.Background(), runtime.StartParams{WorkflowID: "x"})
	if err == nil || !strings.Contains(err.Error(), `workflow "x" is not registered`) {
		t.Fatalf("err = %v", err)
	}
}

// compatibility.md row "resume of a run that no longer waits / wrong key".
func TestDocumentedStaleResumeMessages(t *testing.T) {
	ctx := context.Background()
	rt := docRuntime(t, &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "x"}, ""), nil
		}}})
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "nope", Payload: map[string]any{}})
	var se *runtime.StaleResumeError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "wait_key mismatch: expected") {
		t.Fatalf("err = %v", err)
	}
}

// runtime.RetryPolicy doc: Base 0 means 1s, Max 0 means 60s; LLMRetry 1s..30s.
func TestDocumentedRetryPolicyDefaults(t *testing.T) {
	e := &durable.Effect{Type: durable.EffectLLMCall}
	p := runtime.RetryPolicy{}
	if p.MaxAttempts(e) != 1 || p.Backoff(e, 1) != time.Second || p.Backoff(e, 20) != 60*time.Second {
		t.Fatalf("zero RetryPolicy: %d %v %v", p.MaxAttempts(e), p.Backoff(e, 1), p.Backoff(e, 20))
	}
	if runtime.LLMRetry.MaxAttempts(e) != 3 || runtime.LLMRetry.Backoff(e, 20) != 30*time.Second {
		t.Fatal("LLMRetry")
	}
}

// runtime.LimitsConfig doc and compatibility.md "default _limits.max_iterations": 50, warn 80 %.
func TestDocumentedLimitsDefaults(t *testing.T) {
	ctx := context.Background()
	rt := docRuntime(t, &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		}}})
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	lim, _ := run.Vars["_limits"].(map[string]any)
	mi, _ := runtime.AsInt(lim["max_iterations"])
	wp, _ := runtime.AsInt(lim["warn_iterations_pct"])
	mh, _ := runtime.AsInt(lim["max_history_messages"])
	if mi != 50 || wp != 80 || mh != -1 {
		t.Fatalf("_limits = %v", lim)
	}
}

// docs/run-states.md: pause wait, ErrRunPaused, terminal runs and StaleResumeError,
// "waiting --> completed: Resume of a wait without resume node".
func TestDocumentedRunStates(t *testing.T) {
	ctx := context.Background()
	rt := docRuntime(t,
		&runtime.Workflow{ID: "loop", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Next("a"), nil
			}}},
		&runtime.Workflow{ID: "ask", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "x"}, ""), nil
			}}},
	)
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop"})
	s, err := rt.Pause(ctx, id, "")
	if err != nil || s.Status != durable.RunWaiting || s.Waiting == nil || s.Waiting.WaitKey != "pause:"+id || s.Waiting.Reason != durable.WaitUser {
		t.Fatalf("pause: %+v %v", s, err)
	}
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "pause:" + id, Payload: map[string]any{}}); !errors.Is(err, runtime.ErrRunPaused) {
		t.Errorf("resume of paused run: %v", err)
	}
	// a wait without resume node: Resume completes the run.
	id2, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	s, _ = rt.Tick(ctx, id2, runtime.TickOptions{})
	s, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id2, WaitKey: s.Waiting.WaitKey, Payload: map[string]any{"a": 1}})
	if err != nil || s.Status != durable.RunCompleted {
		t.Fatalf("resume without resume node: %v %v", s.Status, err)
	}
	// terminal: Tick returns it unchanged, Resume gives StaleResumeError.
	v := s.Version
	s, err = rt.Tick(ctx, id2, runtime.TickOptions{})
	if err != nil || s.Status != durable.RunCompleted || s.Version != v {
		t.Errorf("tick of terminal: %v %v", s.Status, err)
	}
	_, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id2, WaitKey: "x", Payload: map[string]any{}})
	var se *runtime.StaleResumeError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "run is not waiting") {
		t.Errorf("resume of terminal: %v", err)
	}
}

// runtime.Pause doc: pausing a run waiting for a person or a terminal run is a
// no-op; runtime.SetWaitDeadline doc: ErrNoDeadline (wrapped), a zero until.
func TestDocumentedPauseNoOpAndSetWaitDeadlineErrors(t *testing.T) {
	ctx := context.Background()
	rt := docRuntime(t, &runtime.Workflow{ID: "ask", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "x"}, ""), nil
		}}})
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if _, err := rt.SetWaitDeadline(ctx, id, time.Time{}); err == nil {
		t.Error("SetWaitDeadline(zero) gave no error")
	}
	if _, err := rt.SetWaitDeadline(ctx, id, time.Now()); !errors.Is(err, runtime.ErrNoDeadline) {
		t.Errorf("SetWaitDeadline on a running run: %v", err)
	}
	s, _ := rt.Tick(ctx, id, runtime.TickOptions{})
	key := s.Waiting.WaitKey
	if _, err := rt.Pause(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	if runtime.IsPaused(mustGet(t, rt, id)) {
		t.Error("Pause of a run waiting for a person paused it")
	}
	s, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{}})
	if err != nil || s.Status != durable.RunCompleted {
		t.Fatalf("resume after no-op pause: %v %v", s, err)
	}
	s, err = rt.Pause(ctx, id, "")
	if err != nil || s.Status != durable.RunCompleted || runtime.IsPaused(s) {
		t.Errorf("pause of terminal: %v %v", s.Status, err)
	}
}

func mustGet(t *testing.T, rt *runtime.Runtime, id string) *durable.RunState {
	t.Helper()
	s, err := rt.GetState(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runtime.UpdateLimits doc and compatibility.md rows "update_limits with a key
// it does not accept" / "a value its reads cannot take as an integer":
// refused whole, naming the key; updated_at is left as is.
func TestDocumentedUpdateLimits(t *testing.T) {
	ctx := context.Background()
	rt := docRuntime(t, &runtime.Workflow{ID: "ask", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "x"}, ""), nil
		}}})
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	before := mustGet(t, rt, id)
	err := rt.UpdateLimits(ctx, id, map[string]any{"max_iterations": 7, "max_token": 5})
	if err == nil || !strings.Contains(err.Error(), "max_token") {
		t.Errorf("unknown key: %v", err)
	}
	err = rt.UpdateLimits(ctx, id, map[string]any{"max_tokens": "65k"})
	if err == nil || !strings.Contains(err.Error(), "max_tokens") {
		t.Errorf("bad value: %v", err)
	}
	if mi, _ := runtime.AsInt(mustGet(t, rt, id).Vars["_limits"].(map[string]any)["max_iterations"]); mi != 50 {
		t.Errorf("refused update applied: max_iterations = %d", mi)
	}
	if err := rt.UpdateLimits(ctx, id, map[string]any{"max_iterations": 7}); err != nil {
		t.Fatal(err)
	}
	after := mustGet(t, rt, id)
	if mi, _ := runtime.AsInt(after.Vars["_limits"].(map[string]any)["max_iterations"]); mi != 7 {
		t.Errorf("max_iterations = %d", mi)
	}
	if !after.UpdatedAt.Equal(before.UpdatedAt.Time) {
		t.Errorf("updated_at moved: %v -> %v", before.UpdatedAt, after.UpdatedAt)
	}
}
