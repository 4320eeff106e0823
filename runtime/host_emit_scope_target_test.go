package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A host's EmitEvent takes the scope id of the run scope from RunID and
// that of the workflow scope from WorkflowID (spec §3.5's key
// evt:<scope>:<scope_id>:<name>, scope_id the run id / the workflow id):
// an event aimed at another run, or at another workflow, reaches no
// listener, whatever the other field names.
func TestHostEmitEventScopeIDFromTheScopesField(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		scope string
		aim   func(id string) (hit, miss runtime.EmitParams)
	}{
		{"run", func(id string) (runtime.EmitParams, runtime.EmitParams) {
			return runtime.EmitParams{Name: "ping", Scope: "run", RunID: id, WorkflowID: "other"},
				runtime.EmitParams{Name: "ping", Scope: "run", RunID: "other", WorkflowID: id}
		}},
		{"workflow", func(id string) (runtime.EmitParams, runtime.EmitParams) {
			return runtime.EmitParams{Name: "ping", Scope: "workflow", WorkflowID: "w", RunID: "other"},
				runtime.EmitParams{Name: "ping", Scope: "workflow", WorkflowID: "other", RunID: "w"}
		}},
	} {
		f, id, st := waitEventFixture(t, map[string]any{"name": "ping", "scope": c.scope})
		if st.Status != durable.RunWaiting {
			t.Fatalf("%s listener %s, want waiting", c.scope, st.Status)
		}
		hit, miss := c.aim(id)
		if ids, err := f.rt.EmitEvent(ctx, miss); err != nil || len(ids) != 0 {
			t.Errorf("%s scope: EmitEvent %+v = %v, %v; want no listener resumed", c.scope, miss, ids, err)
		}
		if ids, err := f.rt.EmitEvent(ctx, hit); err != nil || len(ids) != 1 || ids[0] != id {
			t.Errorf("%s scope: EmitEvent %+v = %v, %v; want [%s]", c.scope, hit, ids, err, id)
		}
	}
}
