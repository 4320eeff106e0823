package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// BenchmarkKernelChain measures the kernel alone on the in-memory store:
// one op is a 10-node chain run (start + tick), as bench workload W1.
func BenchmarkKernelChain(b *testing.B) {
	reg, _ := runtime.NewRegistry(chain(10))
	rt, _ := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
		if err != nil {
			b.Fatal(err)
		}
		st, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil || st.Status != durable.RunCompleted {
			b.Fatal(err)
		}
	}
}

// BenchmarkKernelAskResume is workload W2 on the in-memory store.
func BenchmarkKernelAskResume(b *testing.B) {
	reg, _ := runtime.NewRegistry(askWorkflow())
	rt, _ := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
		st, _ := rt.Tick(ctx, id, runtime.TickOptions{})
		st, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
		if err != nil || st.Status != durable.RunCompleted {
			b.Fatal(err)
		}
	}
}
