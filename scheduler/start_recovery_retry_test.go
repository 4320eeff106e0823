package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// flakyRunIndex fails the next `fails` RunIndex calls (the listing of
// running runs that Recover starts with), as a store briefly unavailable
// at process start would ("database is locked", a PostgreSQL failover).
type flakyRunIndex struct {
	store.Wrapper
	fails atomic.Int32
}

func (f *flakyRunIndex) RunIndex(ctx context.Context, p *store.RunIndexParams) ([]store.RunIndexRow, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, errors.New("database is locked")
	}
	return f.Store.RunIndex(ctx, p)
}

// oneStepFlow completes at its first node: a run started and not ticked is
// what a crash between Start and the first tick leaves ("running").
func oneStepFlow(block func(ctx context.Context) error) *runtime.Workflow {
	return &runtime.Workflow{ID: "one", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if block != nil {
				if err := block(ctx); err != nil {
					return runtime.StepPlan{}, err
				}
			}
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// completesWithin polls run id of rt for up to d until it is completed,
// and returns its last state read and whether it completed.
func completesWithin(rt *runtime.Runtime, id string, d time.Duration) (*durable.RunState, bool) {
	for end := time.Now().Add(d); ; time.Sleep(5 * time.Millisecond) {
		st, _ := rt.GetState(context.Background(), id)
		if st != nil && st.Status == durable.RunCompleted {
			return st, true
		}
		if time.Now().After(end) {
			if st == nil {
				st = &durable.RunState{}
			}
			return st, false
		}
	}
}

// TestStartRecoveryIsRetriedAfterItFails checks the promise that
// starting the scheduler continues what a crash left running:
// docs/compatibility.md ("scheduler Start / Stop": "Start first drives
// every run left running … a restart continues what a crash left"), the
// Start doc comment ("Start recovers runs left running by a crash, then
// launches the loop") and the Recover doc comment ("continues runs a crash
// interrupted"). The loop also promises that a store failure is outlived:
// spec §5.2 "exceptions are recorded and the loop continues", and the
// scheduler tests of listing failures (TestFailingDueListingDoesNotSpin:
// the poll is retried after PollInterval).
//
// Without claims (RecoverInterval 0) Start's Recover is the only one the
// process ever runs. When it fails (a transient store error on its first
// listing) or is cut short (Start's ctx ends while it drives a run), the
// loop must try the recovery again after each poll interval until one
// succeeds. The bug this guards against: the runs left running were never
// driven again until the process restarted.
func TestStartRecoveryIsRetriedAfterItFails(t *testing.T) {
	t.Run("store error on the first listing", func(t *testing.T) {
		fl := &flakyRunIndex{Wrapper: store.Wrapper{Store: memory.New()}}
		reg, _ := runtime.NewRegistry(oneStepFlow(nil))
		rt, err := runtime.New(runtime.Config{Store: fl, Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}) // left running by a crash
		fl.fails.Store(1)                                              // the store is back after one failed call
		sch, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer sch.Close()
		if st, ok := completesWithin(rt, id, 10*time.Second); !ok {
			t.Fatalf("run left running by a crash is still %s 10 s after the store recovered (%d polls since): "+
				"Start's failed Recover is never tried again while the loop runs", st.Status, sch.Scheduler.Stats().PollCycles)
		}
	})
	t.Run("Start's ctx ends during the recovery", func(t *testing.T) {
		started := make(chan struct{})
		var first atomic.Bool
		reg, _ := runtime.NewRegistry(oneStepFlow(func(ctx context.Context) error {
			if first.CompareAndSwap(false, true) {
				close(started)
				<-ctx.Done() // a slow first step (an LLM call) that honours cancellation
				return ctx.Err()
			}
			return nil
		}))
		rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}) // left running by a crash
		startCtx, cancel := context.WithCancel(ctx)                    // e.g. a start-up timeout
		go func() { <-started; cancel() }()
		sch, err := scheduler.NewScheduled(startCtx, rt, scheduler.Config{PollInterval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer sch.Close()
		if st, ok := completesWithin(rt, id, 10*time.Second); !ok {
			t.Fatalf("the loop runs (%d polls) but the run Start's recovery was interrupted on stays %s",
				sch.Scheduler.Stats().PollCycles, st.Status)
		}
	})
}

// TestStartRecoveryErrorIsRecorded checks that a failure of the
// recovery Start runs is recorded in Stats.Errors, as every other failure
// of the scheduler is: spec §5.2 ("exceptions are recorded", stats.errors),
// and the loop's own Recover, which records "recover: <err>"
// (scheduler.go loop). Start only logs it to Config.Logger, which is
// discarded by default, so a host reading Stats sees no error while runs
// left by a crash stay running (see the test above).
func TestStartRecoveryErrorIsRecorded(t *testing.T) {
	fl := &flakyRunIndex{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(oneStepFlow(nil))
	rt, err := runtime.New(runtime.Config{Store: fl, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt.Start(ctx, runtime.StartParams{WorkflowID: "one"})
	fl.fails.Store(1)
	s, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for _, e := range s.Stats().Errors {
		if strings.Contains(e, "database is locked") {
			return
		}
	}
	t.Fatalf("Start's recovery failed on the store, yet Stats.Errors = %q", s.Stats().Errors)
}
