package runtime

// Host calls a gateway's command loop makes without running a run's steps
// itself (gateway-api §4.2): EmitEvent and ResumeRunWith leaving the runs
// they resume to the runner, and SetWaitDeadline firing or re-timing a
// waiting run.

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func TestEmitEventNoDriveLeavesListenersRunningWithTheGivenEnvelope(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := eventRuntime(t, now, func(*durable.RunState) map[string]any {
		return map[string]any{"name": "ping", "scope": "global"}
	}, nil)
	l := waitingListener(t, rt)
	ids, err := rt.EmitEvent(ctx, EmitParams{Name: "ping", Scope: "global", NoDrive: true,
		EmittedAt: "2026-01-02T03:04:05Z", Emitter: map[string]any{"source": "external", "client_id": "c1"}})
	if err != nil || len(ids) != 1 || ids[0] != l.RunID {
		t.Fatalf("EmitEvent = %v, %v; want [%s]", ids, err, l.RunID)
	}
	// The listener's tick is the host's to make (it hands it to its own
	// runner): none is kept for the runtime's retries, which would drive
	// the listener behind the host's back.
	if n := rt.PendingFollowUps(); n != 0 {
		t.Fatalf("%d follow-ups kept after a NoDrive emit; want none (the listener's tick is the host's)", n)
	}
	st, err := rt.GetState(ctx, l.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunRunning || st.CurrentNode != "done" {
		t.Fatalf("listener after a NoDrive emit: status %s at %q; want running at done, not driven", st.Status, st.CurrentNode)
	}
	ev, _ := st.Vars["ev"].(map[string]any)
	emitter, _ := ev["emitter"].(map[string]any)
	if ev["emitted_at"] != "2026-01-02T03:04:05Z" || emitter["client_id"] != "c1" || emitter["source"] != "external" {
		t.Errorf("delivered envelope %v; want the given emitted_at and emitter", ev)
	}
	if st, err = rt.Tick(ctx, l.RunID, TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick after the emit: %v, %v; want completed", st, err)
	}

	// The default drives the listener to its end and stamps the envelope.
	l2 := waitingListener(t, rt)
	if _, err := rt.EmitEvent(ctx, EmitParams{Name: "ping", Scope: "global"}); err != nil {
		t.Fatal(err)
	}
	st, err = rt.GetState(ctx, l2.RunID)
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("listener after a default emit: %v, %v; want completed", st, err)
	}
	ev, _ = st.Vars["ev"].(map[string]any)
	if ev["emitted_at"] != durable.NewTime(now).String() || len(ev["emitter"].(map[string]any)) != 1 {
		t.Errorf("default envelope %v; want emitted_at the clock's and emitter {source: external}", ev)
	}
}

func TestEmitEventRefusesNonJSONEnvelopeFields(t *testing.T) {
	ctx := context.Background()
	rt := eventRuntime(t, time.Now(), func(*durable.RunState) map[string]any {
		return map[string]any{"name": "ping", "scope": "global"}
	}, nil)
	l := waitingListener(t, rt)
	for name, p := range map[string]EmitParams{
		"emitted_at": {Name: "ping", Scope: "global", EmittedAt: math.NaN()},
		"emitter":    {Name: "ping", Scope: "global", Emitter: map[string]any{"client_id": math.Inf(1)}},
	} {
		if _, err := rt.EmitEvent(ctx, p); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("EmitEvent with a non-JSON %s: %v; want an error naming it", name, err)
		}
	}
	if st, _ := rt.GetState(ctx, l.RunID); st.Status != durable.RunWaiting {
		t.Errorf("listener after refused emits: %s; want still waiting", st.Status)
	}
}

