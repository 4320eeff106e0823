package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// expiryCallWorkflow is one node whose LLM_CALL (a non-local effect) is
// handled by the runtime's handler, then the run completes.
func expiryCallWorkflow() *runtime.Workflow {
	return &runtime.Workflow{ID: "expiry-call", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"},
				ResultKey: "r"}, ""), nil
		},
	}}
}

func expiryRuntime(t *testing.T, st store.Store, owner string, ttl time.Duration, h runtime.HandlerFunc) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(expiryCallWorkflow())
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Logger: testLogger(t),
		Claims:   &runtime.Claims{Owner: owner, TTL: ttl},
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: h}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestCutOffHolderStopsItsEffectBeforeTheTTL: runner A works on a run
// (its LLM call in flight) when its path to the database goes silent (a
// network partition of A alone). Its renewals fail, not with a conflict,
// and its claim expires a TTL later; runner B, which still reaches the
// database, then takes the run over (as Recover would) and calls the
// handler again for the same attempt. A's effect must have stopped by
// then: A gives its claim up by its own clock when no renewal got
// through for nearly a TTL. (It used to give up only on a conflict,
// which a runner cut off from the database never hears, so both calls
// ran at once.)
func TestCutOffHolderStopsItsEffectBeforeTheTTL(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	const ttl = 1500 * time.Millisecond
	aStore, proxy := proxiedStore(t, schema, postgres.Config{MaxConns: 4, WriteTimeout: 300 * time.Millisecond})
	bStore := openSchema(t, schema)

	aStarted := make(chan context.Context, 1)
	release := make(chan struct{})
	a := expiryRuntime(t, aStore, "runner-a", ttl, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		aStarted <- ctx
		select {
		case <-ctx.Done():
			return runtime.Outcome{}, ctx.Err()
		case <-release:
			return runtime.Completed(map[string]any{"text": "a"}), nil
		}
	})
	type bCall struct {
		key     string
		aCtxErr error
	}
	var aCtx context.Context
	bCalls := make(chan bCall, 4)
	b := expiryRuntime(t, bStore, "runner-b", ttl, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		bCalls <- bCall{key: req.IdempotencyKey, aCtxErr: aCtx.Err()}
		return runtime.Completed(map[string]any{"text": "b"}), nil
	})

	ctx := t.Context()
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "expiry-call"})
	if err != nil {
		t.Fatal(err)
	}
	aDone := make(chan error, 1)
	go func() {
		_, err := a.Tick(context.Background(), id, runtime.TickOptions{})
		aDone <- err
	}()
	defer func() {
		// Unblock A: close its handler's wait and its connections.
		close(release)
		proxy.close()
		select {
		case <-aDone:
		case <-time.After(30 * time.Second):
			t.Error("runner A's tick did not return")
		}
	}()
	select {
	case aCtx = <-aStarted:
	case err := <-aDone:
		t.Fatalf("runner A's tick returned before its effect started: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("runner A's effect did not start")
	}
	// A is cut off from the database (its handler needs nothing from it).
	proxy.silence()
	silencedAt := time.Now()
	time.Sleep(ttl + 500*time.Millisecond)

	// B takes the run over once A's claim expired, as a scheduler's
	// Recover does for a run left running.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := b.Tick(ctx, id, runtime.TickOptions{})
		if err == nil {
			if st.Status != durable.RunCompleted {
				t.Fatalf("runner B's tick left the run %s", st.Status)
			}
			break
		}
		if !errors.Is(err, runtime.ErrRunClaimed) || time.Now().After(deadline) {
			t.Fatalf("runner B's tick: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var got bCall
	select {
	case got = <-bCalls:
	default:
		t.Fatal("runner B completed the run without calling the handler")
	}
	if got.aCtxErr == nil {
		t.Errorf("runner B called the handler (key %s) %v after runner A was cut off (TTL %v), while runner A's call "+
			"of the same attempt was still in flight with its context live: A never stopped although it had not "+
			"renewed its claim for more than a TTL, so the effect ran twice at once across runners",
			got.key, time.Since(silencedAt).Round(100*time.Millisecond), ttl)
	}
}

// TestRenewalKeepsTheCallersDeadline: a claim renewal on a connection that
// went silent returns soon after its caller's deadline (plus the wait for
// the server's answer to the cancel request), not after the store's write
// timeout as other writes do: a runner that gives its claim up by its own
// clock must not be held up by a renewal nobody can use any more.
func TestRenewalKeepsTheCallersDeadline(t *testing.T) {
	testURL(t)
	const writeTimeout = 40 * time.Second
	st, proxy := proxiedStore(t, testSchema(t), postgres.Config{MaxConns: 2, WriteTimeout: writeTimeout})
	ctx := t.Context()
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "r1", Owner: "a", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	proxy.silence()
	defer proxy.close()
	rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := st.RunClaim(rctx, &store.RunClaimParams{RunID: "r1", Owner: "a", TTL: time.Minute, Renew: true})
	took := time.Since(start)
	if err == nil || took >= writeTimeout/2 {
		t.Fatalf("renewal on a silent connection returned %v after %v; want an error well before the write timeout (%v)", err, took, writeTimeout)
	}
}
