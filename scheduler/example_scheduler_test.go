package scheduler_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A run waits until a time 20 ms away; the scheduler's loop releases it.
// The store is wrapped in a WakeStore so that the loop learns of the new
// deadline at once instead of at its next poll.
func ExampleScheduler_Start() {
	timer := &runtime.Workflow{ID: "timer", Entry: "sleep", Nodes: map[string]runtime.NodeFunc{
		"sleep": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			until := durable.FormatTime(rc.Now().Add(20 * time.Millisecond))
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": until}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"woke": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(timer)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: scheduler.NewWakeStore(memory.New()), Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	released := make(chan *durable.RunState, 1)
	s, err := scheduler.New(scheduler.Config{Runtime: rt,
		OnRunResumed: func(st *durable.RunState) { released <- st }})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer s.Stop()

	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "timer"})
	if err != nil {
		log.Fatal(err)
	}
	state, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state.Status, state.Waiting.Reason)

	select {
	case state = <-released:
		fmt.Println(state.Status, state.Output["woke"])
	case <-time.After(10 * time.Second):
		log.Fatal("the scheduler did not release the run")
	}
	// Output:
	// waiting until
	// completed true
}
