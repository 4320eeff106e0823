package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A run left waiting survives closing the store: a new store (and a new
// runtime, with the same workflows registered) on the same file finds it
// and resumes it.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "sqlite-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	cfg := sqlite.Config{Path: filepath.Join(dir, "runtime.sqlite3")}
	ask := &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Name?"}, ResultKey: "name"}, ""), nil // no next node: the answer completes the run
		},
	}}
	reg, err := runtime.NewRegistry(ask)
	if err != nil {
		log.Fatal(err)
	}
	// open opens the store and a runtime on it, as a process does at start.
	open := func() (*sqlite.Store, *runtime.Runtime) {
		st, err := sqlite.New(ctx, cfg)
		if err != nil {
			log.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
		if err != nil {
			log.Fatal(err)
		}
		return st, rt
	}

	st, rt := open()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		log.Fatal(err)
	}
	if err := st.Close(); err != nil {
		log.Fatal(err)
	}

	st, rt = open() // as after a restart
	defer st.Close()
	state, err := rt.GetState(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state.Status, state.Waiting.Prompt)
	state, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: state.Waiting.WaitKey,
		Payload: map[string]any{"text": "Ada"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state.Status, state.Output["result"]) // output {"success": true, "result": <answer>}
	// Output:
	// waiting Name?
	// completed map[text:Ada]
}
