package runtime

// EMIT_EVENT (builtin_events.go handleEmitEvent): how the payload's name
// and session_id pick the event key, as Python's _handle_emit_event.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// Python: `payload.get("name") or payload.get("event_name")`: a present but
// falsy name ("") falls back to event_name. It fails if handleEmitEvent
// falls back only when name is absent (the emit then fails for a blank
// name).
func TestEmitEventBlankNameFallsBackToEventName(t *testing.T) {
	req := builtinRequest(t, durable.EffectEmitEvent, map[string]any{"name": "", "event_name": "ping"}, nil)
	out, err := handleEmitEvent(context.Background(), req)
	if err != nil || out.Status != OutcomeCompleted {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	res := out.Result.(map[string]any)
	if res["name"] != "ping" || res["wait_key"] != "evt:session:s1:ping" {
		t.Fatalf("name %v wait_key %v, want ping and evt:session:s1:ping", res["name"], res["wait_key"])
	}
}

// Python: `session_id = payload.get("session_id")`, defaulted to the run's
// session only when None: an empty session_id stays empty and the session
// key has no scope id (spec §3.5: missing scope id). It fails if
// handleEmitEvent treats a falsy session_id as absent (the event then goes
// to the emitter's own session).
func TestEmitEventEmptySessionIDIsNotTheRunsSession(t *testing.T) {
	req := builtinRequest(t, durable.EffectEmitEvent, map[string]any{"name": "ping", "session_id": ""}, nil)
	out, err := handleEmitEvent(context.Background(), req)
	if err != nil || out.Status != OutcomeFailed {
		t.Fatalf("outcome %+v, %v; want failed", out, err)
	}
	if !strings.Contains(out.Error, "missing scope id for scope='session'") {
		t.Fatalf("error %q, want the missing scope id", out.Error)
	}
}

// An undelivered event lists the session's listeners only when it has a
// session (spec §3.5; Python looks under evt:session:None:, which no
// session-less emit matches): a global emit without session_id lists none,
// even a listener whose explicit key is evt:session::<name>. It fails if
// handleEmitEvent lists listeners for a nil session (under the prefix
// evt:session::).
func TestEmitEventWithoutSessionListsNoSessionListeners(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rt := eventRuntime(t, now, func(*durable.RunState) map[string]any {
		return map[string]any{"wait_key": "evt:session::late"}
	}, map[string]any{"name": "ping", "scope": "global"})
	waitingListener(t, rt)
	id := startRun(t, rt, StartParams{WorkflowID: "emit"})
	run, err := rt.Tick(context.Background(), id, TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", run, err)
	}
	res := run.Vars["r"].(map[string]any)
	if v, ok := res["available_listeners_in_session"]; ok || res["delivered"] != int64(0) {
		t.Fatalf("result %v: available_listeners_in_session %v, want none and nothing delivered", res, v)
	}
}
