package runtime

// An effect's in-flight plan (vars._runtime.effect_in_flight) outlives a
// host's Pause and ResumeRun between the checkpoint and the next tick.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// steppingMilliClock returns a clock that moves one millisecond per reading,
// so that every commit has its own updated_at.
func steppingMilliClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// selfResumingAgent is the agent pattern: the node marks its phase, requests
// an effect resuming to itself, and on its second call uses the result.
func selfResumingAgent(nodeCalls *atomic.Int32) *Workflow {
	return &Workflow{ID: "w", Entry: "agent", Nodes: map[string]NodeFunc{
		"agent": errNode(func(run *durable.RunState) StepPlan {
			nodeCalls.Add(1)
			tmp := namespace(run.Vars, "_temp")
			if tmp["phase"] == "called" {
				res, _ := tmp["res"].(map[string]any)
				return Complete(map[string]any{"answer": res["answer"]})
			}
			tmp["phase"] = "called"
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"prompt": "q"}, ResultKey: "_temp.res"}, "agent")
		}),
	}}
}

// A tick interrupted (shutdown) while an external effect runs leaves the
// run at its in-flight checkpoint: the node's writes plus the plan in
// vars._runtime.effect_in_flight. The next tick must execute the plan
// again. If the host paused and resumed the run in between (Pause and
// ResumeRun both move updated_at), takeEffectInFlight (vars.go) saw a
// checkpoint_at different from updated_at, dropped the plan as "saved by
// a runtime that does not know the key", and called the node on its own
// writes: the run completed without the effect ever completing. Our own
// writes now move checkpoint_at with updated_at (touchUpdated).
func TestExecutePauseResumeAfterInterruptedEffectKeepsThePlan(t *testing.T) {
	ctx := context.Background()
	var nodeCalls, effectCalls atomic.Int32
	entered := make(chan struct{}, 1)
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		if effectCalls.Add(1) == 1 {
			entered <- struct{}{}
			<-hctx.Done() // a shutdown while the call runs
			return Failed("llm call: " + hctx.Err().Error()), nil
		}
		return Completed(map[string]any{"answer": "42"}), nil
	}
	rt := errRuntime(t, memory.New(), Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}},
		Clock:    steppingMilliClock(),
	}, selfResumingAgent(&nodeCalls))
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	interruptTick(t, rt, id, entered)
	if _, err := rt.Pause(ctx, id, "operator"); err != nil {
		t.Fatal(err)
	}
	st, err := rt.ResumeRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || st.Output["answer"] != "42" || effectCalls.Load() != 2 {
		t.Fatalf("after pause/resume of the interrupted run: status %s, output %v, effect executed %d times, node called %d times; "+
			"want completed with answer 42, the interrupted effect executed again", st.Status, st.Output, effectCalls.Load(), nodeCalls.Load())
	}
}

// The same through the retry loop: attempt 1 fails, and a pause comes
// during the backoff. The retry loop stops at the checkpoint it has just
// committed (effect in flight); Pause then moved updated_at, so ResumeRun's
// tick dropped the plan and the node completed on its own writes, without
// the effect having completed.
func TestExecutePauseDuringRetryBackoffKeepsThePlan(t *testing.T) {
	ctx := context.Background()
	var nodeCalls, effectCalls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		if effectCalls.Add(1) == 1 {
			return Failed("provider unavailable"), nil
		}
		return Completed(map[string]any{"answer": "42"}), nil
	}
	rt, id := pausedInFirstBackoff(t, handler, &nodeCalls)
	mid, _ := rt.GetState(ctx, id)
	if !IsPaused(mid) {
		t.Fatalf("run not paused: %s", mid.Status)
	}
	// No attempt starts after the pause, until the run is resumed (the
	// end state alone is reached by a tick that retried through it too).
	if n := effectCalls.Load(); n != 1 {
		t.Fatalf("the effect ran %d times before the paused run was resumed; want 1: no attempt starts after a pause", n)
	}
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == "llm" && r.Attempt > 1 {
			t.Fatalf("ledger holds attempt %d (%s) of the effect before the paused run was resumed", r.Attempt, r.Status)
		}
	}
	st, err := rt.ResumeRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || st.Output["answer"] != "42" || effectCalls.Load() != 2 {
		t.Fatalf("after a pause during the retry backoff: status %s, output %v, effect executed %d times, node called %d times; "+
			"want completed with answer 42 from the retried effect", st.Status, st.Output, effectCalls.Load(), nodeCalls.Load())
	}
}

// pausedInFirstBackoff starts the self-resuming agent under a 3-attempt
// retry policy with handler as its "llm" effect, ticks it, and has the
// host pause it during the first retry backoff; later backoffs do not
// wait. It returns the runtime and the paused run's id.
func pausedInFirstBackoff(t *testing.T, handler func(context.Context, *EffectRequest) (Outcome, error), nodeCalls *atomic.Int32) (*Runtime, string) {
	t.Helper()
	ctx := context.Background()
	var rt *Runtime
	var id string
	paused := make(chan error, 1)
	var once sync.Once
	var sleeps atomic.Int32
	sleep := func(context.Context, time.Duration) error {
		if sleeps.Add(1) > 1 {
			return nil // what is left of the backoff after a resume, and the next ones
		}
		hostStopsOnce(&once, rt, id, paused, func() error {
			_, err := rt.Pause(context.Background(), id, "operator")
			return err
		})
		return nil
	}
	rt = errRuntime(t, memory.New(), Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}},
		Policy:   RetryPolicy{DefaultAttempts: 3},
		Sleep:    sleep,
		Clock:    steppingMilliClock(),
	}, selfResumingAgent(nodeCalls))
	var err error
	if id, err = rt.Start(ctx, StartParams{WorkflowID: "w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-paused; err != nil {
		t.Fatal(err)
	}
	return rt, id
}
