package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestNoTokenWarningBeforeAnyTokenIsUsed: spec §1.8 / check_limits,
// "token warnings only when estimated_tokens_used > 0": even a threshold
// every percentage passes (a negative warn_tokens_pct) gives no token
// warning while no token was used, and does once one was.
func TestNoTokenWarningBeforeAnyTokenIsUsed(t *testing.T) {
	run := func(used int64) *durable.RunState {
		return &durable.RunState{RunID: "r", Vars: map[string]any{"_limits": map[string]any{
			"warn_tokens_pct": int64(-1), "estimated_tokens_used": used, "max_tokens": int64(1000),
		}}}
	}
	for _, w := range runtime.CheckLimitsOf(run(0)) {
		if w.LimitType == "tokens" {
			t.Fatalf("token warning %+v with no token used", w)
		}
	}
	found := false
	for _, w := range runtime.CheckLimitsOf(run(1)) {
		found = found || (w.LimitType == "tokens" && w.Status == "warning")
	}
	if !found {
		t.Fatal("no token warning once a token is used past a negative threshold")
	}
}
