package crashtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// Crash flows of the shapes that need more than a fixed clock: an effect
// retried with backoff, waits released by the passing of time, and a sync
// child waiting for a person. They run through runCrashFlow like the
// others: every persistence point, every phase, every store.

// cfClock is the world's clock: the runtimes and schedulers of every life
// read it, and only the host (to release a wait) and a retry's backoff
// move it, forward, so it outlives a kill as the real time would.
type cfClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the current time.
func (c *cfClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// advanceTo moves the clock to t unless it is already past it: a host
// that redoes its operations in a later life must not move it twice.
func (c *cfClock) advanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// sleep is runtime.Config.Sleep: the backoff passes at once, on the clock.
func (c *cfClock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

// ---------------------------------------------------------------------
// An external effect retried with backoff.
// ---------------------------------------------------------------------

// cfRetryPolicy gives the flaky effect the two attempts it needs.
var cfRetryPolicy = runtime.RetryPolicy{DefaultAttempts: 1,
	Attempts: map[durable.EffectType]int{"flaky": 2}, Base: 3 * time.Second, Max: time.Minute}

// flakyHandler is an outside service that fails the first call it sees
// for an idempotency key and serves every later one (it keeps that in the
// world: a restart does not make it fail again). Every call is logged
// under the key (cfCheckKill: no call once the completion is durable) and
// must be a new attempt whose STARTED record is durable: an attempt is
// its ledger step (an interrupted attempt made again after a restart keeps
// its number, under a new step).
func flakyHandler(w *cfWorld) map[durable.EffectType]runtime.Handler {
	return map[durable.EffectType]runtime.Handler{"flaky": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if !cfAttemptStarted(ctx, req) {
			w.problem("flaky attempt %d (step %s) ran without a durable STARTED record", req.Attempt, req.StepID)
		}
		// The world's effect log keeps the calls per key and per attempt.
		w.log.add(req.IdempotencyKey)
		w.log.add("flaky step " + req.StepID)
		if n := w.log.count("flaky step " + req.StepID); n > 1 {
			w.problem("flaky attempt %d (step %s) ran %d times", req.Attempt, req.StepID, n)
		}
		if w.log.count(req.IdempotencyKey) == 1 {
			return runtime.Failed("service unavailable"), nil
		}
		return runtime.Completed(map[string]any{"id": fmt.Sprintf("flaky-%v", req.Effect.Payload["amount"])}), nil
	}}}
}

// cfAttemptStarted reports whether the ledger holds the STARTED record of
// the attempt the handler is asked to make.
func cfAttemptStarted(ctx context.Context, req *runtime.EffectRequest) bool {
	recs, err := req.Runtime.Store().LedgerList(ctx, &store.LedgerListParams{RunID: req.Run.RunID})
	if err != nil {
		return false
	}
	for _, r := range recs {
		if r.StepID == req.StepID && r.Status == durable.StepStarted &&
			r.Attempt == req.Attempt && r.IdempotencyKey == req.IdempotencyKey {
			return true
		}
	}
	return false
}

// flowRetry: a charge, the flaky effect (fails, backs off, succeeds on
// attempt 2), a charge after it.
var flowRetry = &crashFlow{name: "retry", exact: true, policy: cfRetryPolicy, handlers: flakyHandler,
	workflows: func() []*runtime.Workflow {
		return []*runtime.Workflow{{ID: "rt_flaky", Entry: "pay", Nodes: map[string]runtime.NodeFunc{
			"pay": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(41, "r1", "call") }),
			"call": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: "flaky", Payload: map[string]any{"amount": int64(42)}, ResultKey: "f"}, "pay2")
			}),
			"pay2": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(43, "r2", "done") }),
			"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Complete(map[string]any{"r1": cfReceipt(run, "r1"), "f": cfReceipt(run, "f"), "r2": cfReceipt(run, "r2")})
			}),
		}}}
	},
	host: func(ctx context.Context, e *cfEnv) error {
		if err := cfStart(ctx, e, "rt_flaky", "cf-flaky", ""); err != nil {
			return err
		}
		return cfDrive(ctx, e, false, "cf-flaky")
	},
	check: func(t *testing.T, ctx context.Context, st store.Store, final map[string]cfRun) {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "cf-flaky"})
		if err != nil {
			t.Fatal(err)
		}
		var attempts []*durable.StepRecord // the flaky effect's, in ledger order
		for _, r := range recs {
			if r.Effect != nil && r.Effect.Type == "flaky" {
				attempts = append(attempts, r)
			}
		}
		started := 0
		for i, r := range attempts {
			if r.Status == durable.StepStarted {
				started++
			}
			// A retry waits its backoff (on the clock the records are
			// stamped with), within a life or across a restart; an
			// attempt a kill interrupted is made again under its number
			// once the replay has ended it "interrupted".
			if i > 0 && r.Status == durable.StepStarted && r.Attempt > 1 {
				prev := attempts[i-1]
				want := cfRetryPolicy.Backoff(prev.Effect, prev.Attempt)
				if prev.Status == durable.StepFailed && prev.Attempt == r.Attempt && strings.HasPrefix(prev.Error, "interrupted:") {
					continue
				}
				if prev.Status != durable.StepFailed || prev.Attempt != r.Attempt-1 {
					t.Errorf("flaky attempt %d follows a %s record of attempt %d, want attempt %d failed",
						r.Attempt, prev.Status, prev.Attempt, r.Attempt-1)
				} else if gap := r.StartedAt.Sub(prev.EndedAt.Time); gap < want {
					t.Errorf("flaky attempt %d started %v after attempt %d failed, want the backoff %v", r.Attempt, gap, prev.Attempt, want)
				}
			}
		}
		// The service fails its first call in every life combination, so
		// the effect is always attempted at least twice.
		if started < 2 {
			t.Errorf("the flaky effect was attempted %d times, want a retry", started)
		}
	},
}

