package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// CheckLimits and GetLimitStatus (limits.go) read the counters with
// pyInt, Python's int(x). For a number beyond int64 (a float such as 1e20,
// or a JSON integer with 21 digits, which a Python host can write) pyInt
// converts with int64(f), whose result is undefined in Go and is
// math.MinInt64 on amd64/arm64: a usage far past the budget reads as a
// large negative one. Python 0.4.28 (run with /work/peer/src) for
// update_limits(id, {"estimated_tokens_used": 1e20}) gives check_limits
// [LimitWarning("tokens", "exceeded", 10**20, 32768)] and
// get_limit_status tokens {estimated_used: 10**20, warning: True}; the Go
// kernel reports no warning at all and a negative usage.
func TestLimitsHugeTokenUsageIsExceeded(t *testing.T) {
	ctx := context.Background()
	for name, v := range map[string]any{
		"float 1e20":          1e20,
		"json integer 10**20": json.Number("100000000000000000000"),
	} {
		f := setup(t, chain(2))
		id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.rt.UpdateLimits(ctx, id, map[string]any{"estimated_tokens_used": v}); err != nil {
			t.Fatal(err)
		}
		warns, err := f.rt.CheckLimits(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		exceeded := false
		for _, w := range warns {
			if w.LimitType == "tokens" && w.Status == "exceeded" && w.Current > 0 {
				exceeded = true
			}
		}
		if !exceeded {
			t.Errorf("%s: estimated_tokens_used far past max_tokens 32768: CheckLimits = %+v; Python gives a tokens "+
				"\"exceeded\" warning", name, warns)
		}
		st, err := f.rt.GetLimitStatus(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		tk := st["tokens"].(map[string]any)
		if used, _ := runtime.AsFloat(tk["estimated_used"]); used <= 0 || tk["warning"] != true {
			t.Errorf("%s: GetLimitStatus tokens = %v; Python gives estimated_used 10**20 and warning true", name, tk)
		}
	}
}

// noteTokensUsed records int(usage.input_tokens) after an LLM call (as
// Python's int() does). A usage beyond int64 (1e20) is stored as
// -9223372036854775808 (int64 of an out-of-range float), where Python
// stores 10**20: the run's _limits then say it used fewer tokens than none.
func TestLimitsHugeUsageNotRecordedNegative(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "l", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
		durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"content": "ok", "usage": map[string]any{"input_tokens": 1e20}}), nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "l"})
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := rt.GetState(ctx, id)
	got := run.Vars["_limits"].(map[string]any)["estimated_tokens_used"]
	if f, ok := runtime.AsFloat(got); !ok || f <= 0 {
		t.Errorf("_limits.estimated_tokens_used = %v after usage.input_tokens 1e20; Python stores int(1e20) = 10**20", got)
	}
}

// GetLimitStatus promises Python's reading: "the thresholds ... as
// stored" (Python compares the rounded pct with
// limits.get("warn_*_pct", 80) itself). A boolean threshold is a number to
// Python (False == 0, True == 1), but threshold() only accepts Go numbers
// and falls back to 80. Python 0.4.28 (run with /work/peer/src):
// warn_tokens_pct False, estimated_tokens_used 10 → tokens.warning True;
// warn_iterations_pct True, current_iteration 1 → iterations.warning True.
// The Go kernel says false for both, while its own CheckLimits (which
// reads int(True or 80) = 1, as Python) reports the iterations warning for
// the same _limits.
func TestLimitStatusBooleanThresholdAsPython(t *testing.T) {
	ctx := context.Background()
	f := setup(t, chain(2))
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.rt.UpdateLimits(ctx, id, map[string]any{
		"warn_tokens_pct": false, "estimated_tokens_used": 10,
		"warn_iterations_pct": true, "current_iteration": 1,
	}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tk := st["tokens"].(map[string]any); tk["warning"] != true {
		t.Errorf("warn_tokens_pct false: tokens %v; Python compares pct 0.0 >= False: warning true", tk)
	}
	it := st["iterations"].(map[string]any)
	if it["warning"] != true {
		t.Errorf("warn_iterations_pct true: iterations %v; Python compares pct 2.0 >= True: warning true", it)
	}
	warns, _ := f.rt.CheckLimits(ctx, id)
	if len(warns) > 0 && warns[0].LimitType == "iterations" && it["warning"] != true {
		t.Errorf("CheckLimits reports %+v for the same _limits where GetLimitStatus says iterations.warning false", warns)
	}
}

// A closed step gate stops a tick "cleanly at that boundary"
// (tick.go). A child the ticked run started (async) is driven by the same
// call, with the same gate; when the gate is closed for it, the driver
// (driver.go drain) takes the child's stop for a used step budget ("It
// used its step budget: give it another turn") and ticks it again, and
// again: the gate is asked 100 times (maxFollowRounds) in the same call
// after it said stop, each round a claim, a run read, a parent read and a
// release on the store. A host whose gate asks a person before each step,
// or closes to drain for a shutdown, is asked a hundred times per child.
func TestClosedGateNotReaskedForFollowUp(t *testing.T) {
	ctx := context.Background()
	parent := &runtime.Workflow{ID: "parent", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "chain", "async": true}, ResultKey: "kid"}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{}), nil
		},
	}}
	f := setup(t, parent, chain(3))
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	childAsked := 0
	gate := func(ctx context.Context, run *durable.RunState, node string) error {
		if run.WorkflowID == "chain" {
			childAsked++
			return runtime.ErrStepGateClosed
		}
		return nil
	}
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{StepGate: gate}); err != nil {
		t.Fatal(err)
	}
	if childAsked != 1 {
		t.Errorf("the closed gate was asked %d times for the child within one Tick; want 1 (it said stop)", childAsked)
	}
}

