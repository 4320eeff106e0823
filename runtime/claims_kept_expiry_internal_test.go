package runtime

import (
	"testing"
	"time"
)

// A claim a failed cancel kept holds this runner's own claims back only
// until it expires: past its time the run is claimable again, and the
// entry is forgotten.
func TestKeptClaimExpires(t *testing.T) {
	c := &claimer{}
	c.keep("live", claimClock()+int64(time.Hour))
	c.keep("gone", claimClock()-1)
	if !c.isKept("live") {
		t.Error("a kept claim within its time is not kept")
	}
	if c.isKept("gone") {
		t.Error("a kept claim past its time still holds the run back")
	}
	c.keptMu.Lock()
	_, left := c.kept["gone"]
	c.keptMu.Unlock()
	if left {
		t.Error("an expired kept claim is still recorded after it was looked at")
	}
}
