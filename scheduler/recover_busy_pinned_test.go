package scheduler_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// A run a failed drive left running waits out its back-off; a Recover
// that meets it while the host holds it queues it for once it is free but
// keeps its back-off time (Recover: "A run already queued keeps its time
// (a failure back-off)"), rather than driving it at the next pass.
func TestRecoverOfABusyRunKeepsItsFailureBackoff(t *testing.T) {
	t.Parallel()
	var gs *gateGetStore
	f := newFailedRecovery(t, func(st store.Store) store.Store {
		gs = &gateGetStore{Wrapper: store.Wrapper{Store: st}}
		return gs
	})
	letGo := holdRun(t, f.rt, gs, f.id)
	if err := f.s.Recover(context.Background()); err != nil { // meets the run busy
		letGo()
		t.Fatal(err)
	}
	letGo()
	f.wantHeldForItsBackoff(t)
}
