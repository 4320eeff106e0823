package runtime

// The retry policy's attempts are a budget per effect, kept across a
// pause between attempts and a shutdown: the attempts a replayed
// checkpoint made before are counted, and numbering goes on from them.

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// attemptNumbers lists the attempt numbers of the effect's ends of the
// given status in ledger order.
func attemptNumbers(t *testing.T, rt *Runtime, id string, status durable.StepStatus) []int {
	t.Helper()
	recs, err := rt.GetLedger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var n []int
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == "llm" && r.Status == status {
			n = append(n, r.Attempt)
		}
	}
	return n
}

// A pause during the backoff after attempt 1 of 3 stops the retries; the
// resumed run makes attempts 2 and 3, not three more: an effect that
// always fails is called 3 times in all and fails the run with the
// policy's count.
func TestRetryBudgetHoldsAcrossPauseBetweenAttempts(t *testing.T) {
	ctx := context.Background()
	var nodeCalls, effectCalls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		effectCalls.Add(1)
		return Failed("provider unavailable"), nil
	}
	rt, id := pausedInFirstBackoff(t, handler, &nodeCalls)
	if n := effectCalls.Load(); n != 1 {
		t.Fatalf("effect called %d times before the pause took; want 1", n)
	}
	st, err := rt.ResumeRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunFailed || effectCalls.Load() != 3 {
		t.Fatalf("after the resume: status %s, effect called %d times; want failed after 3 calls in all", st.Status, effectCalls.Load())
	}
	if !strings.Contains(st.Error, "Effect failed after 3 attempts: provider unavailable") {
		t.Errorf("run error %q; want the policy's count and the last error", st.Error)
	}
	if got := attemptNumbers(t, rt, id, durable.StepFailed); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("failed attempts in the ledger: %v; want [1 2 3]", got)
	}
}

// A shutdown during attempt 2 spends no attempt: the next tick closes it
// as interrupted and makes attempt 2 again (an effect deriving something
// from the number, a child's run id, finds it again), then 3, so the
// effect gets its full budget of failures (3) in 4 calls.
func TestRetryBudgetSpendsNothingOnInterruptedAttempt(t *testing.T) {
	ctx := context.Background()
	var nodeCalls, effectCalls atomic.Int32
	entered := make(chan struct{}, 1)
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		if effectCalls.Add(1) == 2 {
			entered <- struct{}{}
			<-hctx.Done() // a shutdown while the call runs
			return Failed("llm call: " + hctx.Err().Error()), nil
		}
		return Failed("provider unavailable"), nil
	}
	rt := errRuntime(t, memory.New(), Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}},
		Policy:   RetryPolicy{DefaultAttempts: 3, Base: -1},
		Clock:    steppingMilliClock(),
	}, selfResumingAgent(&nodeCalls))
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	interruptTick(t, rt, id, entered)
	st, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunFailed || effectCalls.Load() != 4 {
		t.Fatalf("after the shutdown: status %s, effect called %d times; want failed after 4 calls (3 failures, 1 interrupted)", st.Status, effectCalls.Load())
	}
	if got := attemptNumbers(t, rt, id, durable.StepStarted); !slices.Equal(got, []int{1, 2, 2, 3}) {
		t.Errorf("started attempts in the ledger: %v; want [1 2 2 3]", got)
	}
	if got := attemptNumbers(t, rt, id, durable.StepFailed); !slices.Equal(got, []int{1, 2, 2, 3}) {
		t.Errorf("failed attempt ends in the ledger: %v; want [1 2 2 3] (the first 2 interrupted)", got)
	}
}
