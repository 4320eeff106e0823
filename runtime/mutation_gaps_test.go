package runtime_test

// Tests added by a mutation-testing round over the kernel: each guards a
// promise (spec, docs, doc comment) that no earlier test checked.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// mutLimitsOfNewRun starts a run under cfg and returns its vars._limits.
func mutLimitsOfNewRun(t *testing.T, cfg runtime.LimitsConfig) map[string]any {
	t.Helper()
	ctx := context.Background()
	reg, _ := runtime.NewRegistry(chain(2))
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Limits: cfg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	run, _ := rt.GetState(ctx, id)
	return run.Vars["_limits"].(map[string]any)
}

func mutIntPtr(n int) *int { return &n }

// §1.14: max_input_tokens is clamped to max_tokens - max_output_tokens - 256
// (and not below 0) only when all three are known and max_output_tokens is
// not negative (Python: max_output_int >= 0); -1 ("provider default")
// leaves the configured input budget as given.
func TestLimitsDictClampsInputBudgetToContextWindow(t *testing.T) {
	for _, c := range []struct {
		name          string
		cfg           runtime.LimitsConfig
		wantMaxInput  int64
		wantMaxOutput any
	}{
		{"clamped", runtime.LimitsConfig{MaxTokens: mutIntPtr(1000), MaxOutputTokens: mutIntPtr(200), MaxInputTokens: mutIntPtr(900)}, 544, int64(200)},
		{"within budget", runtime.LimitsConfig{MaxTokens: mutIntPtr(1000), MaxOutputTokens: mutIntPtr(200), MaxInputTokens: mutIntPtr(500)}, 500, int64(200)},
		{"clamped to zero", runtime.LimitsConfig{MaxTokens: mutIntPtr(300), MaxOutputTokens: mutIntPtr(200), MaxInputTokens: mutIntPtr(100)}, 0, int64(200)},
		{"negative output budget", runtime.LimitsConfig{MaxTokens: mutIntPtr(1000), MaxOutputTokens: mutIntPtr(-1), MaxInputTokens: mutIntPtr(5000)}, 5000, int64(-1)},
		{"no output budget", runtime.LimitsConfig{MaxTokens: mutIntPtr(1000), MaxInputTokens: mutIntPtr(5000)}, 5000, nil},
	} {
		l := mutLimitsOfNewRun(t, c.cfg)
		if n, ok := runtime.AsInt(l["max_input_tokens"]); !ok || n != c.wantMaxInput {
			t.Errorf("%s: max_input_tokens = %v, want %d", c.name, l["max_input_tokens"], c.wantMaxInput)
		}
		if c.wantMaxOutput == nil {
			if l["max_output_tokens"] != nil {
				t.Errorf("%s: max_output_tokens = %v, want null", c.name, l["max_output_tokens"])
			}
		} else if n, ok := runtime.AsInt(l["max_output_tokens"]); !ok || n != c.wantMaxOutput.(int64) {
			t.Errorf("%s: max_output_tokens = %v, want %v", c.name, l["max_output_tokens"], c.wantMaxOutput)
		}
	}
}

// §1.14: check_limits reports "exceeded" at current >= max, the boundary
// included, for iterations and tokens alike.
func TestCheckLimitsExceededAtExactlyTheMaximum(t *testing.T) {
	f, id := limitsRun(t, map[string]any{
		"current_iteration": int64(50), "max_iterations": int64(50),
		"estimated_tokens_used": int64(400), "max_tokens": int64(400),
	})
	warns, err := f.rt.CheckLimits(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 2 {
		t.Fatalf("warnings %+v, want iterations and tokens exceeded", warns)
	}
	for _, w := range warns {
		if w.Status != "exceeded" || w.Pct != 100 {
			t.Errorf("%s at its maximum: %+v, want status exceeded, pct 100", w.LimitType, w)
		}
	}
}

// mutLLMRun runs one LLM_CALL whose handler answers with usage, and returns
// the run's _limits.estimated_tokens_used (ok false when it is not a number).
func mutLLMRun(t *testing.T, usage map[string]any) any {
	t.Helper()
	wf := oneEffect("llm", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectLLMCall, ResultKey: "_temp.llm", Payload: map[string]any{"prompt": "hi"}}
	})
	f := setup(t, wf)
	f.rt.SetHandler(durable.EffectLLMCall, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"content": "Hi!", "usage": usage}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "llm"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st.Vars["_limits"].(map[string]any)["estimated_tokens_used"]
}

