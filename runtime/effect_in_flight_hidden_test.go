package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// docs/architecture.md: the plan in flight is kept in
// vars._runtime.effect_in_flight only "in what such a checkpoint commits:
// nodes and handlers never see it" (Python has no such key). A sync child
// inspecting its parent with VARS_QUERY target_run_id reads the parent's
// checkpoint, taken with its START_SUBWORKFLOW plan in flight while the
// child runs: the tool output handed to an LLM or a host must not show the
// kernel's key (with a copy of the parent's effect payload).
func TestVarsQueryOfAnotherRunHidesEffectInFlight(t *testing.T) {
	f := memSetup(t, false)
	ctx := context.Background()
	parentID := "parent-run"
	_, err := f.rt.Start(ctx, runtime.StartParams{RunID: parentID, WorkflowID: "parent", Vars: map[string]any{
		"child_steps": []any{step(durable.EffectVarsQuery, map[string]any{
			"target_run_id": parentID, "path": "_runtime", "keys_only": true})},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, parentID, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustComplete(t, st)
	sub, _ := st.Vars["sub"].(map[string]any)
	childID, _ := sub["sub_run_id"].(string)
	child, err := f.rt.GetState(ctx, childID)
	if err != nil {
		t.Fatalf("child %q of %v: %v", childID, sub, err)
	}
	mustComplete(t, child)
	r := res(t, child, 0)
	if r["success"] != true {
		t.Fatalf("VARS_QUERY of the parent failed: %v", r["error"])
	}
	out, _ := r["output"].(string)
	if strings.Contains(out, "effect_in_flight") {
		t.Fatalf("VARS_QUERY of the parent's _runtime shows the kernel's checkpoint key:\n%s", out)
	}
	if !strings.Contains(out, "effect_seq") {
		t.Fatalf("VARS_QUERY of the parent's _runtime:\n%s\nwant its other keys", out)
	}
}
