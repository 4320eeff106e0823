package runtime

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// With claims: A's ApplyEffect on a waiting run holds the run's claim
// (renewed) while its external effect runs, and commits nothing until it
// returns. B's Resume saw the run "waiting unchanged" and took it over as
// from a dead holder (claimHeld, idleWaiting), completing it under A's
// effect. An attempt in flight in the ledger now keeps the run A's: B gets
// ErrRunClaimed.
func TestResumeDoesNotTakeARunFromALiveApplyEffect(t *testing.T) {
	saved := claimWaits
	claimWaits = []time.Duration{1, 1}
	defer func() { claimWaits = saved }()
	for _, kind := range []string{"memory", "sqlite"} { // jsonfile has no claims
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			st := newConflictStore(t, kind)
			h := newBlockingOnce()
			cfgA, cfgB := h.config(), h.config()
			cfgA.Claims = &Claims{Owner: "a", TTL: time.Minute, RenewEvery: time.Second}
			cfgB.Claims = &Claims{Owner: "b", TTL: time.Minute, RenewEvery: time.Second}
			a := errRuntime(t, st, cfgA, askOnly())
			b := errRuntime(t, st, cfgB, askOnly())
			id := startWaiting(t, a, "ask")
			p := ApplyEffectParams{RunID: id, NodeID: "apply", IdempotencyKey: "command:c1",
				Effect: &durable.Effect{Type: "llm", ResultKey: "_temp.applied"}}
			applied := applyInBackground(ctx, a, p)
			<-h.entered
			run, err := b.Resume(ctx, ResumeParams{RunID: id, WaitKey: "go", Payload: map[string]any{"x": 1.0}})
			t.Logf("B's resume while A's ApplyEffect holds the run: %v, %v", statusText(run), err)
			close(h.released)
			aerr := <-applied
			t.Logf("A's apply: %v", aerr)
			if err == nil {
				t.Errorf("B's Resume took the run from A, a live holder in the middle of an external effect; want ErrRunClaimed")
			} else if !errors.Is(err, ErrRunClaimed) {
				t.Errorf("B's Resume: %v, want ErrRunClaimed", err)
			}
			wantOneEndEach(t, st, id)
		})
	}
}

func statusText(run *durable.RunState) string {
	if run == nil {
		return "<nil>"
	}
	return string(run.Status)
}
