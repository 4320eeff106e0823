package scheduler_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newManualClock() *manualClock {
	return &manualClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// eventOrTimeoutFlow waits on global event "go" with an optional timeout, then
// runs an external "count" effect, then completes.
func eventOrTimeoutFlow(id string, timeout float64, calls *atomic.Int64) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			p := map[string]any{"name": "go", "scope": "global"}
			if timeout > 0 {
				p["timeout_s"] = timeout
			}
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "ev", Payload: p}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "count", ResultKey: "c", Payload: map[string]any{}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ev": run.Vars["ev"]}), nil
		},
	}}
}

func countingHandler(calls *atomic.Int64) runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		return runtime.Completed(map[string]any{"n": calls.Load()}), nil
	}}
}

func raceRuntime(t *testing.T, st store.Store, clk *manualClock, owner string, calls *atomic.Int64, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.Config{Store: st, Registry: reg, Handlers: map[durable.EffectType]runtime.Handler{"count": countingHandler(calls)}}
	if clk != nil {
		cfg.Clock = clk.Now
	}
	if owner != "" {
		cfg.Claims = &runtime.Claims{Owner: owner, TTL: time.Hour}
	}
	rt, err := runtime.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// P2: event delivered (NoDrive) to a WAIT_EVENT with a timeout; clock
// passes the deadline; the scheduler drives it: the event, not a
// timeout, is in vars and the post-wait effect ran once.
func TestEventThenDeadlineNotTimedOut(t *testing.T) {
	ctx := context.Background()
	clk := newManualClock()
	var calls atomic.Int64
	st := memory.New()
	rt := raceRuntime(t, st, clk, "", &calls, eventOrTimeoutFlow("l", 60, &calls))
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "l"})
	if s, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || s.Status != durable.RunWaiting {
		t.Fatal(s, err)
	}
	got, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", Scope: "global", NoDrive: true})
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	clk.Add(2 * time.Minute)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt})
	s.DriveSoon(id)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	r, _ := rt.GetState(ctx, id)
	ev, _ := r.Vars["ev"].(map[string]any)
	if r.Status != durable.RunCompleted || ev["timed_out"] != nil || calls.Load() != 1 {
		t.Fatalf("status %s ev %v calls %d", r.Status, ev, calls.Load())
	}
}

// P1: due WAIT_EVENT deadline while paused; ResumeRun; Pass releases once.
func TestPausedDeadlineReleasedAfterResumeRun(t *testing.T) {
	ctx := context.Background()
	clk := newManualClock()
	var calls atomic.Int64
	st := memory.New()
	rt := raceRuntime(t, st, clk, "", &calls, eventOrTimeoutFlow("l", 60, &calls))
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "l"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt})
	if _, err := rt.Pause(ctx, id, "x"); err != nil {
		t.Fatal(err)
	}
	clk.Add(2 * time.Minute)
	s.Pass(ctx)
	if r, _ := rt.GetState(ctx, id); r.Status != durable.RunWaiting {
		t.Fatalf("paused run moved: %s", r.Status)
	}
	if _, err := rt.ResumeRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	s.Pass(ctx)
	r, _ := rt.GetState(ctx, id)
	ev, _ := r.Vars["ev"].(map[string]any)
	if r.Status != durable.RunCompleted || ev["timed_out"] != true || calls.Load() != 1 {
		t.Fatalf("status %s ev %v calls %d", r.Status, ev, calls.Load())
	}
}

type commitHookStore struct {
	store.Wrapper
	once sync.Once
	hook func()
}

func (h *commitHookStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && !p.Create && p.Run.Status == durable.RunRunning && h.hook != nil {
		h.once.Do(h.hook) // before A's first commit past the released wait
	}
	return h.Wrapper.RunCommit(ctx, p)
}

// Two runtimes without claims: A's scheduler releases a timed-out
// WAIT_EVENT while B delivers the event (B's commit lands first). The
// run must end with the event (not timed_out), its next effect run once,
// and A's lost commit is not reported as the run's failure.
func TestTimeoutAndEventRaceTwoRuntimes(t *testing.T) {
	ctx := context.Background()
	clk := newManualClock()
	var calls atomic.Int64
	inner := memory.New()
	hs := &commitHookStore{Wrapper: store.Wrapper{Store: inner}}
	a := raceRuntime(t, hs, clk, "", &calls, eventOrTimeoutFlow("l", 60, &calls))
	b := raceRuntime(t, inner, clk, "", &calls, eventOrTimeoutFlow("l", 60, &calls))
	id, _ := a.Start(ctx, runtime.StartParams{WorkflowID: "l"})
	a.Tick(ctx, id, runtime.TickOptions{})
	clk.Add(2 * time.Minute)
	hs.hook = func() {
		if got, err := b.EmitEvent(ctx, runtime.EmitParams{Name: "go", Scope: "global", NoDrive: true}); err != nil || len(got) != 1 {
			t.Errorf("B's EmitEvent = %v, %v", got, err)
		}
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: a})
	s.Pass(ctx)
	clk.Add(time.Hour)
	s.Pass(ctx)
	r, _ := a.GetState(ctx, id)
	ev, _ := r.Vars["ev"].(map[string]any)
	if r.Status != durable.RunCompleted || ev["timed_out"] != nil || calls.Load() != 1 {
		t.Fatalf("status %s ev %v calls %d", r.Status, ev, calls.Load())
	}
	// The release lost the race, as it may: that is no failure of the run.
	if st := s.Stats(); st.RunsFailed != 0 {
		t.Fatalf("scheduler stats %+v: a tick whose commit lost to the event's counts as a failed run", st)
	}
}
