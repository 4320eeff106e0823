package runtime_test

import (
	"context"
	"fmt"
	"log"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// The ledger records every effect attempt (started, then its outcome under
// the same step id), the completion and the run's terminal status event.
// Here an llm_call handler fails once and the retry policy tries again.
func ExampleRuntime_GetLedger() {
	llm := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if req.Attempt == 1 {
			return runtime.Failed("rate limited"), nil
		}
		return runtime.Completed(map[string]any{"content": "Hi!"}), nil
	}
	greet := &runtime.Workflow{ID: "greet", Entry: "llm", Nodes: map[string]runtime.NodeFunc{
		"llm": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall,
				Payload: map[string]any{"prompt": "Say hi"}, ResultKey: "reply"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"reply": run.Vars["reply"].(map[string]any)["content"]}), nil
		},
	}}
	reg, err := runtime.NewRegistry(greet)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg,
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: llm}},
		Policy:   runtime.RetryPolicy{DefaultAttempts: 2, Base: -1}, // retry at once
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "greet"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		log.Fatal(err)
	}

	ledger, err := rt.GetLedger(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range ledger {
		switch {
		case r.Effect == nil: // the run's completion
			fmt.Println(r.Seq, r.NodeID, "completion", r.Status)
		case r.Effect.Type == durable.EffectEmitEvent: // here, the terminal status event
			fmt.Println(r.Seq, r.NodeID, r.Effect.Payload["name"], r.Status)
		case r.Error != "":
			fmt.Println(r.Seq, r.NodeID, r.Effect.Type, r.Status, "attempt", r.Attempt, "error:", r.Error)
		default:
			fmt.Println(r.Seq, r.NodeID, r.Effect.Type, r.Status, "attempt", r.Attempt)
		}
	}
	// Output:
	// 1 llm llm_call started attempt 1
	// 2 llm llm_call failed attempt 1 error: rate limited
	// 3 llm llm_call started attempt 2
	// 4 llm llm_call completed attempt 2
	// 5 done completion completed
	// 6 done abstract.status completed
}
