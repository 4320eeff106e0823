package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestOnEventRearmClearsReturnTo: when an on_event branch ends, control
// returns to the listener with _control.return_to set to it; the listener
// consumes that marker as it waits again (pushSelf). Leaving it in place
// would persist a stale return_to in the run's vars, which a scheduler of
// the same id (or another runtime reading the vars) would take as a return.
func TestOnEventRearmClearsReturnTo(t *testing.T) {
	t.Parallel()
	flow := rsFlow("ev_rearm", "ev", []map[string]any{
		rsNode("ev", "on_event", nil, []string{"exec-out:exec", "payload:any"}, map[string]any{"eventConfig": map[string]any{"name": "ping"}}),
		setVarNode("sv", "seen", map[string]any{"value": true}),
	}, "ev.exec-out>sv.exec-in")
	rt, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
	if st.Status != durable.RunWaiting || st.Waiting == nil {
		t.Fatalf("status %s, want waiting on the event", st.Status)
	}
	st, err := rt.Resume(context.Background(), runtime.ResumeParams{RunID: st.RunID, WaitKey: st.Waiting.WaitKey,
		Payload: map[string]any{"name": "ping", "payload": map[string]any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunWaiting {
		t.Fatalf("after the event: status %s (%s), want waiting again", st.Status, st.Error)
	}
	if st.Vars["seen"] != true {
		t.Fatalf("branch did not run: vars %s", jsonText(t, st.Vars))
	}
	if v, has := tempControl(st)["return_to"]; has {
		t.Fatalf("_control.return_to = %s after the listener re-armed, want it consumed", jsonText(t, v))
	}
}