// ---------------------------------------------------------------------
// Waits released by the clock.
// ---------------------------------------------------------------------

// cfNapUntil is the WAIT_UNTIL deadline; cfListenTimeout the WAIT_EVENT's
// timeout (an event never sent).
var cfNapUntil = cfT0.Add(time.Hour)

const cfListenTimeout = 10 * time.Minute

// flowClock: a charge, a WAIT_UNTIL, a charge, a WAIT_EVENT that times
// out, a charge. The host moves the clock to each deadline and the
// scheduler's poll (the store's deadline index) releases the wait.
var flowClock = &crashFlow{name: "clock", exact: true,
	workflows: func() []*runtime.Workflow {
		return []*runtime.Workflow{{ID: "ck_timer", Entry: "pay1", Nodes: map[string]runtime.NodeFunc{
			"pay1": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(51, "r1", "nap") }),
			"nap": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
					Payload: map[string]any{"until": durable.FormatTime(cfNapUntil)}}, "pay2")
			}),
			"pay2": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(52, "r2", "listen") }),
			"listen": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{
					"name": "never_sent", "timeout_s": cfListenTimeout.Seconds()}, ResultKey: "evt"}, "pay3")
			}),
			"pay3": cfNode(func(run *durable.RunState) runtime.StepPlan { return cfCharge(53, "r3", "done") }),
			"done": cfNode(func(run *durable.RunState) runtime.StepPlan {
				evt, _ := run.Vars["evt"].(map[string]any)
				return runtime.Complete(map[string]any{"r1": cfReceipt(run, "r1"), "r2": cfReceipt(run, "r2"),
					"r3": cfReceipt(run, "r3"), "timed_out": evt["timed_out"]})
			}),
		}}}
	},
	host: func(ctx context.Context, e *cfEnv) error {
		const id = "cf-timer"
		if err := cfStart(ctx, e, "ck_timer", id, ""); err != nil {
			return err
		}
		for range 10 {
			if err := e.sch.Recover(ctx); err != nil {
				return err
			}
			st, err := e.rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				return err
			}
			if st.Status.Terminal() {
				return nil
			}
			if st.Status != durable.RunWaiting || st.Waiting.Until.IsZero() {
				continue
			}
			// Time passes to the deadline; the scheduler must find the run
			// due and release it (a tick alone would too: not used here).
			e.clock.advanceTo(st.Waiting.Until.Time)
			n, err := e.sch.PollOnce(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("the scheduler released nothing at the deadline %s", durable.FormatTime(st.Waiting.Until.Time))
			}
		}
		return errors.New("the flow did not end")
	},
	check: func(t *testing.T, ctx context.Context, st store.Store, final map[string]cfRun) {
		recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "cf-timer"})
		if err != nil {
			t.Fatal(err)
		}
		// No wait released early: the charge after each starts at its
		// deadline or later (the event's is at least cfListenTimeout past
		// the nap's, as the wait began after the nap ended).
		notBefore := map[string]time.Time{"pay2": cfNapUntil, "pay3": cfNapUntil.Add(cfListenTimeout)}
		for _, r := range recs {
			if at, ok := notBefore[r.NodeID]; ok && r.Status == durable.StepStarted && r.StartedAt.Before(at) {
				t.Errorf("node %s started at %s, before its wait's deadline %s",
					r.NodeID, durable.FormatTime(r.StartedAt.Time), durable.FormatTime(at))
			}
		}
	},
}

// TestCrashFlowShapes runs the flows above, and the sync child waiting for
// a person (answered in the life after the kill when the kill comes
// before the answer), through every kill.
func TestCrashFlowShapes(t *testing.T) {
	t.Parallel()
	for _, f := range []*crashFlow{flowRetry, flowClock, waitingChildFlow("sync_child_ask", false)} {
		t.Run(f.name, func(t *testing.T) { runCrashFlow(t, f) })
	}
}
