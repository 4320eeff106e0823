package runtime_test

// Edge cases of the built-in effects (events, waits, subworkflows, vars
// and memory): each test's comment states the rule it checks and the bug
// it guards against.

import (
	"context"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// EMIT_EVENT with a truthy non-string name: Python's
// `name = payload.get("name") or payload.get("event_name")` keeps the 5,
// which is not a string, so the effect fails with "emit_event requires
// payload.name" and nothing is delivered. Ours skips the non-string name
// (stringOr) and emits event_name, resuming a listener Python leaves
// waiting. (WAIT_EVENT was fixed for the same case:
// TestPyEffectsWaitEventNonStringNameDoesNotFallBackToEventName.)
func TestEffectsEmitEventNonStringNameDoesNotFallBackToEventName(t *testing.T) {
	f := memSetup(t, false)
	ctx := context.Background()
	listener := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectWaitEvent, map[string]any{"name": "ev"}))
	if listener.Status != durable.RunWaiting {
		t.Fatalf("listener: %s %q", listener.Status, listener.Error)
	}
	emitter := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectEmitEvent, map[string]any{"name": int64(5), "event_name": "ev"}))
	want := "Effect failed after 1 attempts: emit_event requires payload.name"
	if emitter.Status != durable.RunFailed || emitter.Error != want {
		t.Errorf("emitter: status %s error %q result %v; Python: failed with %q", emitter.Status, emitter.Error, emitter.Vars["r0"], want)
	}
	l, err := f.rt.GetState(ctx, listener.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != durable.RunWaiting {
		t.Errorf("listener: %s; Python: still waiting (the event was never emitted)", l.Status)
	}
}

// EMIT_EVENT diagnostics (spec §3.5 step 2/3, Python _handle_emit_event):
// while scanning the waiting runs Python collects the names listened to
// under evt:session:<session_id>: whatever the event's scope, and adds
// available_listeners_in_session to a result that delivered nothing. Ours
// only looks for them when the scope is "session", so an event emitted
// with scope "workflow" (or "global") and an explicit session_id misses
// the diagnostics Python gives.
//
// Python: EMIT_EVENT {"name": "bar", "scope": "workflow", "session_id":
// "s1"} with a run waiting on evt:session:s1:foo -> {"wait_key":
// "evt:workflow:mem:bar", ..., "delivered": 0, "delivered_to": [],
// "resumed": [], "available_listeners_in_session": ["foo"]}.
func TestEffectsEmitEventDiagnosticsForOtherScopes(t *testing.T) {
	f := memSetup(t, false)
	listener := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectWaitEvent, map[string]any{"name": "foo"}))
	if listener.Status != durable.RunWaiting {
		t.Fatalf("listener: %s %q", listener.Status, listener.Error)
	}
	for _, scope := range []string{"workflow", "global"} {
		run := f.runSteps(t, runtime.StartParams{SessionID: "s2"}, step(durable.EffectEmitEvent, map[string]any{
			"name": "bar", "scope": scope, "session_id": "s1",
		}))
		mustComplete(t, run)
		r, _ := run.Vars["r0"].(map[string]any)
		avail, _ := r["available_listeners_in_session"].([]any)
		if len(avail) != 1 || avail[0] != "foo" {
			t.Errorf("scope %s: result %v; Python adds available_listeners_in_session [foo]", scope, r)
		}
	}
}

// MEMORY_QUERY tag filters whose keys differ only in case ({"Topic": "a",
// "topic": "b"}) normalise to one key; spanFilter.parse iterates the
// payload map and lets whichever comes last win, so the same query over
// the same spans matches or not at random from one execution to the next
// (Go map order). Python's result is fixed by the payload's key order.
// A query must give the same answer every time.
func TestEffectsMemoryQueryCaseVariantTagKeysAreStable(t *testing.T) {
	f := memSetup(t, true)
	const runs, perRun = 4, 45
	seen := map[int]int{} // number of matches -> how many queries gave it
	for r := 0; r < runs; r++ {
		steps := []map[string]any{step(durable.EffectMemoryNote, map[string]any{"note": "n1", "tags": map[string]any{"topic": "a"}})}
		for i := 0; i < perRun; i++ {
			steps = append(steps, step(durable.EffectMemoryQuery, map[string]any{
				"tags": map[string]any{"Topic": "a", "topic": "b"}, "return": "meta",
			}))
		}
		run := f.runSteps(t, runtime.StartParams{}, steps...)
		mustComplete(t, run)
		for i := 1; i <= perRun; i++ {
			ids, _ := metaOf(t, res(t, run, i))["span_ids"].([]any)
			seen[len(ids)]++
		}
	}
	if len(seen) != 1 {
		t.Errorf("%d identical queries over the same note gave different answers (matches -> count): %v", runs*perRun, seen)
	}
}

// VARS_QUERY and the memory effects name their tool result with
// str(payload.get("call_id") or "<default>") and str(payload.get("tool_name")
// or "<default>") in Python: a number is kept as its text. Ours only
// accepts strings (stringOr) and answers a call id 7 with the default
// "vars" / "memory", so the tool result no longer matches the call that
// asked for it.
//
// Python: VARS_QUERY {"call_id": 7, "tool_name": 8} -> results[0]
// {"call_id": "7", "name": "8", ...}; MEMORY_TAG {"call_id": 7, ...} ->
// results[0].call_id "7".
func TestEffectsNumericCallIDAndToolNameAreText(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectVarsQuery, map[string]any{"call_id": int64(7), "tool_name": int64(8)}),
		step(durable.EffectMemoryNote, map[string]any{"note": "n", "call_id": int64(7), "tool_name": int64(8)}),
		step(durable.EffectMemoryQuery, map[string]any{"call_id": int64(7), "tool_name": int64(8)}),
	)
	mustComplete(t, run)
	for i := 0; i < 3; i++ {
		r := res(t, run, i)
		if r["call_id"] != "7" || r["name"] != "8" {
			t.Errorf("step %d: call_id %#v name %#v; Python: \"7\" and \"8\"", i, r["call_id"], r["name"])
		}
	}
}

