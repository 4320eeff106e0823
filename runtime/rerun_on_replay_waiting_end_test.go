package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A waiting end left durable without its state by a kill is reused as the
// attempt's outcome, but not for a RerunOnReplay handler: the changes it
// made to the run were lost with the state, and only calling it again makes
// them (execute: "Not for a RerunOnReplay handler, whose changes to the run
// the kill lost").
func TestRerunOnReplayHandlerIsCalledAgainAfterItsWaitingEndWasKilled(t *testing.T) {
	var calls atomic.Int32
	h := runtime.Handler{RerunOnReplay: true, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		n := calls.Add(1)
		req.Run.Vars["made"] = int64(n) // a change to the run the kill loses
		return runtime.Waiting(&durable.WaitState{Reason: durable.WaitJob, WaitKey: "job:" + req.IdempotencyKey,
			ResumeToNode: req.ResumeTarget(), ResultKey: req.Effect.ResultKey}), nil
	}}
	run, _ := killAndReplay(t, durable.StepWaiting, "submit", h)
	if got := calls.Load(); got != 2 {
		t.Fatalf("handler called %d times, want 2 (called again to make its changes again)", got)
	}
	if run.Status != durable.RunWaiting || run.Vars["made"] == nil {
		t.Fatalf("after the replay: status %s, vars.made %v; want waiting, with the handler's change made again", run.Status, run.Vars["made"])
	}
}
