package visualflow

import (
	"testing"
)

// TestLegacyPromptDefaultsKeepTheFirst pins the reference's
// _migrate_node_prompt_pins for pinDefaults: an existing "prompt" default
// is kept over a legacy one, and "request" is renamed before "task".
func TestLegacyPromptDefaultsKeepTheFirst(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		defaults map[string]any
		want     string
	}{
		{map[string]any{"prompt": "new", "request": "old", "task": "older"}, "new"},
		{map[string]any{"request": "req", "task": "task"}, "req"},
	} {
		flow := rsFlow("legacy_defaults", "start", []map[string]any{
			rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "prompt:string"}, map[string]any{"pinDefaults": c.defaults}),
			rsNode("end", "on_flow_end", []string{"exec-in:exec", "answer:string"}, nil, nil),
		}, "start.exec-out>end.exec-in", "start.prompt>end.answer")
		st := runFlow(t, flow, map[string]any{})
		if got := st.Output["answer"]; got != c.want {
			t.Errorf("defaults %v: answer = %#v, want %q", c.defaults, got, c.want)
		}
	}
}

// TestFlowStartScalarInputFillsItsSinglePin pins §4.10: an
// on_flow_start whose input is not an object (here vars[inputKey]) hands
// it to its single data pin.
func TestFlowStartScalarInputFillsItsSinglePin(t *testing.T) {
	t.Parallel()
	flow := rsFlow("start_scalar", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "question:string"}, map[string]any{"inputKey": "q"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "answer:string"}, nil, nil),
	}, "start.exec-out>end.exec-in", "start.question>end.answer")
	st := runFlow(t, flow, map[string]any{"q": "hi"})
	if got := st.Output["answer"]; got != "hi" {
		t.Fatalf("answer = %#v, want %q; output %s", got, "hi", jsonText(t, st.Output))
	}
}

// TestSwitchSkipsCaseWithoutValue pins §6.2: a case whose value is null
// never matches, not even the text "None" Python's str() would give it.
func TestSwitchSkipsCaseWithoutValue(t *testing.T) {
	t.Parallel()
	sw := rsNode("sw", "switch", []string{"exec-in:exec", "value:any"}, []string{"case:a:exec", "default:exec"},
		map[string]any{"pinDefaults": map[string]any{"value": "None"},
			"switchConfig": map[string]any{"cases": []any{map[string]any{"id": "a", "value": nil}}}})
	flow := rsFlow("switch_null", "start", []map[string]any{rvStart(), sw,
		rvEnd("endA", []string{"r"}, map[string]any{"r": "a"}), rvEnd("endD", []string{"r"}, map[string]any{"r": "default"})},
		"start.exec-out>sw.exec-in", "sw.case:a>endA.exec-in", "sw.default>endD.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Output["r"] != "default" {
		t.Fatalf("output %s, want the default branch", jsonText(t, st.Output))
	}
}
