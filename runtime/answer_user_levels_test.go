package runtime_test

import (
	"fmt"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// ANSWER_USER's level (spec §3.2): warn → warning, info → message,
// warning and error as they are, anything else → message; read trimmed
// and lower-cased.
func TestAnswerUserLevels(t *testing.T) {
	f := memSetup(t, false)
	cases := []struct{ given, want string }{
		{"warn", "warning"}, {" WARN ", "warning"}, {"warning", "warning"}, {"error", "error"},
		{"info", "message"}, {"debug", "message"},
	}
	var steps []map[string]any
	for _, c := range cases {
		steps = append(steps, step(durable.EffectAnswerUser, map[string]any{"message": "hi", "level": c.given}))
	}
	run := f.runSteps(t, runtime.StartParams{}, steps...)
	mustComplete(t, run)
	for i, c := range cases {
		r, _ := run.Vars[fmt.Sprintf("r%d", i)].(map[string]any)
		if r["level"] != c.want || r["message"] != "hi" {
			t.Errorf("level %q: result %v; want level %q", c.given, r, c.want)
		}
	}
}
