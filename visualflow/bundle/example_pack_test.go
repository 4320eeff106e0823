package bundle_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// A flow that returns the sum of its inputs a and b.
const addFlow = `{"id": "add", "nodes": [
  {"id": "start", "type": "on_flow_start", "data": {"pinDefaults": {"a": 1, "b": 2},
    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "a", "type": "number"}, {"id": "b", "type": "number"}]}},
  {"id": "sum", "type": "add", "data": {"inputs": [{"id": "a", "type": "number"}, {"id": "b", "type": "number"}],
    "outputs": [{"id": "result", "type": "number"}]}},
  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "sum", "type": "number"}]}}],
 "edges": [
  {"source": "start", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"},
  {"source": "start", "sourceHandle": "a", "target": "sum", "targetHandle": "a"},
  {"source": "start", "sourceHandle": "b", "target": "sum", "targetHandle": "b"},
  {"source": "sum", "sourceHandle": "result", "target": "end", "targetHandle": "sum"}]}`

// Pack a flow into a .flow file, read it back and run its entrypoint.
func ExamplePack() {
	dir, err := os.MkdirTemp("", "bundle-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "add.json")
	if err := os.WriteFile(root, []byte(addFlow), 0o644); err != nil {
		log.Fatal(err)
	}
	b, err := bundle.Pack(root, dir, bundle.PackOptions{BundleID: "calc", BundleVersion: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	file := filepath.Join(dir, "calc.flow")
	if err := bundle.WriteFile(file, b); err != nil {
		log.Fatal(err)
	}

	b, err = bundle.Read(file)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Ref(), "flows:", len(b.Flows), "default:", b.Manifest.DefaultEntrypoint)
	for _, ep := range b.Manifest.Entrypoints {
		fmt.Println("entrypoint", ep.FlowID, "defaults:", bundle.InputSchema(b.Flows[ep.FlowID])["defaults"])
	}

	cb, err := visualflow.CompileBundle(b, visualflow.BundleOptions{})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := runtime.NewRegistry()
	if err != nil {
		log.Fatal(err)
	}
	if err := cb.Register(reg); err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	wfID := bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, b.Manifest.DefaultEntrypoint)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wfID, Vars: map[string]any{"a": 40}})
	if err != nil {
		log.Fatal(err)
	}
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(wfID, run.Status, run.Output["sum"])
	// Output:
	// calc@1.0.0 flows: 1 default: add
	// entrypoint add defaults: map[a:1 b:2]
	// calc@1.0.0:add completed 42
}
