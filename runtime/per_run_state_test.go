package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// perRunWorkflows are four workflows that each wait at their first node:
// for a person, an event, a far time, and an async child waited on.
func perRunWorkflows() []*Workflow {
	done := func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
		return Complete(map[string]any{"ok": true}), nil
	}
	waitAt := func(id string, typ durable.EffectType, payload map[string]any) *Workflow {
		return &Workflow{ID: id, Entry: "a", Nodes: map[string]NodeFunc{
			"a": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
				return Request(&durable.Effect{Type: typ, Payload: payload, ResultKey: "x"}, "done"), nil
			},
			"done": done,
		}}
	}
	return []*Workflow{
		waitAt("ask", durable.EffectAskUser, map[string]any{"prompt": "?"}),
		waitAt("ev", durable.EffectWaitEvent, map[string]any{"name": "go", "timeout_s": 3600}),
		waitAt("until", durable.EffectWaitUntil, map[string]any{"until": "2999-01-01T00:00:00+00:00"}),
		waitAt("parent", durable.EffectStartSubworkflow, map[string]any{"workflow_id": "ask", "async": true, "wait": true}),
	}
}

// perRunRuntime is a runtime over the spec stack (offload over observe over
// hash chain over memory) serving perRunWorkflows, claiming runs if claims.
func perRunRuntime(t *testing.T, claims bool) *Runtime {
	t.Helper()
	arts := artifact.NewMemory()
	var st store.Store = offload.Wrap(observe.Wrap(hashchain.Wrap(memory.New())), arts, offload.Config{MaxInlineBytes: 64})
	reg, err := NewRegistry(perRunWorkflows()...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Store: st, Registry: reg, Artifacts: arts}
	if claims {
		cfg.Claims = &Claims{Owner: "me", RenewEvery: time.Hour, TTL: 3 * time.Hour}
	}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// perRunState reports the per-run state the runtime keeps: run locks and
// follow-ups kept for a retry.
func (r *Runtime) perRunState() string {
	r.locksMu.Lock()
	locks := len(r.locks)
	r.locksMu.Unlock()
	return fmt.Sprintf("locks=%d followRetries=%d", locks, r.PendingFollowUps())
}

// Runs that wait, are paused and resumed, cancelled, answered or deleted
// leave no run lock, follow-up or goroutine behind in the runtime.
func TestManyRunsLeaveNoPerRunState(t *testing.T) {
	for _, claims := range []bool{false, true} {
		t.Run(fmt.Sprint("claims=", claims), func(t *testing.T) {
			rt := perRunRuntime(t, claims)
			ctx := context.Background()
			goruntime.GC()
			g0 := goruntime.NumGoroutine()
			const n = 500
			var ids []string
			for i := 0; i < n; i++ {
				wf := perRunWorkflows()[i%4].ID
				id, err := rt.Start(ctx, StartParams{WorkflowID: wf, SessionID: "s"})
				if err != nil {
					t.Fatal(err)
				}
				st, err := rt.Tick(ctx, id, TickOptions{})
				if err != nil || st.Status != durable.RunWaiting {
					t.Fatalf("tick %s: %v %v", wf, st.Status, err)
				}
				ids = append(ids, id)
			}
			if got := rt.perRunState(); got != "locks=0 followRetries=0" {
				t.Fatalf("after waits: %s", got)
			}
			if g := goruntime.NumGoroutine(); g > g0+2 {
				t.Fatalf("goroutines %d -> %d", g0, g)
			}
			// Events for listeners.
			if _, err := rt.EmitEvent(ctx, EmitParams{Name: "go", SessionID: "s", Payload: map[string]any{"a": 1}}); err != nil {
				t.Fatal(err)
			}
			// Pause, cancel, resume, delete.
			for i, id := range ids {
				run, err := rt.GetState(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				switch i % 5 {
				case 0:
					if _, err := rt.Pause(ctx, id, "p"); err != nil {
						t.Fatal(err)
					}
					if _, err := rt.ResumeRun(ctx, id); err != nil {
						t.Fatal(err)
					}
				case 1:
					if _, err := rt.Cancel(ctx, id, "c"); err != nil {
						t.Fatal(err)
					}
				case 2:
					if run.Status == durable.RunWaiting && run.Waiting.WaitKey != "" && run.Waiting.Reason == durable.WaitUser {
						if _, err := rt.Resume(ctx, ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"text": "x"}}); err != nil {
							t.Fatal(err)
						}
					}
				case 3:
					if _, err := rt.Store().RunDelete(ctx, id); err != nil {
						t.Fatal(err)
					}
					if _, err := rt.Tick(ctx, id, TickOptions{}); err == nil {
						t.Fatal("tick of deleted run succeeded")
					}
				}
			}
			rt.RetryFollowUps(ctx)
			if got := rt.perRunState(); got != "locks=0 followRetries=0" {
				t.Fatalf("after updates: %s", got)
			}
			if g := goruntime.NumGoroutine(); g > g0+2 {
				t.Fatalf("goroutines %d -> %d", g0, g)
			}
		})
	}
}

