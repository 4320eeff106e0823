package runtime_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestApplyEffectIdempotencyKeyNotUTF8IsRefused (found by
// FuzzBuiltinApplyEffect): ApplyEffect promises that a completed
// record under its idempotency key is reused, so that a command
// delivered twice does not run twice. The key is written to the ledger as
// JSON text, where bytes that are not UTF-8 become U+FFFD
// (docs/compatibility.md), so the look-up by the caller's raw key never
// finds the record it wrote: the effect runs again on every delivery
// (a host handler is called again). Ids and keys that are not UTF-8 are
// refused elsewhere (Start, EmitEvent, PrepareCommand) with an error
// naming the field; ApplyEffect refuses such a key the same way, changing
// nothing (reusing the first result would do too).
func TestApplyEffectIdempotencyKeyNotUTF8IsRefused(t *testing.T) {
	ctx := t.Context()
	var calls atomic.Int32
	job := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"call": int64(calls.Add(1))}), nil
	}}
	rt := applyRuntime(t, runtime.Config{Artifacts: artifact.NewMemory(),
		Handlers: map[durable.EffectType]runtime.Handler{"job": job}}, askThenDone())
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	before := tickDone(t, rt, id)
	p := runtime.ApplyEffectParams{RunID: id, NodeID: "cmd", IdempotencyKey: "command:job:\xff",
		Effect: &durable.Effect{Type: "job", Payload: map[string]any{"x": 1}, ResultKey: "_temp.job"}}
	_, err1 := rt.ApplyEffect(ctx, p)
	_, err2 := rt.ApplyEffect(ctx, p)
	after := mustState(t, rt, id)
	refused := err1 != nil && strings.Contains(err1.Error(), "idempotency key") && strings.Contains(err1.Error(), "UTF-8")
	switch {
	case refused && (calls.Load() != 0 || after.Version != before.Version):
		t.Fatalf("the key was refused (%v) but the effect ran: %d calls, run version %d to %d", err1, calls.Load(), before.Version, after.Version)
	case !refused && calls.Load() != 1:
		t.Fatalf("the same effect applied twice under key %q (errors %v, %v) ran %d times; "+
			"want once, or the key refused naming it", p.IdempotencyKey, err1, err2, calls.Load())
	}
}

// TestApplyEffectResultKeyNotUTF8IsRefused (found by
// FuzzBuiltinApplyEffect): the same through the effect's result
// key: the first call writes the result at vars["\xda"], which the store
// keeps as vars["\uFFFD"]; the second call reuses the completed record and
// writes it at vars["\xda"] again, beside the "\uFFFD" read back, and the
// two keys collide, and the call that ApplyEffect documents as reusing
// the result failed ("the effect handler left the run unserialisable").
// The key is refused up front, naming it, as the idempotency key is.
func TestApplyEffectResultKeyNotUTF8IsRefused(t *testing.T) {
	ctx := t.Context()
	rt := applyRuntime(t, runtime.Config{}, askThenDone())
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	before := tickDone(t, rt, id)
	p := runtime.ApplyEffectParams{RunID: id, NodeID: "cmd", IdempotencyKey: "command:answer",
		Effect: &durable.Effect{Type: durable.EffectAnswerUser, Payload: map[string]any{"message": "hi"}, ResultKey: "out\xda"}}
	_, err1 := rt.ApplyEffect(ctx, p)
	_, err2 := rt.ApplyEffect(ctx, p)
	after := mustState(t, rt, id)
	if err1 != nil {
		if !strings.Contains(err1.Error(), "result key") || !strings.Contains(err1.Error(), "UTF-8") || after.Version != before.Version {
			t.Fatalf("first call refused with %v (run version %d to %d); want a refusal naming the result key, the run unchanged", err1, before.Version, after.Version)
		}
		return
	}
	if err2 != nil {
		t.Fatalf("the first call completed, the same call again failed: %v", err2)
	}
}
