package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// EMIT_EVENT defaults payload.session_id to the emitter's session for the
// session scope only (spec §3.5: "for session scope defaults to the
// emitter's session_id, else its run_id"). A workflow-scoped event
// without one carries session_id null in its envelope, as Python's
// (str(session_id) if session_id is not None else None), and an event
// nobody received lists no session listeners: Python looks under
// evt:session:None:, not under the emitter's session.
func TestEmitEventOtherScopeWithoutSessionIDHasNoSession(t *testing.T) {
	ctx := context.Background()
	f := memSetup(t, false)
	sessionListener := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectWaitEvent, map[string]any{"name": "foo"}))
	wfListener := f.runSteps(t, runtime.StartParams{SessionID: "s1"}, step(durable.EffectWaitEvent, map[string]any{"name": "ping", "scope": "workflow"}))
	if sessionListener.Status != durable.RunWaiting || wfListener.Status != durable.RunWaiting {
		t.Fatalf("listeners: %s, %s", sessionListener.Status, wfListener.Status)
	}
	run := f.runSteps(t, runtime.StartParams{SessionID: "s1"},
		step(durable.EffectEmitEvent, map[string]any{"name": "bar", "scope": "workflow"}),
		step(durable.EffectEmitEvent, map[string]any{"name": "ping", "scope": "workflow"}),
	)
	mustComplete(t, run)
	r0, _ := run.Vars["r0"].(map[string]any)
	if v, ok := r0["available_listeners_in_session"]; ok || r0["delivered"] == nil {
		t.Errorf("undelivered workflow-scoped event: result %v; want no available_listeners_in_session (got %v)", r0, v)
	}
	r1, _ := run.Vars["r1"].(map[string]any)
	if to, _ := r1["delivered_to"].([]any); len(to) != 1 || to[0] != wfListener.RunID {
		t.Fatalf("workflow-scoped event delivered to %v; want [%s]", r1["delivered_to"], wfListener.RunID)
	}
	got, err := f.rt.GetState(ctx, wfListener.RunID)
	if err != nil {
		t.Fatal(err)
	}
	env, ok := got.Vars["r0"].(map[string]any)
	if !ok {
		t.Fatalf("listener %s holds no envelope: %v", got.Status, got.Vars["r0"])
	}
	if sid, present := env["session_id"]; !present || sid != nil {
		t.Errorf("envelope session_id = %#v (present %v); want null", sid, present)
	}
}
