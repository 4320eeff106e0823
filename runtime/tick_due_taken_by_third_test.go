package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// A due run another runner takes over from its holder while a Tick waits
// for that holder is the taker's, which may be working on it with nothing
// committed yet: the Tick gives up with ErrRunClaimed and commits nothing,
// not even a takeover's fence, which would make the taker's first commit
// conflict and lose its work. A Tick that went on waiting for the first
// holder would fence the run before finding it could not take it.
func TestTickLeavesADueRunAThirdRunnerTookMeanwhile(t *testing.T) {
	t.Parallel()
	st, rt, id := heldDueRun(t)
	ctx := context.Background()
	before, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(30*time.Millisecond, func() {
		if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "third", TTL: time.Hour, Now: time.Now(), Force: true}); err != nil {
			t.Error(err)
		}
	})
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("Tick: %v; want ErrRunClaimed", err)
	}
	if after, _ := st.RunGet(ctx, id); after.Version != before.Version {
		t.Fatalf("the run's version %d -> %d; want it untouched for the runner that took it", before.Version, after.Version)
	}
}