// chain3 is workflow "w": a → b → c, c completing the run.
func chain3() *Workflow {
	next := func(to string) NodeFunc {
		return errNode(func(*durable.RunState) StepPlan { return Next(to) })
	}
	return &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": next("b"), "b": next("c"),
		"c": errNode(func(*durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
}

func TestResumeRunWithStepCaps(t *testing.T) {
	ctx := context.Background()
	rt := errRuntime(t, memory.New(), Config{}, chain3())
	for _, tc := range []struct {
		maxSteps int
		status   durable.RunStatus
		node     string
	}{
		{-1, durable.RunRunning, "a"}, // the lift only: not ticked
		{1, durable.RunRunning, "b"},  // one step
		{0, durable.RunCompleted, "c"},
	} {
		id := startRun(t, rt, StartParams{})
		if _, err := rt.Pause(ctx, id, "host"); err != nil {
			t.Fatal(err)
		}
		st, err := rt.ResumeRunWith(ctx, id, ResumeRunOptions{MaxSteps: tc.maxSteps})
		if err != nil {
			t.Fatalf("MaxSteps %d: %v", tc.maxSteps, err)
		}
		if st.Status != tc.status || st.CurrentNode != tc.node || IsPaused(st) {
			t.Errorf("MaxSteps %d: status %s at %q (paused %v); want %s at %q, not paused",
				tc.maxSteps, st.Status, st.CurrentNode, IsPaused(st), tc.status, tc.node)
		}
	}
}

func TestSetWaitDeadline(t *testing.T) {
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	wait := func(id string, e *durable.Effect) *Workflow {
		return &Workflow{ID: id, Entry: "w", Nodes: map[string]NodeFunc{
			"w":    errNode(func(*durable.RunState) StepPlan { return Request(e, "done") }),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"r": run.Vars["r"]}) }),
		}}
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Clock: now},
		wait("until", &durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": "2099-01-01T00:00:00+00:00"}, ResultKey: "r"}),
		wait("event", &durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "x", "scope": "global", "timeout_s": 3600}, ResultKey: "r"}),
		wait("event_forever", &durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "x", "scope": "global"}, ResultKey: "r"}),
		wait("ask", &durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "r"}),
	)
	waiting := func(wf string) *durable.RunState {
		t.Helper()
		id := startRun(t, rt, StartParams{WorkflowID: wf})
		run, err := rt.Tick(ctx, id, TickOptions{})
		if err != nil || run.Status != durable.RunWaiting {
			t.Fatalf("%s: %v, %v; want waiting", wf, run, err)
		}
		return run
	}

	for _, wf := range []string{"until", "event"} {
		run := waiting(wf)
		records := len(listLedger(t, st, run.RunID))
		clock.Add(int64(time.Minute))
		fire := now()
		got, err := rt.SetWaitDeadline(ctx, run.RunID, fire)
		if err != nil {
			t.Fatalf("%s: SetWaitDeadline: %v", wf, err)
		}
		if !got.Waiting.Until.Equal(fire) || got.Status != durable.RunWaiting || !got.UpdatedAt.Equal(fire) {
			t.Errorf("%s: after SetWaitDeadline: status %s until %s updated %s; want waiting until %s, updated then",
				wf, got.Status, got.Waiting.Until, got.UpdatedAt, fire)
		}
		if n := len(listLedger(t, st, run.RunID)); n != records {
			t.Errorf("%s: ledger went from %d to %d records; a deadline change is not a step", wf, records, n)
		}
		due, err := st.RunListDue(ctx, &store.RunListDueParams{Now: fire})
		if err != nil || len(due) != 1 || due[0].RunID != run.RunID {
			t.Errorf("%s: due at the new deadline = %v, %v; want the run (the due index follows the change)", wf, due, err)
		}
		end, err := rt.Tick(ctx, run.RunID, TickOptions{})
		if err != nil || end.Status != durable.RunCompleted {
			t.Fatalf("%s: tick at the new deadline: %v, %v; want completed", wf, end, err)
		}
		if wf == "event" {
			if r, _ := end.Vars["r"].(map[string]any); r["timed_out"] != true {
				t.Errorf("event wait fired by its deadline resolved with %v; want timed_out", end.Vars["r"])
			}
		}
		// Moving it again fails: the run no longer waits.
		if _, err := rt.SetWaitDeadline(ctx, run.RunID, fire); !errors.Is(err, ErrNoDeadline) {
			t.Errorf("%s: SetWaitDeadline of a completed run: %v; want ErrNoDeadline", wf, err)
		}
	}
	for _, wf := range []string{"event_forever", "ask"} {
		run := waiting(wf)
		_, err := rt.SetWaitDeadline(ctx, run.RunID, now())
		if !errors.Is(err, ErrNoDeadline) || !strings.Contains(err.Error(), run.RunID) {
			t.Errorf("%s: SetWaitDeadline: %v; want ErrNoDeadline naming the run", wf, err)
		}
		if got, _ := rt.GetState(ctx, run.RunID); !got.Waiting.Until.IsZero() || got.Version != run.Version {
			t.Errorf("%s: a refused SetWaitDeadline changed the run (until %s, version %d → %d)", wf, got.Waiting.Until, run.Version, got.Version)
		}
	}
	if _, err := rt.SetWaitDeadline(ctx, "missing", now()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetWaitDeadline of an unknown run: %v; want ErrNotFound", err)
	}
	if _, err := rt.SetWaitDeadline(ctx, waiting("until").RunID, time.Time{}); err == nil {
		t.Error("SetWaitDeadline to the zero time: no error")
	}
}

