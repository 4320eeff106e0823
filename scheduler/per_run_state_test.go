package scheduler

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// manualClock is a clock tests move by hand.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// perRunState reports the per-run state the scheduler keeps.
func (s *Scheduler) perRunState() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("retry=%d unfinished=%d inCallback=%d", len(s.retry), len(s.unfinished), len(s.inCallback))
}

// waitingWorkflows are the workloads' workflows, each waiting at "a" then
// completing: "until" a minute on clk, "ev" for an event, "ask" for an
// answer, "parent" for its async child "ask".
func waitingWorkflows(clk *manualClock) []*runtime.Workflow {
	done := func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(map[string]any{"ok": true}), nil
	}
	waitAt := func(id string, effect func() *durable.Effect) *runtime.Workflow {
		return &runtime.Workflow{ID: id, Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(effect(), "done"), nil
			},
			"done": done,
		}}
	}
	return []*runtime.Workflow{
		waitAt("until", func() *durable.Effect {
			return &durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.NewTime(clk.Now().Add(time.Minute)).String()}}
		}),
		waitAt("ev", func() *durable.Effect {
			return &durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "x", "timeout_s": 60}}
		}),
		waitAt("ask", func() *durable.Effect {
			return &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}}
		}),
		waitAt("parent", func() *durable.Effect {
			return &durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "ask", "async": true, "wait": true}}
		}),
	}
}

// startTicked starts n runs in session "s", the i-th of workflow wf(i),
// ticks each once and returns their ids.
func startTicked(t *testing.T, rt *runtime.Runtime, n int, wf func(i int) string) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for i := 0; i < n; i++ {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf(i), SessionID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// Due runs released, paused or deleted before a pass leave no retry,
// unfinished or callback entry, follow-up or goroutine behind.
func TestDueRunsLeaveNoSchedulerState(t *testing.T) {
	ctx := context.Background()
	clk := &manualClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	reg, _ := runtime.NewRegistry(waitingWorkflows(clk)[:2]...) // until, ev
	st := memory.New()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clk.Now, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Runtime: rt, BatchSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	g0 := goruntime.NumGoroutine()
	ids := startTicked(t, rt, 2000, func(i int) string { return []string{"until", "ev"}[i%2] })
	for i, id := range ids {
		switch i % 4 {
		case 0:
			st.RunDelete(ctx, id)
		case 1:
			rt.Pause(ctx, id, "p")
		}
	}
	clk.Add(2 * time.Minute)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.perRunState(); got != "retry=0 unfinished=0 inCallback=0" {
		t.Errorf("after pass: %s", got)
	}
	if got := rt.PendingFollowUps(); got != 0 {
		t.Errorf("follow-ups %d", got)
	}
	if g := goruntime.NumGoroutine(); g > g0+2 {
		t.Errorf("goroutines %d -> %d", g0, g)
	}
	for i, id := range ids {
		if i%4 == 0 {
			continue
		}
		r, err := rt.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]durable.RunStatus{true: durable.RunWaiting, false: durable.RunCompleted}[i%4 == 1]; r.Status != want {
			t.Fatalf("run %d: %s", i, r.Status)
		}
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

// A mixed workload (waits, events, children, pauses, cancels, answers,
// deletes) over the spec stack on SQLite, driven by passes, keeps the heap
// flat: 1,000 more runs grow it by less than 512 KiB.
func TestMixedWorkloadKeepsHeapFlat(t *testing.T) {
	mixedWorkload(t, sqlite.Config{Synchronous: "OFF", CacheBytes: -1, NoRedoLog: true})
}

// mixedWorkload runs the workload of TestMixedWorkloadKeepsHeapFlat on a
// SQLite store configured by cfg.
func mixedWorkload(t *testing.T, cfg sqlite.Config) {
	ctx := context.Background()
	clk := &manualClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg.Path = t.TempDir() + "/s.db"
	inner, err := sqlite.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	arts := artifact.NewMemory()
	obs := observe.Wrap(hashchain.Wrap(inner))
	sub := obs.Subscribe("", 1)
	defer sub.Cancel()
	st := NewWakeStore(offload.Wrap(obs, arts, offload.Config{MaxInlineBytes: -1}))
	wfs := waitingWorkflows(clk)
	reg, _ := runtime.NewRegistry(wfs...)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clk.Now, Artifacts: arts, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Runtime: rt, BatchSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	round := func(n int) {
		ids := startTicked(t, rt, n, func(i int) string { return wfs[i%4].ID })
		for i, id := range ids {
			switch i % 8 {
			case 0:
				rt.Pause(ctx, id, "p")
			case 1:
				rt.Cancel(ctx, id, "c")
			case 2:
				run, _ := rt.GetState(ctx, id)
				if run.Waiting != nil && run.Waiting.WaitKey != "" {
					rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"text": "a"}})
				}
			case 3:
				if kids, _ := st.RunListChildren(ctx, id, ""); len(kids) > 0 {
					k := kids[0]
					rt.Resume(ctx, runtime.ResumeParams{RunID: k.RunID, WaitKey: k.Waiting.WaitKey, Payload: map[string]any{"text": "a"}})
				}
			case 4:
				st.RunDelete(ctx, id)
				st.LedgerDelete(ctx, id)
			}
		}
		rt.EmitEvent(ctx, runtime.EmitParams{Name: "x", SessionID: "s"})
		clk.Add(2 * time.Minute)
		if _, err := s.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	round(400)
	h0 := heapAfterGC()
	round(1000)
	h1 := heapAfterGC()
	t.Logf("heap %d -> %d (%+d) %s follow=%d", h0, h1, int64(h1)-int64(h0), s.perRunState(), rt.PendingFollowUps())
	if int64(h1)-int64(h0) > 512<<10 {
		t.Errorf("heap grew by %d bytes over 1000 runs", int64(h1)-int64(h0))
	}
}
