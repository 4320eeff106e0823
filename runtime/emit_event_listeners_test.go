package runtime

// EMIT_EVENT (builtin_events.go): event keys and the listeners an event
// reaches, paused ones included.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// waitingListener starts and ticks a "listen" run and returns it waiting.
func waitingListener(t *testing.T, rt *Runtime) *durable.RunState {
	t.Helper()
	id := startRun(t, rt, StartParams{WorkflowID: "listen"})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	return run
}

// eventRuntime registers a listener workflow "listen" (WAIT_EVENT with
// the payload listen gives) and an emitter "emit" (EMIT_EVENT with the
// payload emit gives, result at vars.r).
func eventRuntime(t *testing.T, now time.Time, listen func(run *durable.RunState) map[string]any, emit map[string]any) *Runtime {
	t.Helper()
	listener := &Workflow{ID: "listen", Entry: "w", Nodes: map[string]NodeFunc{
		"w": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: listen(run), ResultKey: "ev"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	emitter := &Workflow{ID: "emit", Entry: "e", Nodes: map[string]NodeFunc{
		"e": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectEmitEvent, Payload: emit, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan {
			return Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	return errRuntime(t, memory.New(), Config{Clock: func() time.Time { return now }}, listener, emitter)
}

// Spec §3.5: the global scope's scope id is the literal "global", whatever
// id is given.
func TestEventKeyGlobalScopeIDIsGlobal(t *testing.T) {
	for _, sid := range []string{"", "s1"} {
		key, err := EventKey("global", "ping", sid)
		if err != nil || key != "evt:global:global:ping" {
			t.Errorf("EventKey(global, ping, %q) = %q, %v; want evt:global:global:ping", sid, key, err)
		}
	}
}

// EMIT_EVENT: "resumes every non-paused run waiting on the event's key"
// (spec §3.5 step 2: paused runs are skipped, not reported).
func TestEmitEventSkipsPausedListeners(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := eventRuntime(t, now, func(*durable.RunState) map[string]any {
		return map[string]any{"name": "ping", "scope": "global"}
	}, map[string]any{"name": "ping", "scope": "global"})
	l := waitingListener(t, rt)
	if _, err := rt.Pause(ctx, l.RunID, ""); err != nil {
		t.Fatal(err)
	}
	id := startRun(t, rt, StartParams{WorkflowID: "emit"})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", run, err)
	}
	r, _ := run.Vars["r"].(map[string]any)
	if resumed, _ := r["resumed"].([]any); len(resumed) != 0 || r["delivered"] != int64(0) {
		t.Errorf("emit result %v; want nothing delivered and the paused listener not listed in resumed", r)
	}
	after, _ := rt.GetState(ctx, l.RunID)
	if after.Status != durable.RunWaiting || !IsPaused(after) {
		t.Errorf("paused listener %s (paused %v), want still waiting and paused", after.Status, IsPaused(after))
	}
}

// sessionListeners: "the event names runs of a session wait on ... (at
// most 15)".
func TestEmitEventListsAtMostFifteenSessionListeners(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	rt := eventRuntime(t, now, func(*durable.RunState) map[string]any {
		n++
		return map[string]any{"name": "ev" + string(rune('a'+n)), "session_id": "s1"}
	}, map[string]any{"name": "nobody", "session_id": "s1"})
	for range 16 {
		waitingListener(t, rt)
	}
	id := startRun(t, rt, StartParams{WorkflowID: "emit", SessionID: "s1"})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", run, err)
	}
	r, _ := run.Vars["r"].(map[string]any)
	if avail, _ := r["available_listeners_in_session"].([]any); len(avail) != 15 {
		t.Errorf("available_listeners_in_session lists %d names, want 15 of the 16", len(avail))
	}
}

// pauseOnListenerList pauses a run right after the first RunList of event
// listeners, so a delivery finds it paused meanwhile.
type pauseOnListenerList struct {
	store.Store
	once  sync.Once
	pause func()
}

func (s *pauseOnListenerList) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	runs, err := s.Store.RunList(ctx, p)
	if p.WaitReason == durable.WaitEvent && len(runs) > 0 {
		s.once.Do(s.pause)
	}
	return runs, err
}

// EmitEvent: "a listener that moved on or was paused meanwhile is not an
// error".
func TestEmitEventToAListenerPausedMeanwhileIsNoError(t *testing.T) {
	ctx := context.Background()
	listener := &Workflow{ID: "listen", Entry: "w", Nodes: map[string]NodeFunc{
		"w": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "ping", "scope": "global"}, ResultKey: "ev"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	st := &pauseOnListenerList{Store: memory.New()}
	rt := errRuntime(t, st, Config{}, listener)
	l := startRun(t, rt, StartParams{WorkflowID: "listen"})
	if run, err := rt.Tick(ctx, l, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("listener: %v %v", run, err)
	}
	st.pause = func() {
		if _, err := rt.Pause(ctx, l, ""); err != nil {
			t.Error(err)
		}
	}
	got, err := rt.EmitEvent(ctx, EmitParams{Name: "ping", Scope: "global"})
	if err != nil || len(got) != 0 {
		t.Errorf("EmitEvent to a listener paused meanwhile: delivered %v, error %v; want none, no error", got, err)
	}
	after, _ := rt.GetState(ctx, l)
	if !IsPaused(after) || after.Status != durable.RunWaiting {
		t.Errorf("listener %s paused %v, want still waiting, paused", after.Status, IsPaused(after))
	}
}

// failCommitsOf fails every commit of one run once armed, as a store
// whose write for that run's row fails would.
type failCommitsOf struct {
	store.Store
	runID string
	armed bool
}

var errListenerCommit = errors.New("disk full (test)")

func (s *failCommitsOf) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.armed && p.Run.RunID == s.runID {
		return errListenerCommit
	}
	return s.Store.RunCommit(ctx, p)
}

// Spec §3.5 step 5: a listener whose resume raises is reported in
// `resumed` as {run_id, status:"error", error} and left out of
// delivered_to, while the other listeners get the event and the emitter
// completes; the failed listener keeps waiting, nothing of it lost.
func TestEmitEventReportsAListenerWhoseResumeFails(t *testing.T) {
	ctx := context.Background()
	listener := &Workflow{ID: "listen", Entry: "w", Nodes: map[string]NodeFunc{
		"w": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"name": "ping", "scope": "global"}, ResultKey: "ev"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"got": run.Vars["ev"]}) }),
	}}
	emitter := &Workflow{ID: "emit", Entry: "e", Nodes: map[string]NodeFunc{
		"e": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectEmitEvent, Payload: map[string]any{"name": "ping", "scope": "global", "max_steps": 5}, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"r": run.Vars["r"]}) }),
	}}
	st := &failCommitsOf{Store: memory.New()}
	rt := errRuntime(t, st, Config{}, listener, emitter)
	broken := waitingListener(t, rt)
	healthy := waitingListener(t, rt)
	st.runID, st.armed = broken.RunID, true

	id := startRun(t, rt, StartParams{WorkflowID: "emit"})
	run, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", run, err)
	}
	r, _ := run.Vars["r"].(map[string]any)
	if r["delivered"] != int64(1) || !reflect.DeepEqual(r["delivered_to"], []any{healthy.RunID}) {
		t.Errorf("delivered %v to %v; want 1, only to %s", r["delivered"], r["delivered_to"], healthy.RunID)
	}
	byRun := map[any]map[string]any{}
	resumed, _ := r["resumed"].([]any)
	for _, e := range resumed {
		m, _ := e.(map[string]any)
		byRun[m["run_id"]] = m
	}
	if len(resumed) != 2 {
		t.Fatalf("resumed = %v; want an entry per listener", resumed)
	}
	bad := byRun[broken.RunID]
	if bad["status"] != "error" || !strings.Contains(fmt.Sprint(bad["error"]), errListenerCommit.Error()) {
		t.Errorf("failed listener's entry %v; want status \"error\" and the store's error", bad)
	}
	if good := byRun[healthy.RunID]; good["status"] != string(durable.RunCompleted) || good["error"] != nil {
		t.Errorf("healthy listener's entry %v; want status completed (max_steps 5), no error", good)
	}

	st.armed = false
	after, err := rt.GetState(ctx, broken.RunID)
	if err != nil || after.Status != durable.RunWaiting || after.Waiting == nil || after.Waiting.WaitKey != broken.Waiting.WaitKey {
		t.Errorf("failed listener after the emit: %v %v; want still waiting on %s", after, err, broken.Waiting.WaitKey)
	}
	// It still gets the next event.
	if got, err := rt.EmitEvent(ctx, EmitParams{Name: "ping", Scope: "global"}); err != nil || !slices.Contains(got, broken.RunID) {
		t.Errorf("a later emit reached %v (error %v); want %s among them", got, err, broken.RunID)
	}
}