// §1.14: estimated_tokens_used is usage.input_tokens first, then
// prompt_tokens, then total_tokens (the first that is present), and a
// boolean there (the first present one) leaves it unchanged, as Python's
// `not isinstance(raw_in, bool)` does.
func TestTokensUsedPrefersInputTokensAndSkipsBooleans(t *testing.T) {
	got := mutLLMRun(t, map[string]any{"total_tokens": int64(30), "prompt_tokens": int64(20), "input_tokens": int64(10)})
	if n, _ := runtime.AsInt(got); n != 10 {
		t.Errorf("usage {input 10, prompt 20, total 30}: estimated_tokens_used = %v, want 10", got)
	}
	got = mutLLMRun(t, map[string]any{"total_tokens": int64(30), "prompt_tokens": int64(20)})
	if n, _ := runtime.AsInt(got); n != 20 {
		t.Errorf("usage {prompt 20, total 30}: estimated_tokens_used = %v, want 20", got)
	}
	got = mutLLMRun(t, map[string]any{"input_tokens": true, "total_tokens": int64(30)})
	if n, ok := runtime.AsInt(got); !ok || n != 0 {
		t.Errorf("usage {input true, total 30}: estimated_tokens_used = %v, want it left at 0 (a boolean is skipped, not read as 1)", got)
	}
}

// PythonIdempotencyKey / EffectKey: the call ids of TOOL_CALLS (call_id,
// id, runtime_call_id, model_call_id, idempotency_key) do not count, in a
// call and in its OpenAI-style "function" object alike (Python's
// _normalize_tool_call_for_idempotency).
func TestToolCallsKeyIgnoresEveryCallIDField(t *testing.T) {
	mk := func(call map[string]any) *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{"tool_calls": []any{call}}}
	}
	base := mk(map[string]any{"name": "ls", "arguments": map[string]any{"p": "."},
		"function": map[string]any{"name": "ls", "arguments": `{"p": "."}`}})
	variants := map[string]*durable.Effect{}
	for _, k := range []string{"call_id", "id", "runtime_call_id", "model_call_id", "idempotency_key"} {
		variants["call "+k] = mk(map[string]any{"name": "ls", "arguments": map[string]any{"p": "."}, k: "x-" + k,
			"function": map[string]any{"name": "ls", "arguments": `{"p": "."}`}})
		variants["function "+k] = mk(map[string]any{"name": "ls", "arguments": map[string]any{"p": "."},
			"function": map[string]any{"name": "ls", "arguments": `{"p": "."}`, k: "y-" + k}})
	}
	wantPy := runtime.PythonIdempotencyKey("r", "n", base)
	wantGo := runtime.EffectKey("r", "n", base, 3)
	for name, e := range variants {
		if got := runtime.PythonIdempotencyKey("r", "n", e); got != wantPy {
			t.Errorf("%s: Python key %s, want %s (ids must not count)", name, got, wantPy)
		}
		if got := runtime.EffectKey("r", "n", e, 3); got != wantGo {
			t.Errorf("%s: effect key %s, want %s (ids must not count)", name, got, wantGo)
		}
	}
}

// IdentityConflictError names the field that differs: a repeated Start with
// the same run id but another session or parent is refused on that field.
func TestStartWithExplicitRunIDNamesSessionAndParentConflicts(t *testing.T) {
	f := setup(t, chain(2))
	ctx := context.Background()
	p := runtime.StartParams{WorkflowID: "chain", RunID: "run-x", SessionID: "s1", ParentRunID: "p1"}
	if _, err := f.rt.Start(ctx, p); err != nil {
		t.Fatal(err)
	}
	for field, q := range map[string]runtime.StartParams{
		"session_id":    {WorkflowID: "chain", RunID: "run-x", SessionID: "s2", ParentRunID: "p1"},
		"parent_run_id": {WorkflowID: "chain", RunID: "run-x", SessionID: "s1", ParentRunID: "p2"},
	} {
		var conflict *runtime.IdentityConflictError
		if _, err := f.rt.Start(ctx, q); !errors.As(err, &conflict) || conflict.Field != field {
			t.Errorf("different %s: %v, want an IdentityConflictError on %s", field, err, field)
		}
	}
}

