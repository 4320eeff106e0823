package scheduler_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// slowGate is a workflow that waits a minute, then works: a run started
// with vars {"slow": true} blocks in its work until release is closed (a
// stand-in for a slow model call), signalling entered first.
type slowGate struct {
	entered chan struct{}
	release chan struct{}
}

func newSlowGate() *slowGate {
	return &slowGate{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *slowGate) workflow(delay time.Duration) *runtime.Workflow {
	return &runtime.Workflow{ID: "gate", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			until := durable.FormatTime(rc.Now().Add(delay))
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": until}}, "work"), nil
		},
		"work": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if run.Vars["slow"] == true {
				g.entered <- struct{}{}
				select {
				case <-g.release:
				case <-ctx.Done():
					return runtime.StepPlan{}, ctx.Err()
				}
			}
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// startGateRuns starts fast runs and one slow one, each a clock step
// apart; the slow one first when slowFirst, else last. With tick, each is
// ticked into its wait.
func startGateRuns(t *testing.T, rt *runtime.Runtime, c *runtimetest.Clock, fast int, tick, slowFirst bool) (slow string, fastIDs []string) {
	t.Helper()
	ctx := context.Background()
	slowAt := fast
	if slowFirst {
		slowAt = 0
	}
	for i := 0; i <= fast; i++ {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "gate", Vars: map[string]any{"slow": i == slowAt}})
		if err != nil {
			t.Fatal(err)
		}
		if tick {
			if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
				t.Fatalf("run %d: %v %v", i, st, err)
			}
		}
		if i == slowAt {
			slow = id
		} else {
			fastIDs = append(fastIDs, id)
		}
		c.Advance(time.Second)
	}
	return slow, fastIDs
}

func statuses(t *testing.T, rt *runtime.Runtime, ids []string) map[durable.RunStatus]int {
	t.Helper()
	out := map[durable.RunStatus]int{}
	for _, id := range ids {
		st, err := rt.GetState(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		out[st.Status]++
	}
	return out
}

// waitAllCompleted waits, at most a minute (a hang, not a measure), for
// every run of ids to complete.
func waitAllCompleted(t *testing.T, rt *runtime.Runtime, ids []string, why string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for statuses(t, rt, ids)[durable.RunCompleted] != len(ids) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: runs still not completed: %v", why, statuses(t, rt, ids))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With Concurrency, a due run whose tick blocks does not hold the other
// due runs up; by default they are ticked one at a time, in listed order.
func TestConcurrentPollDoesNotWaitForASlowRun(t *testing.T) {
	t.Parallel()
	for _, concurrency := range []int{0, 3} {
		t.Run(fmt.Sprintf("concurrency=%d", concurrency), func(t *testing.T) {
			t.Parallel()
			c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			g := newSlowGate()
			rt, _ := setup(t, c, g.workflow(time.Minute))
			slow, fast := startGateRuns(t, rt, c, 4, true, true) // due runs list oldest deadline first
			c.Advance(2 * time.Minute)
			s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, Concurrency: concurrency})

			type result struct {
				n   int
				err error
			}
			done := make(chan result, 1)
			go func() {
				n, err := s.PollOnce(context.Background())
				done <- result{n, err}
			}()
			<-g.entered
			if concurrency <= 1 {
				// One at a time: the slow run is listed first, and nothing
				// else has been ticked while it works.
				if got := statuses(t, rt, fast); got[durable.RunWaiting] != len(fast) {
					t.Errorf("sequential poll ticked others before the first listed run ended: %v", got)
				}
			} else {
				waitAllCompleted(t, rt, fast, "while the slow run works")
			}
			close(g.release)
			r := <-done
			if r.err != nil || r.n != 5 {
				t.Fatalf("PollOnce = %d, %v; want 5 runs ticked", r.n, r.err)
			}
			waitAllCompleted(t, rt, append(fast, slow), "after the poll")
			if got := s.Stats().RunsResumed; got != 5 {
				t.Fatalf("RunsResumed = %d, want 5", got)
			}
		})
	}
}

