package runtime_test

import (
	"context"
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A workflow that asks a question, then completes with the answer.
func Example() {
	hello := &runtime.Workflow{ID: "hello", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Name?"}, ResultKey: "name"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			name := run.Vars["name"].(map[string]any)["text"]
			return runtime.Complete(map[string]any{"greeting": fmt.Sprintf("Hello, %v!", name)}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(hello)
	rt, _ := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	ctx := context.Background()

	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "hello"})
	state, _ := rt.Tick(ctx, id, runtime.TickOptions{})
	fmt.Println(state.Status, state.Waiting.Prompt)

	state, _ = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: state.Waiting.WaitKey,
		Payload: map[string]any{"text": "Ada"}})
	fmt.Println(state.Status, state.Output["greeting"])

	ledger, _ := rt.GetLedger(ctx, id)
	for _, r := range ledger {
		kind := "completion"
		if r.Effect != nil {
			kind = string(r.Effect.Type)
		}
		fmt.Println(r.Seq, r.NodeID, kind, r.Status)
	}
	// Output:
	// waiting Name?
	// completed Hello, Ada!
	// 1 ask ask_user started
	// 2 ask ask_user waiting
	// 3 ask resume completed
	// 4 done completion completed
	// 5 done emit_event completed
}
