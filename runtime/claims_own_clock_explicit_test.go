package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// cutOffClaimStore is a memory store whose claim renewals fail once cut
// is set: a runner cut off from the store.
type cutOffClaimStore struct {
	*memory.Store
	cut atomic.Bool
}

func (s *cutOffClaimStore) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if p.Renew && s.cut.Load() {
		return errors.New("connection lost (test)")
	}
	return s.Store.RunClaim(ctx, p)
}

// docs/architecture.md (Concurrency) and runtime.Claims.TTL: "A runner cut
// off from the store never hears that its claim expired, so it also gives
// the claim up by its own monotonic clock: when no renewal got through for
// 90 % of the TTL ... it cancels its tick". runtime.Config.Clock says only
// "Clock returns the current time; time.Now when nil", so a host passing
// the real clock explicitly (time.Now, or time.Now().UTC()) must keep that
// fence. Today claimAs starts the expiry timer only when Config.Clock is
// nil: with Clock set, the effect runs on past the TTL while another
// runner may already have taken the run and called it again, and the
// tick then commits as if it still held the run.
func TestClaimGivenUpByOwnClockWithExplicitRealClock(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	for name, clock := range map[string]func() time.Time{
		"time.Now": time.Now,
		"UTC":      func() time.Time { return time.Now().UTC() },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := &cutOffClaimStore{Store: memory.New()}
			var stoppedAfter atomic.Int64 // -1: never stopped
			h := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				st.cut.Store(true) // from here on no renewal gets through
				t0 := time.Now()
				select {
				case <-ctx.Done():
					stoppedAfter.Store(int64(time.Since(t0)))
					return runtime.Outcome{}, ctx.Err()
				case <-time.After(3 * ttl):
					stoppedAfter.Store(-1)
					return runtime.Completed(map[string]any{"text": "too late"}), nil
				}
			}
			reg, err := runtime.NewRegistry(&runtime.Workflow{ID: "slow", Entry: "call", Nodes: map[string]runtime.NodeFunc{
				"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall,
						Payload: map[string]any{"prompt": "p"}, ResultKey: "r"}, ""), nil
				}}})
			if err != nil {
				t.Fatal(err)
			}
			rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock,
				Claims:   &runtime.Claims{Owner: "a", TTL: ttl},
				Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: h}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = rt.Tick(ctx, id, runtime.TickOptions{})
			after := time.Duration(stoppedAfter.Load())
			if after < 0 || after >= ttl {
				t.Errorf("effect of a runner whose renewals failed: stopped after %v (-1ns: never); want within 90 %% of the TTL (%v)", after, ttl)
			}
			if !errors.Is(err, runtime.ErrRunClaimed) {
				t.Errorf("tick of a runner cut off from the store for longer than the TTL: %v, want ErrRunClaimed", err)
			}
			if got, gerr := st.Store.RunGet(ctx, id); gerr != nil || got.Status != durable.RunRunning {
				t.Errorf("stored run %v (%v): the tick committed past a claim it could not renew", got.Status, gerr)
			}
		})
	}
}
