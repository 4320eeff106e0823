package runtime_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestSpecRegistryRegisterUnregisterGet pins spec §5.1: register(spec)
// errors if the id is already registered, unregister(id) errors if it is
// unknown, get(id) gives nothing for an unknown id and get_or_raise
// names it.
func TestSpecRegistryRegisterUnregisterGet(t *testing.T) {
	t.Parallel()
	nodes := map[string]runtime.NodeFunc{"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(nil), nil
	}}
	reg, err := runtime.NewRegistry(&runtime.Workflow{ID: "wf", Entry: "a", Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := reg.Get("wf")
	if err := reg.Register(&runtime.Workflow{ID: "wf", Entry: "a", Nodes: nodes}); err == nil {
		t.Fatal("registering an id already registered succeeded")
	}
	if again, ok := reg.Get("wf"); !ok || again != first {
		t.Fatal("a refused registration replaced the registered workflow")
	}
	if _, err := runtime.NewRegistry(&runtime.Workflow{ID: "x", Entry: "a", Nodes: nodes},
		&runtime.Workflow{ID: "x", Entry: "a", Nodes: nodes}); err == nil {
		t.Fatal("NewRegistry with one id twice succeeded")
	}
	if err := reg.Unregister("missing"); err == nil {
		t.Fatal("unregistering an unknown id succeeded")
	}
	if err := reg.Unregister("wf"); err != nil {
		t.Fatalf("Unregister(wf): %v", err)
	}
	if w, ok := reg.Get("wf"); ok || w != nil {
		t.Fatalf("Get after Unregister = %v, %v; want nothing", w, ok)
	}
	if ids := reg.IDs(); slices.Contains(ids, "wf") {
		t.Fatalf("IDs after Unregister = %v", ids)
	}
	if regs := reg.Registrations(); len(regs) != 0 {
		t.Fatalf("Registrations after Unregister = %v, want none", regs)
	}
	_, err = reg.Lookup("wf")
	var nf *runtime.WorkflowNotFoundError
	if !errors.As(err, &nf) || nf.WorkflowID != "wf" {
		t.Fatalf("Lookup of an unknown id: %v; want a WorkflowNotFoundError naming it", err)
	}
	if err := reg.Register(&runtime.Workflow{ID: "wf", Entry: "a", Nodes: nodes}); err != nil {
		t.Fatalf("registering an id again after Unregister: %v", err)
	}
	// A workflow without an id could be registered but never started by
	// id, nor found again after a restart.
	if err := reg.Register(&runtime.Workflow{Entry: "a", Nodes: nodes}); err == nil || err.Error() != "workflow: id is required" {
		t.Fatalf("registering a workflow without an id: %v; want \"workflow: id is required\"", err)
	}
}
