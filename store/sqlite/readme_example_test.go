package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// README.md "Using the kernel", verbatim but for the error checks and a
// temporary directory: sqlite.New creates data/ when missing, Tick leaves
// the run waiting, Resume completes it.
func TestDocumentedReadmeKernelExampleOnSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "data/runtime.sqlite3")}) // creates data/ when missing
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg, err := runtime.NewRegistry(&runtime.Workflow{ID: "hello", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Name?"}, ResultKey: "name"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"hello": run.Vars["name"]}), nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	state, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || state.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", state, err)
	}
	state, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id,
		WaitKey: state.Waiting.WaitKey, Payload: map[string]any{"text": "Ada"}})
	if err != nil || state.Status != durable.RunCompleted {
		t.Fatalf("resume: %v %v", state, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Fatal(err)
	}
}
