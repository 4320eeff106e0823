package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestFlowEndWithAnOutgoingEdgeStillEndsTheRun pins §4.7 ("on_flow_end
// always ends the run"): an exec edge leaving an on_flow_end is not
// followed. Treating on_flow_end as any function node would go on to the
// linear successor and run it.
func TestFlowEndWithAnOutgoingEdgeStillEndsTheRun(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", "start", []map[string]any{rvStart(), rvEnd("end", []string{"r"}, map[string]any{"r": "done"}),
		setVarNode("after", "ran", map[string]any{"value": true})},
		"start.exec-out>end.exec-in", "end.exec-out>after.exec-in")
	st := rvRun(t, f, nil)
	if st.Status != durable.RunCompleted || st.Output["r"] != "done" {
		t.Fatalf("status %s (%s), output %s; want completed with r = done", st.Status, st.Error, jsonText(t, st.Output))
	}
	if _, ran := st.Vars["ran"]; ran {
		t.Fatalf("vars.ran = %#v: the node after on_flow_end ran", st.Vars["ran"])
	}
}
