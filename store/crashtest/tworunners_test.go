package crashtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestTwoRunners races two runners (runtime + scheduler each, claiming
// runs) over runs neither has started driving: async children, parents
// resumed by them, effects that take a moment. Every effect runs exactly
// once and every run completes: a follow-up a runner drives (the child it
// started, the parent it resumes) is claimed like any run it ticks. On
// PostgreSQL each runner has its own connection pool, as two processes
// would.
func TestTwoRunners(t *testing.T) {
	t.Parallel()
	forRunnerStores(t, twoRunners)
}

// forRunnerStores runs test on each store two runners can share, with
// open returning one runner's store: one memory store for both; a shared
// SQLite store each on one file, as two processes would have; on
// PostgreSQL a pool each on one schema, as two machines would have.
func forRunnerStores(t *testing.T, test func(t *testing.T, open func(*testing.T) store.Store)) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		st := memory.New()
		test(t, func(*testing.T) store.Store { return st })
	})
	t.Run("sqlite_shared", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "runtime.sqlite3")
		test(t, func(t *testing.T) store.Store {
			return closedAtEnd(t)(sqlite.New(context.Background(), sqlite.Config{Path: path, Shared: true}))
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := os.Getenv("TEST_POSTGRES_URL")
		if url == "" {
			t.Skip("set TEST_POSTGRES_URL=postgres://… to run the PostgreSQL two-runner tests; CI starts a server with .ci/postgres.sh")
		}
		schema := fmt.Sprintf("tworunners_%d_%d", os.Getpid(), time.Now().UnixNano())
		t.Cleanup(func() {
			if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
				t.Error(err)
			}
		})
		test(t, func(t *testing.T) store.Store {
			return closedAtEnd(t)(postgres.New(context.Background(), postgres.Config{URL: url, Schema: schema}))
		})
	})
}

// closedAtEnd takes a store constructor's results: it fails the test on
// the error, and closes the store when the test ends.
func closedAtEnd(t *testing.T) func(st store.Store, err error) store.Store {
	return func(st store.Store, err error) store.Store {
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
}

func twoRunners(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	log := &effectLog{calls: map[string]int{}}
	var rts []*runtime.Runtime
	var schs []*scheduler.Scheduler
	var st store.Store
	for i := range 2 {
		st = open(t)
		rt, err := buildRuntime(st, func(key string) {
			log.add(key)
			time.Sleep(2 * time.Millisecond) // a real call takes a moment: the other runner gets its chance
		}, &runtime.Claims{Owner: fmt.Sprint("runner-", i), TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		sch, err := scheduler.New(scheduler.Config{Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		rts, schs = append(rts, rt), append(schs, sch)
	}
	const runs = 30
	for i := range runs {
		// Created, never ticked: both runners race to recover them.
		if _, err := rts[0].Start(ctx, runtime.StartParams{WorkflowID: "crash_fanout", RunID: fmt.Sprint("run-", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, sch := range schs {
		wg.Go(func() {
			for range 20 {
				if err := sch.Recover(ctx); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range runs {
		id := fmt.Sprint("run-", i)
		r, err := st.RunGet(ctx, id)
		if err != nil || r.Status != durable.RunCompleted {
			t.Errorf("run %s: %v %v", id, r, err)
			continue
		}
		for _, rid := range runIDs(ctx, t, st, id) {
			checkOneCharge(ctx, t, st, rid)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.calls) != 2*runs {
		t.Errorf("%d distinct charges, want %d", len(log.calls), 2*runs)
	}
	for key, n := range log.calls {
		if n != 1 {
			t.Errorf("charge %s executed %d times by two runners", key, n)
		}
	}
	for i, sch := range schs {
		if errs := sch.Stats().Errors; len(errs) > 0 {
			t.Errorf("runner %d: %v", i, errs)
		}
	}
}

// TestCancelAcrossRunners cancels, through one runner, a parent whose
// child the other runner is executing (an effect in flight that only
// its context ends). The cancel takes the child from that runner: it
// returns at once with both runs cancelled, the child's attempt ends as
// cancelled in its ledger, and the holder's effect is interrupted when
// its next renewal finds the claim gone.
func TestCancelAcrossRunners(t *testing.T) {
	t.Parallel()
	forRunnerStores(t, cancelAcrossRunners)
}

func cancelAcrossRunners(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	entered := make(chan struct{})
	var calls atomic.Int32
	var cause atomic.Value
	hold := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if calls.Add(1) == 1 {
			close(entered)
		}
		select {
		case <-ctx.Done():
			cause.Store(context.Cause(ctx))
			return runtime.Outcome{}, ctx.Err()
		case <-time.After(20 * time.Second):
			return runtime.Completed(map[string]any{"text": "too late"}), nil
		}
	}
	var rts []*runtime.Runtime
	var sts []store.Store
	for _, owner := range []string{"holder", "canceller"} {
		st := open(t)
		reg, err := runtime.NewRegistry(
			&runtime.Workflow{ID: "hold_parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
				"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
						Payload: map[string]any{"workflow_id": "hold_child", "async": true, "wait": true}, ResultKey: "child"}, "done"), nil
				},
				"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					return runtime.Complete(map[string]any{"child": run.Vars["child"]}), nil
				},
			}},
			&runtime.Workflow{ID: "hold_child", Entry: "call", Nodes: map[string]runtime.NodeFunc{
				"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					return runtime.Request(&durable.Effect{Type: "hold", ResultKey: "r"}, "done"), nil
				},
				"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
				},
			}})
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
			Claims:   &runtime.Claims{Owner: owner, TTL: time.Minute, RenewEvery: 20 * time.Millisecond},
			Handlers: map[durable.EffectType]runtime.Handler{"hold": {Func: hold}}})
		if err != nil {
			t.Fatal(err)
		}
		rts = append(rts, rt)
		sts = append(sts, st)
	}
	holder, canceller := rts[0], rts[1]
	parent, err := holder.Start(ctx, runtime.StartParams{WorkflowID: "hold_parent"})
	if err != nil {
		t.Fatal(err)
	}
	tickDone := make(chan struct{})
	go func() {
		defer close(tickDone)
		_, _ = holder.Tick(ctx, parent, runtime.TickOptions{}) // drives the child too, until the cancel
	}()
	<-entered
	got, err := canceller.Cancel(ctx, parent, "stop")
	if err != nil || got.Status != durable.RunCancelled {
		t.Fatalf("cancel through the other runner = %v, %v; want the parent cancelled", got, err)
	}
	<-tickDone
	kids, err := sts[1].RunListChildren(ctx, parent, "")
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of the parent: %v, %v", kids, err)
	}
	child := kids[0]
	if child.Status != durable.RunCancelled || child.Vars["r"] != nil {
		t.Errorf("child %s, r=%v; want cancelled without a result", child.Status, child.Vars["r"])
	}
	if c, _ := cause.Load().(error); !errors.Is(c, runtime.ErrRunClaimed) || calls.Load() != 1 {
		t.Errorf("the held effect ended with %v after %d calls; want the lost claim, one call", c, calls.Load())
	}
	recs, err := canceller.GetLedger(ctx, child.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var started, ended []string
	for _, r := range recs {
		switch {
		case r.Status == durable.StepStarted:
			started = append(started, r.StepID)
		case r.Effect != nil && r.Effect.Type == "hold":
			ended = append(ended, string(r.Status)+":"+r.StepID)
		}
	}
	if len(started) != 1 || len(ended) != 1 || ended[0] != "cancelled:"+started[0] {
		t.Errorf("child's attempts: started %v, ended %v; want one, ended cancelled", started, ended)
	}
}
