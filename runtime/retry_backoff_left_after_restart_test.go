package runtime_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A shutdown that cuts the backoff after failed attempt 1 leaves the run at
// the checkpoint of that attempt; the next tick waits what is left of the
// backoff after attempt 1 (policy.Backoff(eff, 1)), not the longer one
// after attempt 2. The clock stands still, so what is left is all of it.
func TestBackoffLeftAfterRestartIsTheFailedAttempts(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var sleeps []time.Duration
	var stop context.CancelFunc
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		sleeps = append(sleeps, d)
		first := len(sleeps) == 1
		mu.Unlock()
		if first {
			stop() // a shutdown during the first backoff
			return ctx.Err()
		}
		return nil
	}
	var calls int
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls++
		if calls == 1 {
			return runtime.Failed("unavailable"), nil
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
	rt := applyRuntime(t, runtime.Config{
		Handlers: map[durable.EffectType]runtime.Handler{"job": h},
		Policy:   runtime.RetryPolicy{DefaultAttempts: 3, Base: time.Second, Max: time.Minute},
		Clock:    func() time.Time { return clock },
		Sleep:    sleep,
	}, jobThenDone())
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	tickInterrupted(t, rt, id, &stop)
	run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("replay: %v, %v", run, err)
	}
	if calls != 2 {
		t.Fatalf("handler called %d times, want 2", calls)
	}
	if want := []time.Duration{time.Second, time.Second}; !slices.Equal(sleeps, want) {
		t.Fatalf("backoffs waited %v, want %v (the rest of the backoff after attempt 1)", sleeps, want)
	}
}
