package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A Cancel that fails on a run no other runner held (its commit meets a
// store error) releases its claim: only a claim forced from another
// runner is kept until it expires (claimHold.keepOnRelease), since only
// then may a runner still be running the run's effect. The run, still
// live, can then be ticked by this runner at once. Keeping the free claim
// too would refuse this runner's own Ticks of the run ("kept by a cancel
// that failed") for the claim's whole TTL.
func TestFailedCancelOfAFreeRunReleasesItsClaim(t *testing.T) {
	ctx := context.Background()
	st := &failOnceStore{Wrapper: store.Wrapper{Store: memory.New()}, runID: "free-run"}
	rt := errRuntime(t, st, Config{Claims: &Claims{Owner: "me"}}, effectThenComplete(&durable.Effect{Type: durable.EffectAskUser,
		Payload: map[string]any{"prompt": "?"}, ResultKey: "x"}))
	startRun(t, rt, StartParams{RunID: "free-run"})
	if _, err := rt.Cancel(ctx, "free-run", "stop"); err == nil {
		t.Fatal("Cancel with its commit failing: no error; want the store's")
	}
	run, err := rt.Tick(ctx, "free-run", TickOptions{})
	if err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("Tick after the failed cancel: %v, %v; want the run ticked to its ask", run, err)
	}
}