// heapAfterGC is the live heap after two collections.
func heapAfterGC() uint64 {
	var m goruntime.MemStats
	goruntime.GC()
	goruntime.GC()
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Waiting runs are kept in the store, not in the runtime's memory: 2,000
// more of them grow the heap by less than 1 MiB.
func TestWaitingRunsKeepHeapFlat(t *testing.T) {
	ctx := context.Background()
	inner, err := sqlite.New(ctx, sqlite.Config{Path: t.TempDir() + "/s.db", Synchronous: "OFF", Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	arts := artifact.NewMemory()
	obs := observe.Wrap(hashchain.Wrap(inner))
	st := offload.Wrap(obs, arts, offload.Config{})
	reg, _ := NewRegistry(perRunWorkflows()...)
	rt, err := New(Config{Store: st, Registry: reg, Artifacts: arts, Claims: &Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(n int) {
		for i := 0; i < n; i++ {
			wf := perRunWorkflows()[i%4].ID
			id, err := rt.Start(ctx, StartParams{WorkflowID: wf, SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Tick(ctx, id, TickOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk(500)
	h0 := heapAfterGC()
	g0 := goruntime.NumGoroutine()
	mk(2000)
	h1 := heapAfterGC()
	g1 := goruntime.NumGoroutine()
	t.Logf("heap %d -> %d (%+d), goroutines %d -> %d, %s", h0, h1, int64(h1)-int64(h0), g0, g1, rt.perRunState())
	if int64(h1)-int64(h0) > 1<<20 {
		t.Errorf("heap grew by %d bytes over 2000 waiting runs", int64(h1)-int64(h0))
	}
}

// Concurrent host calls on the same runs, some with contexts ending at
// once, leave no run lock behind.
func TestConcurrentCallsLeaveNoLocks(t *testing.T) {
	rt := perRunRuntime(t, true)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 40; i++ {
		id, err := rt.Start(ctx, StartParams{WorkflowID: perRunWorkflows()[i%4].ID, SessionID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				id := ids[(i*7+w*13)%len(ids)]
				cctx, cancel := context.WithTimeout(ctx, time.Duration(i%3)*time.Millisecond)
				switch (i + w) % 6 {
				case 0:
					rt.Tick(cctx, id, TickOptions{})
				case 1:
					rt.Pause(cctx, id, "p")
				case 2:
					rt.ResumeRun(cctx, id)
				case 3:
					if run, err := rt.GetState(ctx, id); err == nil && run.Waiting != nil && run.Waiting.WaitKey != "" {
						rt.Resume(cctx, ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"text": "a"}})
					}
				case 4:
					rt.EmitEvent(cctx, EmitParams{Name: "go", SessionID: "s"})
				case 5:
					if i%40 == 5 {
						rt.Cancel(cctx, id, "c")
					}
				}
				cancel()
			}
		}(w)
	}
	wg.Wait()
	rt.locksMu.Lock()
	n := len(rt.locks)
	rt.locksMu.Unlock()
	if n != 0 {
		t.Errorf("locks left: %d", n)
	}
	t.Logf("%s", rt.perRunState())
}
