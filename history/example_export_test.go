package history_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"slices"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Export the history bundle of a finished run.
func Example() {
	hello := &runtime.Workflow{ID: "hello", Entry: "greet", Nodes: map[string]runtime.NodeFunc{
		"greet": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"greeting": "Hello, " + run.Vars["name"].(string)}), nil
		},
	}}
	reg, err := runtime.NewRegistry(hello)
	if err != nil {
		log.Fatal(err)
	}
	st := memory.New()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "hello", Vars: map[string]any{"name": "Ada"}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		log.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id, history.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// The bundle is a generic JSON tree (numbers as json.Number).
	fmt.Println("keys:", slices.Sorted(maps.Keys(b)))
	run := b["run"].(map[string]any)
	fmt.Println("version:", b["version"], "run:", run["workflow_id"], run["status"], "input:", b["input_data"])
	fmt.Println("records:", b["ledgers"].(map[string]any)[id].(map[string]any)["total"])
	for _, step := range b["timeline"].([]any) {
		s := step.(map[string]any)
		fmt.Println(s["cursor"], s["node_id"], s["effect_type"], s["status"])
	}
	// Output:
	// keys: [generated_at input_data ledgers root_run_id run session timeline version workflow_snapshot]
	// version: 1 run: hello completed input: map[name:Ada]
	// records: 2
	// 1 greet <nil> completed
	// 2 greet emit_event completed
}
