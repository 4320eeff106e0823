package visualflow

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// FuzzCompileAndRun: any document either fails to compile with an error or
// compiles into a workflow whose run ends, waits or fails — never a panic
// or a hang. Seeds are the golden flows.
func FuzzCompileAndRun(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		in, _, _ := bytes.Cut(raw, []byte("\n---\n"))
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := pyjson.DecodeObject(data)
		if err != nil {
			return
		}
		if inner, ok := doc["flow"].(map[string]any); ok {
			doc = inner
		}
		wf, err := Compile(doc, CompileOptions{WorkflowID: "fuzz"})
		if err != nil {
			return
		}
		reg, _ := runtime.NewRegistry(wf)
		rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: 200})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "fuzz"})
		if err != nil {
			return
		}
		_, _ = rt.Tick(ctx, id, runtime.TickOptions{})
	})
}
