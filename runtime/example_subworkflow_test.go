package runtime_test

import (
	"context"
	"fmt"
	"log"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A parent starts a child workflow with a start_subworkflow effect. By
// default the child runs inline (sync) and the effect's result, at its
// ResultKey, holds the child's run id and output.
func ExampleRuntime_Tick_subworkflow() {
	double := &runtime.Workflow{ID: "double", Entry: "calc", Nodes: map[string]runtime.NodeFunc{
		"calc": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := runtime.AsInt(run.Vars["n"]) // numbers read back from a store are json.Number
			return runtime.Complete(map[string]any{"doubled": 2 * n}), nil
		},
	}}
	parent := &runtime.Workflow{ID: "parent", Entry: "start", Nodes: map[string]runtime.NodeFunc{
		"start": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload:   map[string]any{"workflow_id": "double", "vars": map[string]any{"n": 21}},
				ResultKey: "child"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			child := run.Vars["child"].(map[string]any)
			return runtime.Complete(map[string]any{"answer": child["output"].(map[string]any)["doubled"]}), nil
		},
	}}
	reg, err := runtime.NewRegistry(parent, double)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		log.Fatal(err)
	}
	state, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state.Status, state.Output["answer"])

	childID := state.Vars["child"].(map[string]any)["sub_run_id"].(string)
	child, err := rt.GetState(ctx, childID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(child.WorkflowID, child.Status, child.ParentRunID == id)
	// Output:
	// completed 42
	// double completed true
}
