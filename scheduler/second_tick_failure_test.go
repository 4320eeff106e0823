package scheduler_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// sharedDeadlineThenEffect waits for event "a", then for event "b", both
// until the same absolute deadline, then calls the external effect "slow"
// and completes.
func sharedDeadlineThenEffect(deadline time.Time) *runtime.Workflow {
	wf := sharedDeadlineFlow(deadline)
	wf.ID = "shared_then_effect"
	wf.Nodes["b"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "b",
			Payload: map[string]any{"name": "b", "scope": "run", "until": durable.FormatTime(deadline)}}, "slow"), nil
	}
	wf.Nodes["slow"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Request(&durable.Effect{Type: "slow", ResultKey: "r"}, "done"), nil
	}
	return wf
}

// A due run released into a new wait with the same deadline is ticked a
// second time by drive (TestReleaseIntoANewWaitWithTheSameDeadlineIsReported).
// When that second tick fails after a checkpoint past the wait (here the
// commit after an external effect), the failure was taken for a run held
// elsewhere: not counted (RunsFailed, OnRunFailed) and the run, left
// running and no longer due, not driven again until a restart. It is
// handled as a first tick's failure: reported, and the run driven again
// after the back-off.
func TestSecondTickFailurePastTheWaitIsReportedAndDrivenAgain(t *testing.T) {
	t.Run("memory", func(t *testing.T) { secondTickFailureIsDrivenAgain(t, memory.New()) })
	t.Run("sqlite", func(t *testing.T) {
		db, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		secondTickFailureIsDrivenAgain(t, db)
	})
	t.Run("jsonfile", func(t *testing.T) {
		db, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		secondTickFailureIsDrivenAgain(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		url := os.Getenv("TEST_POSTGRES_URL")
		if url == "" {
			t.Skip("set TEST_POSTGRES_URL to run this PostgreSQL test")
		}
		schema := fmt.Sprintf("sched_second_tick_%d_%d", os.Getpid(), time.Now().UnixNano())
		t.Cleanup(func() {
			if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
				t.Error(err)
			}
		})
		db, err := postgres.New(context.Background(), postgres.Config{URL: url, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		secondTickFailureIsDrivenAgain(t, db)
	})
}

func secondTickFailureIsDrivenAgain(t *testing.T, inner store.Store) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	flaky := &commitFailures{Wrapper: store.Wrapper{Store: inner}}
	reg, _ := runtime.NewRegistry(sharedDeadlineThenEffect(t0.Add(time.Minute)))
	rt, err := runtime.New(runtime.Config{Store: flaky, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls++
		if calls == 1 {
			flaky.left.Store(1) // the commit of this effect's completion fails
		}
		return runtime.Completed(map[string]any{"n": calls}), nil
	}})
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "shared_then_effect"})
	if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", st, err)
	}
	var failed []string
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second,
		OnRunFailed: func(runID string, err error) { failed = append(failed, runID) }})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Minute)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("setup: effect called %d times; want 1 (the second tick reached it)", calls)
	}
	// Well past any back-off: the loop would have passed many times.
	for i := 0; i < 20; i++ {
		c.Advance(time.Minute)
		if _, err := s.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := rt.GetState(ctx, id)
	stats := s.Stats()
	if st.Status != durable.RunCompleted {
		t.Errorf("20 minutes after its second tick failed the run is still %s at %q: nothing drives it again (RunsFailed %d, OnRunFailed calls %d, errors %v)",
			st.Status, st.CurrentNode, stats.RunsFailed, len(failed), stats.Errors)
	}
	if stats.RunsFailed == 0 || len(failed) == 0 {
		t.Errorf("the failed tick was swallowed: RunsFailed = %d, OnRunFailed calls = %d; want it reported", stats.RunsFailed, len(failed))
	}
}