// startFailsOnce fails the commit that creates run childID once, calling
// before first (a shutdown arriving while the child is being created).
type startFailsOnce struct {
	store.Wrapper
	childID string
	before  func()
	err     error
	done    bool
}

func (s *startFailsOnce) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Create && p.Run.RunID == s.childID && !s.done {
		s.done = true
		if s.before != nil {
			s.before()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return s.err
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// START_SUBWORKFLOW with wrap_as_tool_result turns every error of the
// child's creation into a *completed* tool result {success: false}. When
// the creation failed because the tick's context was cancelled (a
// scheduler Stop, a host shutting down), that completion is committed
// anyway (commit keeps work done by a caller that went away) and the
// agent's tool call is recorded as failed for good with "context
// canceled", where every other effect interrupted so (the unwrapped
// START_SUBWORKFLOW included) stays at its checkpoint and is replayed,
// and Python (whose start() raises) records a handler exception, never a
// tool result. After the restart the parent must start its child.
func TestEffectsWrappedSubworkflowStartInterruptedIsReplayed(t *testing.T) {
	child := &runtime.Workflow{ID: "kid", Entry: "k", Nodes: map[string]runtime.NodeFunc{
		"k": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"answer": "hi"}), nil
		},
	}}
	parent := &runtime.Workflow{ID: "par", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "r", Payload: map[string]any{
				"workflow_id": "kid", "wrap_as_tool_result": true, "run_id": "kid-1",
			}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
	reg, err := runtime.NewRegistry(parent, child)
	if err != nil {
		t.Fatal(err)
	}
	tickCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &startFailsOnce{Wrapper: store.Wrapper{Store: memory.New()}, childID: "kid-1", before: cancel}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "par"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Tick(tickCtx, id, runtime.TickOptions{}) // interrupted by the shutdown
	// The restart: tick again.
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCompleted {
		t.Fatalf("parent %s %q", run.Status, run.Error)
	}
	r, _ := run.Vars["r"].(map[string]any)
	results, _ := r["results"].([]any)
	first, _ := results[0].(map[string]any)
	if first["success"] != true {
		t.Errorf("tool result %v: the interrupted start was recorded as the call's failure; it should have been replayed", first)
	}
	if _, err := rt.GetState(ctx, "kid-1"); err != nil {
		t.Errorf("child never started: %v", err)
	}
}

// ctxStore honours a cancelled context on reads, as the SQL stores do, and
// calls onResume after committing the resume of a run in listeners.
type ctxStore struct {
	store.Wrapper
	mu        sync.Mutex
	listeners map[string]bool
	onResume  func()
}

func (s *ctxStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.Wrapper.RunGet(ctx, runID)
}

func (s *ctxStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	err := s.Wrapper.RunCommit(ctx, p)
	s.mu.Lock()
	hit := err == nil && s.listeners[p.Run.RunID] && p.Run.Status == durable.RunRunning && s.onResume != nil
	if hit {
		delete(s.listeners, p.Run.RunID)
	}
	fn := s.onResume
	s.mu.Unlock()
	if hit {
		fn()
	}
	return err
}

// EMIT_EVENT interrupted by a shutdown (the tick's context cancelled, as
// scheduler Stop does) after resuming some listeners: the remaining
// listeners' resumes fail with "context canceled", each is reported as
// {"status": "error"} and the effect still *completes*; the commit keeps
// work done by a caller that went away, so the completion is durable and
// the emit is never replayed. Those listeners never receive the event,
// although delivery is documented at-least-once (spec §3.5; a crash at the
// same moment replays the emit and delivers it). An interrupted delivery
// must leave the effect to be replayed, as other effects interrupted by a
// cancelled context are.
func TestEffectsEmitEventInterruptedMidDeliveryIsNotLost(t *testing.T) {
	listen := &runtime.Workflow{ID: "lst", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "ev", Payload: map[string]any{"name": "ev"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"got": run.Vars["ev"]}), nil
		},
	}}
	emit := &runtime.Workflow{ID: "emt", Entry: "e", Nodes: map[string]runtime.NodeFunc{
		"e": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, ResultKey: "r", Payload: map[string]any{"name": "ev"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
	reg, err := runtime.NewRegistry(listen, emit)
	if err != nil {
		t.Fatal(err)
	}
	st := &ctxStore{Wrapper: store.Wrapper{Store: memory.New()}, listeners: map[string]bool{}}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for i := 0; i < 2; i++ {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "lst", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if l, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || l.Status != durable.RunWaiting {
			t.Fatalf("listener: %v %v", l, err)
		}
		ids = append(ids, id)
		st.listeners[id] = true
	}
	emitter, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "emt", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	tickCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	st.mu.Lock()
	st.onResume = cancel // the shutdown comes once the first listener is resumed
	st.mu.Unlock()
	_, _ = rt.Tick(tickCtx, emitter, runtime.TickOptions{})
	st.mu.Lock()
	st.onResume = nil
	st.mu.Unlock()
	// The restart: the emitter and every listener are ticked again.
	for _, id := range append([]string{emitter}, ids...) {
		if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	em, _ := rt.GetState(ctx, emitter)
	for _, id := range ids {
		l, err := rt.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.Status != durable.RunCompleted {
			t.Errorf("listener %s is %s: the event was lost for it (emitter %s, result %v)", id, l.Status, em.Status, em.Vars["r"])
		}
	}
}
