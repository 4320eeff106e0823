package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A cancelled run keeps no plan in vars._runtime.effect_in_flight: it is
// never executed again, and the terminal state is what get_state, Python
// readers and history exports see. A Cancel that cut a retry's back-off
// committed the run with the plan the back-off's checkpoint recorded; one
// that cut the attempt itself did so too.
func TestCancelledRunKeepsNoEffectInFlight(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler func(started chan<- struct{}) runtime.HandlerFunc
	}{
		{"cut during back-off", func(chan<- struct{}) runtime.HandlerFunc {
			return func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				return runtime.Failed("transient"), nil
			}
		}},
		{"cut during attempt", func(started chan<- struct{}) runtime.HandlerFunc {
			return func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				started <- struct{}{}
				<-ctx.Done()
				return runtime.Outcome{}, ctx.Err()
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf := &runtime.Workflow{ID: "w", Entry: "x", Nodes: map[string]runtime.NodeFunc{
				"x": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					return runtime.Request(&durable.Effect{Type: "charge", Payload: map[string]any{"a": 1}, ResultKey: "r"}, ""), nil
				}}}
			reg, err := runtime.NewRegistry(wf)
			if err != nil {
				t.Fatal(err)
			}
			waiting := make(chan struct{}, 1) // the attempt or the back-off is under way
			rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg,
				Policy: runtime.RetryPolicy{DefaultAttempts: 3},
				Sleep: func(ctx context.Context, d time.Duration) error {
					waiting <- struct{}{}
					<-ctx.Done()
					return ctx.Err()
				},
				Handlers: map[durable.EffectType]runtime.Handler{"charge": {Func: tc.handler(waiting)}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := rt.Tick(ctx, id, runtime.TickOptions{}); done <- err }()
			<-waiting
			if _, err := rt.Cancel(ctx, id, "stop"); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("tick: %v", err)
			}
			run, err := rt.GetState(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			rtv, _ := run.Vars["_runtime"].(map[string]any)
			if run.Status != durable.RunCancelled || rtv["effect_in_flight"] != nil {
				t.Fatalf("run %s; vars._runtime.effect_in_flight = %v; want a cancelled run without a plan in flight",
					run.Status, rtv["effect_in_flight"])
			}
		})
	}
}
