package crashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		st := memory.New()
		twoRunners(t, func(*testing.T) store.Store { return st })
	})
	t.Run("sqlite_shared", func(t *testing.T) {
		// Each runner its own store on one file, as two processes would.
		t.Parallel()
		path := filepath.Join(t.TempDir(), "runtime.sqlite3")
		twoRunners(t, func(t *testing.T) store.Store {
			st, err := sqlite.New(context.Background(), sqlite.Config{Path: path, Shared: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := os.Getenv("TEST_POSTGRES_URL")
		if url == "" {
			t.Skip("set TEST_POSTGRES_URL=postgres://… to run the PostgreSQL two-runner test; CI starts a server with .ci/postgres.sh")
		}
		schema := fmt.Sprintf("tworunners_%d_%d", os.Getpid(), time.Now().UnixNano())
		t.Cleanup(func() {
			if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
				t.Error(err)
			}
		})
		twoRunners(t, func(t *testing.T) store.Store {
			st, err := postgres.New(context.Background(), postgres.Config{URL: url, Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		})
	})
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
