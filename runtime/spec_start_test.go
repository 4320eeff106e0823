package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// specStartRuntime is a runtime over a fresh memory store serving chain(1)
// with the given limits config.
func specStartRuntime(t *testing.T, lim runtime.LimitsConfig) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(chain(1))
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// Spec §2.2 step 3: start setdefaults `_runtime.provider` / `_runtime.model`
// from the config, trimmed and only when non-empty; a run's own value is kept.
func TestSpecStartSeedsProviderAndModelFromConfig(t *testing.T) {
	ctx := context.Background()
	rt := specStartRuntime(t, runtime.LimitsConfig{Provider: "  openai ", Model: " gpt-x  "})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := mustGet(t, rt, id).Vars["_runtime"].(map[string]any)
	if ns["provider"] != "openai" || ns["model"] != "gpt-x" {
		t.Errorf("_runtime = %v; want provider \"openai\" and model \"gpt-x\" (trimmed)", ns)
	}
	id, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "chain",
		Vars: map[string]any{"_runtime": map[string]any{"model": "mine"}}})
	if err != nil {
		t.Fatal(err)
	}
	ns, _ = mustGet(t, rt, id).Vars["_runtime"].(map[string]any)
	if ns["provider"] != "openai" || ns["model"] != "mine" {
		t.Errorf("_runtime = %v; want the run's model kept and provider set (setdefault)", ns)
	}
	id, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "chain",
		Vars: map[string]any{"_runtime": map[string]any{"provider": "mine"}}})
	if err != nil {
		t.Fatal(err)
	}
	ns, _ = mustGet(t, rt, id).Vars["_runtime"].(map[string]any)
	if ns["provider"] != "mine" || ns["model"] != "gpt-x" {
		t.Errorf("_runtime = %v; want the run's provider kept and model set (setdefault)", ns)
	}

	blank := specStartRuntime(t, runtime.LimitsConfig{Provider: "   "})
	id, err = blank.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	ns, _ = mustGet(t, blank, id).Vars["_runtime"].(map[string]any)
	if _, has := ns["provider"]; has {
		t.Errorf("_runtime = %v; a blank config provider must not be set", ns)
	}
	if _, has := ns["model"]; has {
		t.Errorf("_runtime = %v; an unset config model must not be set", ns)
	}
}

// Spec §2.2 step 2: "An existing `_limits` (even partial) is kept as is."
func TestSpecStartKeepsPartialLimitsAsIs(t *testing.T) {
	ctx := context.Background()
	rt := specStartRuntime(t, runtime.LimitsConfig{})
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain",
		Vars: map[string]any{"_limits": map[string]any{"max_tokens": 10}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(mustGet(t, rt, id).Vars["_limits"])
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"max_tokens":10}` {
		t.Errorf("_limits = %s; want the caller's partial {\"max_tokens\":10} unchanged", got)
	}
}

// Spec §2.2 step 4: start saves a `running` run at the entry node and writes
// no ledger record; `_temp`, `context`, `scratchpad` and `_meta` are not
// created (step 1: the caller's vars are copied).
func TestSpecStartWritesNoRecordAndNoExtraNamespaces(t *testing.T) {
	ctx := context.Background()
	rt := specStartRuntime(t, runtime.LimitsConfig{})
	vars := map[string]any{"x": int64(1)}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain", Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	vars["x"] = int64(2) // the caller's map after start
	run := mustGet(t, rt, id)
	if run.Status != durable.RunRunning || run.CurrentNode != "n0" || run.RunID != id {
		t.Errorf("run %s at %q (id %q); want running at the entry node n0", run.Status, run.CurrentNode, run.RunID)
	}
	if n, _ := runtime.AsInt(run.Vars["x"]); n != 1 {
		t.Errorf("vars.x = %v; want 1 (start copies the caller's vars)", run.Vars["x"])
	}
	for _, k := range []string{"_temp", "context", "scratchpad", "_meta"} {
		if _, has := run.Vars[k]; has {
			t.Errorf("start created vars.%s: %v", k, run.Vars[k])
		}
	}
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 0 {
		t.Errorf("ledger after start has %d records; want none", len(recs))
	}
}
