package runtime_test

// Regression tests from a review of the kernel's core loop. Each failed
// before its fix, for the reason its comment gives (in the present tense
// of the code it was written against).

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

var errKCInjectedRead = errors.New("injected: reading the ledger failed")

// kcFlakyLedger is a non-atomic store (a HalfCommit, as the JSON-file
// store behaves) whose next ledger read fails when armed.
type kcFlakyLedger struct {
	*storetest.HalfCommit
	failList atomic.Bool
}

func (s *kcFlakyLedger) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if s.failList.CompareAndSwap(true, false) {
		return nil, errKCInjectedRead
	}
	return s.HalfCommit.LedgerList(ctx, p)
}

func kcTerminalRecords(t *testing.T, rt *runtime.Runtime, id string) int {
	t.Helper()
	recs, err := rt.GetLedger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if strings.HasPrefix(r.IdempotencyKey, "system:terminal_status:") {
			n++
		}
	}
	return n
}

// On a non-atomic store, finish (session.go) looks the terminal record up
// in the ledger so that a replay after a half commit does not append it
// twice. When that look-up fails, finish returns the error with the
// terminal state and its records still pending, and steps() (tick.go)
// then flushes them anyway: the terminal state is committed while Tick
// reports an error, without the dedupe check, so a replay after a half
// commit ends with two terminal status records (docs/compatibility.md:
// "never appended twice on replay"), and afterTerminal is skipped.
func TestCoreTerminalDedupeReadErrorStillCommits(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	st := &kcFlakyLedger{HalfCommit: &storetest.HalfCommit{Store: memory.New(), FailAt: 1}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	// Tick 1: the terminal commit appends its records, then fails to save
	// the state (a JSON-file store that cannot replace the state file).
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, storetest.ErrHalfCommit) {
		t.Fatalf("tick 1: %v", err)
	}
	if n := kcTerminalRecords(t, rt, id); n != 1 {
		t.Fatalf("after the half commit: %d terminal records", n)
	}
	// Tick 2 replays the node; the ledger look-up of finish fails once.
	st.failList.Store(true)
	_, err2 := rt.Tick(ctx, id, runtime.TickOptions{})
	run, _ := rt.GetState(ctx, id)
	n := kcTerminalRecords(t, rt, id)
	t.Logf("tick 2 error: %v; stored status %s; %d terminal records", err2, run.Status, n)
	if err2 != nil && run.Status.Terminal() {
		t.Errorf("tick 2 returned an error (%v) but committed the terminal state", err2)
	}
	// Whatever tick 2 did, a further tick must leave exactly one record.
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatalf("tick 3: %v", err)
	}
	if n := kcTerminalRecords(t, rt, id); n != 1 {
		t.Errorf("%d terminal status records, want 1", n)
	}
}

func kcNest(n int) any {
	var v any = "leaf"
	for i := 0; i < n; i++ {
		v = map[string]any{"d": v}
	}
	return v
}

// session.checkJSON (session.go) checks vars at nesting depth 0, but the
// stores encode them one level down (the run object holds them:
// durable/line.go encodes vars at depth 1). A node that nests a value
// exactly to the limit passes the kernel's check, which is meant to fail
// the run with an error naming the path (failUnserialisable), and is
// then refused by the store at every commit: the run is never failed,
// stays running at its last checkpoint and every Tick errors, for ever.
// One level deeper the same workflow fails cleanly.
func TestCoreVarsAtDepthLimitFailRunNotStuck(t *testing.T) {
	ctx := context.Background()
	sq, err := sqlite.New(ctx, sqlite.Config{Path: t.TempDir() + "/db.sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	wf := &runtime.Workflow{ID: "deep", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars["deep"] = kcNest(10000) // innermost object at depth 10000 below vars
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: sq, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "deep"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, err = rt.Tick(ctx, id, runtime.TickOptions{})
	}
	run, gerr := rt.GetState(ctx, id)
	if gerr != nil {
		t.Fatal(gerr)
	}
	if run.Status != durable.RunFailed {
		t.Errorf("run is %s at %q after two ticks (last tick error: %.160v); want failed with the path of the too-deep value",
			run.Status, run.CurrentNode, err)
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

// NodeFunc's doc (workflow.go) promises that "a returned error fails the
// run with the error recorded in its ledger". When the failing node had
// also written a value that is not JSON (a handle it was building), fail
// -> finish -> flush -> failUnserialisable (session.go) reloads the run,
// drops the pending failure record and fails the run with the JSON error
// alone: the node's own error (the cause) is recorded nowhere, neither in
// run.error nor in the ledger. The same happens to a panicking node.
func TestCoreNodeErrorKeptWhenItsWritesAreNotJSON(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "e", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars["conn"] = make(chan int) // half-built state
			return runtime.StepPlan{}, errors.New("database unreachable")
		},
	}}
	f := setup(t, wf)
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "e"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := f.rt.GetState(ctx, id)
	recs, _ := f.rt.GetLedger(ctx, id)
	inLedger := false
	for _, r := range recs {
		if strings.Contains(r.Error, "database unreachable") {
			inLedger = true
		}
	}
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "database unreachable") || !inLedger {
		t.Errorf("run %s with error %q (node error in ledger: %v); want it failed with the node's error %q recorded",
			run.Status, run.Error, inLedger, "database unreachable")
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
