package visualflow_test

import (
	"context"
	"fmt"
	"log"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// greetFlow takes a name, upper-cases it, prefixes "Hello" and returns
// the text from its end node.
const greetFlow = `{
  "id": "greet",
  "nodes": [
    {"id": "start", "type": "on_flow_start", "data": {
      "pinDefaults": {"name": "world"},
      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "name", "type": "string"}]}},
    {"id": "upper", "type": "uppercase", "data": {
      "inputs": [{"id": "text", "type": "string"}],
      "outputs": [{"id": "result", "type": "string"}]}},
    {"id": "hello", "type": "concat", "data": {
      "pinDefaults": {"a": "Hello"}, "concatConfig": {"separator": " "},
      "inputs": [{"id": "a", "type": "string"}, {"id": "b", "type": "string"}],
      "outputs": [{"id": "result", "type": "string"}]}},
    {"id": "end", "type": "on_flow_end", "data": {
      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "greeting", "type": "string"}]}}
  ],
  "edges": [
    {"source": "start", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"},
    {"source": "start", "sourceHandle": "name", "target": "upper", "targetHandle": "text"},
    {"source": "upper", "sourceHandle": "result", "target": "hello", "targetHandle": "b"},
    {"source": "hello", "sourceHandle": "result", "target": "end", "targetHandle": "greeting"}
  ]
}`

// Compile a VisualFlow graph and run it to completion.
func ExampleCompile() {
	flow, err := bundle.DecodeFlow([]byte(greetFlow))
	if err != nil {
		log.Fatal(err)
	}
	wf, err := visualflow.Compile(flow, visualflow.CompileOptions{})
	if err != nil {
		log.Fatal(err) // a *visualflow.CompileError names flow, node and pin
	}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, vars := range []map[string]any{nil, {"name": "Ada"}} {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: vars})
		if err != nil {
			log.Fatal(err)
		}
		run, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(run.Status, run.Output["greeting"], run.Output["success"])
	}
	// Output:
	// completed Hello WORLD true
	// completed Hello ADA true
}
