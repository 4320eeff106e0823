package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A run whose vars._limits is not an object (Start keeps a caller's
// _limits as given: here a list). UpdateLimits refuses it, naming it, as
// Python's update_limits raises on a non-dict _limits; it used to replace
// the list with an object holding only the update, without an error.
func TestUpdateLimitsRefusesLimitsThatAreNotAnObject(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	rt := applyRuntime(t, runtime.Config{}, wf)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w", Vars: map[string]any{"_limits": []any{"keep", "me"}}})
	if err != nil {
		t.Fatal(err)
	}
	err = rt.UpdateLimits(ctx, id, map[string]any{"max_iterations": 5})
	run, gerr := rt.GetState(ctx, id)
	if gerr != nil {
		t.Fatal(gerr)
	}
	if err == nil || !strings.Contains(err.Error(), "vars._limits is a list, not an object") {
		t.Fatalf("UpdateLimits of a run whose _limits is a list: %v; want a refusal naming vars._limits", err)
	}
	if _, isList := run.Vars["_limits"].([]any); !isList {
		t.Fatalf("vars._limits is %v after the refused update; want the caller's list kept", run.Vars["_limits"])
	}
}

// A run whose vars._limits is null (Start keeps a caller's _limits as
// given) has no limits: the reads take the defaults, and UpdateLimits
// starts the object with the update, as for a run without _limits, rather
// than refusing it as a value that is not an object. (Python's
// update_limits raises there: setdefault returns the None it then
// indexes.) Refusing null like a list, or failing to create the object,
// would break this.
func TestUpdateLimitsOfNullLimitsStartsTheObject(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	rt := applyRuntime(t, runtime.Config{}, wf)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w", Vars: map[string]any{"_limits": nil}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.UpdateLimits(ctx, id, map[string]any{"max_iterations": 5}); err != nil {
		t.Fatalf("UpdateLimits of a run whose _limits is null: %v; want it applied", err)
	}
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	l, isObject := run.Vars["_limits"].(map[string]any)
	if !isObject || len(l) != 1 || l["max_iterations"] == nil {
		t.Fatalf("vars._limits is %#v after the update; want an object holding only max_iterations", run.Vars["_limits"])
	}
	st, err := rt.GetLimitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if it := st["iterations"].(map[string]any); it["max"] != int64(5) {
		t.Errorf("iterations %v; want max 5 as updated", it)
	}
}
