package runtime_test

// Regression tests from a review of the built-in JSON-safe effects
// (memory, vars, events, tool call ids). Each test states what the Python
// kernel (AbstractRuntime 0.4.28 with its memory helpers) produced for the
// same input and, after "Here", what ours did before the fix.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// ---------------------------------------------------------------------------
// EMIT_EVENT: the scope id of an event key is trimmed (build_event_wait_key:
// `scope_id = str(session_id or "").strip()`), so an emit to session " s2 "
// reaches the listeners waiting on evt:session:s2:ping (and the wildcard).
//
// Python: {"name": "ping", "session_id": " s2 "} → wait_key
// "evt:session:s2:ping", delivered 1 (checked with a listener in s1 and
// session_id " s1 "; same code path). Here the key is
// "evt:session: s2 :ping" and nothing is delivered.
func TestPyFidelityEmitEventTrimsSessionScopeID(t *testing.T) {
	r := emitScenario(t, map[string]any{"name": "ping", "session_id": " s2 "})
	if r["wait_key"] != "evt:session:s2:ping" {
		t.Errorf("wait_key %q; Python: %q", r["wait_key"], "evt:session:s2:ping")
	}
	if n, _ := runtime.AsInt(r["delivered"]); n != 3 {
		t.Errorf("delivered %v (resumed %v); Python delivers to the 3 listeners of session s2", r["delivered"], r["resumed"])
	}
}

// ---------------------------------------------------------------------------
// EMIT_EVENT: a session_id that is not a string is used as str(session_id)
// (Python: `session_id = target_session_id` then `str(session_id)`), not
// silently replaced by the emitter's own session.
//
// Python (listener started with session_id "42", emitter in session s1,
// payload {"name": "ping", "session_id": 42}): wait_key
// "evt:session:42:ping", delivered 1. Here the key becomes
// "evt:session:s1:ping": the event goes to the emitter's session instead.
func TestPyFidelityEmitEventNumericSessionID(t *testing.T) {
	f := newMemFix(t, eventWorkflows(map[string]any{"name": "ping", "session_id": int64(42)})...)
	ctx := context.Background()
	lis, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "lis", SessionID: "42"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, lis, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	em, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "emit", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, em, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := st.Vars["r"].(map[string]any)
	if r["wait_key"] != "evt:session:42:ping" {
		t.Errorf("wait_key %q; Python: %q", r["wait_key"], "evt:session:42:ping")
	}
	if n, _ := runtime.AsInt(r["delivered"]); n != 1 {
		t.Errorf("delivered %v; Python delivers to the listener of session 42", r["delivered"])
	}
}

// ---------------------------------------------------------------------------
// MEMORY_QUERY has no target_run_id (spec §3.8 lists none; Python's
// _handle_memory_query queries `run`, the requesting run, and its
// session/global owners). A payload carrying one (tool calls often forward
// it to every memory effect) must not switch the query to another run.
//
// Python: run A stores two notes; run B queries {"target_run_id": A,
// "return": "meta"} → meta {"matches": [], "span_ids": []}. Here B gets
// A's two notes.
func TestPyFidelityMemoryQueryIgnoresTargetRunID(t *testing.T) {
	f := memSetup(t, true)
	a := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryNote, map[string]any{"note": "alpha note"}),
		step(durable.EffectMemoryNote, map[string]any{"note": "beta note"}))
	mustComplete(t, a)
	b := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"target_run_id": a.RunID, "return": "meta"}))
	mustComplete(t, b)
	if ids := spanIDs(t, res(t, b, 0)); len(ids) != 0 {
		t.Errorf("query of run B with target_run_id=A returned A's spans %v; Python queries B (no matches)", ids)
	}
}

// ---------------------------------------------------------------------------
// MEMORY_QUERY reads the recall level from recall_level, else recallLevel
// (Python: `if recall_level_raw is None: recall_level_raw =
// payload.get("recallLevel")`), as MEMORY_REHYDRATE here already does.
//
// Python: {"recallLevel": "urgent", "return": "meta"} → meta carries
// "effort": {"recall_level": "urgent", "applied": {... "limit_spans": 2 ...}}
// and three clamp warnings. Here the alias is ignored: no effort.
func TestPyFidelityMemoryQueryRecallLevelAlias(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"recallLevel": "urgent", "return": "meta"}))
	mustComplete(t, run)
	meta := metaOf(t, res(t, run, 0))
	eff, _ := meta["effort"].(map[string]any)
	if eff["recall_level"] != "urgent" {
		t.Errorf("meta %v; Python applies recallLevel=urgent (effort.recall_level \"urgent\")", meta)
	}
}

