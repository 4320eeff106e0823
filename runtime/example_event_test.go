package runtime_test

import (
	"context"
	"fmt"
	"log"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A run waits for an event of its session; a host delivers it with
// EmitEvent, and every run waiting on that key is resumed and driven on.
// (A host that knows the run may instead call Resume with the run's
// Waiting.WaitKey; a node delivers events with an emit_event effect.)
func ExampleRuntime_EmitEvent() {
	approval := &runtime.Workflow{ID: "approval", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "approved"}, ResultKey: "event"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			// The result is the event's envelope; the emitter's data is its payload.
			event := run.Vars["event"].(map[string]any)
			return runtime.Complete(map[string]any{"approved_by": event["payload"].(map[string]any)["by"]}), nil
		},
	}}
	reg, err := runtime.NewRegistry(approval)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "approval", SessionID: "s1"})
	if err != nil {
		log.Fatal(err)
	}
	state, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state.Status, state.Waiting.Reason, state.Waiting.WaitKey)

	resumed, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "approved", SessionID: "s1",
		Payload: map[string]any{"by": "ops"}})
	if err != nil {
		log.Fatal(err)
	}
	state, err = rt.GetState(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(resumed), state.Status, state.Output["approved_by"])
	// Output:
	// waiting event evt:session:s1:approved
	// 1 completed ops
}
