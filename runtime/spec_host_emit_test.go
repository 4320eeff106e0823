package runtime_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestSpecHostEmitEventEnvelope pins spec §5.2's emit_event host helper:
// session scope (the default) requires session_id, only listeners whose
// key matches exactly are resumed, and each gets the envelope {event_id:
// null, name, scope, session_id, payload, emitted_at, emitter: {"source":
// "external"}}.
func TestSpecHostEmitEventEnvelope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, id, st := waitEventFixture(t, map[string]any{"name": "ping"})
	if st.Status != durable.RunWaiting {
		t.Fatalf("listener %s, want waiting", st.Status)
	}
	if ids, err := f.rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping"}); err == nil {
		t.Fatalf("session-scoped EmitEvent without a session id = %v; want an error", ids)
	}
	if ids, err := f.rt.EmitEvent(ctx, runtime.EmitParams{Name: "pin", SessionID: id}); err != nil || len(ids) != 0 {
		t.Fatalf("EmitEvent of another name = %v, %v; want no listener resumed", ids, err)
	}
	if after, _ := f.rt.GetState(ctx, id); after.Status != durable.RunWaiting {
		t.Fatalf("listener %s after emits that are not its event; want waiting", after.Status)
	}
	ev := emitToListener(ctx, t, f, id, runtime.EmitParams{Name: "ping", SessionID: id, Payload: map[string]any{"x": "y"}})
	emittedAt, _ := ev["emitted_at"].(string)
	if _, err := durable.ParseTime(emittedAt); err != nil {
		t.Errorf("emitted_at %v is not an ISO time", ev["emitted_at"])
	}
	want := map[string]any{"event_id": nil, "name": "ping", "scope": "session", "session_id": id,
		"payload": map[string]any{"x": "y"}, "emitted_at": emittedAt, "emitter": map[string]any{"source": "external"}}
	if !reflect.DeepEqual(ev, want) {
		g, _ := json.Marshal(ev)
		w, _ := json.Marshal(want)
		t.Errorf("delivered envelope\n got %s\nwant %s", g, w)
	}
}
