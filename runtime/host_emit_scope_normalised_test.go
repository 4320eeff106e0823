package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// emitToListener emits p, checks that it resumed exactly the listener id
// and that the listener completed, and returns the envelope the listener
// received (its var evt, waitEventFixture's result key).
func emitToListener(ctx context.Context, t *testing.T, f *fixture, id string, p runtime.EmitParams) map[string]any {
	t.Helper()
	ids, err := f.rt.EmitEvent(ctx, p)
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("EmitEvent = %v, %v; want [%s]", ids, err, id)
	}
	done, err := f.rt.GetState(ctx, id)
	if err != nil || done.Status != durable.RunCompleted {
		t.Fatalf("listener after the event: %v, %v; want completed", done, err)
	}
	ev, _ := done.Vars["evt"].(map[string]any)
	return ev
}

// A host's EmitEvent delivers the scope in its envelope as the key is
// built with it, trimmed and lower-cased, as Python's Scheduler.emit_event
// (scope2 = str(scope).strip().lower(), used for the key and the
// envelope alike): " Run " reaches a run-scoped listener with "run".
func TestHostEmitEventEnvelopeScopeNormalised(t *testing.T) {
	ctx := context.Background()
	f, id, st := waitEventFixture(t, map[string]any{"name": "ping", "scope": "run"})
	if st.Status != durable.RunWaiting {
		t.Fatalf("listener %s, want waiting", st.Status)
	}
	ev := emitToListener(ctx, t, f, id, runtime.EmitParams{Name: " ping ", Scope: " Run ", RunID: id})
	if ev["scope"] != "run" || ev["name"] != "ping" {
		t.Errorf("envelope scope %#v, name %#v; want \"run\", \"ping\"", ev["scope"], ev["name"])
	}
}
