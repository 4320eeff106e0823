package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// An attempt a Cancel interrupts ends cancelled, and the run with it, even
// when its handler also changed a field the kernel owns (undone): the
// cancel, not the handler's misstep, decides the outcome.
func TestCancelledAttemptThatTouchedKernelFieldsStaysCancelled(t *testing.T) {
	entered := make(chan struct{})
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		req.Run.WorkflowID = "elsewhere" // a kernel field: undone by the runtime
		close(entered)
		<-ctx.Done() // cut by the Cancel
		return runtime.Outcome{}, ctx.Err()
	}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"job": h}}, jobThenDone())
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	ticked := make(chan error, 1)
	go func() {
		_, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
		ticked <- err
	}()
	<-entered
	if _, err := rt.Cancel(t.Context(), id, "user cancelled"); err != nil {
		t.Fatal(err)
	}
	if err := <-ticked; err != nil {
		t.Fatalf("tick: %v", err)
	}
	run, err := rt.GetState(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCancelled || run.WorkflowID != "w" {
		t.Fatalf("run %s (workflow %q, error %q), want cancelled, workflow w", run.Status, run.WorkflowID, run.Error)
	}
	var got []durable.StepStatus
	for _, r := range ledgerOf(t, rt, id) {
		if r.Effect != nil && r.Effect.Type == "job" {
			got = append(got, r.Status)
		}
	}
	if len(got) != 2 || got[0] != durable.StepStarted || got[1] != durable.StepCancelled {
		t.Fatalf("records of the effect %v, want [started cancelled]", got)
	}
}