// parentOfListener registers "parent" (starts "child" async and waits for
// it, then completes at "after", counting its runs of "after") and
// "child" (waits for the global event "go", ending with it: no resume
// node), on a runtime whose clock the returned func advances.
func parentOfListener(t *testing.T) (rt *Runtime, advance func(time.Duration), afterRuns *atomic.Int64) {
	t.Helper()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	afterRuns = new(atomic.Int64)
	parent := &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(*durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}, ResultKey: "child"}, "after")
		}),
		"after": errNode(func(*durable.RunState) StepPlan { afterRuns.Add(1); return Complete(map[string]any{}) }),
	}}
	child := &Workflow{ID: "child", Entry: "w", Nodes: map[string]NodeFunc{
		"w": errNode(func(*durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "go", "scope": "global"}}, "")
		}),
	}}
	rt = errRuntime(t, memory.New(), Config{Clock: func() time.Time { return time.Unix(0, clock.Load()).UTC() }}, parent, child)
	return rt, func(d time.Duration) { clock.Add(int64(d)) }, afterRuns
}

// A listener a NoDrive emit ends hands its end to its waiting parent
// through the runtime's retries, not in the emit and not never.
func TestEmitEventNoDriveKeepsTheParentResumeForRetries(t *testing.T) {
	ctx := context.Background()
	rt, advance, afterRuns := parentOfListener(t)
	pid := startRun(t, rt, StartParams{WorkflowID: "parent"})
	if p, err := rt.Tick(ctx, pid, TickOptions{}); err != nil || p.Status != durable.RunWaiting {
		t.Fatalf("parent: %v, %v; want waiting on its child", p, err)
	}
	ids, err := rt.EmitEvent(ctx, EmitParams{Name: "go", Scope: "global", NoDrive: true})
	if err != nil || len(ids) != 1 {
		t.Fatalf("EmitEvent = %v, %v", ids, err)
	}
	if c, _ := rt.GetState(ctx, ids[0]); c.Status != durable.RunCompleted {
		t.Fatalf("child after the event: %s; want completed (its wait has no resume node)", c.Status)
	}
	if p, _ := rt.GetState(ctx, pid); p.Status != durable.RunWaiting || afterRuns.Load() != 0 {
		t.Fatalf("parent after a NoDrive emit: %s, after ran %d times; want still waiting, not driven in the call", p.Status, afterRuns.Load())
	}
	advance(time.Minute)
	rt.RetryFollowUps(ctx)
	if p, _ := rt.GetState(ctx, pid); p.Status != durable.RunCompleted || afterRuns.Load() != 1 {
		t.Fatalf("parent after the runtime's retries: %s, after ran %d times; want completed once (the child's end reached it)", p.Status, afterRuns.Load())
	}
}

// ResumeRunWith with a negative MaxSteps runs none of a parent's steps in
// the call when a child ended during its pause; the runtime's retries
// hand it the child's end.
func TestResumeRunWithoutStepsLeavesAChildEndToRetries(t *testing.T) {
	ctx := context.Background()
	rt, advance, afterRuns := parentOfListener(t)
	pid := startRun(t, rt, StartParams{WorkflowID: "parent"})
	if _, err := rt.Tick(ctx, pid, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Pause(ctx, pid, "host"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.EmitEvent(ctx, EmitParams{Name: "go", Scope: "global"}); err != nil {
		t.Fatal(err)
	}
	st, err := rt.ResumeRunWith(ctx, pid, ResumeRunOptions{MaxSteps: -1})
	if err != nil || IsPaused(st) || st.Status != durable.RunWaiting || afterRuns.Load() != 0 {
		t.Fatalf("ResumeRunWith(-1) = %v (paused %v), %v, after ran %d times; want the pause lifted, the parent still waiting, no step run",
			st.Status, IsPaused(st), err, afterRuns.Load())
	}
	advance(time.Minute)
	rt.RetryFollowUps(ctx)
	if p, _ := rt.GetState(ctx, pid); p.Status != durable.RunCompleted || afterRuns.Load() != 1 {
		t.Fatalf("parent after the runtime's retries: %s, after ran %d times; want completed once", p.Status, afterRuns.Load())
	}
}
