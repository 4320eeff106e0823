package visualflow

import (
	"context"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// oddDocumentValues are values of the wrong type or shape put in place of
// document fields (§1: missing/extra fields, pins, edges).
var oddDocumentValues = []any{nil, "", " ", "x", int64(0), int64(-1), 1.5, true, false, []any{}, []any{nil, int64(1), "a"},
	map[string]any{}, map[string]any{"value": "x"}, "exec-in", "execution", "NodeType.IF"}

func mutateDocument(r *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			switch {
			case r.Intn(60) == 0:
				x[k] = oddDocumentValues[r.Intn(len(oddDocumentValues))]
			case r.Intn(200) == 0:
				delete(x, k)
			default:
				x[k] = mutateDocument(r, x[k])
			}
		}
	case []any:
		for i := range x {
			if r.Intn(60) == 0 {
				x[i] = oddDocumentValues[r.Intn(len(oddDocumentValues))]
			} else {
				x[i] = mutateDocument(r, x[i])
			}
		}
	}
	return v
}

// TestMutatedSharedBundlesCompileOrFailCleanly guarantees, per spec
// visualflow.md §1 (document model: fields of the wrong type, missing
// fields, pins and edges naming what does not exist) and §8.1 (a flow
// that fails to compile fails the bundle's load with an error), that a
// damaged document never crashes the compiler. The flows of each shared
// bundle (../shared/bundles, skipped when absent) get random fields
// replaced by values of other types or deleted (fixed seed, 300 variants
// per bundle); CompileBundle must return an error or workflows, never
// panic, and a compiled variant must start and tick (with a scripted
// llm_call) without panicking.
func TestMutatedSharedBundlesCompileOrFailCleanly(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(sharedBundles, "*.flow"))
	if len(files) == 0 {
		t.Skip("no shared bundles in ../shared/bundles")
	}
	r := rand.New(rand.NewSource(11))
	llm := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"content": "ok", "data": map[string]any{"a": int64(1)}}), nil
	}}
	for _, file := range files {
		orig, err := bundle.Read(file)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 300; i++ {
			b := *orig
			b.Flows = map[string]map[string]any{}
			for id, f := range orig.Flows {
				b.Flows[id] = mutateDocument(r, pyval.DeepCopy(f)).(map[string]any)
			}
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%s, variant %d: panic: %v", file, i, p)
					}
				}()
				cb, err := CompileBundle(&b, BundleOptions{ReactPlaceholders: true})
				if err != nil {
					return
				}
				reg, err := runtime.NewRegistry(cb.Workflows...)
				if err != nil {
					t.Fatalf("%s, variant %d: registry: %v", file, i, err)
				}
				rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: 300,
					Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm}})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				id, err := rt.Start(ctx, runtime.StartParams{
					WorkflowID: bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, b.Manifest.DefaultEntrypoint),
					Vars:       map[string]any{"prompt": "hi", "provider": "p", "model": "m"}})
				if err != nil {
					return
				}
				_, _ = rt.Tick(ctx, id, runtime.TickOptions{})
			}()
		}
	}
}
