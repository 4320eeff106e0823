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

func zzUntilFlow(until string) *runtime.Workflow {
	return &runtime.Workflow{ID: "zzuntil", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": until}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

func TestZZExploreOffsetDeadline(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	// 10:30+02:00 == 08:30Z (past) ; runtime at 09:00Z
	for _, until := range []string{"2026-01-01T10:30:00+02:00", "2026-01-01T09:30:00Z", "2026-01-01T08:30:00-02:00", "2026-01-01T09:30:00"} {
		rt, st := setup(t, c, zzUntilFlow(until))
		ctx := context.Background()
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "zzuntil"})
		s1, err := rt.Tick(ctx, id, runtime.TickOptions{})
		t.Logf("%s: after tick %v %v waiting=%+v", until, s1.Status, err, s1.Waiting)
		s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
		n, err := s.PollOnce(ctx)
		r, _ := st.RunGet(ctx, id)
		t.Logf("  poll now: n=%d err=%v status=%s", n, err, r.Status)
		c2 := c
		_ = c2
	}
}

func TestZZExploreRespondUnregistered(t *testing.T) {
	ctx := context.Background()
	wf := longAfterAsk("zzask", true)
	reg, _ := runtime.NewRegistry(wf)
	rt, _ := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	var failed atomic.Int64
	sch, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: 20 * time.Millisecond,
		OnRunFailed: func(string, error) { failed.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	id, st, err := sch.Run(ctx, wf, nil)
	t.Logf("run: %v %v", st.Status, err)
	_ = reg.Unregister("zzask")
	st, err = sch.Respond(ctx, id, map[string]any{"x": 1})
	if st != nil {
		t.Logf("respond: %v %v", st.Status, err)
	} else {
		t.Logf("respond: nil %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	cur, _ := sch.GetState(ctx, id)
	t.Logf("after: %s %+v", cur.Status, cur.Waiting)
	t.Logf("failed=%d stats=%+v", failed.Load(), sch.Scheduler.Stats())
}

func TestZZExploreNodeFailureAfterWait(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	wf := &runtime.Workflow{ID: "zzfail", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": "2026-01-01T09:30:00Z"}}, "boom"), nil
		},
		"boom": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.StepPlan{}, fmt.Errorf("kaboom")
		},
	}}
	rt, st := setup(t, c, wf)
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "zzfail"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	var resumed []string
	var failed []string
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now,
		OnRunResumed: func(r *durable.RunState) { resumed = append(resumed, string(r.Status)) },
		OnRunFailed:  func(id string, err error) { failed = append(failed, err.Error()) }})
	c.Advance(time.Hour)
	n, err := s.PollOnce(ctx)
	r, _ := st.RunGet(ctx, id)
	t.Logf("n=%d err=%v status=%s error=%q resumed=%v failed=%v stats=%+v", n, err, r.Status, r.Error, resumed, failed, s.Stats())
}

func TestZZExploreEventDeadline(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	wf := &runtime.Workflow{ID: "zzevt", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "ev",
				Payload: map[string]any{"wait_key": "k1", "until": "2026-01-01T15:00:00+05:30"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ev": run.Vars["ev"]}), nil
		},
	}}
	rt, st := setup(t, c, wf)
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "zzevt"})
	s1, err := rt.Tick(ctx, id, runtime.TickOptions{})
	t.Logf("tick %v %v %+v", s1.Status, err, s1.Waiting)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	c.Advance(29 * time.Minute)
	n, _ := s.PollOnce(ctx)
	r, _ := st.RunGet(ctx, id)
	t.Logf("at 9:29 n=%d %s", n, r.Status)
	c.Advance(2 * time.Minute)
	n, _ = s.PollOnce(ctx)
	r, _ = st.RunGet(ctx, id)
	t.Logf("at 9:31 n=%d %s %v", n, r.Status, r.Output)
}

func TestZZExploreExactDeadline(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	rt, st := setup(t, c, zzUntilFlow("2026-01-01T11:30:00.000001+02:00"))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "zzuntil"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	c.Advance(30 * time.Minute)
	n, _ := s.PollOnce(ctx)
	r, _ := st.RunGet(ctx, id)
	t.Logf("at deadline-1us n=%d %s", n, r.Status)
	c.Advance(time.Microsecond)
	n, _ = s.PollOnce(ctx)
	r, _ = st.RunGet(ctx, id)
	t.Logf("at deadline n=%d %s", n, r.Status)
}

func TestZZExploreRestart(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	wf := waitFlow(50 * time.Millisecond)
	reg, _ := runtime.NewRegistry(wf)
	rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: 10 * time.Millisecond})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Stop()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("double start")
	}
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	rt.Tick(ctx, id, runtime.TickOptions{})
	time.Sleep(300 * time.Millisecond)
	r, _ := st.RunGet(ctx, id)
	t.Logf("after restart: %s stats=%+v", r.Status, s.Stats())
	s.Stop()
	s.Stop()
}
