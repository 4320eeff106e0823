package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A handler that panics once its context is cut (an HTTP client's nil
// response after a cancelled request) is judged as one returning an
// error is (execute.go callHandler): "The caller went away (a shutdown, a
// lost claim) while the effect ran: its failure says nothing about the
// run", and docs/compatibility.md (scheduler Start/Stop row): Stop
// "cancels the context of a tick in flight (its effect is interrupted and
// replayed later)"; a cancel of the run ends the attempt "cancelled".

// panicAfterCut returns a runtime whose "x" effect, on its first call,
// reports on entered, waits for its context to end and panics; later
// calls complete. The workflow requests "x" at node a, then completes.
func panicAfterCut(t *testing.T, entered chan<- struct{}) *runtime.Runtime {
	t.Helper()
	var calls atomic.Int32
	return heldRunRuntime(t, nil, nil, func(hctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if calls.Add(1) == 1 {
			entered <- struct{}{}
			<-hctx.Done()
			var resp map[string]any
			//lint:ignore SA5000 the panic is the point: a handler crashing when its call is cut
			resp["status"] = "cut" // panics: the handler did not expect its call to be cut
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	})
}

func TestHandlerPanicAfterShutdownReplaysAttempt(t *testing.T) {
	ctx := context.Background()
	entered := make(chan struct{}, 1)
	rt := panicAfterCut(t, entered)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	tctx, shutdown := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := rt.Tick(tctx, id, runtime.TickOptions{}); done <- err }()
	<-entered
	shutdown()
	tickErr := <-done
	mid, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tickErr == nil || mid.Status != durable.RunRunning {
		t.Fatalf("after a shutdown during the effect the tick returned %v and the run is %s (%q); want an "+
			"interruption error and the run running at its checkpoint", tickErr, mid.Status, mid.Error)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("replay: %v, %v; want the attempt replayed and the run completed", st.Status, err)
	}
}

func TestHandlerPanicAfterCancelEndsAttemptCancelled(t *testing.T) {
	ctx := context.Background()
	entered := make(chan struct{}, 1)
	rt := panicAfterCut(t, entered)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, id, runtime.TickOptions{}); done <- err }()
	<-entered
	st, err := rt.Cancel(ctx, id, "")
	if tickErr := <-done; tickErr != nil || err != nil {
		t.Fatalf("tick: %v, cancel: %v", tickErr, err)
	}
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var attempt durable.StepStatus
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == "x" {
			attempt = r.Status
		}
	}
	if st.Status != durable.RunCancelled || attempt != durable.StepCancelled {
		t.Fatalf("run %s (%q), attempt %s; want the run cancelled and its attempt recorded cancelled, "+
			"not failed by the handler's panic", st.Status, st.Error, attempt)
	}
}
