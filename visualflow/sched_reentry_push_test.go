package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestSchedulerReenteredUnderAnotherBlockGoesOnTopOfTheStack pins the
// last line of §4.6.2 ("if stack top != C: push C"): loop L re-entered by
// an exec edge while sequence S (inside L's body) is on top restarts and
// is pushed again, so its body's end returns to L, which then finishes to
// its done target S (fresh: then:0). Without the push the body's end would
// return to S, which would resume at then:1.
func TestSchedulerReenteredUnderAnotherBlockGoesOnTopOfTheStack(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", "L", []map[string]any{
		rvLoop("L", []any{"a"}),
		setVarNode("B", "v", map[string]any{"value": int64(1)}),
		rsNode("S", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil),
		rvEnd("X", []string{"r"}, map[string]any{"r": "X"}),
		rvEnd("Y", []string{"r"}, map[string]any{"r": "Y"}),
	}, "L.loop>B.exec-in", "L.done>S.exec-in", "S.then:0>X.exec-in", "S.then:1>Y.exec-in")
	// The state right after an exec edge inside S led back into L.
	vars := map[string]any{"_temp": map[string]any{"_control": map[string]any{
		"stack": []any{"L", "S"},
		"frames": map[string]any{
			"L": map[string]any{"kind": "loop", "idx": int64(1), "items": []any{"a"}},
			"S": map[string]any{"kind": "sequence", "idx": int64(1), "then": []any{"then:0", "then:1"}},
		},
	}}}
	st := rvRun(t, f, vars)
	if st.Status != durable.RunCompleted || st.Output["r"] != "X" || jsonText(t, st.Vars["v"]) != "1" {
		t.Fatalf("status %s, output %s, v=%#v; want completed at X after B ran", st.Status, jsonText(t, st.Output), st.Vars["v"])
	}
}
