package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A handler's waiting outcome whose wait reason is not one of the wait
// reasons is a failed attempt, as any bad outcome is: named in the attempt's
// end, and retried under the policy (here the retry completes the run).
func TestUnknownWaitReasonIsAFailedAttemptThatIsRetried(t *testing.T) {
	var calls int
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls++
		if calls == 1 {
			return runtime.Waiting(&durable.WaitState{Reason: "nap", WaitKey: "k"}), nil
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
	rt := applyRuntime(t, runtime.Config{
		Handlers: map[durable.EffectType]runtime.Handler{"job": h},
		Policy:   runtime.RetryPolicy{DefaultAttempts: 2, Base: -1},
	}, jobThenDone())
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: run %v, %v; want completed by the retry", run, err)
	}
	var ends []*durable.StepRecord
	for _, r := range ledgerOf(t, rt, id) {
		if r.Effect != nil && r.Effect.Type == "job" && r.Status != durable.StepStarted {
			ends = append(ends, r)
		}
	}
	if len(ends) != 2 || ends[0].Status != durable.StepFailed || !strings.Contains(ends[0].Error, "not one of the wait reasons") ||
		ends[1].Status != durable.StepCompleted {
		for _, r := range ends {
			t.Logf("%s attempt %d: %s", r.Status, r.Attempt, r.Error)
		}
		t.Fatal("want attempt 1 failed for its wait reason, attempt 2 completed")
	}
}

// A handler's waiting outcome that carries no wait fails its attempt with
// a message naming that (it is checked before the wait's reason is read;
// without that check the attempt failed as a handler panic, a nil
// dereference the handler never made).
func TestWaitingOutcomeWithoutAWaitIsAFailedAttempt(t *testing.T) {
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Outcome{Status: runtime.OutcomeWaiting}, nil
	}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"job": h}}, jobThenDone())
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "w"})
	const want = "Effect failed after 1 attempts: effect handler for job returned a waiting outcome without a wait"
	if run.Status != durable.RunFailed || run.Error != want {
		t.Fatalf("run %s error %q; want failed with %q", run.Status, run.Error, want)
	}
}
