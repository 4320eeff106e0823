package jsonfile_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// The store keeps the Python gateway's layout: run_<id>.json holds the
// state, ledger_<id>.jsonl the ledger, beside the directory's lock files.
// A run left waiting survives closing the store and is found by the next.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "jsonfile-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	reg, err := runtime.NewRegistry(&runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Name?"}, ResultKey: "name"}, ""), nil
		},
	}})
	if err != nil {
		log.Fatal(err)
	}
	st, err := jsonfile.New(jsonfile.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	// A chosen run id (rather than a random one) names the files.
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", RunID: "order-1"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		log.Fatal(err)
	}
	if err := st.Close(); err != nil {
		log.Fatal(err)
	}
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		fmt.Println(e.Name())
	}

	st, err = jsonfile.New(jsonfile.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	run, err := st.RunGet(ctx, "order-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Status, run.Waiting.Prompt)
	// Output:
	// .abstractgateway-store.lock
	// gateway_runner.lock
	// ledger_order-1.jsonl
	// run_order-1.json
	// waiting Name?
}
