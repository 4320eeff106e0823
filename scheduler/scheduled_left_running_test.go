package scheduler_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// longAfterAsk asks a person (when ask is set), then counts to 10, one
// node step at a time: more steps than the runtime's budget of 3.
func longAfterAsk(id string, ask bool) *runtime.Workflow {
	entry := "count"
	if ask {
		entry = "ask"
	}
	return &runtime.Workflow{ID: id, Entry: entry, Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "go?"}, ResultKey: "answer"}, "count"), nil
		},
		"count": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := runtime.AsInt(run.Vars["n"]) // json.Number once read back
			if n >= 10 {
				return runtime.Complete(map[string]any{"n": n}), nil
			}
			run.Vars["n"] = n + 1
			return runtime.Next("count"), nil
		},
	}}
}

// newLeftRunningScheduled is a Scheduled over a runtime whose step budget
// is 3 and a loop that polls once an hour: only a run handed to it is
// driven in the test's time.
func newLeftRunningScheduled(t *testing.T, wfs ...*runtime.Workflow) *scheduler.Scheduled {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := scheduler.NewScheduled(context.Background(), rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sch.Close() })
	return sch
}

// waitCompleted waits for the scheduler to drive runID to its end.
func waitCompleted(t *testing.T, sch *scheduler.Scheduled, runID, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := sch.GetState(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status == durable.RunCompleted {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s %s (at %s) 5s after %s; want the scheduler to drive it to its end", runID, st.Status, st.CurrentNode, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Respond resumes the run within the runtime's step budget, which Resume
// caps over the whole call: a run with more to do after the answer is
// left running at its checkpoint, no longer waiting nor due. The
// scheduler drives it on; it was left for the next Recover (a restart,
// without claims).
func TestRespondLeavingTheRunRunningHandsItToTheScheduler(t *testing.T) {
	ctx := context.Background()
	sch := newLeftRunningScheduled(t, longAfterAsk("long", true))
	id, st, err := sch.Run(ctx, longAfterAsk("long", true), nil)
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("run %v, %v; want waiting for its answer", st, err)
	}
	st, err = sch.Respond(ctx, id, map[string]any{"ok": true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunRunning {
		t.Fatalf("run %s after Respond; want running, its step budget used", st.Status)
	}
	waitCompleted(t, sch, id, "Respond")
}

// Run ticks the run once, within the runtime's step budget: a run with
// more to do is left running, and the scheduler drives it on.
func TestRunLeavingTheRunRunningHandsItToTheScheduler(t *testing.T) {
	ctx := context.Background()
	sch := newLeftRunningScheduled(t)
	id, st, err := sch.Run(ctx, longAfterAsk("long", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunRunning {
		t.Fatalf("run %s after Run; want running, its step budget used", st.Status)
	}
	waitCompleted(t, sch, id, "Run")
}

// outageAfterCreate fails the next two run reads after a run is created:
// a store briefly unavailable right after Start committed the run.
type outageAfterCreate struct {
	store.Wrapper
	gets atomic.Int32
}

func (o *outageAfterCreate) RunCommit(ctx context.Context, p *store.CommitParams) error {
	create := p.Create
	err := o.Store.RunCommit(ctx, p)
	if err == nil && create {
		o.gets.Store(2)
	}
	return err
}

func (o *outageAfterCreate) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	if o.gets.Add(-1) >= 0 {
		return nil, errors.New("store unavailable")
	}
	return o.Store.RunGet(ctx, runID)
}

// Scheduled.Run starts a run, then an outage fails its tick and the read
// of the state that would tell whether it was left running. Not knowing,
// Run hands the run to the scheduler anyway (as the scheduler's own drive
// does): without claims nothing else would drive it, and it would stay
// running at its entry node once the store is back.
func TestScheduledRunHandsOnARunItsOutageLeftRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := fastPollingScheduled(t, &outageAfterCreate{Wrapper: store.Wrapper{Store: memory.New()}})
	id, _, err := sc.Run(ctx, twoStepChain("chain"), nil)
	if err == nil || id == "" {
		t.Fatalf("setup: Run = %q, %v; want the run started and its tick failed by the outage", id, err)
	}
	got, ok := completesWithin(sc.Runtime, id, 10*time.Second)
	if ok {
		return
	}
	t.Fatalf("run %s is still %s at %q 10 s after the outage ended; want it driven on to completed",
		id, got.Status, got.CurrentNode)
}
