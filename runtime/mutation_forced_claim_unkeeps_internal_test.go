package runtime

import (
	"context"
	"testing"
	"time"
)

// A claim kept by a failed cancel (keepOnRelease) holds this runner's own
// claims on the run back, but a forced claim (the next cancel's) takes the
// run again and ends the keeping: once that claim is released normally,
// the run is claimable at once, as it is in the store, not held back by
// the earlier keep until its TTL passes.
func TestForcedClaimEndsAKeptClaim(t *testing.T) {
	r, id := claimingRuntimeWithAskRun(t)
	ctx := context.Background()
	// As a cancel that failed leaves it: kept for a TTL.
	r.claims.keep(id, claimClock()+int64(time.Hour))
	if _, _, err := r.claim(ctx, id); err == nil {
		t.Fatal("a kept claim did not hold this runner's plain claim back")
	}
	_, hold, err := r.claimForcing(ctx, id)
	if err != nil {
		t.Fatalf("forced claim of a kept run: %v", err)
	}
	hold.release() // the cancel succeeded: not kept again
	_, again, err := r.claim(ctx, id)
	if err != nil {
		t.Fatalf("claim after the forced claim was released: %v; want the run claimable", err)
	}
	again.release()
}