// §2.2 steps 2-3: a run that brings its own _limits (even partial) keeps
// them as they are, and provider / model are only setdefault'ed.
func TestStartKeepsTheRunsOwnLimitsProviderAndModel(t *testing.T) {
	ctx := context.Background()
	reg, _ := runtime.NewRegistry(chain(2))
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg,
		Limits: runtime.LimitsConfig{Provider: "cfg-provider", Model: "cfg-model", MaxIterations: 7}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain", Vars: map[string]any{
		"_limits":  map[string]any{"max_iterations": int64(3)},
		"_runtime": map[string]any{"provider": "mine", "model": "my-model"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	run, _ := rt.GetState(ctx, id)
	l := run.Vars["_limits"].(map[string]any)
	if n, _ := runtime.AsInt(l["max_iterations"]); n != 3 || len(l) != 1 {
		t.Errorf("_limits = %v, want the run's own {max_iterations: 3} kept as is", l)
	}
	rtNS := run.Vars["_runtime"].(map[string]any)
	if rtNS["provider"] != "mine" || rtNS["model"] != "my-model" {
		t.Errorf("_runtime provider/model = %v/%v, want the run's own mine/my-model", rtNS["provider"], rtNS["model"])
	}
	// Without them, the config's are set.
	id2, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	run2, _ := rt.GetState(ctx, id2)
	if rt2 := run2.Vars["_runtime"].(map[string]any); rt2["provider"] != "cfg-provider" || rt2["model"] != "cfg-model" {
		t.Errorf("_runtime = %v, want the config's provider and model", rt2)
	}
}

// SetPath creates {} for every missing or non-object intermediate,
// overwriting scalars on the way (Python's _set_nested).
func TestSetPathOverwritesScalarIntermediates(t *testing.T) {
	vars := map[string]any{"a": int64(5), "b": []any{1}, "c": map[string]any{"keep": true}}
	runtime.SetPath(vars, "a.x.y", "v1")
	runtime.SetPath(vars, "b.z", "v2")
	runtime.SetPath(vars, "c.d", "v3")
	got := fmt.Sprint(vars)
	want := "map[a:map[x:map[y:v1]] b:map[z:v2] c:map[d:v3 keep:true]]"
	if got != want {
		t.Errorf("vars = %s, want %s", got, want)
	}
}

// §1.12: a node's trace keeps the last 100 steps.
func TestNodeTraceKeepsTheLast100Steps(t *testing.T) {
	const turns = 105
	wf := &runtime.Workflow{ID: "loop", Entry: "loop", Nodes: map[string]runtime.NodeFunc{
		"loop": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			n := counter(run, "n")
			if n >= turns {
				return runtime.Complete(map[string]any{"n": n})
			}
			run.Vars["n"] = n + 1
			return runtime.Request(&durable.Effect{Type: durable.EffectAnswerUser,
				Payload: map[string]any{"message": fmt.Sprintf("m%d", n)}}, "loop")
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "loop"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1000})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick: %v, %v", st.Status, err)
	}
	run, _ := f.rt.GetState(ctx, id)
	tr := run.Vars["_runtime"].(map[string]any)["node_traces"].(map[string]any)["loop"].(map[string]any)
	steps := tr["steps"].([]any)
	if len(steps) != 100 {
		t.Fatalf("%d trace steps kept, want the last 100", len(steps))
	}
	first := steps[0].(map[string]any)["effect"].(map[string]any)["payload"].(map[string]any)["message"]
	last := steps[99].(map[string]any)["effect"].(map[string]any)["payload"].(map[string]any)["message"]
	if first != fmt.Sprintf("m%d", turns-100) || last != fmt.Sprintf("m%d", turns-1) {
		t.Errorf("trace spans %v..%v, want m%d..m%d", first, last, turns-100, turns-1)
	}
}

