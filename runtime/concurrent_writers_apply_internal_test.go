package runtime

import (
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// A's ApplyEffect on a waiting run is inside its external effect (its
// STARTED record committed) when B answers the run's wait and the run
// completes. A's commit loses, but its attempt still gets its end: only a
// Cancel closes an attempt for the run that ended (it once skipped every
// ended run, leaving this one's STARTED record open for ever).
func TestApplyEffectLostToACompletingResumeStillEndsItsAttempt(t *testing.T) {
	for _, kind := range conflictStores {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			st := newConflictStore(t, kind)
			h := newBlockingOnce()
			a := errRuntime(t, st, h.config(), askOnly())
			b := errRuntime(t, st, h.config(), askOnly())
			id := startWaiting(t, a, "ask")
			p := ApplyEffectParams{RunID: id, NodeID: "apply", IdempotencyKey: "command:c1",
				Effect: &durable.Effect{Type: "llm", ResultKey: "_temp.applied"}}
			applied := applyInBackground(ctx, a, p)
			<-h.entered
			run, err := b.Resume(ctx, ResumeParams{RunID: id, WaitKey: "go", Payload: map[string]any{"x": 1.0}})
			if err != nil || run.Status != durable.RunCompleted {
				t.Fatalf("resume: %v, %v", run, err)
			}
			close(h.released)
			err = <-applied
			t.Logf("apply: %v", err)
			if !errors.Is(err, ErrRunChanged) {
				t.Errorf("apply: %v, want ErrRunChanged", err)
			}
			wantOneEndEach(t, st, id)
		})
	}
}
