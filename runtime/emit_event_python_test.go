package runtime_test

// EMIT_EVENT's event keys and envelope as the Python kernel
// (AbstractRuntime 0.4.28) builds them. Each test states what Python
// produced for the same input and, after "Here", what ours once did.

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
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
// Host emit_event: only an absent scope is the default. Python's
// build_event_wait_key takes str(scope or "session").strip().lower(), so a
// blank scope " " is refused as unknown, as a listener's WAIT_EVENT refuses
// it; an empty one is session.
//
// Python: emit_event(name="ping", scope=" ", session_id="s1") raises
// "unknown event scope: ' '". Here EmitEvent read " " as session and
// resumed the listener.
func TestPyFidelityHostEmitBlankScopeIsUnknown(t *testing.T) {
	f := newMemFix(t, eventWorkflows(nil)...)
	ctx := context.Background()
	lis, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "lis", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, lis, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = f.rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", Scope: " ", SessionID: "s1"})
	if err == nil || !strings.Contains(err.Error(), "unknown event scope: ' '") {
		t.Errorf("emit with scope \" \": %v; Python: unknown event scope: ' '", err)
	}
	if st, _ := f.rt.GetState(ctx, lis); st.Status != durable.RunWaiting {
		t.Errorf("listener %s after a refused emit, want still waiting", st.Status)
	}
	ids, err := f.rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s1"})
	if err != nil || len(ids) != 1 || ids[0] != lis {
		t.Errorf("emit with no scope: %v, %v; want the session listener %s resumed", ids, err, lis)
	}
}
