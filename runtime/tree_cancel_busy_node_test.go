package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// cancelAsked reports whether a cancel's stop request stands on run id.
func cancelAsked(rt *Runtime, id string) bool {
	rt.locksMu.Lock()
	l := rt.locks[id]
	rt.locksMu.Unlock()
	if l == nil {
		return false
	}
	l.sigMu.Lock()
	defer l.sigMu.Unlock()
	return l.cancelRequests > 0
}

// The kept cancel of a tree (RetryFollowUps) meets a descendant busy in
// this process inside a node (a long computation), not in an effect nor
// in a retry's back-off. The cancel asks it to stop and waits for its
// tick: the node's effect never starts (the tick stops at the boundary),
// and the run is committed cancelled. A cancel that passed over the busy
// run withdrew its request before the node returned: the tick, seeing no
// request, made the call to the outside world under the cancelled tree.
func TestRetriedTreeCancelStopsADescendantBusyInANodeBeforeItsNextEffect(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	call := func(context.Context, *EffectRequest) (Outcome, error) {
		calls.Add(1)
		return Completed(map[string]any{"ok": true}), nil
	}
	inNode := make(chan struct{}, 1)
	release := make(chan struct{})
	released := false
	free := func() {
		if !released {
			released = true
			close(release)
		}
	}
	defer free()
	think := func(ctx context.Context, run *durable.RunState, _ *RunContext) (StepPlan, error) {
		inNode <- struct{}{}
		<-release // a long computation
		return Request(&durable.Effect{Type: "tool", Payload: map[string]any{}, ResultKey: "a"}, "done"), nil
	}
	b := startBusyLeafTree(t, Config{Handlers: map[durable.EffectType]Handler{"tool": {Func: call}}},
		think, inNode, "the leaf's node never ran")
	rt, leaf, ticked, tcancel := b.rt, b.leaf, b.ticked, b.tcancel

	retried := b.retryKeptCancel(t)
	// The node returns once the cancel has asked the leaf to stop (or has
	// returned without waiting for it).
	asked := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		select {
		case <-retried:
		default:
			if !cancelAsked(rt, leaf) {
				continue
			}
		}
		asked = true
		break
	}
	free()
	if !asked {
		t.Fatal("within 10 s, the retried cancel neither asked the busy leaf to stop nor returned")
	}
	for _, w := range []struct {
		what string
		done <-chan struct{}
	}{{"RetryFollowUps", retried}, {"the tick driving the leaf", ticked}} {
		select {
		case <-w.done:
		case <-time.After(10 * time.Second):
			tcancel()
			t.Fatalf("%s did not return once the leaf's node did", w.what)
		}
	}
	st, err := rt.GetState(ctx, leaf)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the leaf, under a tree whose kept cancel reached it while it was busy in a node, made %d "+
			"tool call(s) and ended %s; want none", n, st.Status)
	}
	if st.Status != durable.RunCancelled || st.Error != "stop" {
		t.Errorf("leaf %s (%q); want cancelled with the tree's reason", st.Status, st.Error)
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Errorf("%d follow-ups kept after the retried cancel, want none", n)
	}
}