// Python cancel_run pops control.paused: a paused run that is cancelled is
// no longer reported paused.
func TestCancelOfAPausedRunClearsThePausedFlag(t *testing.T) {
	f := setup(t, chain(3))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if st, err := f.rt.Pause(ctx, id, "hold"); err != nil || !runtime.IsPaused(st) {
		t.Fatalf("pause: %v", err)
	}
	st, err := f.rt.Cancel(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCancelled || runtime.IsPaused(st) {
		t.Fatalf("after cancel: status %s, paused %v; want cancelled and not paused", st.Status, runtime.IsPaused(st))
	}
	ctl, _ := st.Vars["_runtime"].(map[string]any)["control"].(map[string]any)
	if _, has := ctl["paused"]; has {
		t.Errorf("control = %v, want paused removed", ctl)
	}
}

// §2.3 step 5k: an effect that waits writes _temp.prev_node_id and
// _temp.prev_next_node, as a transition does.
func TestWaitingEffectRecordsPrevNode(t *testing.T) {
	f := setup(t, askWorkflow())
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %s %v", st.Status, err)
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	if tmp["prev_node_id"] != "ask" || tmp["prev_next_node"] != "done" {
		t.Errorf("_temp = %v, want prev_node_id ask, prev_next_node done", tmp)
	}
}

// §2.3 step 5l: a completed effect without next node completes the run with
// output {"success": true, "result": <result>}.
func TestTerminalEffectOutputIsSuccessAndResult(t *testing.T) {
	wf := &runtime.Workflow{ID: "last", Entry: "only", Nodes: map[string]runtime.NodeFunc{
		"only": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAnswerUser, Payload: map[string]any{"message": "bye"}}, "")
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "last"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := st.Output["result"].(map[string]any)
	if st.Status != durable.RunCompleted || st.Output["success"] != true || res["message"] != "bye" {
		t.Errorf("status %s output %v; want completed with {success: true, result: {message: bye, ...}}", st.Status, st.Output)
	}
}

// §2.6: resuming a terminal wait that has no wait key appends the
// completion record {completed, via: resume, wait_reason, wait_key: null,
// output}: null, as Python records wait.wait_key None, not "".
func TestResumeOfKeylessTerminalWaitRecordsNullWaitKey(t *testing.T) {
	wf := &runtime.Workflow{ID: "sleep", Entry: "s", Nodes: map[string]runtime.NodeFunc{
		"s": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": "2099-01-01T00:00:00+00:00"}, ResultKey: "r"}, "")
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "sleep"})
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting || st.Waiting.WaitKey != "" {
		t.Fatalf("tick: %v %v", st, err)
	}
	st, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, Payload: map[string]any{"early": true}})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("resume: %v %v", st.Status, err)
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	for _, r := range recs {
		res, _ := r.Result.(map[string]any)
		if res["via"] != "resume" {
			continue
		}
		if v, has := res["wait_key"]; !has || v != nil {
			t.Errorf("completion record wait_key = %#v (present %v), want null", v, has)
		}
		if res["wait_reason"] != "until" {
			t.Errorf("completion record wait_reason = %v, want until", res["wait_reason"])
		}
		return
	}
	t.Fatalf("no via-resume completion record in the ledger: %s", statuses(t, f, id))
}

// handoffFx variants: the Python run of wf_fx with its ledger edited.
func mutFxLedger(result string) string {
	return strings.Replace(handoffFxLedger, `"result": {"content": "ans:one"}`, `"result": `+result, 1)
}

// §2.3 step 5d: a completed ledger record with a null result counts as no
// prior result: the effect is executed again.
func TestCompletedRecordWithNullResultIsNotReused(t *testing.T) {
	rt, recorded := pythonDirRuntime(t, handoffFxRunID, handoffFxRun, mutFxLedger("null"), handoffFxWorkflow(),
		func(prompt string) string { return "go:" + prompt })
	run, err := rt.Tick(t.Context(), handoffFxRunID, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", run, err)
	}
	if prompts := *recorded; len(prompts) != 2 || prompts[0] != "one" {
		t.Fatalf("LLM calls made by Go: %v; want [one two] (a null prior result is no result)", prompts)
	}
}

