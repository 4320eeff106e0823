package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// A paused run whose wait is due, held by another runner, is not taken
// from it by a Tick: a paused run is not ticked, so there is nothing to
// take it for. The Tick reports ErrRunClaimed at once and leaves the run
// as it is (no takeover commit moves its version). A tickHeldDue that did
// not skip paused runs would wait out the holder, fence the run and take
// its claim, then return it untouched with no error.
func TestTickDoesNotTakeAPausedDueRunFromItsHolder(t *testing.T) {
	t.Parallel()
	st, rt, id := heldDueRun(t)
	ctx := context.Background()
	// The holder paused it before it stopped (its flag only: the wait stays).
	run, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rtNS, _ := run.Vars["_runtime"].(map[string]any)
	if rtNS == nil {
		rtNS = map[string]any{}
		run.Vars["_runtime"] = rtNS
	}
	rtNS["control"] = map[string]any{"paused": true}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	before, _ := st.RunGet(ctx, id)
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("Tick of the paused due run: %v; want ErrRunClaimed", err)
	}
	after, _ := st.RunGet(ctx, id)
	if after.Version != before.Version || !runtime.IsPaused(after) || after.Waiting == nil {
		t.Fatalf("the run after the Tick: version %d -> %d, paused %v, waiting %v; want it untouched",
			before.Version, after.Version, runtime.IsPaused(after), after.Waiting)
	}
}