// ---------------------------------------------------------------------------
// MEMORY_QUERY return mode: `str(payload.get("return") or
// payload.get("return_mode") or "rendered")` — a falsy "return" falls
// back to return_mode.
//
// Python: {"return": "", "return_mode": "meta"} → output "" and meta
// {"matches": [], "span_ids": []}. Here the mode is "rendered": output
// "No matching memory spans." and meta null.
func TestPyFidelityMemoryQueryEmptyReturnFallsBackToReturnMode(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"return": "", "return_mode": "meta"}))
	mustComplete(t, run)
	r := res(t, run, 0)
	if r["output"] != "" || r["meta"] == nil {
		t.Errorf("output %q meta %v; Python (return_mode meta): output \"\" and meta {matches: [], span_ids: []}", r["output"], r["meta"])
	}
}

// ---------------------------------------------------------------------------
// parse_recall_level refuses only booleans as "recall_level must be a
// string"; another value is read as str(raw): recall_level 3 fails with
// "Unknown recall_level: 3" (Python: run failed "Effect failed after 1
// attempts: Unknown recall_level: 3"). Here: "recall_level must be a
// string".
func TestPyFidelityMemoryQueryNumericRecallLevelError(t *testing.T) {
	f := memSetup(t, true)
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectMemoryQuery, map[string]any{"recall_level": int64(3)}))
	if run.Status != durable.RunFailed || !strings.Contains(run.Error, "Unknown recall_level: 3") {
		t.Errorf("status %s error %q; Python fails with \"Unknown recall_level: 3\"", run.Status, run.Error)
	}
}

// ---------------------------------------------------------------------------
// VARS_QUERY answers "Unknown target_run_id: <id>" for every error of the
// store's read of the target, not only for a missing run: a transient
// store failure (I/O, a cancelled context, a database restart) is reported
// as a completed effect claiming the run does not exist, and never retried.
// Python's handler lets the store's exception escape (the effect fails:
// "Effect handler raised exception: …", subject to the retry policy); the
// memory effects here make the same distinction (baseRun: ErrNotFound →
// "Unknown target_run_id", other errors → "loading target run …").
type flakyGetStore struct {
	store.Store
	failID string
}

func (s *flakyGetStore) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if id == s.failID {
		return nil, errors.New("injected: database connection reset")
	}
	return s.Store.RunGet(ctx, id)
}

func TestPyFidelityVarsQueryStoreErrorIsNotUnknownRun(t *testing.T) {
	fs := &flakyGetStore{Store: memory.New()}
	f := memSetupStore(t, fs, false)
	other := f.runSteps(t, runtime.StartParams{Vars: map[string]any{"scratchpad": map[string]any{"x": int64(1)}}})
	mustComplete(t, other)
	fs.failID = other.RunID
	run := f.runSteps(t, runtime.StartParams{},
		step(durable.EffectVarsQuery, map[string]any{"target_run_id": other.RunID, "path": "scratchpad.x"}))
	if run.Status != durable.RunCompleted {
		return // the failure surfaced (failed effect): fine
	}
	r := res(t, run, 0)
	if msg := fmt.Sprint(r["error"]); strings.HasPrefix(msg, "Unknown target_run_id") {
		t.Errorf("store failure reported as %q (success %v): run %s exists; the read failed", msg, r["success"], other.RunID)
	}
}

// ---------------------------------------------------------------------------
// TOOL_CALLS call ids (§2.3 step 5a/5c): Python reads a call id as
// `str(call_id).strip()` whenever it is not None, so an integer id 0 is
// the id "0" (no warning, call_id "0"). Here a falsy id (0, false) is
// treated as missing: the call gets the runtime id as its call_id and
// vars._flow_warnings gains "missing call_id … (count=1)".
//
// Python (tool_calls [{"call_id": 0}, {"call_id": 1}]): _flow_warnings
// absent, call ids seen by the handler ["0", "1"].
func TestPyFidelityToolCallIDZeroIsAnID(t *testing.T) {
	wf := oneEffect("tc0", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{
			"tool_calls": []any{map[string]any{"call_id": int64(0), "name": "x"}, map[string]any{"call_id": int64(1), "name": "y"}},
		}}
	})
	f := setup(t, wf)
	var ids []any
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls, _ := req.Effect.Payload["tool_calls"].([]any)
		for _, c := range calls {
			ids = append(ids, c.(map[string]any)["call_id"])
		}
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tc0"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := st.Vars["_flow_warnings"]; w != nil {
		t.Errorf("_flow_warnings %v; Python: none (call_id 0 is the id \"0\")", w)
	}
	if len(ids) != 2 || ids[0] != "0" || ids[1] != "1" {
		t.Errorf("call ids seen by the handler %v; Python: [0 1] as strings", ids)
	}
}

