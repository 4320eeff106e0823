package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// ResumeTarget takes payload.resume_to_node only when it is a non-empty
// string: an empty one, or one of another type, falls back to the plan's
// next node. Taking "" as given would resume the run at no node.
func TestResumeTargetFallsBackToDefaultNext(t *testing.T) {
	for _, tc := range []struct {
		target any
		want   string
	}{{"review", "review"}, {"", "done"}, {int64(3), "done"}, {nil, "done"}} {
		req := &runtime.EffectRequest{DefaultNext: "done",
			Effect: &durable.Effect{Type: "job", Payload: map[string]any{"resume_to_node": tc.target}}}
		if got := req.ResumeTarget(); got != tc.want {
			t.Errorf("resume_to_node %#v: ResumeTarget %q, want %q", tc.target, got, tc.want)
		}
	}
}
