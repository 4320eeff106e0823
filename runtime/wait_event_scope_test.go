package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestWaitEventScopeIDFollowsTheNormalisedScope: WAIT_EVENT builds its
// key as Python's build_event_wait_key does: the scope is str.strip()ped
// and lower-cased, and the scope id is chosen from that normalised scope
// (workflow -> the run's workflow id, run -> its run id). Python's strip
// removes the information separators U+001C..U+001F too (str.isspace).
// The scope id was picked with strings.TrimSpace, which keeps them: a
// scope "workflow\x1f" gave the key evt:workflow:<session id>:ping, a key
// no EMIT_EVENT nor a Python peer ever builds, so the listener was never
// reached.
func TestWaitEventScopeIDFollowsTheNormalisedScope(t *testing.T) {
	for scope, want := range map[string]func(st *durable.RunState) string{
		"workflow\x1f":   func(st *durable.RunState) string { return "evt:workflow:" + st.WorkflowID + ":ping" },
		"\x1crun":        func(st *durable.RunState) string { return "evt:run:" + st.RunID + ":ping" },
		"\x1d Workflow ": func(st *durable.RunState) string { return "evt:workflow:" + st.WorkflowID + ":ping" },
		"\x1eGLOBAL":     func(*durable.RunState) string { return "evt:global:global:ping" },
		"session\x1f":    func(*durable.RunState) string { return "evt:session:s1:ping" },
	} {
		_, _, st := waitEventFixture(t, map[string]any{"name": "ping", "scope": scope, "session_id": "s1"})
		if st.Status != durable.RunWaiting || st.Waiting == nil {
			t.Fatalf("scope %q: run is %s (%s), want waiting", scope, st.Status, st.Error)
		}
		if got := st.Waiting.WaitKey; got != want(st) {
			t.Errorf("scope %q: wait key %q, want %q (Python: str(scope).strip().lower() picks the scope id)", scope, got, want(st))
		}
	}
}
