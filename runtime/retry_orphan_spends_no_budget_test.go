package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// An interrupted attempt spends nothing of the retry budget, also once the
// end closeOrphanedAttempts gave it (failed, "interrupted: ...") is durable:
// with one attempt allowed, an effect interrupted twice by its tick's caller
// is still attempted a third time, and completes the run.
func TestClosedOrphanAttemptSpendsNoBudget(t *testing.T) {
	var stop context.CancelFunc
	var calls int
	var attempts []int
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls++
		attempts = append(attempts, req.Attempt)
		if calls <= 2 {
			stop() // a shutdown during the attempt
			return runtime.Outcome{}, ctx.Err()
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"job": h}, Policy: runtime.NoRetry}, jobThenDone())
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		tickInterrupted(t, rt, id, &stop)
	}
	run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("third tick: run %s (%q), %v; want completed (interrupted attempts spend nothing)", run.Status, run.Error, err)
	}
	if calls != 3 || attempts[2] != 1 {
		t.Fatalf("handler calls %d, attempt numbers %v; want 3 calls, all attempt 1", calls, attempts)
	}
}