// ---------------------------------------------------------------------------
// TOOL_CALLS duplicate-id warning: Python lists the duplicated ids in the
// order they are first repeated and at most 5 of them
// (`", ".join(duplicates[:5])`); here they are sorted and all listed.
//
// Python: ids b,b,a,a → "#WARN: TOOL_CALLS duplicate call_id at node
// 'step' (b, a)"; ids g,g,f,f,e,e,d,d,c,c,b,b → "(g, f, e, d, c)".
func TestPyFidelityToolCallDuplicateWarningOrderAndCap(t *testing.T) {
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"b", "b", "a", "a"}, "#WARN: TOOL_CALLS duplicate call_id at node 'step' (b, a)"},
		{[]string{"g", "g", "f", "f", "e", "e", "d", "d", "c", "c", "b", "b"}, "#WARN: TOOL_CALLS duplicate call_id at node 'step' (g, f, e, d, c)"},
	} {
		calls := []any{}
		for _, id := range tc.ids {
			calls = append(calls, map[string]any{"call_id": id, "name": "x"})
		}
		wf := oneEffect("tcd", func() *durable.Effect {
			return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{"tool_calls": calls}}
		})
		f := setup(t, wf)
		f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
		}})
		ctx := context.Background()
		id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "tcd"})
		st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := st.Vars["_flow_warnings"].([]any)
		if len(w) != 1 || w[0] != tc.want {
			t.Errorf("ids %v: _flow_warnings %v; Python: [%q]", tc.ids, w, tc.want)
		}
	}
}

// ---------------------------------------------------------------------------
// EMIT_EVENT envelope (§3.5): "event_id" is `payload.event_id or None` (a
// blank id is null) and "session_id" is the given session_id whatever the
// scope (`str(session_id) if session_id is not None else None`).
//
// Python: {"name": "ping", "scope": "global", "session_id": "s9",
// "event_id": ""} delivered to a listener of evt:global:global:ping →
// envelope "event_id": null, "session_id": "s9". Here: "event_id": "",
// "session_id": null.
func TestPyFidelityEmitEventEnvelopeIDs(t *testing.T) {
	eff := func(typ durable.EffectType, payload map[string]any, rk, next string) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: typ, Payload: payload, ResultKey: rk}, next), nil
		}
	}
	done := func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(map[string]any{"ok": true}), nil
	}
	f := newMemFix(t,
		&runtime.Workflow{ID: "glis", Entry: "w", Nodes: map[string]runtime.NodeFunc{
			"w": eff(durable.EffectWaitEvent, map[string]any{"name": "ping", "scope": "global"}, "ev", "d"), "d": done}},
		&runtime.Workflow{ID: "gemit", Entry: "e", Nodes: map[string]runtime.NodeFunc{
			"e": eff(durable.EffectEmitEvent, map[string]any{"name": "ping", "scope": "global", "session_id": "s9", "event_id": ""}, "r", "d"), "d": done}},
	)
	ctx := context.Background()
	lis, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "glis", SessionID: "s1"})
	if _, err := f.rt.Tick(ctx, lis, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	em, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "gemit", SessionID: "s1"})
	if _, err := f.rt.Tick(ctx, em, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.GetState(ctx, lis)
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := st.Vars["ev"].(map[string]any)
	if !ok {
		t.Fatalf("listener got no event: %s %v", st.Status, st.Vars["ev"])
	}
	if ev["event_id"] != nil {
		t.Errorf("envelope event_id %#v; Python: null (payload.event_id or None)", ev["event_id"])
	}
	if ev["session_id"] != "s9" {
		t.Errorf("envelope session_id %#v; Python: \"s9\" (the given session_id)", ev["session_id"])
	}
}

// ---------------------------------------------------------------------------
// Memory writes into an ordinary owner run (target_run_id, or the root run
// of scope "session" without a session id) give up after ~100 ms of the
// owner's lock being held (lockOwner: ownerLockTries × ownerLockPause) and
// fail the effect with "memory owner run … is busy (a step of it is
// executing)". The lock is also held by another memory effect writing the
// same owner (writeOwner holds it across load → commit), so two runs that
// note into the same idle run at the same time fail whenever one commit
// takes longer than that (a loaded database): no step of the owner is
// executing, and nothing conflicts. Python has no such failure.
type slowCommitStore struct {
	store.Store
	slowID string
	delay  func()
}

func (s *slowCommitStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.RunID == s.slowID && s.delay != nil {
		s.delay()
	}
	return s.Store.RunCommit(ctx, p)
}

func TestPyFidelityConcurrentNotesIntoIdleRunDoNotFailBusy(t *testing.T) {
	ss := &slowCommitStore{Store: memory.New()}
	f := memSetupStore(t, ss, true)
	owner := f.runSteps(t, runtime.StartParams{})
	mustComplete(t, owner)
	ss.slowID = owner.RunID
	ss.delay = func() { time.Sleep(250 * time.Millisecond) } // a slow commit of the owner

	results := make(chan *durable.RunState, 2)
	for i := 0; i < 2; i++ {
		go func() {
			results <- f.runSteps(t, runtime.StartParams{},
				step(durable.EffectMemoryNote, map[string]any{"note": fmt.Sprintf("note %d", i), "target_run_id": owner.RunID}))
		}()
	}
	for i := 0; i < 2; i++ {
		run := <-results
		if run.Status != durable.RunCompleted {
			t.Errorf("note into idle run %s: %s %q", owner.RunID, run.Status, run.Error)
		}
	}
	if n := len(spansOf(f.state(t, owner.RunID))); n != 2 {
		t.Errorf("owner has %d spans, want 2", n)
	}
}
