package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestStepGateErrorIsReturnedAndLeavesTheRunRunning pins the StepGate
// contract for an error other than ErrStepGateClosed: the tick stops at
// that boundary, the run is left running at its checkpoint (not failed),
// and the error is returned to the caller. Taking every gate error for a
// clean stop would hide it: a host whose gate failed (a budget store it
// could not read) would think the tick just paused and never learn why
// the run stopped moving.
func TestStepGateErrorIsReturnedAndLeavesTheRunRunning(t *testing.T) {
	t.Parallel()
	f := setup(t, chain(3))
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	gateErr := errors.New("budget store unreadable")
	calls := 0
	gate := func(ctx context.Context, run *durable.RunState, nodeID string) error {
		calls++
		if nodeID == "n1" {
			return gateErr
		}
		return nil
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{StepGate: gate})
	if !errors.Is(err, gateErr) {
		t.Fatalf("Tick with a gate failing at n1: error %v; want the gate's error", err)
	}
	stored, gerr := f.rt.GetState(ctx, id)
	if gerr != nil {
		t.Fatal(gerr)
	}
	if stored.Status != durable.RunRunning || stored.CurrentNode != "n1" || calls != 2 {
		t.Fatalf("run %s at %q after %d gate calls (returned %v); want running at n1, its checkpoint, after 2 calls",
			stored.Status, stored.CurrentNode, calls, st)
	}
}