// A concurrent poll ticks no more runs than BatchSize.
func TestConcurrentPollKeepsToItsBatch(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	var ids []string
	for range 7 {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
		rt.Tick(ctx, id, runtime.TickOptions{})
		ids = append(ids, id)
	}
	c.Advance(2 * time.Minute)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 3, Concurrency: 8})
	for i, want := range []int{3, 3, 1, 0} {
		n, err := s.PollOnce(ctx)
		if err != nil || n != want {
			t.Fatalf("poll %d: %d, %v; want %d", i+1, n, err, want)
		}
		if got := statuses(t, rt, ids)[durable.RunCompleted]; got != min(7, 3*(i+1)) {
			t.Fatalf("after poll %d: %d runs completed", i+1, got)
		}
	}
}

// Recover, too, continues interrupted runs side by side.
func TestConcurrentRecoverDoesNotWaitForASlowRun(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g := newSlowGate()
	rt, _ := setup(t, c, g.workflow(-time.Minute)) // the waits are due at once
	// Recover lists the latest updated first: the slow run, started last,
	// is driven first.
	slow, fast := startGateRuns(t, rt, c, 4, false, false)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, Concurrency: 2})
	done := make(chan error, 1)
	go func() { done <- s.Recover(context.Background()) }()
	<-g.entered
	waitAllCompleted(t, rt, fast, "while the slow run works")
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitAllCompleted(t, rt, append(fast, slow), "after Recover")
}

// Runs that emit to each other while a concurrent poll ticks them: every
// run's deadline falls due at once, each emits the event the others wait
// on (with a timeout that is due too), so ticks deliver into runs other
// ticks hold. Every run must end, each wait resolved once.
func TestConcurrentPollOfRunsEmittingToEachOther(t *testing.T) {
	t.Parallel()
	clk := newManualClock()
	flow := &runtime.Workflow{ID: "mesh", Entry: "sleep", Nodes: map[string]runtime.NodeFunc{
		"sleep": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			until := durable.FormatTime(rc.Now().Add(time.Minute))
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": until}}, "emit"), nil
		},
		"emit": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, ResultKey: "emitted",
				Payload: map[string]any{"name": "ping", "scope": "global", "payload": map[string]any{"from": run.RunID}}}, "listen"), nil
		},
		"listen": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "ev",
				Payload: map[string]any{"name": "ping", "scope": "global", "timeout_s": 30.0}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ev": run.Vars["ev"]}), nil
		},
	}}
	var calls atomic.Int64
	rt := raceRuntime(t, memory.New(), clk, "", &calls, flow)
	ctx := context.Background()
	const runs = 24
	var ids []string
	for range runs {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "mesh"})
		if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
			t.Fatal(st, err)
		}
		ids = append(ids, id)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Concurrency: 4})
	for round := range 3 {
		clk.Add(time.Minute) // the sleeps, then the event timeouts, fall due
		pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		if _, err := s.Pass(pctx); err != nil {
			cancel()
			t.Fatalf("round %d: %v (a deadlock would end here)", round, err)
		}
		cancel()
	}
	if got := statuses(t, rt, ids); got[durable.RunCompleted] != runs {
		t.Fatalf("statuses %v, want all %d completed", got, runs)
	}
	timedOut := 0
	for _, id := range ids {
		recs, err := rt.GetLedger(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		resumes := 0
		for _, r := range recs {
			if r.Effect != nil && r.Effect.Type == durable.EffectResume && r.Effect.Payload["wait_key"] != nil &&
				r.Status == durable.StepCompleted {
				resumes++
			}
		}
		st, _ := rt.GetState(ctx, id)
		ev, _ := st.Vars["ev"].(map[string]any)
		if ev == nil {
			t.Fatalf("run %s ended without its event or timeout: vars %v", id, st.Vars)
		}
		if ev["timed_out"] == true {
			timedOut++
		}
		if resumes > 2 { // at most: the sleep's release and the event's
			t.Fatalf("run %s resumed %d times", id, resumes)
		}
	}
	t.Logf("%d of %d runs got an event, %d timed out", runs-timedOut, runs, timedOut)
	if timedOut == runs {
		t.Fatal("no run got an event: the ticks never delivered into each other")
	}
}
