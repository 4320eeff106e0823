package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// A pause or cancel from a second runtime while the first waits before a
// retry: the first's next commit loses, the run ends as the other writer
// decided (completed after ResumeRun, or cancelled), and every attempt has
// one end.
func TestPauseOrCancelElsewhereDuringRetryBackoff(t *testing.T) {
	for _, op := range []string{"pause", "cancel"} {
		for _, kind := range conflictStores {
			t.Run(op+"/"+kind, func(t *testing.T) {
				ctx := t.Context()
				st := newConflictStore(t, kind)
				var calls atomic.Int32
				h := Handler{Func: func(context.Context, *EffectRequest) (Outcome, error) {
					if calls.Add(1) == 1 {
						return Failed("transient"), nil
					}
					return Completed(map[string]any{"answer": "42"}), nil
				}}
				inBackoff, release := make(chan struct{}), make(chan struct{})
				var sleeps atomic.Int32
				cfgA := Config{Clock: steppingMilliClock(), Handlers: map[durable.EffectType]Handler{"llm": h},
					Policy: RetryPolicy{DefaultAttempts: 3, Base: time.Millisecond},
					Sleep: func(ctx context.Context, d time.Duration) error {
						if sleeps.Add(1) == 1 {
							close(inBackoff)
							<-release
						}
						return nil
					}}
				cfgB := cfgA
				var nodeCalls atomic.Int32
				a := errRuntime(t, st, cfgA, selfResumingAgent(&nodeCalls))
				b := errRuntime(t, st, cfgB, selfResumingAgent(&nodeCalls))
				id, err := a.Start(ctx, StartParams{WorkflowID: "w"})
				if err != nil {
					t.Fatal(err)
				}
				ticked := tickInBackground(ctx, a, id)
				select {
				case <-inBackoff:
				case err := <-ticked: // else the wait below never ends
					t.Fatalf("A's tick ended (%v) without sleeping before a retry of the failed attempt", err)
				}
				if op == "pause" {
					_, err = b.Pause(ctx, id, "op")
				} else {
					_, err = b.Cancel(ctx, id, "stop")
				}
				if err != nil {
					t.Fatal(err)
				}
				close(release)
				t.Logf("A's tick: %v", <-ticked)
				if op == "pause" {
					if _, err := b.ResumeRun(ctx, id); err != nil {
						t.Fatal(err)
					}
				}
				run, _ := b.GetState(ctx, id)
				want := durable.RunCompleted
				if op == "cancel" {
					want = durable.RunCancelled
				}
				if run.Status != want {
					t.Errorf("run %s, want %s", run.Status, want)
				}
				wantOneEndEach(t, st, id)
				t.Logf("handler calls %d", calls.Load())
			})
		}
	}
}
