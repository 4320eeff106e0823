package visualflow

import "testing"

// set_vars takes its updates as an object or as a JSON string parsing to
// one (spec §6.6): the string {"a.b": 1, "c": "x"} writes vars.a.b and
// vars.c.
func TestSetVarsUpdatesFromJSONString(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("w", "set_vars", []string{"exec-in:exec", "updates:any"}, []string{"exec-out:exec", "updates:object"},
			map[string]any{"pinDefaults": map[string]any{"updates": `{"a.b": 1, "c": "x"}`}}),
	}, "start.exec-out>w.exec-in")
	st := runFlow(t, flow, map[string]any{})
	a, _ := st.Vars["a"].(map[string]any)
	if a["b"] != int64(1) || st.Vars["c"] != "x" {
		t.Fatalf("vars = %s, want a.b = 1 and c = \"x\"", jsonText(t, st.Vars))
	}
}
