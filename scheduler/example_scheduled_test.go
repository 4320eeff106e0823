package scheduler_test

import (
	"context"
	"fmt"
	"log"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Scheduled is the simple host: Run starts a workflow (registering it),
// FindWaitingRuns lists what waits for a person, Respond answers a wait
// with its stored key, Close stops the scheduler.
func ExampleScheduled() {
	ask := &runtime.Workflow{ID: "ask", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "Deploy?"}, ResultKey: "answer"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"deploy": run.Vars["answer"].(map[string]any)["text"]}), nil
		},
	}}
	rt, err := runtime.New(runtime.Config{Store: memory.New()})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	host, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer host.Close()

	id, state, err := host.Run(ctx, ask, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state.Status, state.Waiting.Prompt)

	waiting, err := host.FindWaitingRuns(ctx, durable.WaitUser, "ask", 10)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(waiting), waiting[0].RunID == id)

	state, err = host.Respond(ctx, id, map[string]any{"text": "yes"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state.Status, state.Output["deploy"])
	// Output:
	// waiting Deploy?
	// 1 true
	// completed yes
}
