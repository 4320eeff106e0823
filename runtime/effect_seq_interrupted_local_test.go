package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A local effect whose attempt its tick's caller interrupts (a shutdown)
// leaves the run at a checkpoint that still holds the effect's sequence
// number: the replay hands the handler the same idempotency key again
// (effect_seq moves past an effect only with its outcome).
func TestInterruptedLocalEffectKeepsItsKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	var stop context.CancelFunc
	h := runtime.Handler{Local: true, Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		mu.Lock()
		keys = append(keys, req.IdempotencyKey)
		first := len(keys) == 1
		mu.Unlock()
		if first {
			stop() // the tick's caller goes away during the attempt
			return runtime.Outcome{}, ctx.Err()
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"job": h}}, jobThenDone())
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	tickInterrupted(t, rt, id, &stop)
	run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("replay: %v, %v", run, err)
	}
	if len(keys) != 2 {
		t.Fatalf("handler called %d times, want 2", len(keys))
	}
	if keys[0] != keys[1] {
		t.Fatalf("the replayed attempt got key %s, the interrupted one %s: want the same key", keys[1], keys[0])
	}
}

// tickInterrupted ticks run id under a context whose cancel it leaves in
// *stop, for the test's handler or node to call (its tick's caller going
// away: a shutdown), and expects the tick to end with context.Canceled.
func tickInterrupted(t *testing.T, rt *runtime.Runtime, id string, stop *context.CancelFunc) {
	t.Helper()
	tctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	*stop = cancel
	if _, err := rt.Tick(tctx, id, runtime.TickOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted tick: %v", err)
	}
}
