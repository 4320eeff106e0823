package runtime

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A runner that does not serve a run's workflow (runners sharing a store
// may each serve some workflows) lifts a host pause of that run: the lift
// is committed, and the run is left running for a runtime that serves the
// workflow (its scheduler's Recover drives it), as EmitEvent and a child's
// end leave such a run. It must not keep a follow-up for the run, which no
// retry of its can ever drive: the entry would stay, failing every five
// minutes, for as long as the run lives (waiting for days included).
func TestResumeRunOfUnservedWorkflowKeepsNoFollowUp(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	var mu sync.Mutex
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	served, _ := NewRegistry(perRunWorkflows()...)
	b, err := New(Config{Store: st, Registry: served, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Store: st, Registry: &Registry{}, Clock: clock}) // serves none of them
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.Start(ctx, StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := b.Pause(ctx, id, "hold"); err != nil || !IsPaused(p) {
		t.Fatalf("pause: %v", err)
	}
	// The lift is committed without a tick, and the run returned as left.
	run, err := a.ResumeRun(ctx, id)
	if err != nil {
		t.Fatalf("resume-run by the runner without the workflow: %v", err)
	}
	if IsPaused(run) || run.Status != durable.RunRunning {
		t.Fatalf("resume-run returned the run %s (paused %v), want it running, unpaused", run.Status, IsPaused(run))
	}
	// The runner serving the workflow drives it (its Recover): it waits
	// for a person now, for as long as that takes.
	if w, err := b.Tick(ctx, id, TickOptions{}); err != nil || w.Status != durable.RunWaiting {
		t.Fatalf("serving runner's tick: %v", err)
	}
	for i := 0; i < 5; i++ {
		advance(10 * time.Minute)
		a.RetryFollowUps(ctx)
	}
	if n := a.PendingFollowUps(); n != 0 {
		t.Errorf("the runner without the workflow keeps %d follow-up(s) for run %s, waiting on a person, "+
			"retried and failing every 5 minutes for as long as the run lives", n, id)
	}
}
