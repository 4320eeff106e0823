package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §5.7: on_event takes its scope from a scope pin when the key is
// present, else from eventConfig.scope, normalised (trimmed, lowercased)
// to one of session|workflow|run|global, anything else session. The wait
// key shows which: evt:<scope>:<scope id>:<name>, the run id for run and
// "global" for global.
func TestOnEventScopeFromPinOrConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		cfgScope any
		pin      map[string]any
		want     func(runID string) string
	}{
		{"config run", " Run ", nil, func(id string) string { return "evt:run:" + id + ":ping" }},
		{"config global", "GLOBAL", nil, func(string) string { return "evt:global:global:ping" }},
		{"pin beats config", "run", map[string]any{"scope": "global"}, func(string) string { return "evt:global:global:ping" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []string{}
			if tc.pin != nil {
				in = append(in, "scope:string")
			}
			flow := rsFlow("ev_scope", "ev", []map[string]any{
				rsNode("ev", "on_event", in, []string{"exec-out:exec", "payload:any"}, map[string]any{
					"eventConfig": map[string]any{"name": "ping", "scope": tc.cfgScope},
					"pinDefaults": tc.pin,
				}),
			})
			_, st := startRunWith(t, flow, CompileOptions{}, map[string]any{})
			if st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.Reason != durable.WaitEvent {
				t.Fatalf("status %s, waiting %+v; want an event wait", st.Status, st.Waiting)
			}
			if want := tc.want(st.RunID); st.Waiting.WaitKey != want {
				t.Fatalf("wait key %q, want %q", st.Waiting.WaitKey, want)
			}
		})
	}
}