// GetLimitStatus and CheckLimits (limits.go) promise Python's reading of
// _limits: "usage and maxima read with int(x or default), the thresholds
// as stored". AsInt refuses a non-integral number, so a float usage or
// maximum falls back to the default instead of being truncated as
// Python's int() does, and limitInt replaces a non-integral threshold by
// 80 instead of comparing with it as stored; max_history_messages is
// returned as stored by Python (null stays null). Expected values below
// are what AbstractRuntime 0.4.28 returns for the same _limits (run with
// /work/peer/src). Such values reach _limits through UpdateLimits, which
// stores what it is given.
func TestCoreLimitStatusReadsLimitsAsPython(t *testing.T) {
	ctx := context.Background()
	f := setup(t, chain(2))
	start := func(limits map[string]any) string {
		id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.rt.UpdateLimits(ctx, id, limits); err != nil {
			t.Fatal(err)
		}
		return id
	}
	num := func(v any) float64 { x, _ := runtime.AsFloat(v); return x }

	// Python: current 45 (int(45.5)), pct 90.0, warning true; check_limits
	// gives an iterations warning.
	id := start(map[string]any{"current_iteration": 45.5, "max_iterations": 50})
	st, err := f.rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	it := st["iterations"].(map[string]any)
	if num(it["current"]) != 45 || num(it["pct"]) != 90 || it["warning"] != true {
		t.Errorf("current_iteration 45.5: iterations %v, Python gives current 45, pct 90.0, warning true", it)
	}
	if w, _ := f.rt.CheckLimits(ctx, id); len(w) != 1 || w[0].Current != 45 || w[0].Status != "warning" {
		t.Errorf("current_iteration 45.5: CheckLimits %+v, Python gives one iterations warning at 45/50", w)
	}

	// Python: tokens estimated_used 100, pct 99.0, warning true.
	id = start(map[string]any{"estimated_tokens_used": 100.9, "max_tokens": 101})
	st, _ = f.rt.GetLimitStatus(ctx, id)
	if tk := st["tokens"].(map[string]any); num(tk["estimated_used"]) != 100 || tk["warning"] != true {
		t.Errorf("estimated_tokens_used 100.9: tokens %v, Python gives estimated_used 100, pct 99.0, warning true", tk)
	}

	// Python compares the rounded pct with the stored threshold: 80.0 >= 80.5 is false.
	id = start(map[string]any{"current_iteration": 40, "max_iterations": 50, "warn_iterations_pct": 80.5})
	st, _ = f.rt.GetLimitStatus(ctx, id)
	if it := st["iterations"].(map[string]any); it["warning"] != false {
		t.Errorf("warn_iterations_pct 80.5 at 80.0%%: iterations %v, Python gives warning false", it)
	}

	// Python returns max_history_messages as stored: null.
	id = start(map[string]any{"max_history_messages": nil})
	st, _ = f.rt.GetLimitStatus(ctx, id)
	if h := st["history"].(map[string]any); h["max_messages"] != nil {
		t.Errorf("max_history_messages null: history %v, Python gives max_messages null", h)
	}
}

// limitsDict (limits.go) is documented as Python's
// RuntimeConfig.to_limits_dict(), which stores max_output_tokens as
// configured (config, else the model capability) whatever its value; a
// negative one (-1, "provider default") is kept as -1. limitsDict uses -1
// as its own "unset" marker and writes null instead. Python 0.4.28:
// RuntimeConfig(max_output_tokens=-1).to_limits_dict()["max_output_tokens"] == -1.
func TestCoreLimitsDictKeepsNegativeMaxOutputTokens(t *testing.T) {
	ctx := context.Background()
	reg, _ := runtime.NewRegistry(chain(2))
	minus1 := -1
	for name, cfg := range map[string]runtime.LimitsConfig{
		"config":     {MaxOutputTokens: &minus1},
		"capability": {ModelMaxOutputTokens: &minus1},
	} {
		rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Limits: cfg})
		if err != nil {
			t.Fatal(err)
		}
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
		run, _ := rt.GetState(ctx, id)
		got := run.Vars["_limits"].(map[string]any)["max_output_tokens"]
		if n, ok := runtime.AsInt(got); !ok || n != -1 {
			t.Errorf("%s max_output_tokens -1: _limits.max_output_tokens is %v, Python stores -1", name, got)
		}
	}
}

// noteTokensUsed (limits.go) should set _limits.estimated_tokens_used as
// Python does: the first of usage.input_tokens / prompt_tokens /
// total_tokens that is present, as int(value). A non-integral number
// (1234.5) is truncated by Python (1234); AsInt refuses it, so the Go
// kernel skips to total_tokens and records 2000.
func TestCoreTokensUsedTruncatesLikePython(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "l", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}}, "b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{
		durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"content": "ok",
				"usage": map[string]any{"input_tokens": 1234.5, "total_tokens": 2000}}), nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "l"})
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st, _ := rt.GetLimitStatus(ctx, id)
	used, _ := runtime.AsInt(st["tokens"].(map[string]any)["estimated_used"])
	if used != 1234 {
		t.Errorf("estimated_tokens_used %d after usage {input_tokens: 1234.5, total_tokens: 2000}; Python records int(1234.5) = 1234", used)
	}
}
