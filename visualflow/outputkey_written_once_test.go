package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// An effect node's outputKey is written once, when its outcome arrives
// (§5.3): a later write to that var stands. The reference re-writes every
// effect node's outputKey at each node's sync (compiler.py
// _sync_effect_results_to_node_outputs), which undoes the set_var below;
// docs/visualflow.md lists the difference.
func TestOutputKeyIsWrittenOnceAndALaterWriteStands(t *testing.T) {
	t.Parallel()
	match := map[string]any{"span_id": "s1", "kind": "memory_note"}
	outcome := map[string]any{"mode": "executed", "results": []any{map[string]any{
		"success": true, "output": "one match", "meta": map[string]any{"matches": []any{match}, "span_ids": []any{"s1"}}}}}
	flow := rsFlow("ok2", "start", []map[string]any{
		startNode(),
		rsNode("q", "memory_query", []string{"exec-in:exec", "query:string"}, []string{"exec-out:exec", "results:array"},
			map[string]any{"pinDefaults": map[string]any{"query": "sky"}, "outputKey": "saved"}),
		setVarNode("sv", "saved", map[string]any{"value": "overwritten"}),
		getVarNode("gv", "saved"),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "saved:any"}, nil, nil),
	}, "start.exec-out>q.exec-in", "q.exec-out>sv.exec-in", "sv.exec-out>end.exec-in", "gv.value>end.saved")
	_, st := runCapturing(t, flow, durable.EffectMemoryQuery, outcome)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := st.Output["saved"]; got != "overwritten" {
		t.Errorf("end.saved (get_var saved after set_var) = %v, want the set_var's value", got)
	}
	if got := st.Vars["saved"]; got != "overwritten" {
		t.Errorf("vars.saved = %v, want the set_var's value", got)
	}
}