// §1.14: estimated_tokens_used is updated from an LLM_CALL result reused from
// the ledger too.
func TestReusedLLMResultUpdatesTokensUsed(t *testing.T) {
	rt, recorded := pythonDirRuntime(t, handoffFxRunID, handoffFxRun,
		mutFxLedger(`{"content": "ans:one", "usage": {"input_tokens": 77}}`), handoffFxWorkflow(),
		func(prompt string) string { return "go:" + prompt })
	run, err := rt.Tick(t.Context(), handoffFxRunID, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", run, err)
	}
	if prompts := *recorded; len(prompts) != 1 || prompts[0] != "two" {
		t.Fatalf("LLM calls made by Go: %v; want only [two]", prompts)
	}
	if n, _ := runtime.AsInt(run.Vars["_limits"].(map[string]any)["estimated_tokens_used"]); n != 77 {
		t.Errorf("estimated_tokens_used = %v, want 77 from the reused result's usage", run.Vars["_limits"].(map[string]any)["estimated_tokens_used"])
	}
}

// A Python record found under Python's key that ended no later than the
// stored state was saved is accounted for by that state (an earlier turn
// of a loop): it is not reused, even when both times are equal.
func TestPythonRecordEndedAtTheStatesSaveIsNotReused(t *testing.T) {
	runJSON := strings.Replace(handoffFxRun, `"updated_at": "2026-12-01T06:57:24.386154+00:00"`,
		`"updated_at": "2026-12-01T06:57:24.387049+00:00"`, 1)
	if runJSON == handoffFxRun {
		t.Fatal("fixture changed: updated_at not found")
	}
	rt, recorded := pythonDirRuntime(t, handoffFxRunID, runJSON, handoffFxLedger, handoffFxWorkflow(),
		func(prompt string) string { return "go:" + prompt })
	run, err := rt.Tick(t.Context(), handoffFxRunID, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", run, err)
	}
	if prompts := *recorded; len(prompts) != 2 || prompts[0] != "one" {
		t.Fatalf("LLM calls made by Go: %v; want [one two] (the record ended when the state was saved)", prompts)
	}
}

// touchUpdated moves a plan in flight only when the last checkpoint
// recorded it: a stale plan (saved since by a runtime that does not know
// the key) stays stale through a host's pause and resume-run, and is not
// replayed.
func TestHostPauseDoesNotRefreshAStalePlanInFlight(t *testing.T) {
	runJSON := strings.Replace(handoffFxRun, `"_runtime": {}`, `"_runtime": {"effect_in_flight": {
        "node": "a", "plan_node": "a", "next_node": "b",
        "checkpoint_at": "2026-12-01T06:50:00.000000+00:00",
        "effect": {"type": "llm_call", "payload": {"prompt": "stale"}, "result_key": "r1"}}}`, 1)
	if runJSON == handoffFxRun {
		t.Fatal("fixture changed: _runtime not found")
	}
	rt, recorded := pythonDirRuntime(t, handoffFxRunID, runJSON, "", handoffFxWorkflow(),
		func(prompt string) string { return "go:" + prompt })
	ctx := t.Context()
	if st, err := rt.Pause(ctx, handoffFxRunID, ""); err != nil || !runtime.IsPaused(st) {
		t.Fatalf("pause: %v", err)
	}
	time.Sleep(2 * time.Millisecond) // a later clock reading for the resume
	run, err := rt.ResumeRun(ctx, handoffFxRunID)
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("resume-run: %v %v", run, err)
	}
	if prompts := *recorded; len(prompts) != 2 || prompts[0] != "one" {
		t.Fatalf("LLM calls made: %v; want [one two] (the stale plan must not be replayed)", prompts)
	}
}

// Python _handle_answer_user: level is trimmed and lower-cased; "warn" is
// "warning"; anything but warning / error (info, unknown) is "message".
func TestAnswerUserLevelNormalisation(t *testing.T) {
	for given, want := range map[string]string{
		" WARN ": "warning", "warning": "warning", "Error": "error", "info": "message", "debug": "message",
	} {
		wf := oneEffect("say", func() *durable.Effect {
			return &durable.Effect{Type: durable.EffectAnswerUser, ResultKey: "said",
				Payload: map[string]any{"message": "hi", "level": given}}
		})
		f := setup(t, wf)
		ctx := context.Background()
		id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "say"})
		st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		said, _ := st.Vars["said"].(map[string]any)
		if said["level"] != want {
			t.Errorf("level %q: result %v, want level %q", given, said, want)
		}
	}
}
