package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A tick whose effect a Cancel interrupted commits the run cancelled
// itself, with the reason carried on runLock (runtime.go, cancelCauses).
// Promise: Cancel's doc, the run is saved cancelled "with error reason".
// Cancel A gives up (its context ends while a node runs) before anything
// is cut; Cancel B, under way, is the one that cancels the run. The effect
// cut after A withdrew recorded A's reason, so B returned the run
// cancelled with a reason not its own, from a call that reported failure.
// A withdrawn cancel's reason must go with it.
func TestCancelReasonOfAWithdrawnCancelIsNotUsed(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	inNode := make(chan struct{}, 1)
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
			inNode <- struct{}{}
			<-release
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"q": "x"}, ResultKey: "out"}, "done"), nil
		},
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(nil) }),
	}}
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) { return Completed(nil), nil }
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, wf)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	tickDone := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, id, TickOptions{}); tickDone <- err }()
	<-inNode
	aDone := make(chan error, 1)
	go func() {
		actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := rt.Cancel(actx, id, "a")
		aDone <- err
	}()
	time.Sleep(100 * time.Millisecond) // A's stop request is made; it waits for the run
	type res struct {
		run *durable.RunState
		err error
	}
	bDone := make(chan res, 1)
	go func() { r, err := rt.Cancel(ctx, id, "b"); bDone <- res{r, err} }()
	if err := <-aDone; err == nil {
		t.Fatal("setup: Cancel A did not give up")
	}
	close(release)
	<-tickDone
	b := <-bDone
	stored, _ := rt.GetState(ctx, id)
	if b.err != nil || stored.Status != durable.RunCancelled {
		t.Fatalf("B: %v; stored %s", b.err, stored.Status)
	}
	if stored.Error != "b" {
		t.Errorf("run cancelled by B (A gave up before anything was cut) has reason %q, want %q", stored.Error, "b")
	}
}
